package api

// OffsetDelete (key 47), versions 0 (never flexible).
//
// Behaviour (protocol.md §9.31): delegated to the group coordinator
// (broker/group), which checks that this broker coordinates the group
// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) and applies every group
// rule.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleOffsetDelete(ctx context.Context, r *request) (kmsg.Response, error) {
	return a.groups.OffsetDelete(ctx, r.body.(*kmsg.OffsetDeleteRequest)), nil
}
