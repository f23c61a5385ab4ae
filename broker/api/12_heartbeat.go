package api

// Heartbeat (key 12), versions 0–4 (flexible from 4).
//
// Behaviour (protocol.md §9.13): delegated to the group coordinator
// (broker/group), which checks that this broker coordinates the group
// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) and applies every group
// rule.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleHeartbeat(ctx context.Context, r *request) (kmsg.Response, error) {
	return a.groups.Heartbeat(ctx, r.body.(*kmsg.HeartbeatRequest)), nil
}
