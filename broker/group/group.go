package group

import (
	"crypto/rand"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/common/jvm"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConsumerProtocolType is the protocol type of Kafka consumers; only for
// it does the broker look inside member metadata (OffsetDelete, expiry).
const ConsumerProtocolType = "consumer"

// State is a group state (GroupState in GroupMetadata.scala).
type State int8

// Group states. See the diagram in doc.go.
const (
	Empty State = iota
	PreparingRebalance
	CompletingRebalance
	Stable
	Dead
)

var stateNames = [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}

// String returns Kafka's name of the state, as DescribeGroups and
// ListGroups report it.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("Unknown(%d)", int8(s))
}

// ParseState parses a state name case-insensitively (ListGroups v4
// states filter).
func ParseState(name string) (State, bool) {
	for i, n := range stateNames {
		if strings.EqualFold(n, name) {
			return State(i), true
		}
	}
	return 0, false
}

// validPreviousStates is Kafka's table: a transition to the key is legal
// only from one of the listed states.
var validPreviousStates = map[State][]State{
	Empty:               {PreparingRebalance},
	PreparingRebalance:  {Stable, CompletingRebalance, Empty},
	CompletingRebalance: {PreparingRebalance},
	Stable:              {CompletingRebalance},
	Dead:                {Stable, PreparingRebalance, CompletingRebalance, Empty, Dead},
}

// CanTransition reports whether from -> to is in the valid-previous-state
// table.
func CanTransition(from, to State) bool {
	for _, s := range validPreviousStates[to] {
		if s == from {
			return true
		}
	}
	return false
}

// IllegalTransitionError is returned (and logged) for a transition not in
// the table; the group keeps its state.
type IllegalTransitionError struct {
	Group    string
	From, To State
}

func (e *IllegalTransitionError) Error() string {
	return fmt.Sprintf("group: group %q should be in one of %v before moving to %v, but is %v",
		e.Group, validPreviousStates[e.To], e.To, e.From)
}

// Protocol is one (name, metadata) candidate of a JoinGroup.
type Protocol struct {
	Name     string
	Metadata []byte
}

// Member is MemberMetadata: one consumer of a group.
type Member struct {
	ID               string
	InstanceID       *string
	ClientID         string
	ClientHost       string
	RebalanceTimeout time.Duration
	SessionTimeout   time.Duration
	ProtocolType     string
	Protocols        []Protocol
	Assignment       []byte

	// joinSeq orders members by first join so the first joiner leads.
	joinSeq uint64
	// joinCh is set while a JoinGroup of this member is parked; joinVer
	// is its request version.
	joinCh  chan *kmsg.JoinGroupResponse
	joinVer int16
	// syncCh is set while a SyncGroup of this member is parked.
	syncCh chan syncResult
	// session is the heartbeat-expiry timer; sessionSeq invalidates a
	// timer whose Stop lost the race with its firing.
	session    purgatory.Timer
	sessionSeq uint64
}

type syncResult struct {
	code                   int16
	assignment             []byte
	protocolType, protocol string
}

