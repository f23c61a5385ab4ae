package api

// DescribeGroups (key 15), versions 0–5 (flexible from 5).
//
// Behaviour (protocol.md §9.16): delegated to the group coordinator
// (broker/group), which checks that this broker coordinates the group
// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) and applies every group
// rule. Unknown groups are described as Dead.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleDescribeGroups(ctx context.Context, r *request) (kmsg.Response, error) {
	return a.groups.DescribeGroups(ctx, r.body.(*kmsg.DescribeGroupsRequest)), nil
}
