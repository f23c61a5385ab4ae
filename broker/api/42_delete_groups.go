package api

// DeleteGroups (key 42), versions 0–2 (flexible from 2).
//
// Behaviour (protocol.md §9.31): delegated to the group coordinator
// (broker/group), which checks that this broker coordinates the group
// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) and applies every group
// rule.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleDeleteGroups(ctx context.Context, r *request) (kmsg.Response, error) {
	return a.groups.DeleteGroups(ctx, r.body.(*kmsg.DeleteGroupsRequest)), nil
}
