package replica

import "github.com/klassik/klassik/broker/common"

// ReplicaQuota is Kafka's ReplicaQuota, one direction of the replication
// quotas (broker/replicaquota.Manager): the leader's bytes sent to
// followers (Config.LeaderQuota) or the follower's fetched bytes
// (FetcherConfig.Quota).
type ReplicaQuota interface {
	// Record counts bytes of a throttled partition, never refusing them.
	Record(bytes int64)
	// IsThrottled reports whether the partition's replication is throttled
	// on this broker (the topic's *.replication.throttled.replicas).
	IsThrottled(tp common.TopicPartition) bool
	// IsQuotaExceeded reports whether the measured rate is above the bound.
	IsQuotaExceeded() bool
}

// unboundedQuota is Kafka's UnboundedQuota: nothing is throttled.
type unboundedQuota struct{}

func (unboundedQuota) Record(int64)                           {}
func (unboundedQuota) IsThrottled(common.TopicPartition) bool { return false }
func (unboundedQuota) IsQuotaExceeded() bool                  { return false }

// shouldLeaderThrottleLocked is Kafka's ReplicaManager.shouldLeaderThrottle:
// a follower outside the ISR fetching a throttled partition while the
// leader quota is exceeded gets no records this time (its position and the
// HW are still answered, so it fetches the same offset again). An ISR
// member is never held back: it would fall out of the ISR. Must hold p.mu
// (read).
func (m *Manager) shouldLeaderThrottleLocked(p *Partition, tp common.TopicPartition, replicaID int32) bool {
	q := m.cfg.LeaderQuota
	return !containsBroker(p.isr, replicaID) && q.IsThrottled(tp) && q.IsQuotaExceeded()
}

// recordLeaderReplication counts the bytes a response to a follower carries
// for throttled partitions, in or out of the ISR (Kafka's
// sizeOfThrottledPartitions), so the whole replication traffic of those
// partitions stays under the bound.
func (m *Manager) recordLeaderReplication(parts []fetchPart, reads []partRead) {
	q := m.cfg.LeaderQuota
	var n int64
	for i := range parts {
		if s := reads[i].size(); s > 0 && q.IsThrottled(parts[i].tp) {
			n += int64(s)
		}
	}
	q.Record(n)
}

// shouldFollowerThrottle is Kafka's ReplicaFetcherThread.shouldFollowerThrottle:
// a throttled partition this follower has not caught up on (no lag known
// yet, or behind the leader's HW at its last fetch) is left out of the
// fetch request while the follower quota is exceeded.
func (t *fetcherThread) shouldFollowerThrottle(ps partSnap) bool {
	q := t.f.cfg.Quota
	return !ps.inSync && q.IsThrottled(ps.tp) && q.IsQuotaExceeded()
}
