package api

// OffsetFetch (key 9), versions 0–8 (flexible from 6; v8 batches groups).
//
// Behaviour (protocol.md §9.10): delegated to the group coordinator
// (broker/group), which checks that this broker coordinates the group
// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) and applies every group
// rule.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleOffsetFetch(ctx context.Context, r *request) (kmsg.Response, error) {
	return a.groups.OffsetFetch(ctx, r.body.(*kmsg.OffsetFetchRequest)), nil
}