func (m *Member) metadataFor(protocol string) []byte {
	for _, p := range m.Protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

func (m *Member) sameProtocols(ps []Protocol) bool {
	if len(ps) != len(m.Protocols) {
		return false
	}
	for i := range ps {
		if ps[i].Name != m.Protocols[i].Name || string(ps[i].Metadata) != string(m.Protocols[i].Metadata) {
			return false
		}
	}
	return true
}

// Group is GroupMetadata. Every field is guarded by mu, Kafka's group
// lock; the coordinator takes it for each request on the group and in
// every timer callback of the group.
type Group struct {
	// mu guards the following.
	mu             sync.Mutex
	id             string
	partition      int32
	state          State
	stateTime      time.Time
	protocolType   string
	protocol       string
	generation     int32
	leader         string
	members        map[string]*Member
	static         map[string]string // group.instance.id -> member id
	pending        map[string]purgatory.Timer
	newMemberAdded bool
	joinSeq        uint64
	offsets        map[common.TopicPartition]OffsetValue
	// offsetPos is each cached offset's log position (see txnoffsets.go).
	offsetPos map[common.TopicPartition]int64
	// inflight counts the OffsetCommit writes of a partition not yet
	// durable (Kafka's pendingOffsetCommits).
	inflight map[common.TopicPartition]int
	// pendingTxn holds, per producer id, the offsets of its open
	// transaction (Kafka's pendingTransactionalOffsetCommits).
	pendingTxn map[int64]map[common.TopicPartition]*pendingTxnOffset
	// rebalance is the delayed-join timer; rebalanceSeq invalidates stale
	// firings. initialDelayLeft is the InitialDelayedJoin budget.
	rebalance        purgatory.Timer
	rebalanceSeq     uint64
	initialDelayLeft time.Duration
	initialDelay     bool
	// pendingSync holds members that must send SyncGroup for the current
	// generation before syncTimer fires.
	pendingSync map[string]struct{}
	syncTimer   purgatory.Timer
	syncSeq     uint64
	// unloaded marks a group dropped by OnResign: requests that raced
	// with the resignation answer NOT_COORDINATOR.
	unloaded bool
	// writeTicket and writeServing order the group's appends (see
	// Coordinator.writeLocked); writeCond waits on mu.
	writeTicket, writeServing uint64
	writeCond                 *sync.Cond
}

func newGroup(id string, partition int32, now time.Time) *Group {
	g := &Group{
		id: id, partition: partition, state: Empty, stateTime: now,
		members: map[string]*Member{}, static: map[string]string{}, pending: map[string]purgatory.Timer{},
		offsets: map[common.TopicPartition]OffsetValue{}, pendingSync: map[string]struct{}{},
		offsetPos: map[common.TopicPartition]int64{}, inflight: map[common.TopicPartition]int{},
		pendingTxn: map[int64]map[common.TopicPartition]*pendingTxnOffset{},
	}
	g.writeCond = sync.NewCond(&g.mu)
	return g
}

// transitionLocked moves the group to `to` if the table allows it.
func (g *Group) transitionLocked(to State, now time.Time) error {
	if !CanTransition(g.state, to) {
		return &IllegalTransitionError{Group: g.id, From: g.state, To: to}
	}
	g.state = to
	g.stateTime = now
	return nil
}

// sortedMembersLocked returns members in join order.
func (g *Group) sortedMembersLocked() []*Member {
	ms := make([]*Member, 0, len(g.members))
	for _, m := range g.members {
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].joinSeq < ms[j].joinSeq })
	return ms
}

func (g *Group) allSupportLocked(name string) bool {
	for _, m := range g.members {
		if !hasProtocol(m.Protocols, name) {
			return false
		}
	}
	return true
}

func hasProtocol(ps []Protocol, name string) bool {
	for _, p := range ps {
		if p.Name == name {
			return true
		}
	}
	return false
}

// selectProtocolLocked picks the protocol supported by every member with
// the most votes; each member votes for its first listed candidate that
// all members support. Ties go to the candidate listed first by the
// earliest joiner, which makes the choice deterministic.
func (g *Group) selectProtocolLocked() string {
	ms := g.sortedMembersLocked()
	if len(ms) == 0 {
		return ""
	}
	var candidates []string
	for _, p := range ms[0].Protocols {
		if g.allSupportLocked(p.Name) {
			candidates = append(candidates, p.Name)
		}
	}
	votes := map[string]int{}
	for _, m := range ms {
		for _, p := range m.Protocols {
			if g.allSupportLocked(p.Name) {
				votes[p.Name]++
				break
			}
		}
	}
	best, bestVotes := "", -1
	for _, c := range candidates {
		if votes[c] > bestVotes {
			best, bestVotes = c, votes[c]
		}
	}
	return best
}

func (g *Group) maxRebalanceTimeoutLocked() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		if m.RebalanceTimeout > d {
			d = m.RebalanceTimeout
		}
	}
	return d
}

// allJoinedLocked is hasAllMembersJoined: every member has a parked join
// and no member id handed out with MEMBER_ID_REQUIRED is outstanding.
func (g *Group) allJoinedLocked() bool {
	for _, m := range g.members {
		if m.joinCh == nil {
			return false
		}
	}
	return len(g.pending) == 0
}

// subscribedTopicsLocked parses the consumer subscriptions of the
// selected protocol; ok is false when they are not known.
func (g *Group) subscribedTopicsLocked() (map[string]bool, bool) {
	if g.protocolType != ConsumerProtocolType || g.protocol == "" {
		return nil, false
	}
	topics := map[string]bool{}
	for _, m := range g.members {
		var meta kmsg.ConsumerMemberMetadata
		if err := meta.ReadFrom(m.metadataFor(g.protocol)); err != nil {
			return nil, false
		}
		for _, t := range meta.Topics {
			topics[t] = true
		}
	}
	return topics, true
}

// newMemberID is Kafka's clientId + "-" + UUID.randomUUID().
func newMemberID(clientID string) string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", clientID, u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// PartitionFor maps a key to one of n partitions of an internal topic
// (jvm.PartitionFor: Utils.abs(hashCode) % n).
func PartitionFor(key string, n int32) int32 { return jvm.PartitionFor(key, n) }
