package api

// OffsetForLeaderEpoch (key 23), versions 0–4 (flexible from 4).
//
// Behaviour (protocol.md §9.23): delegated to the replica manager (answered
// by the leader from its leader-epoch cache; FENCED_LEADER_EPOCH /
// UNKNOWN_LEADER_EPOCH against current_leader_epoch).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleOffsetForLeaderEpoch(ctx context.Context, r *request) (kmsg.Response, error) {
	return a.replicas.OffsetForLeaderEpoch(ctx, r.body.(*kmsg.OffsetForLeaderEpochRequest)), nil
}
