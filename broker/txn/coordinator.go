package txn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klassik/klassik/broker/common/jvm"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TopicName is the internal topic the coordinator writes.
const TopicName = "__transaction_state"

// OffsetsTopicName is the group coordinator's topic, whose partition
// AddOffsetsToTxn adds to a transaction.
const OffsetsTopicName = "__consumer_offsets"

// Store is the coordinator's view of __transaction_state (replica.TopicLog
// satisfies it: Append writes one v2 batch with acks=all and waits for the
// ISR; Read scans the local log from its start).
type Store interface {
	Append(ctx context.Context, partition int32, batch []byte) error
	Read(ctx context.Context, partition int32, fn func(batch []byte) error) error
}

// NoSuchPartition is what Markers.PartitionLeader returns for a
// partition the metadata cache does not know (its topic was deleted):
// its marker is dropped, as Kafka drops it. -1 (no leader right now) is
// retried until a leader appears.
const NoSuchPartition int32 = -2

// Markers delivers WriteTxnMarkers (key 27) to partition leaders.
type Markers interface {
	// PartitionLeader returns the partition's leader from the metadata
	// cache: -1 when it has none right now, NoSuchPartition when the
	// partition is unknown.
	PartitionLeader(topic string, partition int32) int32
	SendWriteTxnMarkers(ctx context.Context, brokerID int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error)
}

// txnPartition is this broker's ownership of one __transaction_state
// partition at one coordinator epoch (Kafka's loading set entry and
// TxnMetadataCacheEntry). A new OnBecomeLeader replaces the whole value,
// so a pointer identifies one ownership.
type txnPartition struct {
	id         int32
	coordEpoch int32
	// ctx ends when the ownership ends; loaders and marker senders of
	// this ownership stop on it.
	ctx    context.Context
	cancel context.CancelFunc
	// Guarded by Coordinator.mu.
	loading bool
	txns    map[string]*txnMetadata
}

// Coordinator is Kafka's TransactionCoordinator with its
// TransactionStateManager and TransactionMarkerChannelManager for the
// __transaction_state partitions this broker leads.
type Coordinator struct {
	cfg     Config
	store   Store
	pids    *ProducerIDManager
	markers Markers
	clock   purgatory.Clock
	log     *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	// wg tracks every goroutine the coordinator starts.
	wg sync.WaitGroup
	// busy counts goroutines doing work now (not parked on a timer);
	// tests wait for it to reach 0.
	busy    atomic.Int64
	metrics *metrics

	// mu guards the following and the loading/txns fields of every
	// txnPartition. Lock order: Coordinator.mu before txnMetadata.mu;
	// code holding a txnMetadata.mu never takes Coordinator.mu. Neither
	// is held across Store, Markers or ProducerIDManager calls.
	mu       sync.Mutex
	parts    map[int32]*txnPartition
	inflight map[int32]int // appends in flight per partition
	drained  *sync.Cond    // on mu; signalled when an inflight count drops to 0
	closed   bool
	timers   []purgatory.Timer
}

// New returns a Coordinator that owns no partition yet and has scheduled
// its two periodic tasks (aborting timed-out transactions, expiring
// idle transactional ids). A nil clock means the real clock, a nil
// logger slog.Default().
func New(cfg Config, store Store, pids *ProducerIDManager, markers Markers, clock purgatory.Clock, logger *slog.Logger) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("txn: invalid config: %w", err)
	}
	if store == nil || pids == nil || markers == nil {
		return nil, errors.New("txn: nil Store, ProducerIDManager or Markers")
	}
	if clock == nil {
		clock = purgatory.RealClock()
	}
	if logger == nil {
		logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Coordinator{cfg: cfg, store: store, pids: pids, markers: markers, clock: clock,
		log: logger.With("component", "txn-coordinator", "broker", cfg.BrokerID), ctx: ctx, cancel: cancel,
		metrics: newMetrics(), parts: map[int32]*txnPartition{}, inflight: map[int32]int{}}
	c.drained = sync.NewCond(&c.mu)
	c.mu.Lock()
	c.schedulePeriodicLocked(0, cfg.AbortTimedOutInterval, c.abortTimedOutTransactions)
	c.schedulePeriodicLocked(1, cfg.RemoveExpiredInterval, c.removeExpiredTransactionalIDs)
	c.mu.Unlock()
	return c, nil
}

