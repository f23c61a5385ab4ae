package api

// AddOffsetsToTxn (key 25), versions 0–3 (flexible from 3).
//
// Behaviour: Write on the transactional id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and Read on the group
// (GROUP_AUTHORIZATION_FAILED) are checked here; the transaction
// coordinator then adds the group's __consumer_offsets partition to the
// transaction, so that the offsets a later TxnOffsetCommit writes are
// committed or aborted with it.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleAddOffsetsToTxn(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.AddOffsetsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	switch {
	case !a.authorize(ctx, r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, req.TransactionalID):
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
	case !a.authorize(ctx, r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group):
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
	default:
		return a.txn.AddOffsetsToTxn(ctx, req), nil
	}
	return resp, nil
}
