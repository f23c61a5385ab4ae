package api

// LeaderAndIsr (key 4), versions 0–7 (flexible from 4). Controller → broker.
//
// Behaviour (protocol.md §9.5, controller.md §17.4): delegated to the replica
// manager, which rejects a stale controller epoch (STALE_CONTROLLER_EPOCH) or
// a stale broker epoch (STALE_BROKER_EPOCH) and makes this broker leader or
// follower of each partition whose leader epoch is newer.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleLeaderAndIsr(ctx context.Context, r *request) (kmsg.Response, error) {
	return a.replicas.LeaderAndIsr(ctx, r.body.(*kmsg.LeaderAndISRRequest)), nil
}
