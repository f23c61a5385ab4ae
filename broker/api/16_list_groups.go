package api

// ListGroups (key 16), versions 0–4 (flexible from 3; v4 states filter).
//
// Behaviour (protocol.md §9.16): delegated to the group coordinator
// (broker/group), which checks that this broker coordinates the group
// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) and applies every group
// rule. Only the groups this broker coordinates are listed; clients ask every broker.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleListGroups(ctx context.Context, r *request) (kmsg.Response, error) {
	return a.groups.ListGroups(ctx, r.body.(*kmsg.ListGroupsRequest)), nil
}
