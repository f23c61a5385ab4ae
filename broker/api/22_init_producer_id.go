package api

// InitProducerId (key 22), versions 0–4 (flexible from 2).
//
// Behaviour:
//   - transactional_id null (idempotent producer): any broker answers with a
//     new producer id and epoch 0, drawn from txn.ProducerIDManager (blocks
//     of 1000 claimed under /latest_producer_id_block);
//   - a transactional id needs a transaction coordinator, which this broker
//     does not run (FindCoordinator and the transaction APIs are not
//     advertised): answered COORDINATOR_NOT_AVAILABLE, retriable and honest;
//   - a block allocation failure (ZooKeeper down) → COORDINATOR_NOT_AVAILABLE
//     (retriable), as Kafka's ProducerIdManager surfaces it.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleInitProducerID(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil && *req.TransactionalID != "" {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp, nil
	}
	id, err := a.pids.NextID(ctx)
	if err != nil {
		a.logger.Error("could not allocate a producer id block", "err", err)
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp, nil
}
