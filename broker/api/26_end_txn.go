package api

// EndTxn (key 26), versions 0–3 (flexible from 3).
//
// Behaviour: Write on the transactional id is checked here
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); the transaction coordinator
// answers once PrepareCommit or PrepareAbort is written to
// __transaction_state and then sends the markers itself.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleEndTxn(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.EndTxnRequest)
	if !a.authorize(ctx, r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, req.TransactionalID) {
		resp := req.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return resp, nil
	}
	return a.txn.EndTxn(ctx, req), nil
}
