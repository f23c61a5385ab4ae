package api

// SyncGroup (key 14), versions 0–5 (flexible from 4).
//
// Behaviour (protocol.md §9.15): delegated to the group coordinator
// (broker/group), which checks that this broker coordinates the group
// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) and applies every group
// rule. A member's SyncGroup parks until the leader's assignment arrives.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleSyncGroup(ctx context.Context, r *request) (kmsg.Response, error) {
	return a.groups.SyncGroup(ctx, r.body.(*kmsg.SyncGroupRequest)), nil
}
