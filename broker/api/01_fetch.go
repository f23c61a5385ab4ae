package api

// Fetch (key 1), versions 0–13 (flexible from 12; topic ids from 13).
//
// Behaviour (protocol.md §9.2): delegated entirely to the replica manager —
// consumer and follower fetches, long polling in the fetch purgatory, fetch
// sessions, leader-epoch fencing and the sendfile path for record data (the
// manager may return a response that the network layer splices from files).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleFetch(ctx context.Context, r *request) (kmsg.Response, error) {
	return a.replicas.Fetch(ctx, r.body.(*kmsg.FetchRequest))
}
