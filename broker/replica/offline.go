package replica

// Offline replicas (KIP-112; Kafka's ReplicaManager.handleLogDirFailure and
// HostedPartition.Offline). When a log directory fails, the broker's
// failure handler calls MarkPartitionsOffline with the partitions whose
// logs live there, before the log manager closes those logs. From then on
// the partitions are neither led nor followed here: Produce, Fetch,
// ListOffsets and the other data-path requests answer KAFKA_STORAGE_ERROR
// (through unknownPartitionError), LeaderAndIsr answers
// KAFKA_STORAGE_ERROR for them (which tells the controller the replica is
// offline) and StopReplica too. The set only empties when the broker
// restarts.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/broker/common"
)

// MarkPartitionsOffline stops serving tps (Kafka's markPartitionOffline for
// each): under the control lock, so no LeaderAndIsr interleaves, each
// hosted partition drops its log and role (its write lock waits for the
// appends and reads in flight) and leaves the hosted map for the offline
// set; the fetcher stops following them, parked fetches and acks=all
// produces are woken (they now see KAFKA_STORAGE_ERROR), and the
// coordinators are told this broker no longer leads them.
func (m *Manager) MarkPartitionsOffline(tps []common.TopicPartition) {
	if len(tps) == 0 {
		return
	}
	for _, tp := range tps {
		m.stopLogDirMover(tp) // before the locks the mover takes
	}
	m.controlMu.Lock()
	defer m.controlMu.Unlock()
	var resigned []LeadershipChange
	for _, tp := range tps {
		m.mu.Lock()
		p, hosted := m.partitions[tp]
		m.mu.Unlock()
		if hosted {
			p.mu.Lock()
			wasLeader := p.isLeaderLocked()
			epoch := p.leaderEpoch
			p.log = nil
			p.leaderID = noLeader
			p.isr = nil
			p.pendingIsr = nil
			m.setReassignmentLocked(p, nil, nil)
			p.mu.Unlock()
			if wasLeader {
				resigned = append(resigned, LeadershipChange{TopicPartition: tp, LeaderEpoch: epoch})
			}
		}
		m.mu.Lock()
		if m.offline == nil {
			m.offline = map[common.TopicPartition]struct{}{}
		}
		m.offline[tp] = struct{}{}
		removed := hosted && m.partitions[tp] == p
		if removed {
			delete(m.partitions, tp)
		}
		m.mu.Unlock()
		if removed {
			m.unregisterPartitionMetrics(tp)
		}
		m.state.Warn("partition state change", "topic", tp.Topic, "partition", tp.Partition,
			"to", "offline", "reason", "log directory failure")
	}
	if m.cfg.Fetcher != nil {
		m.cfg.Fetcher.RemovePartitions(slices.Clone(tps))
	}
	for _, tp := range tps {
		m.wakeOnHighWatermark(tp)
	}
	if len(resigned) > 0 && m.cfg.OnLeadershipChange != nil {
		m.cfg.OnLeadershipChange(resigned)
	}
	m.log.Warn("stopped serving replicas in a failed log directory", "partitions", len(tps))
}

// IsOffline reports whether tp's replica here is on a failed log
// directory.
func (m *Manager) IsOffline(tp common.TopicPartition) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, off := m.offline[tp]
	return off
}

// OfflinePartitions lists the replicas here that are on failed log
// directories, sorted.
func (m *Manager) OfflinePartitions() []common.TopicPartition {
	m.mu.RLock()
	out := make([]common.TopicPartition, 0, len(m.offline))
	for tp := range m.offline {
		out = append(out, tp)
	}
	m.mu.RUnlock()
	slices.SortFunc(out, common.TopicPartition.Compare)
	return out
}

// offlineErrorLocked is KAFKA_STORAGE_ERROR for an offline replica, nil
// otherwise. Must hold m.mu (read or write).
func (m *Manager) offlineErrorLocked(tp common.TopicPartition) *kerr.Error {
	if _, off := m.offline[tp]; off {
		return kerr.KafkaStorageError
	}
	return nil
}

// checkNotOnOfflineDir is Kafka's refusal to create a log for a partition
// LeaderAndIsr does not call new (is_new false) while a log directory is
// offline: its log may be in that directory, and an empty one created
// elsewhere could be elected leader from a stale ISR. Such a partition
// joins the offline set and answers KAFKA_STORAGE_ERROR. Must hold
// controlMu, not mu.
func (m *Manager) checkNotOnOfflineDir(tp common.TopicPartition, isNew bool) int16 {
	if isNew {
		return 0
	}
	if _, ok := m.logs.GetLog(tp); ok {
		return 0
	}
	off := m.logs.OfflineDirs()
	if len(off) == 0 {
		return 0
	}
	m.mu.Lock()
	if m.offline == nil {
		m.offline = map[common.TopicPartition]struct{}{}
	}
	m.offline[tp] = struct{}{}
	m.mu.Unlock()
	m.state.Warn("cannot create the log of a partition that is not new while log directories are offline",
		"topic", tp.Topic, "partition", tp.Partition, "offline_dirs", off)
	return kerr.KafkaStorageError.Code
}
