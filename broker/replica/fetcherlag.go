package replica

import (
	"strconv"
	"sync"
	"sync/atomic"

	gometrics "github.com/rcrowley/go-metrics"

	"github.com/klassik/klassik/broker/common"
)

// fetcherLagStats are Kafka's FetcherLagMetrics: per followed partition,
// ConsumerLag (the leader's high watermark minus our next fetch offset,
// at least 0), tagged with the fetcher thread's client id
// ReplicaFetcherThread-<fetcher id>-<leader id>, topic and partition;
// and ReplicaFetcherManager's MaxLag (clientId=Replica) over them.
type fetcherLagStats struct {
	reg gometrics.Registry

	// mu guards the following.
	mu   sync.RWMutex
	lags map[common.TopicPartition]*partitionLag
}

type partitionLag struct {
	name string // registered name
	lag  atomic.Int64
}

func newFetcherLagStats(r gometrics.Registry) *fetcherLagStats {
	if r == nil {
		return nil
	}
	s := &fetcherLagStats{reg: r, lags: map[common.TopicPartition]*partitionLag{}}
	r.GetOrRegister("kafka.server.ReplicaFetcherManager.MaxLag.clientId=Replica", gometrics.NewFunctionalGauge(s.maxLag))
	// Kafka counts fetcher threads that died and partitions it stopped
	// fetching after an unexpected error; Klassik's fetchers back off and
	// retry such a partition, and end only at shutdown, so both are 0.
	zero := func() int64 { return 0 }
	r.GetOrRegister("kafka.server.ReplicaFetcherManager.FailedPartitionsCount.clientId=Replica", gometrics.NewFunctionalGauge(zero))
	r.GetOrRegister("kafka.server.ReplicaFetcherManager.DeadThreadCount.clientId=Replica", gometrics.NewFunctionalGauge(zero))
	return s
}

func (s *fetcherLagStats) maxLag() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var max int64
	for _, l := range s.lags {
		max = maxInt64(max, l.lag.Load())
	}
	return max
}

func maxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// update sets tp's lag as fetched by thread key, registering its gauge at
// the first update.
func (s *fetcherLagStats) update(key fetcherKey, tp common.TopicPartition, leaderHW, nextOffset int64) {
	if s == nil {
		return
	}
	lag := maxInt64(0, leaderHW-nextOffset)
	s.mu.RLock()
	l := s.lags[tp]
	s.mu.RUnlock()
	if l == nil {
		s.mu.Lock()
		if l = s.lags[tp]; l == nil {
			l = &partitionLag{name: "kafka.server.FetcherLagMetrics.ConsumerLag.clientId=ReplicaFetcherThread-" +
				strconv.Itoa(key.id) + "-" + strconv.Itoa(int(key.leader)) +
				".topic=" + tp.Topic + ".partition=" + strconv.Itoa(int(tp.Partition))}
			s.lags[tp] = l
			s.reg.GetOrRegister(l.name, gometrics.NewFunctionalGauge(l.lag.Load))
		}
		s.mu.Unlock()
	}
	l.lag.Store(lag)
}

// remove drops tp's gauge (the partition left the fetcher).
func (s *fetcherLagStats) remove(tp common.TopicPartition) {
	if s == nil {
		return
	}
	s.mu.Lock()
	l := s.lags[tp]
	delete(s.lags, tp)
	s.mu.Unlock()
	if l != nil {
		s.reg.Unregister(l.name)
	}
}
