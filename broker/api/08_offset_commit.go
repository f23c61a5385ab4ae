package api

// OffsetCommit (key 8), versions 0–8 (flexible from 8).
//
// Behaviour (protocol.md §9.9): delegated to the group coordinator
// (broker/group), which checks that this broker coordinates the group
// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) and applies every group
// rule.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleOffsetCommit(ctx context.Context, r *request) (kmsg.Response, error) {
	return a.groups.OffsetCommit(ctx, r.body.(*kmsg.OffsetCommitRequest)), nil
}
