package api

// DeleteRecords (key 21), versions 0–2 (flexible from 2).
//
// Behaviour (protocol.md §9.21, log-format.md §10.5): delegated to the replica
// manager (advance the log start offset on the leader; OFFSET_OUT_OF_RANGE,
// NOT_LEADER_OR_FOLLOWER, POLICY_VIOLATION for compact-only topics,
// INVALID_TOPIC_EXCEPTION for internal topics).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleDeleteRecords(ctx context.Context, r *request) (kmsg.Response, error) {
	return a.replicas.DeleteRecords(ctx, r.body.(*kmsg.DeleteRecordsRequest)), nil
}
