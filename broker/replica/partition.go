package replica

import (
	"slices"
	"sync"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/twmb/franz-go/pkg/kerr"
)

// noLeader is the leader id of a partition without a known leader.
const noLeader int32 = -1

// Partition is one partition replica hosted by this broker (Kafka's
// cluster.Partition): its role (leader or follower), leader epoch, replica
// set, ISR and the log. All role fields are guarded by mu, the equivalent of
// Kafka's leaderIsrUpdateLock: produce and fetch hold it for reading so that
// a role change (write lock) never interleaves with an append stamped with an
// old epoch. The log has its own append lock, always taken after mu.
type Partition struct {
	tp       common.TopicPartition
	brokerID int32

	// mu guards the following.
	mu              sync.RWMutex
	log             Log   // nil until the first LeaderAndIsr created it
	logErr          int16 // code of log's last failed creation, answered while log is nil (as Kafka's offline partition); 0 once created
	topicID         [16]byte
	leaderID        int32
	leaderEpoch     int32 // -1 until the first LeaderAndIsr
	partitionEpoch  int32 // ZooKeeper version of the partition state znode
	controllerEpoch int32 // epoch of the controller that wrote this leadership
	replicas        []int32
	// adding and removing are the reassignment's replicas of the last
	// LeaderAndIsr (Kafka's OngoingReassignmentState); nil when none.
	adding, removing []int32
	isr              []int32 // committed ISR; empty on followers
	// epochStartOffset is the log end when this broker became leader for
	// leaderEpoch; -1 on followers.
	epochStartOffset int64
	// pendingIsr is the ISR change in flight (written to ZooKeeper, answer
	// not applied yet); nil when none. At most one per partition.
	pendingIsr *isrChange

	// remotesMu guards the follower states (leader only); taken after mu.
	// The high watermark is not here: the log owns it (Log.HighWatermark).
	remotesMu sync.Mutex
	remotes   map[int32]*remoteReplica
}

func newPartition(tp common.TopicPartition, brokerID int32) *Partition {
	return &Partition{
		tp:               tp,
		brokerID:         brokerID,
		leaderID:         noLeader,
		leaderEpoch:      -1,
		partitionEpoch:   -1,
		controllerEpoch:  -1,
		epochStartOffset: -1,
		remotes:          make(map[int32]*remoteReplica),
	}
}

// TopicPartition returns the partition's name.
func (p *Partition) TopicPartition() common.TopicPartition { return p.tp }

// PartitionState is a snapshot of a partition's role.
type PartitionState struct {
	TopicID          [16]byte
	Leader           int32
	LeaderEpoch      int32
	PartitionEpoch   int32
	ControllerEpoch  int32
	Replicas         []int32
	ISR              []int32
	EpochStartOffset int64
	IsLeader         bool
	HighWatermark    int64 // -1 without a log
	LogEndOffset     int64 // -1 without a log
	LogStartOffset   int64 // -1 without a log
}

// State returns a consistent snapshot of the partition.
func (p *Partition) State() PartitionState {
	p.mu.RLock()
	defer p.mu.RUnlock()
	s := PartitionState{
		TopicID:          p.topicID,
		Leader:           p.leaderID,
		LeaderEpoch:      p.leaderEpoch,
		PartitionEpoch:   p.partitionEpoch,
		ControllerEpoch:  p.controllerEpoch,
		Replicas:         slices.Clone(p.replicas),
		ISR:              slices.Clone(p.isr),
		EpochStartOffset: p.epochStartOffset,
		IsLeader:         p.isLeaderLocked(),
		HighWatermark:    -1,
		LogEndOffset:     -1,
		LogStartOffset:   -1,
	}
	if p.log != nil {
		s.HighWatermark = p.log.HighWatermark()
		s.LogEndOffset = p.log.LogEndOffset()
		s.LogStartOffset = p.log.LogStartOffset()
	}
	return s
}

// IsLeader reports whether this broker leads the partition.
func (p *Partition) IsLeader() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.isLeaderLocked()
}

func (p *Partition) isLeaderLocked() bool {
	return p.log != nil && p.leaderID == p.brokerID
}

// Log returns the local log, nil if none was created yet.
func (p *Partition) Log() Log {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.log
}

// leaderState is what the data path captures under the read lock.
type leaderState struct {
	log         Log
	leaderEpoch int32
	isrSize     int
	esOffset    int64
}