// schedulePeriodicLocked runs task every interval until Close. Each run
// is a tracked goroutine (or, on a FakeClock, runs inside Advance).
func (c *Coordinator) schedulePeriodicLocked(slot int, interval time.Duration, task func()) {
	for len(c.timers) <= slot {
		c.timers = append(c.timers, nil)
	}
	c.timers[slot] = c.clock.AfterFunc(interval, func() {
		if !c.startWork() {
			return
		}
		defer c.endWork()
		task()
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.closed {
			c.schedulePeriodicLocked(slot, interval, task)
		}
	})
}

// startWork registers a unit of background work; false once closed.
func (c *Coordinator) startWork() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	c.busy.Add(1)
	return true
}

func (c *Coordinator) endWork() {
	c.busy.Add(-1)
	c.wg.Done()
}

// Close stops the periodic tasks, ends every ownership (loaders and
// marker senders stop; transactions in flight are finished by the next
// coordinator, which resumes their markers) and waits for every
// goroutine.
func (c *Coordinator) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	for _, t := range c.timers {
		if t != nil {
			t.Stop()
		}
	}
	for p, part := range c.parts {
		part.cancel()
		delete(c.parts, p)
	}
	c.drained.Broadcast()
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
}

// PartitionFor returns the __transaction_state partition of an id:
// abs(Java String.hashCode) % transaction.state.log.num.partitions.
func (c *Coordinator) PartitionFor(transactionalID string) int32 {
	return jvm.PartitionFor(transactionalID, c.cfg.NumPartitions)
}

func (c *Coordinator) nowMs() int64 { return c.clock.Now().UnixMilli() }

// ownerCodeLocked: requests for an id are served only while this broker
// owns and has loaded its partition: NOT_COORDINATOR when it does not
// own it, COORDINATOR_LOAD_IN_PROGRESS while loading.
func (c *Coordinator) ownerCodeLocked(part *txnPartition) int16 {
	switch {
	case c.closed || part == nil:
		return kerr.NotCoordinator.Code
	case part.loading:
		return kerr.CoordinatorLoadInProgress.Code
	}
	return 0
}

// lookup returns the id's coordinator epoch and metadata (nil when the
// id is unknown), or a coordinator error code. The metadata is returned
// unlocked.
func (c *Coordinator) lookup(id string) (int32, *txnMetadata, int16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	part := c.parts[c.PartitionFor(id)]
	if code := c.ownerCodeLocked(part); code != 0 {
		return 0, nil, code
	}
	return part.coordEpoch, part.txns[id], 0
}

// lookupExisting is lookup for a request about an existing id: an
// empty id is INVALID_REQUEST and an unknown one answers missing.
func (c *Coordinator) lookupExisting(id string, missing int16) (int32, *txnMetadata, int16) {
	if id == "" {
		return 0, nil, kerr.InvalidRequest.Code
	}
	ce, tm, code := c.lookup(id)
	if code == 0 && tm == nil {
		code = missing
	}
	return ce, tm, code
}

// putIfAbsent installs created unless the id appeared meanwhile, and
// returns the registered metadata.
func (c *Coordinator) putIfAbsent(created *txnMetadata) (int32, *txnMetadata, int16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	part := c.parts[created.partition]
	if code := c.ownerCodeLocked(part); code != 0 {
		return 0, nil, code
	}
	if tm := part.txns[created.id]; tm != nil {
		return part.coordEpoch, tm, 0
	}
	part.txns[created.id] = created
	return part.coordEpoch, created, 0
}

// currentLocked reports whether tm is still the cached metadata of its
// id under coordinator epoch ce, with the code to answer otherwise: a
// coordinator that lost (or re-acquired) the partition answers
// NOT_COORDINATOR, so the client finds the new one.
func (c *Coordinator) currentLocked(tm *txnMetadata, ce int32) int16 {
	part := c.parts[tm.partition]
	if code := c.ownerCodeLocked(part); code != 0 {
		return code
	}
	if part.coordEpoch != ce || part.txns[tm.id] != tm {
		return kerr.NotCoordinator.Code
	}
	return 0
}

