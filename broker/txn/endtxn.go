package txn

// EndTxn (key 26): Kafka's TransactionCoordinator.handleEndTransaction
// and endTransaction, also used to abort a transaction on the
// coordinator's own initiative (timeout, fencing).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// EndTxn commits or aborts the producer's transaction. It answers once
// PrepareCommit/PrepareAbort is in the log; the markers are sent
// afterwards and CompleteCommit/CompleteAbort is written when all
// partitions have them.
func (c *Coordinator) EndTxn(_ context.Context, req *kmsg.EndTxnRequest) *kmsg.EndTxnResponse {
	resp := kmsg.NewPtrEndTxnResponse()
	resp.Version = req.Version
	resp.ProducerID, resp.ProducerEpoch = noProducerID, noProducerEpoch
	resp.ErrorCode = fencedCode(c.endTransaction(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit, true),
		req.Version, 2)
	return resp
}

// endTransaction moves an Ongoing transaction to PrepareCommit or
// PrepareAbort and starts its markers. A client must name the current
// producer id (else INVALID_PRODUCER_ID_MAPPING) and epoch (else
// PRODUCER_FENCED); the coordinator's own abort carries the bumped
// epoch of its pending PrepareEpochFence, which it applies here. A
// retried EndTxn of a transaction already completed the same way
// answers NONE, one still completing CONCURRENT_TRANSACTIONS; ending it
// the other way, or ending a transaction that never started (Empty), is
// INVALID_TXN_STATE.
func (c *Coordinator) endTransaction(id string, pid int64, epoch int16, commit, fromClient bool) int16 {
	ce, tm, code := c.lookupExisting(id, kerr.InvalidProducerIDMapping.Code)
	if code != 0 {
		return code
	}
	epochFence := false
	t, code, write := func() (transit, int16, bool) {
		tm.mu.Lock()
		defer tm.mu.Unlock()
		switch {
		case tm.producerID != pid:
			return transit{}, kerr.InvalidProducerIDMapping.Code, false
		case (fromClient && epoch != tm.producerEpoch) || epoch < tm.producerEpoch:
			return transit{}, kerr.ProducerFenced.Code, false
		case tm.pendingLocked() && tm.pending != PrepareEpochFence:
			return transit{}, kerr.ConcurrentTransactions.Code, false
		}
		switch tm.state {
		case Ongoing:
			next := PrepareAbort
			if commit {
				next = PrepareCommit
			}
			if next == PrepareAbort && tm.pending == PrepareEpochFence {
				// The fence: the bumped epoch takes effect in memory now
				// and is written with PrepareAbort.
				epochFence = true
				tm.pending = noState
				tm.producerEpoch = epoch
				tm.lastProducerEpoch = noProducerEpoch
			}
			if tm.pendingLocked() {
				return transit{}, kerr.ConcurrentTransactions.Code, false
			}
			t, err := tm.prepareAbortOrCommitLocked(next, c.nowMs())
			if err != nil {
				c.log.Error("cannot end the transaction", "transactional_id", id, "err", err)
				return transit{}, kerr.UnknownServerError.Code, false
			}
			return t, 0, true
		case CompleteCommit:
			if commit {
				return transit{}, 0, false
			}
		case CompleteAbort:
			if !commit {
				return transit{}, 0, false
			}
		case PrepareCommit:
			if commit {
				return transit{}, kerr.ConcurrentTransactions.Code, false
			}
		case PrepareAbort:
			if !commit {
				return transit{}, kerr.ConcurrentTransactions.Code, false
			}
		case Empty:
		default:
			c.log.Error("transactional id in an illegal state", "transactional_id", id, "state", tm.state)
			return transit{}, kerr.UnknownServerError.Code, false
		}
		return transit{}, kerr.InvalidTxnState.Code, false
	}()
	if !write {
		return code
	}

	if code := c.appendTransition(tm, ce, t, nil); code != 0 {
		if epochFence {
			c.mu.Lock()
			if c.currentLocked(tm, ce) == 0 {
				tm.mu.Lock()
				tm.failedEpochFence = true
				tm.mu.Unlock()
				c.log.Warn("failed to write an epoch fence; the bumped epoch was not returned to a client",
					"transactional_id", id, "producer_epoch", t.producerEpoch, "err", kerr.ErrorForCode(code))
			}
			c.mu.Unlock()
		}
		return code
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if code := c.currentLocked(tm, ce); code != 0 {
		return kerr.NotCoordinator.Code
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	switch {
	case tm.producerID != pid:
		return kerr.InvalidProducerIDMapping.Code
	case tm.producerEpoch != epoch:
		return kerr.ProducerFenced.Code
	case tm.pendingLocked():
		return kerr.ConcurrentTransactions.Code
	case tm.state != t.state:
		return kerr.InvalidTxnState.Code
	}
	complete, err := tm.prepareCompleteLocked(c.nowMs())
	if err != nil {
		c.log.Error("cannot complete the transaction", "transactional_id", id, "err", err)
		return kerr.UnknownServerError.Code
	}
	c.startMarkersLocked(c.parts[tm.partition], tm, complete)
	return 0
}
