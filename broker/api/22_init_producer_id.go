package api

// InitProducerId (key 22), versions 0–4 (flexible from 2).
//
// Behaviour:
//   - transactional_id null (idempotent producer): any broker answers with a
//     new producer id and epoch 0. Ids come from blocks of 1000 that this
//     broker claims in ZooKeeper (/latest_producer_id_block, conditional
//     write on the node version, retried when another broker won) — the classic path, so no controller
//     RPC (AllocateProducerIds) is needed or advertised;
//   - a transactional id needs a transaction coordinator, which this broker
//     does not run (FindCoordinator and the transaction APIs are not
//     advertised): answered COORDINATOR_NOT_AVAILABLE, retriable and honest;
//   - a block allocation failure (ZooKeeper down) → COORDINATOR_NOT_AVAILABLE
//     (retriable), as Kafka's ProducerIdManager surfaces it.

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/zkpaths"
)

// producerIDBlockSize is Kafka's block size: a broker claims 1000 ids at a
// time.
const producerIDBlockSize = 1000

// producerIDManager hands out producer ids from blocks claimed in ZooKeeper
// (Kafka's ZkProducerIdManager).
type producerIDManager struct {
	brokerID int32
	claim    func(brokerID int32) (zkpaths.ProducerIDBlock, error)

	// mu guards the following; it is held across a block claim so that
	// concurrent callers wait for the one claim instead of wasting blocks.
	mu        sync.Mutex
	next, end int64 // next id to hand out; end inclusive; next > end = empty
}

func newProducerIDManager(brokerID int32, claim func(brokerID int32) (zkpaths.ProducerIDBlock, error)) *producerIDManager {
	return &producerIDManager{brokerID: brokerID, claim: claim, next: 0, end: -1}
}

// nextID returns a fresh producer id, claiming a new block when the current
// one is used up.
func (m *producerIDManager) nextID(ctx context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.next > m.end {
		b, err := m.claim(m.brokerID)
		if err != nil {
			return -1, err
		}
		m.next, m.end = b.BlockStart, b.BlockEnd
	}
	id := m.next
	m.next++
	return id, nil
}

func (a *Apis) handleInitProducerID(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil && *req.TransactionalID != "" {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp, nil
	}
	id, err := a.pids.nextID(ctx)
	if err != nil {
		a.logger.Error("could not allocate a producer id block", "err", err)
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp, nil
}
