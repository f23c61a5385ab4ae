package txn

// The coordinator's periodic tasks (Kafka's
// TransactionCoordinator.abortTimedOutTransactions and
// TransactionStateManager.removeExpiredTransactionalIds).

import (
	"time"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
)

// maxTombstoneBatchBytes bounds one batch of expiry tombstones, well
// under the default max.message.bytes of the topic.
const maxTombstoneBatchBytes = 512 << 10

// loadedTxns returns, per loaded partition, its coordinator epoch and
// transactions.
func (c *Coordinator) loadedTxns() map[*txnPartition][]*txnMetadata {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[*txnPartition][]*txnMetadata{}
	for _, part := range c.parts {
		if part.loading {
			continue
		}
		for _, tm := range part.txns {
			out[part] = append(out[part], tm)
		}
	}
	return out
}

// abortTimedOutTransactions aborts every Ongoing transaction (with no
// change pending) that started more than its transaction.timeout.ms ago.
// As Kafka does, the abort bumps the producer epoch (PrepareEpochFence,
// then PrepareAbort at the bumped epoch), so the producer that let the
// transaction time out is fenced and cannot add to it any more.
func (c *Coordinator) abortTimedOutTransactions() {
	now := c.nowMs()
	for _, tms := range c.loadedTxns() {
		for _, tm := range tms {
			tm.mu.Lock()
			if tm.pendingLocked() || tm.state != Ongoing || tm.startMs+int64(tm.timeoutMs) >= now {
				tm.mu.Unlock()
				continue
			}
			t, err := tm.prepareEpochFenceLocked()
			tm.mu.Unlock()
			if err != nil {
				c.log.Error("cannot abort a timed-out transaction", "transactional_id", tm.id, "err", err)
				continue
			}
			switch code := c.endTransaction(tm.id, t.producerID, t.producerEpoch, false, false); code {
			case 0:
				c.log.Info("aborting a timed-out transaction", "transactional_id", tm.id, "producer_id", t.producerID,
					"producer_epoch", t.producerEpoch)
			case kerr.InvalidProducerIDMapping.Code, kerr.ProducerFenced.Code, kerr.ConcurrentTransactions.Code:
				c.log.Debug("abort of a timed-out transaction cancelled", "transactional_id", tm.id, "err", kerr.ErrorForCode(code))
			default:
				c.log.Warn("abort of a timed-out transaction failed", "transactional_id", tm.id, "err", kerr.ErrorForCode(code))
			}
		}
	}
}

// removeExpiredTransactionalIDs removes every id that is in Empty,
// CompleteCommit or CompleteAbort, has no change pending, and was last
// updated transactional.id.expiration.ms ago or earlier: a tombstone is
// written for it (acks=all), then it leaves the cache. While the write is
// in flight it is Dead-pending, so requests for it wait
// (CONCURRENT_TRANSACTIONS); a failed write keeps the id.
func (c *Coordinator) removeExpiredTransactionalIDs() {
	now := c.nowMs()
	cutoff := now - c.cfg.IDExpiration.Milliseconds()
	for part, tms := range c.loadedTxns() {
		var expired []*txnMetadata
		var recs []record.Record
		size := 0
		flush := func() {
			if len(expired) > 0 {
				c.writeTombstones(part, expired, recs)
			}
			expired, recs, size = nil, nil, 0
		}
		for _, tm := range tms {
			tm.mu.Lock()
			if !tm.pendingLocked() && tm.state.expirationAllowed() && tm.lastUpdateMs <= cutoff {
				if _, err := tm.prepareDeadLocked(); err == nil {
					key := EncodeKey(tm.id)
					expired = append(expired, tm)
					recs = append(recs, record.Record{Key: key})
					size += len(key) + 16
				}
			}
			tm.mu.Unlock()
			if size >= maxTombstoneBatchBytes {
				flush()
			}
		}
		flush()
	}
}

func (c *Coordinator) writeTombstones(part *txnPartition, expired []*txnMetadata, recs []record.Record) {
	batch := recordBatch(time.UnixMilli(c.nowMs()), recs)
	release := func(err error) {
		for _, tm := range expired {
			cur := c.currentLocked(tm, part.coordEpoch) == 0
			tm.mu.Lock()
			if err == nil && cur && tm.pending == Dead {
				delete(part.txns, tm.id)
				c.log.Info("expired transactional id", "transactional_id", tm.id, "partition", part.id)
			} else {
				tm.pending = noState
			}
			tm.mu.Unlock()
		}
	}
	owner := func() int16 {
		if cur := c.parts[part.id]; cur != part {
			return kerr.NotCoordinator.Code
		}
		return c.ownerCodeLocked(part)
	}
	code := c.appendGuarded(part.id, owner, batch, c.cfg.MarkerTimeout, func(err error) {
		if err != nil {
			c.log.Warn("failed to write expiry tombstones", "partition", part.id, "ids", len(expired), "err", err)
		}
		release(err)
	})
	if code != 0 {
		c.mu.Lock()
		release(kerr.ErrorForCode(code))
		c.mu.Unlock()
	}
}