// appendGuarded writes batch to partition p if owner (called with c.mu
// held) reports that the writer's ownership is still current (owner
// must fail when c.parts[p] is not that ownership), and calls
// done with the outcome and c.mu held. The in-flight count makes a
// reload of p (a new ownership on this broker) wait until the append has
// reached the log or failed, so the loader reads every record an earlier
// ownership wrote.
func (c *Coordinator) appendGuarded(p int32, owner func() int16, batch []byte, timeout time.Duration, done func(err error)) int16 {
	c.mu.Lock()
	if code := owner(); code != 0 {
		c.mu.Unlock()
		return code
	}
	c.inflight[p]++
	// The append is bounded by its timeout and by the ownership: when the
	// partition is resigned its waits end at once (a record already in the
	// local log stays there, and the next load reads it).
	pctx := c.parts[p].ctx
	c.mu.Unlock()

	ctx, cancel := context.WithTimeout(pctx, timeout)
	err := c.store.Append(ctx, p, batch)
	cancel()

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight[p]--; c.inflight[p] == 0 {
		delete(c.inflight, p)
		c.drained.Broadcast()
	}
	done(err)
	return 0
}

// appendTransition persists t for tm (acks=all) and, once it is in the
// log, applies it. A state change takes effect only after its record is
// written; on a failed write the pending change is dropped (unless
// retry says the caller will try the same write again) and the append
// error is answered as a coordinator error.
func (c *Coordinator) appendTransition(tm *txnMetadata, ce int32, t transit, retry func(code int16) bool) int16 {
	batch := recordBatch(c.clock.Now(), []record.Record{{Key: EncodeKey(tm.id), Value: EncodeValue(t.value())}})
	timeout := time.Duration(t.timeoutMs) * time.Millisecond
	if timeout <= 0 {
		timeout = c.cfg.MarkerTimeout
	}
	var code int16
	owner := func() int16 { return c.currentLocked(tm, ce) }
	if pre := c.appendGuarded(tm.partition, owner, batch, timeout, func(err error) {
		cur := c.currentLocked(tm, ce)
		tm.mu.Lock()
		defer tm.mu.Unlock()
		if err == nil {
			if cur != 0 {
				code = cur
				return
			}
			if cerr := tm.completeLocked(t); cerr != nil {
				c.log.Error("transaction state transition failed after its write", "transactional_id", tm.id, "err", cerr)
				code = kerr.UnknownServerError.Code
			}
			return
		}
		code = appendErrorCode(err)
		if cur != 0 {
			// The ownership ended while the append waited.
			code = cur
		}
		c.log.Info("writing transaction state failed", "transactional_id", tm.id, "target", t.state,
			"coordinator_epoch", ce, "err", err, "code", kerr.ErrorForCode(code))
		if cur == 0 && (retry == nil || !retry(code)) {
			tm.pending = noState
		}
	}); pre != 0 {
		return pre
	}
	return code
}

// appendErrorCode maps a Store.Append error to the coordinator error the
// client sees, as Kafka's TransactionStateManager does: a partition
// without enough replicas, a timeout or an unknown partition are
// COORDINATOR_NOT_AVAILABLE (retriable where the client is); a lost
// leadership or a storage failure NOT_COORDINATOR (the client looks the
// coordinator up again); an oversized record UNKNOWN_SERVER_ERROR.
func appendErrorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		switch ke {
		case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
			return kerr.CoordinatorNotAvailable.Code
		case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
			return kerr.NotCoordinator.Code
		case kerr.MessageTooLarge, kerr.RecordListTooLarge:
			return kerr.UnknownServerError.Code
		default:
			return ke.Code
		}
	}
	// A timeout, the coordinator closing, or a log error the replica
	// layer did not classify: let the client retry.
	return kerr.CoordinatorNotAvailable.Code
}

// sleep parks the calling worker for d on the clock (not counted as
// busy meanwhile); false if ctx ended first.
func (c *Coordinator) sleep(ctx context.Context, d time.Duration) bool {
	ch := make(chan struct{})
	// The timer is set before the worker counts as idle, so a test that
	// sees Idle and advances a fake clock always fires it.
	t := c.clock.AfterFunc(d, func() {
		c.busy.Add(1)
		close(ch)
	})
	c.busy.Add(-1)
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		if t.Stop() {
			c.busy.Add(1)
		} else {
			<-ch
		}
		return false
	}
}

// Idle reports whether no goroutine of the coordinator is working now
// (loaders, marker senders and periodic tasks are all done or parked on
// the clock). Tests use it to wait for asynchronous steps.
func (c *Coordinator) Idle() bool { return c.busy.Load() == 0 }
