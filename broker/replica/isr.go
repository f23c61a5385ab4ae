package replica

import (
	"slices"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/zkpaths"
)

// remoteReplica is what a leader knows about one follower (Kafka's
// cluster.Replica). Guarded by Partition.remotesMu.
type remoteReplica struct {
	leo                int64 // fetch offset of its latest fetch; -1 unknown
	logStart           int64 // -1 unknown
	lastFetchTime      time.Time
	lastFetchLeaderLEO int64 // -1 unknown
	lastCaughtUp       time.Time
}

func newRemoteReplica() *remoteReplica {
	return &remoteReplica{leo: -1, logStart: -1, lastFetchLeaderLEO: -1}
}

// updateFetchState records a follower fetch at fetchOffset that arrived at
// now while the leader's log end was leaderLEO. A
// follower counts as caught up at now when it asked for the leader's log
// end, and "as of its previous fetch" when it has now reached what the
// leader had back then, so a steady trickle of small produce requests that
// keeps the leader one batch ahead does not push it out of the ISR.
func (r *remoteReplica) updateFetchState(fetchOffset, logStart int64, now time.Time, leaderLEO int64) {
	if fetchOffset >= leaderLEO {
		if now.After(r.lastCaughtUp) {
			r.lastCaughtUp = now
		}
	} else if r.lastFetchLeaderLEO >= 0 && fetchOffset >= r.lastFetchLeaderLEO {
		if r.lastFetchTime.After(r.lastCaughtUp) {
			r.lastCaughtUp = r.lastFetchTime
		}
	}
	r.lastFetchLeaderLEO = max(leaderLEO, r.lastFetchLeaderLEO)
	r.lastFetchTime = now
	r.leo = fetchOffset
	r.logStart = logStart
}

// isCaughtUp is Kafka's Replica.isCaughtUp: at the leader's log end, or
// caught up at most lagMax ago.
func (r *remoteReplica) isCaughtUp(leaderLEO int64, now time.Time, lagMax time.Duration) bool {
	if r.leo == leaderLEO {
		return true
	}
	return !r.lastCaughtUp.IsZero() && now.Sub(r.lastCaughtUp) <= lagMax
}

// highWatermarkCandidate is the high-watermark rule: the leader's log end lowered
// to the log end of every follower that is in the maximal ISR or caught up.
// A follower of the ISR whose log end is unknown (-1, no fetch since this
// broker became leader) yields -1, which holds the HW where it is.
func highWatermarkCandidate(self int32, leaderLEO int64, replicas, maximalIsr []int32, remotes map[int32]*remoteReplica, now time.Time, lagMax time.Duration) int64 {
	candidate := leaderLEO
	for _, id := range replicas {
		if id == self {
			continue
		}
		inIsr := slices.Contains(maximalIsr, id)
		r := remotes[id]
		if r == nil {
			if inIsr {
				return -1
			}
			continue
		}
		if r.leo < candidate && (inIsr || r.isCaughtUp(leaderLEO, now, lagMax)) {
			candidate = r.leo
		}
	}
	return candidate
}

// outOfSyncReplicas is the ISR shrink rule: the followers of the committed
// ISR that are not caught up (one without any fetch state counts as out of
// sync).
func outOfSyncReplicas(self int32, isr []int32, remotes map[int32]*remoteReplica, leaderLEO int64, now time.Time, lagMax time.Duration) []int32 {
	var out []int32
	for _, id := range isr {
		if id == self {
			continue
		}
		r := remotes[id]
		if r == nil || !r.isCaughtUp(leaderLEO, now, lagMax) {
			out = append(out, id)
		}
	}
	return out
}

// canJoinIsr is the ISR expand rule: a follower outside the ISR joins once
// its log end reached both the HW and the leader's epoch start offset. The
// second condition matters: records between the HW and the epoch start may
// still be committed by this leader, so a replica lacking them must not
// become electable.
func canJoinIsr(r *remoteReplica, hw, epochStartOffset int64) bool {
	return r != nil && r.leo >= 0 && r.leo >= hw && r.leo >= epochStartOffset
}

// isrChange is an ISR update in flight (Kafka's PendingExpandIsr /
// PendingShrinkIsr).
type isrChange struct {
	expand bool
	newIsr []int32
}

// IsrUpdater is the part of the ZooKeeper client (*zkclient.Client) a
// partition leader persists its own ISR changes with, as Kafka's brokers do
// before IBP 2.7-IV2: the leader rewrites its partition's state znode
// /brokers/topics/<t>/partitions/<p>/state conditionally on the version it
// last saw (the partition epoch), without the controller-epoch fence, and
// batches the changed partitions into persistent sequential
// /isr_change_notification/isr_change_ znodes that the controller watches
// to refresh the other brokers' metadata.
type IsrUpdater interface {
	// UpdateLeaderAndIsrsConditional writes states[i] to the state znode
	// of tps[i] conditionally on states[i].ZkVersion, for all i in as few
	// round trips as it can, and returns each write's new version or
	// error, as if it had been written alone; an error matching
	// zk.ErrBadVersion means another writer (the controller) got there
	// first and this leader's view is stale.
	UpdateLeaderAndIsrsConditional(tps []common.TopicPartition, states []zkpaths.LeaderAndIsr) (versions []int32, errs []error)
	// CreateIsrChangeNotification records one change notification listing
	// tps.
	CreateIsrChangeNotification(tps []common.TopicPartition) (string, error)
}
