package replica

import (
	"strconv"

	gometrics "github.com/rcrowley/go-metrics"

	"github.com/klassik/klassik/broker/common"
)

// replicaMetrics are Kafka's ReplicaManager metrics
// (kafka.server.ReplicaManager.*), BrokerTopicMetrics and the fetcher lag.
// Without a registry they are no-ops.
type replicaMetrics struct {
	reg              gometrics.Registry // nil: none
	isrShrinks       gometrics.Meter
	isrExpands       gometrics.Meter
	failedIsrUpdates gometrics.Meter // FailedIsrUpdatesPerSec: a refused or failed ISR write
	// DelayedFetchMetrics ExpiresPerSec (fetcherType=consumer, follower)
	// and DelayedProduceMetrics ExpiresPerSec (all partitions; per
	// partition in expiredProduce): parked requests whose wait ran out.
	fetchExpiresConsumer, fetchExpiresFollower, produceExpires gometrics.Meter
	topics                                                     *brokerTopicStats // nil: off
	lags                                                       *fetcherLagStats  // nil: off
}

func newReplicaMetrics(r gometrics.Registry, m *Manager) replicaMetrics {
	if r == nil {
		n := gometrics.NilMeter{}
		return replicaMetrics{isrShrinks: n, isrExpands: n, failedIsrUpdates: n, fetchExpiresConsumer: n, fetchExpiresFollower: n, produceExpires: n}
	}
	m.fetches.RegisterMetrics(r)
	m.produces.RegisterMetrics(r)
	const prefix = "kafka.server.ReplicaManager."
	gauge := func(name string, f func() int64) { r.GetOrRegister(prefix+name, gometrics.NewFunctionalGauge(f)) }
	gauge("UnderReplicatedPartitions", func() int64 { return int64(m.UnderReplicatedPartitions()) })
	gauge("PartitionCount", func() int64 { return int64(m.partitionCount()) })
	gauge("LeaderCount", func() int64 { return int64(m.partitionStats().leaders) })
	gauge("UnderMinIsrPartitionCount", func() int64 { return int64(m.partitionStats().underMinIsr) })
	gauge("AtMinIsrPartitionCount", func() int64 { return int64(m.partitionStats().atMinIsr) })
	gauge("ReassigningPartitions", m.reassigningPartitions)
	// The replicas on failed log directories (offline.go).
	gauge("OfflineReplicaCount", func() int64 { return int64(len(m.OfflinePartitions())) })
	rm := replicaMetrics{
		reg:                  r,
		isrShrinks:           gometrics.GetOrRegisterMeter(prefix+"IsrShrinksPerSec", r),
		isrExpands:           gometrics.GetOrRegisterMeter(prefix+"IsrExpandsPerSec", r),
		failedIsrUpdates:     gometrics.GetOrRegisterMeter(prefix+"FailedIsrUpdatesPerSec", r),
		fetchExpiresConsumer: gometrics.GetOrRegisterMeter("kafka.server.DelayedFetchMetrics.ExpiresPerSec.fetcherType=consumer", r),
		fetchExpiresFollower: gometrics.GetOrRegisterMeter("kafka.server.DelayedFetchMetrics.ExpiresPerSec.fetcherType=follower", r),
		produceExpires:       gometrics.GetOrRegisterMeter("kafka.server.DelayedProduceMetrics.ExpiresPerSec", r),
		lags:                 newFetcherLagStats(r),
	}
	if !m.cfg.DisableRequestMetrics {
		rm.topics = newBrokerTopicStats(r)
	}
	return rm
}

// followerFetched records what a fetcher thread appended for tp: the
// replicated bytes (also as reassignment bytes when a reassignment is
// adding this broker) and the partition's lag behind the leader's HW.
func (rm *replicaMetrics) followerFetched(key fetcherKey, tp common.TopicPartition, bytes int, leaderHW, nextOffset int64, reassigning bool) {
	rm.topics.replicated(bytes, reassigning)
	rm.lags.update(key, tp, leaderHW, nextOffset)
}

func (m *Manager) partitionCount() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.partitions)
}

type partitionStats struct {
	leaders, underMinIsr, atMinIsr int
}

// partitionStats counts the partitions this broker leads, and among them
// those whose ISR is below or at min.insync.replicas (Kafka's LeaderCount,
// UnderMinIsrPartitionCount, AtMinIsrPartitionCount). Computed on read.
func (m *Manager) partitionStats() partitionStats {
	var s partitionStats
	minISR := map[string]int{}
	for _, p := range m.Partitions() {
		min, ok := minISR[p.tp.Topic]
		if !ok {
			min = m.minISR(p.tp.Topic) // before the partition lock
			minISR[p.tp.Topic] = min
		}
		p.mu.RLock()
		if p.isLeaderLocked() {
			s.leaders++
			switch n := len(p.isr); {
			case n < min:
				s.underMinIsr++
			case n == min:
				s.atMinIsr++
			}
		}
		p.mu.RUnlock()
	}
	return s
}

// expiredProduce counts a partition of an acks=all produce still waiting
// when the produce timed out, for all partitions and for tp (Kafka's
// DelayedProduceMetrics.recordExpiration; the per-partition meter is made
// at its first expiry and kept, as Kafka keeps it).
func (rm *replicaMetrics) expiredProduce(tp common.TopicPartition) {
	rm.produceExpires.Mark(1)
	if rm.reg == nil {
		return
	}
	gometrics.GetOrRegisterMeter("kafka.server.DelayedProduceMetrics.ExpiresPerSec.topic="+tp.Topic+
		".partition="+strconv.Itoa(int(tp.Partition)), rm.reg).Mark(1)
}
