package api

// LeaveGroup (key 13), versions 0–5 (flexible from 4; v3+ batches members).
//
// Behaviour (protocol.md §9.14): delegated to the group coordinator
// (broker/group), which checks that this broker coordinates the group
// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) and applies every group
// rule.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleLeaveGroup(ctx context.Context, r *request) (kmsg.Response, error) {
	return a.groups.LeaveGroup(ctx, r.body.(*kmsg.LeaveGroupRequest)), nil
}
