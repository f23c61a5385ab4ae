package replica

import (
	"slices"
	"strconv"

	gometrics "github.com/rcrowley/go-metrics"

	"github.com/klassik/klassik/broker/common"
)

// Kafka's per-partition gauges (kafka.cluster:type=Partition,name=...,
// topic=...,partition=...), registered for every partition this broker
// hosts, from its first LeaderAndIsr until StopReplica deletes it. Their
// values are the leader's view: a follower reports 0 for all but
// LastStableOffsetLag, as Kafka's Partition does.
var partitionGaugeNames = [...]string{"UnderReplicated", "InSyncReplicasCount", "UnderMinIsr", "AtMinIsr",
	"ReplicasCount", "LastStableOffsetLag"}

func partitionGaugeName(name string, tp common.TopicPartition) string {
	return "kafka.cluster.Partition." + name + ".topic=" + tp.Topic + ".partition=" + strconv.Itoa(int(tp.Partition))
}

// registerPartitionMetrics registers p's gauges (no-op without a
// registry). Called with no lock held.
func (m *Manager) registerPartitionMetrics(p *Partition) {
	r := m.metrics.reg
	if r == nil {
		return
	}
	leaderCount := func(f func(p *Partition) int64) func() int64 {
		return func() int64 {
			p.mu.RLock()
			defer p.mu.RUnlock()
			if !p.isLeaderLocked() {
				return 0
			}
			return f(p)
		}
	}
	minISR := func() int { return m.minISR(p.tp.Topic) }
	b2i := func(b bool) int64 {
		if b {
			return 1
		}
		return 0
	}
	fs := [len(partitionGaugeNames)]func() int64{
		leaderCount(func(p *Partition) int64 { return b2i(p.replicationFactorLocked()-len(p.isr) > 0) }),
		leaderCount(func(p *Partition) int64 { return int64(len(p.isr)) }),
		leaderCount(func(p *Partition) int64 { return b2i(len(p.isr) < minISR()) }),
		leaderCount(func(p *Partition) int64 { return b2i(len(p.isr) == minISR()) }),
		leaderCount(func(p *Partition) int64 { return int64(p.replicationFactorLocked()) }),
		func() int64 {
			p.mu.RLock()
			defer p.mu.RUnlock()
			if p.log == nil {
				return 0
			}
			return p.log.HighWatermark() - p.log.LastStableOffset()
		},
	}
	for i, n := range partitionGaugeNames {
		name := partitionGaugeName(n, p.tp)
		r.Unregister(name) // a partition re-created after a deletion
		_ = r.Register(name, gometrics.NewFunctionalGauge(fs[i]))
	}
}

// unregisterPartitionMetrics removes tp's gauges.
func (m *Manager) unregisterPartitionMetrics(tp common.TopicPartition) {
	r := m.metrics.reg
	if r == nil {
		return
	}
	for _, n := range partitionGaugeNames {
		r.Unregister(partitionGaugeName(n, tp))
	}
}

// replicationFactorLocked is Kafka's assignment replication factor: the
// replicas without those a reassignment is adding.
func (p *Partition) replicationFactorLocked() int {
	n := len(p.replicas)
	for _, r := range p.adding {
		if slices.Contains(p.replicas, r) {
			n--
		}
	}
	return n
}

// setReassignmentLocked records the reassignment state of a LeaderAndIsr
// (adding and removing replicas) and keeps m.reassigning, the number of
// hosted partitions with replicas being added, in step.
func (m *Manager) setReassignmentLocked(p *Partition, adding, removing []int32) {
	was := len(p.adding) > 0
	p.adding, p.removing = slices.Clone(adding), slices.Clone(removing)
	switch now := len(p.adding) > 0; {
	case now && !was:
		m.reassigning.Add(1)
	case was && !now:
		m.reassigning.Add(-1)
	}
}

// isReassigningLocked is Kafka's Partition.isReassigning.
func (p *Partition) isReassigningLocked() bool { return len(p.adding) > 0 || len(p.removing) > 0 }

// isAddingReplica reports whether a reassignment is adding broker to tp
// here (Kafka's isAddingReplica), for the reassignment byte meters; it
// costs nothing while no hosted partition has replicas being added.
func (m *Manager) isAddingReplica(tp common.TopicPartition, broker int32) bool {
	if m.reassigning.Load() == 0 {
		return false
	}
	p, ok := m.Partition(tp)
	if !ok {
		return false
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return slices.Contains(p.adding, broker)
}

// reassigningPartitions counts the partitions this broker leads with a
// reassignment in progress (ReplicaManager ReassigningPartitions).
func (m *Manager) reassigningPartitions() int64 {
	var n int64
	for _, p := range m.Partitions() {
		p.mu.RLock()
		if p.isLeaderLocked() && p.isReassigningLocked() {
			n++
		}
		p.mu.RUnlock()
	}
	return n
}
