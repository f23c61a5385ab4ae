package txn

// InitProducerId (key 22) with a transactional id: Kafka's
// TransactionCoordinator.handleInitProducerId.

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fencedCode answers PRODUCER_FENCED to clients that know it and
// INVALID_PRODUCER_EPOCH, which they handle the same way, to older ones
// (InitProducerId before v4; AddPartitionsToTxn, AddOffsetsToTxn and
// EndTxn before v2).
func fencedCode(code int16, version, firstVersionWithFenced int16) int16 {
	if code == kerr.ProducerFenced.Code && version < firstVersionWithFenced {
		return kerr.InvalidProducerEpoch.Code
	}
	return code
}

// InitProducerID gives the transactional id a producer id and a new
// epoch, fencing every older producer of the id.
//
//   - transaction.timeout.ms must be in (0, transaction.max.timeout.ms],
//     else INVALID_TRANSACTION_TIMEOUT.
//   - A new id gets a fresh producer id at epoch 0.
//   - A known id in Empty/CompleteCommit/CompleteAbort gets its epoch
//     bumped; when the epoch is exhausted, a new producer id at epoch 0.
//   - While a change is pending or the previous transaction is still
//     completing (PrepareCommit/PrepareAbort): CONCURRENT_TRANSACTIONS,
//     the client retries.
//   - An Ongoing transaction (an older producer's) is aborted first,
//     with the epoch bumped to fence that producer, and the answer is
//     CONCURRENT_TRANSACTIONS; the retry then gets the next epoch.
//   - KIP-360 (v3+, producer id and epoch in the request): the request
//     must name the current producer id (or the previous one with an
//     exhausted epoch, a lost answer to a rotation), else
//     PRODUCER_FENCED; see prepareIncrementEpochLocked for the epoch.
func (c *Coordinator) InitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.Version = req.Version
	resp.ProducerID, resp.ProducerEpoch = noProducerID, noProducerEpoch
	pid, epoch, code := c.initProducerID(ctx, req)
	resp.ErrorCode = fencedCode(code, req.Version, 4)
	if code == 0 {
		resp.ProducerID, resp.ProducerEpoch = pid, epoch
	}
	return resp
}

type producerIDAndEpoch struct {
	id    int64
	epoch int16
}

func (c *Coordinator) initProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) (int64, int16, int16) {
	if req.TransactionalID == nil || *req.TransactionalID == "" {
		return 0, 0, kerr.InvalidRequest.Code
	}
	id := *req.TransactionalID
	var expected *producerIDAndEpoch
	if req.Version >= 3 {
		switch {
		case req.ProducerID == noProducerID && req.ProducerEpoch == noProducerEpoch:
		case req.ProducerID == noProducerID || req.ProducerEpoch == noProducerEpoch:
			return 0, 0, kerr.InvalidRequest.Code
		default:
			expected = &producerIDAndEpoch{id: req.ProducerID, epoch: req.ProducerEpoch}
		}
	}
	timeoutMs := req.TransactionTimeoutMillis
	if timeoutMs <= 0 || time.Duration(timeoutMs)*time.Millisecond > c.cfg.MaxTimeout {
		return 0, 0, kerr.InvalidTransactionTimeout.Code
	}

	ce, tm, code := c.lookup(id)
	if code != 0 {
		return 0, 0, code
	}
	if tm == nil {
		pid, err := c.pids.NextID(ctx)
		if err != nil {
			c.log.Warn("cannot allocate a producer id", "transactional_id", id, "err", err)
			return 0, 0, kerr.CoordinatorNotAvailable.Code
		}
		created := newTxnMetadata(id, c.PartitionFor(id), pid, timeoutMs, c.nowMs())
		if ce, tm, code = c.putIfAbsent(created); code != 0 {
			return 0, 0, code
		}
	}

	t, code, needPID := c.prepareInit(tm, timeoutMs, expected, noProducerID)
	if needPID {
		pid, err := c.pids.NextID(ctx)
		if err != nil {
			c.log.Warn("cannot allocate a producer id", "transactional_id", id, "err", err)
			return 0, 0, kerr.CoordinatorNotAvailable.Code
		}
		t, code, _ = c.prepareInit(tm, timeoutMs, expected, pid)
	}
	if code != 0 {
		return 0, 0, code
	}
	if t.state == PrepareEpochFence {
		if code := c.endTransaction(id, t.producerID, t.producerEpoch, false, false); code != 0 {
			return 0, 0, code
		}
		return 0, 0, kerr.ConcurrentTransactions.Code
	}
	if code := c.appendTransition(tm, ce, t, nil); code != 0 {
		return 0, 0, code
	}
	c.log.Info("initialized transactional id", "transactional_id", id, "producer_id", t.producerID,
		"producer_epoch", t.producerEpoch, "partition", tm.partition)
	return t.producerID, t.producerEpoch, 0
}

// prepareInit computes InitProducerId's change under tm's lock. When
// the epoch is exhausted it needs a new producer id: without one
// (newPID < 0) it returns needPID, and the caller allocates one with no
// lock held and calls again.
func (c *Coordinator) prepareInit(tm *txnMetadata, timeoutMs int32, expected *producerIDAndEpoch, newPID int64) (t transit, code int16, needPID bool) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.pendingLocked() {
		return t, kerr.ConcurrentTransactions.Code, false
	}
	// The request's producer id must be the current one; or the metadata
	// was just created (epoch -1: a producer recovering from
	// UNKNOWN_PRODUCER_ID gets the new id); or the previous one with an
	// exhausted epoch (a retry of a rotation whose answer was lost).
	if expected != nil && !(tm.producerEpoch == noProducerEpoch || expected.id == tm.producerID ||
		(expected.id == tm.lastProducerID && epochExhausted(expected.epoch))) {
		return t, kerr.ProducerFenced.Code, false
	}
	var err error
	switch tm.state {
	case PrepareAbort, PrepareCommit:
		return t, kerr.ConcurrentTransactions.Code, false
	case CompleteAbort, CompleteCommit, Empty:
		if epochExhausted(tm.producerEpoch) && (expected == nil || expected.epoch == tm.producerEpoch) {
			if newPID < 0 {
				return t, 0, true
			}
			t, err = tm.prepareRotateLocked(newPID, timeoutMs, c.nowMs(), expected != nil)
		} else {
			var exp *int16
			if expected != nil {
				exp = &expected.epoch
			}
			t, err = tm.prepareIncrementEpochLocked(timeoutMs, exp, c.nowMs())
			if errors.Is(err, errFenced) {
				c.log.Info("fencing InitProducerId", "transactional_id", tm.id, "expected_epoch", *exp,
					"producer_epoch", tm.producerEpoch, "last_producer_epoch", tm.lastProducerEpoch)
				return t, kerr.ProducerFenced.Code, false
			}
		}
	case Ongoing:
		// Never returned to the client: the abort writes it, and the
		// client's retry bumps once more.
		t, err = tm.prepareEpochFenceLocked()
	default:
		c.log.Error("transactional id in an illegal state", "transactional_id", tm.id, "state", tm.state)
		return t, kerr.UnknownServerError.Code, false
	}
	if err != nil {
		c.log.Error("cannot prepare InitProducerId", "transactional_id", tm.id, "err", err)
		return t, kerr.UnknownServerError.Code, false
	}
	return t, 0, false
}
