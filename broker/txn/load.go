package txn

// Ownership of __transaction_state partitions (Kafka's
// TransactionCoordinator.onElection/onResignation and
// TransactionStateManager.loadTransactionsForTxnTopicPartition).

import (
	"context"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

// loadRetryBackoff is the wait before reading a partition again after a
// failed read; the partition answers COORDINATOR_LOAD_IN_PROGRESS until
// a read succeeds or the ownership ends.
const loadRetryBackoff = time.Second

// OnBecomeLeader makes this broker the coordinator of a partition at a
// coordinator epoch (the partition's leader epoch). It returns at once;
// the partition is read in the background and its ids answer
// COORDINATOR_LOAD_IN_PROGRESS until then. A call with the epoch already
// owned does nothing; an older epoch is ignored; a newer one drops the
// current state and loads again.
func (c *Coordinator) OnBecomeLeader(partition int32, coordinatorEpoch int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if cur := c.parts[partition]; cur != nil {
		if coordinatorEpoch <= cur.coordEpoch {
			if coordinatorEpoch < cur.coordEpoch {
				c.log.Info("ignoring become-leader with an older coordinator epoch", "partition", partition,
					"coordinator_epoch", coordinatorEpoch, "current_epoch", cur.coordEpoch)
			}
			return
		}
		cur.cancel()
	}
	ctx, cancel := context.WithCancel(c.ctx)
	part := &txnPartition{id: partition, coordEpoch: coordinatorEpoch, ctx: ctx, cancel: cancel, loading: true,
		txns: map[string]*txnMetadata{}}
	c.parts[partition] = part
	c.wg.Add(1)
	c.busy.Add(1)
	c.log.Info("elected as the transaction coordinator", "partition", partition, "coordinator_epoch", coordinatorEpoch)
	go func() {
		defer c.endWork()
		c.load(part)
	}()
}

// OnResign gives up a partition: its cached transactions are dropped
// (nothing is written), marker sending for them stops, and its ids
// answer NOT_COORDINATOR. The new coordinator finishes what was in
// flight from the log. A resignation with an epoch older than the owned
// one is stale and ignored; a negative epoch (StopReplica, epoch
// unknown) always resigns.
func (c *Coordinator) OnResign(partition int32, coordinatorEpoch int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.parts[partition]
	if cur == nil {
		return
	}
	if coordinatorEpoch >= 0 && coordinatorEpoch < cur.coordEpoch {
		c.log.Info("ignoring resignation with an older coordinator epoch", "partition", partition,
			"coordinator_epoch", coordinatorEpoch, "current_epoch", cur.coordEpoch)
		return
	}
	cur.cancel()
	delete(c.parts, partition)
	c.drained.Broadcast()
	c.log.Info("resigned as the transaction coordinator", "partition", partition, "coordinator_epoch", coordinatorEpoch,
		"transactions", len(cur.txns))
}

// load reads the partition and publishes its transactions if the
// ownership is still current; transactions found in PrepareCommit or
// PrepareAbort resume sending their markers.
func (c *Coordinator) load(part *txnPartition) {
	start := c.clock.Now()
	// Wait for appends of an earlier ownership on this broker to land or
	// fail, so that the read below sees them.
	c.mu.Lock()
	for c.inflight[part.id] > 0 && c.parts[part.id] == part {
		c.drained.Wait()
	}
	c.mu.Unlock()

	var loaded map[string]*txnMetadata
	for {
		if part.ctx.Err() != nil {
			return
		}
		var err error
		loaded, err = c.readPartition(part)
		if err == nil {
			break
		}
		c.log.Error("failed to load __transaction_state partition; retrying", "partition", part.id,
			"coordinator_epoch", part.coordEpoch, "err", err)
		if !c.sleep(part.ctx, loadRetryBackoff) {
			return
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parts[part.id] != part || c.closed {
		return
	}
	part.txns = loaded
	part.loading = false
	now := c.nowMs()
	resumed := 0
	for _, tm := range loaded {
		tm.mu.Lock()
		if tm.state == PrepareCommit || tm.state == PrepareAbort {
			if t, err := tm.prepareCompleteLocked(now); err != nil {
				c.log.Error("cannot resume completing a transaction", "transactional_id", tm.id, "err", err)
			} else {
				c.startMarkersLocked(part, tm, t)
				resumed++
			}
		}
		tm.mu.Unlock()
	}
	c.metrics.loadTime.Update(c.clock.Now().Sub(start).Milliseconds())
	c.log.Info("finished loading transaction metadata", "partition", part.id, "coordinator_epoch", part.coordEpoch,
		"transactions", len(loaded), "resumed", resumed, "duration_ms", c.clock.Now().Sub(start).Milliseconds())
}

// readPartition reads every batch of the partition: the last record of
// an id wins and a tombstone removes it. Unreadable records are logged
// and skipped.
func (c *Coordinator) readPartition(part *txnPartition) (map[string]*txnMetadata, error) {
	loaded := map[string]*txnMetadata{}
	err := c.store.Read(part.ctx, part.id, func(batch []byte) error {
		h, err := record.ParseBatchHeader(batch)
		if err != nil {
			return err
		}
		if h.IsControl() {
			return nil
		}
		return record.ForEachRecord(batch, func(r *record.Record) error {
			id, err := DecodeKey(r.Key)
			if err != nil {
				c.log.Warn("skipping unreadable __transaction_state key", "partition", part.id, "offset", r.Offset(h), "err", err)
				return nil
			}
			if r.Value == nil {
				delete(loaded, id)
				return nil
			}
			v, err := DecodeValue(r.Value)
			if err != nil {
				c.log.Warn("skipping unreadable __transaction_state value", "partition", part.id, "offset", r.Offset(h),
					"transactional_id", id, "err", err)
				return nil
			}
			loaded[id] = metadataFromValue(id, part.id, v)
			return nil
		})
	})
	return loaded, err
}

// metadataFromValue rebuilds an id's state from its record. The last
// producer id and epoch are not persisted (value version 0), so a
// KIP-360 retry that spans a coordinator move is fenced, as in Kafka.
func metadataFromValue(id string, partition int32, v Value) *txnMetadata {
	tm := &txnMetadata{id: id, partition: partition, producerID: v.ProducerID, lastProducerID: noProducerID,
		producerEpoch: v.ProducerEpoch, lastProducerEpoch: noProducerEpoch, timeoutMs: v.TimeoutMs, state: v.State,
		pending: noState, partitions: map[common.TopicPartition]struct{}{}, startMs: v.StartMs, lastUpdateMs: v.LastUpdateMs}
	for _, tp := range v.Partitions {
		tm.partitions[tp] = struct{}{}
	}
	return tm
}