// checkLeaderLocked applies the fencing rules shared by Fetch, ListOffsets
// and OffsetForLeaderEpoch: not leader →
// NOT_LEADER_OR_FOLLOWER; a current leader epoch (when >= 0) older than ours
// → FENCED_LEADER_EPOCH, newer → UNKNOWN_LEADER_EPOCH.
func (p *Partition) checkLeaderLocked(currentLeaderEpoch int32, requireLeader bool) (leaderState, *kerr.Error) {
	if p.log == nil {
		if p.logErr == kerr.KafkaStorageError.Code {
			return leaderState{}, kerr.KafkaStorageError
		}
		return leaderState{}, kerr.NotLeaderForPartition
	}
	if currentLeaderEpoch >= 0 {
		if currentLeaderEpoch < p.leaderEpoch {
			return leaderState{}, kerr.FencedLeaderEpoch
		}
		if currentLeaderEpoch > p.leaderEpoch {
			return leaderState{}, kerr.UnknownLeaderEpoch
		}
	}
	if requireLeader && p.leaderID != p.brokerID {
		return leaderState{}, kerr.NotLeaderForPartition
	}
	return leaderState{log: p.log, leaderEpoch: p.leaderEpoch, isrSize: len(p.isr), esOffset: p.epochStartOffset}, nil
}

// maybeIncrementHighWatermark is the high-watermark rule of a leader: the
// HW rises to the smallest log end offset among the leader and the
// followers that count (members of the maximal ISR, and caught-up
// followers outside it). The log holds the value and raises it only
// (Log.MaybeIncrementHighWatermark), so concurrent appends finishing in
// either order never move it back; only truncation lowers it. Must hold
// p.mu (read or write) with this broker leading; takes remotesMu. Returns
// whether the HW rose, so callers complete delayed produce and fetch
// requests (after releasing p.mu).
func (p *Partition) maybeIncrementHighWatermark(log Log, now time.Time, lagMax time.Duration) bool {
	p.remotesMu.Lock()
	defer p.remotesMu.Unlock()
	return p.maybeIncrementHighWatermarkRemotesLocked(log, now, lagMax)
}

func (p *Partition) maybeIncrementHighWatermarkRemotesLocked(log Log, now time.Time, lagMax time.Duration) bool {
	leo := log.LogEndOffset()
	candidate := highWatermarkCandidate(p.brokerID, leo, p.replicas, p.maximalIsrLocked(), p.remotes, now, lagMax)
	return log.MaybeIncrementHighWatermark(candidate)
}

// maximalIsrLocked is the committed ISR plus a replica whose addition is in
// flight: the set used for the HW and acks=all. During
// a pending shrink it is still the committed, larger ISR.
func (p *Partition) maximalIsrLocked() []int32 {
	if p.pendingIsr != nil && p.pendingIsr.expand {
		return p.pendingIsr.newIsr
	}
	return p.isr
}

func containsBroker(ids []int32, id int32) bool { return slices.Contains(ids, id) }

// makeLeaderLocked is Kafka's Partition.makeLeader: this broker leads with
// the controller's ISR, the new leader epoch (already in p.leaderEpoch)
// starts at the log end, and the follower states restart. It returns the
// error of recording the epoch in the leader epoch checkpoint. Must hold
// p.mu (write).
func (p *Partition) makeLeaderLocked(leaderEpoch int32, isr []int32, wasLeader bool, now time.Time, lagMax time.Duration) error {
	p.leaderID = p.brokerID
	p.isr = slices.Clone(isr)
	p.pendingIsr = nil
	leo := p.log.LogEndOffset()
	// The new epoch starts at the current log end even if nothing is ever
	// written in it, so followers holding records of a failed later epoch
	// can still find their truncation point.
	p.epochStartOffset = leo
	epochErr := p.log.AssignEpoch(leaderEpoch, leo)
	// Follower tracking restarts with the epoch: ISR members get
	// a fresh lag allowance; a broker that was not leader knows nothing of
	// its followers' logs, so ISR members hold the HW until they fetch.
	p.remotesMu.Lock()
	old := p.remotes
	p.remotes = make(map[int32]*remoteReplica, len(p.replicas))
	for _, id := range p.replicas {
		if id == p.brokerID {
			continue
		}
		r := newRemoteReplica()
		inIsr := containsBroker(p.isr, id)
		if inIsr {
			r.lastCaughtUp = now
		}
		if prev := old[id]; wasLeader && prev != nil {
			r.leo, r.logStart = prev.leo, prev.logStart
			r.lastFetchLeaderLEO = leo
			if inIsr {
				r.lastFetchTime = now
			}
		}
		p.remotes[id] = r
	}
	// The HW loaded from replication-offset-checkpoint stays where it is
	// (clamped by storage) until the followers of the ISR report their log
	// ends; with ISR = {leader} it moves to the log end now.
	p.maybeIncrementHighWatermarkRemotesLocked(p.log, now, lagMax)
	p.remotesMu.Unlock()
	return epochErr
}

// makeFollowerLocked is Kafka's Partition.makeFollower: the partition
// follows leader (-1: none). Followers refuse produce and do not track an
// ISR; fetching from the leader is the fetcher's job. Must hold p.mu
// (write).
func (p *Partition) makeFollowerLocked(leader int32) {
	p.leaderID = leader
	p.isr = nil
	p.pendingIsr = nil
	p.epochStartOffset = -1
	p.remotesMu.Lock()
	clear(p.remotes)
	p.remotesMu.Unlock()
}
