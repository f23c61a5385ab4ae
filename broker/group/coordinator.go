package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/klassik/klassik/broker/purgatory"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Clock is the coordinator's time source (purgatory.RealClock in the
// broker, a purgatory.FakeClock in tests).
type Clock = purgatory.Clock

type partitionState int8

const (
	partitionLoading partitionState = iota + 1
	partitionLoaded
)

type ownership struct {
	state partitionState
	epoch uint64 // identifies one OnBecomeLeader call
	// completions are the transaction ends (HandleTxnCompletion) that
	// arrived while the partition was loading; the load may have read
	// the log before their marker, so they are applied when it publishes.
	completions []txnCompletion
}

// Coordinator is Kafka's GroupCoordinator plus GroupMetadataManager for
// the __consumer_offsets partitions this broker leads.
type Coordinator struct {
	cfg   Config
	store OffsetStore
	clock Clock
	log   *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	// wg tracks loader and background-write goroutines.
	wg sync.WaitGroup

	// bgMu guards the following. It is a leaf lock, taken with a group
	// lock held when a state transition queues a background write.
	bgMu     sync.Mutex
	bgClosed bool

	// mu guards the following. Lock order: Group.mu before
	// Coordinator.mu; code holding Coordinator.mu never takes a group
	// lock (it copies the groups it needs and releases mu first).
	mu        sync.Mutex
	groups    map[string]*Group
	owned     map[int32]ownership
	loadEpoch uint64
	// producerGroups: producer id → groups with its pending transactional
	// offsets (Kafka's openGroupsForProducer).
	producerGroups map[int64]map[string]struct{}
	expiryTimer    purgatory.Timer
	closed         bool
}

// New returns a Coordinator that owns no partition yet. store must not be
// nil; a nil clock means the real clock and a nil logger slog.Default().
func New(cfg Config, store OffsetStore, clock Clock, logger *slog.Logger) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("group: invalid config: %w", err)
	}
	if store == nil {
		return nil, errors.New("group: nil OffsetStore")
	}
	if clock == nil {
		clock = purgatory.RealClock()
	}
	if logger == nil {
		logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Coordinator{cfg: cfg, store: store, clock: clock, log: logger.With("component", "group-coordinator"),
		ctx: ctx, cancel: cancel, groups: map[string]*Group{}, owned: map[int32]ownership{},
		producerGroups: map[int64]map[string]struct{}{}}
	c.mu.Lock()
	c.scheduleExpiryLocked()
	c.mu.Unlock()
	return c, nil
}

// Close stops the expiry task, cancels loads and background writes, waits
// for them, and unloads every group (parked requests get NOT_COORDINATOR).
func (c *Coordinator) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.bgMu.Lock()
	c.bgClosed = true
	c.bgMu.Unlock()
	if c.expiryTimer != nil {
		c.expiryTimer.Stop()
	}
	var parts []int32
	for p := range c.owned {
		parts = append(parts, p)
	}
	c.mu.Unlock()
	c.cancel()
	for _, p := range parts {
		c.OnResign(p)
	}
	c.wg.Wait()
}

// PartitionFor returns the __consumer_offsets partition of a group.
func (c *Coordinator) PartitionFor(groupID string) int32 {
	return PartitionFor(groupID, c.cfg.OffsetsTopicPartitions)
}

// IsLoading reports whether the partition is being loaded.
func (c *Coordinator) IsLoading(partition int32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.owned[partition].state == partitionLoading
}

// ownerCode returns the coordinator error for a group id: NOT_COORDINATOR
// when its partition is not led here, COORDINATOR_LOAD_IN_PROGRESS while
// it loads, 0 otherwise.
func (c *Coordinator) ownerCodeLocked(partition int32) int16 {
	if c.closed {
		return kerr.NotCoordinator.Code
	}
	switch c.owned[partition].state {
	case partitionLoaded:
		return 0
	case partitionLoading:
		return kerr.CoordinatorLoadInProgress.Code
	default:
		return kerr.NotCoordinator.Code
	}
}

// lookup returns the group (creating an Empty one when create is set) or
// a coordinator error code. The group is returned unlocked.
func (c *Coordinator) lookup(groupID string, create bool) (*Group, int16) {
	p := c.PartitionFor(groupID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if code := c.ownerCodeLocked(p); code != 0 {
		return nil, code
	}
	g := c.groups[groupID]
	if g == nil && create {
		g = newGroup(groupID, p, c.clock.Now())
		c.groups[groupID] = g
	}
	return g, 0
}

// removeGroup drops g from the map if it is still the registered one.
func (c *Coordinator) removeGroup(g *Group) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.groups[g.id] == g {
		delete(c.groups, g.id)
	}
}

// lockGroup looks group id up (creating it if create) and locks it. It
// returns a code instead, with no lock held, when this broker cannot serve
// the group (lookup's codes), when the group does not exist (missing), or
// when it was unloaded after lookup returned it (lockedCode).
func (c *Coordinator) lockGroup(id string, create bool, missing int16) (*Group, int16) {
	g, code := c.lookup(id, create)
	if code != 0 {
		return nil, code
	}
	if g == nil {
		return nil, missing
	}
	g.mu.Lock()
	if code := lockedCode(g); code != 0 {
		g.mu.Unlock()
		return nil, code
	}
	return g, 0
}

// lockedCode checks, with g.mu held, that g was not unloaded or deleted
// after lookup returned it.
func lockedCode(g *Group) int16 {
	if g.unloaded {
		return kerr.NotCoordinator.Code
	}
	return 0
}

// ---- persistence ----

// buildBatch encodes records as one uncompressed v2 batch with CreateTime
// = now, as the coordinator writes them.
func buildBatch(now time.Time, recs []record.Record) []byte {
	return record.BuildAt(record.DefaultBuildOptions(), now, recs)
}

