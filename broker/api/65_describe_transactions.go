package api

// DescribeTransactions (key 65), version 0, and ListTransactions (key 66),
// version 0 (both flexible; Kafka 3.0, KIP-664).
//
// Behaviour: the transaction coordinator describes the ids whose
// __transaction_state partition this broker leads (NOT_COORDINATOR
// otherwise) and lists the transactions of every partition it has loaded.
// Authorization as Kafka: an id without Describe answers
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED and is not asked; a described
// transaction lists only the topics the principal may Describe;
// ListTransactions leaves out the ids the principal may not Describe.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleDescribeTransactions(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	allowed := kmsg.NewPtrDescribeTransactionsRequest()
	allowed.Version = req.Version
	denied := map[string]bool{}
	for _, id := range req.TransactionalIDs {
		if a.authorize(ctx, r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId, id) {
			allowed.TransactionalIDs = append(allowed.TransactionalIDs, id)
		} else {
			denied[id] = true
		}
	}
	described := map[string]kmsg.DescribeTransactionsResponseTransactionState{}
	if len(allowed.TransactionalIDs) > 0 {
		for _, st := range a.txn.DescribeTransactions(ctx, allowed).TransactionStates {
			described[st.TransactionalID] = st
		}
	}
	for _, id := range req.TransactionalIDs {
		if denied[id] {
			st := kmsg.NewDescribeTransactionsResponseTransactionState()
			st.TransactionalID, st.ErrorCode = id, kerr.TransactionalIDAuthorizationFailed.Code
			st.ProducerID, st.ProducerEpoch = -1, -1
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		if st, ok := described[id]; ok {
			kept := st.Topics[:0]
			for _, t := range st.Topics {
				if a.authorize(ctx, r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, t.Topic) {
					kept = append(kept, t)
				}
			}
			st.Topics = kept
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
	}
	return resp, nil
}

func (a *Apis) handleListTransactions(ctx context.Context, r *request) (kmsg.Response, error) {
	resp := a.txn.ListTransactions(ctx, r.body.(*kmsg.ListTransactionsRequest))
	kept := resp.TransactionStates[:0]
	for _, st := range resp.TransactionStates {
		if a.authorize(ctx, r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId, st.TransactionalID) {
			kept = append(kept, st)
		}
	}
	resp.TransactionStates = kept
	return resp, nil
}
