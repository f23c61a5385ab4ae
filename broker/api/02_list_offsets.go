package api

// ListOffsets (key 2), versions 0–7 (flexible from 6).
//
// Behaviour (protocol.md §9.3): delegated to the replica manager (earliest −2,
// latest −1, max timestamp −3, by timestamp; isolation level; leader epoch
// fencing; v0 old-style offsets).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleListOffsets(ctx context.Context, r *request) (kmsg.Response, error) {
	return a.replicas.ListOffsets(ctx, r.body.(*kmsg.ListOffsetsRequest)), nil
}