// appendBatch appends synchronously, bounded by offsets.commit.timeout.ms
// and by the coordinator's life, not by the request: a client that
// disconnects must not leave the log and the cache disagreeing.
func (c *Coordinator) appendBatch(partition int32, batch []byte) error {
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.OffsetCommitTimeout)
	defer cancel()
	return c.store.Append(ctx, partition, batch)
}

// writeLocked appends a batch for g in its turn and returns with g.mu
// held again. Turns are handed out under g.mu, so a group's records reach
// the log in the order its state changed, and the caller applies the
// outcome before the next writer of the group can run (it needs g.mu).
// g.mu is released while waiting and while appending.
func (c *Coordinator) writeLocked(g *Group, batch []byte) error {
	t := g.writeTicket
	g.writeTicket++
	return c.writeTurnLocked(g, t, batch)
}

// writeTurnLocked waits for ticket t's turn, appends batch with g.mu
// released, and hands the turn to the next ticket.
func (c *Coordinator) writeTurnLocked(g *Group, t uint64, batch []byte) error {
	for g.writeServing != t {
		g.writeCond.Wait()
	}
	g.mu.Unlock()
	err := c.appendBatch(g.partition, batch)
	g.mu.Lock()
	g.writeServing++
	g.writeCond.Broadcast()
	return err
}

// writeAsyncLocked queues a write whose outcome no request waits on (a
// group becoming Empty, a static member's new id, tombstones); a tracked
// goroutine performs it in the group's write order. Failures are logged.
func (c *Coordinator) writeAsyncLocked(g *Group, batch []byte, what string) {
	c.bgMu.Lock()
	if c.bgClosed {
		c.bgMu.Unlock()
		return
	}
	c.wg.Add(1)
	c.bgMu.Unlock()
	t := g.writeTicket
	g.writeTicket++
	go func() {
		defer c.wg.Done()
		g.mu.Lock()
		defer g.mu.Unlock()
		if err := c.writeTurnLocked(g, t, batch); err != nil {
			c.log.Warn("failed to write to __consumer_offsets", "partition", g.partition, "what", what, "err", err)
		}
	}()
}

// groupValueLocked encodes the group's current metadata record (v3), with
// assignments taken from assign when given.
func (g *Group) groupValueLocked(assign map[string][]byte) []byte {
	v := GroupValue{Version: groupValueLatest, ProtocolType: g.protocolType, Generation: g.generation,
		CurrentStateTimestamp: g.stateTime.UnixMilli()}
	if g.protocol != "" {
		p := g.protocol
		v.Protocol = &p
	}
	if g.leader != "" && len(g.members) > 0 {
		l := g.leader
		v.Leader = &l
	}
	for _, m := range g.sortedMembersLocked() {
		a := m.Assignment
		if assign != nil {
			a = assign[m.ID]
		}
		v.Members = append(v.Members, MemberValue{MemberID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID,
			ClientHost: m.ClientHost, RebalanceTimeout: int32(m.RebalanceTimeout.Milliseconds()),
			SessionTimeout: int32(m.SessionTimeout.Milliseconds()), Subscription: m.metadataFor(g.protocol), Assignment: a})
	}
	return EncodeGroupValue(v)
}

// ---- loading and unloading (coordinator failover) ----

// OnBecomeLeader starts loading a __consumer_offsets partition in the
// background; until it finishes, that partition's groups answer
// COORDINATOR_LOAD_IN_PROGRESS.
func (c *Coordinator) OnBecomeLeader(partition int32) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	if o, ok := c.owned[partition]; ok && (o.state == partitionLoading || o.state == partitionLoaded) {
		c.mu.Unlock()
		return
	}
	c.loadEpoch++
	epoch := c.loadEpoch
	c.owned[partition] = ownership{state: partitionLoading, epoch: epoch}
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		c.load(partition, epoch)
	}()
}

// OnResign unloads the partition's groups: they become Dead in memory
// (nothing is written) and parked requests answer NOT_COORDINATOR.
func (c *Coordinator) OnResign(partition int32) {
	c.mu.Lock()
	delete(c.owned, partition)
	var gs []*Group
	for id, g := range c.groups {
		if g.partition == partition {
			gs = append(gs, g)
			delete(c.groups, id)
			c.removeGroupFromProducersLocked(id)
		}
	}
	c.mu.Unlock()
	c.unloadGroups(gs)
}

// unloadGroups marks groups unloaded and shuts them down: parked requests
// answer NOT_COORDINATOR. The caller holds no lock.
func (c *Coordinator) unloadGroups(gs []*Group) {
	for _, g := range gs {
		g.mu.Lock()
		g.unloaded = true
		c.shutdownGroupLocked(g, kerr.NotCoordinator.Code)
		g.mu.Unlock()
	}
}

// shutdownGroupLocked moves g to Dead, stops its timers and answers every
// parked request with code.
func (c *Coordinator) shutdownGroupLocked(g *Group, code int16) {
	if err := g.transitionLocked(Dead, c.clock.Now()); err != nil {
		c.log.Error("illegal group state transition", "group", g.id, "err", err)
	}
	c.stopRebalanceTimerLocked(g)
	c.stopSyncTimerLocked(g)
	for id, t := range g.pending {
		t.Stop()
		delete(g.pending, id)
	}
	for _, m := range g.members {
		c.stopSessionLocked(m)
		if m.joinCh != nil {
			m.joinCh <- joinError(m.joinVer, m.ID, code)
			m.joinCh = nil
		}
		if m.syncCh != nil {
			m.syncCh <- syncResult{code: code}
			m.syncCh = nil
		}
	}
}
