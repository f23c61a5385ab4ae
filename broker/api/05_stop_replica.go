package api

// StopReplica (key 5), versions 0–4 (flexible from 2). Controller → broker.
//
// Behaviour (protocol.md §9.6): delegated to the replica manager (epoch
// checks; delete_partition removes the log).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleStopReplica(ctx context.Context, r *request) (kmsg.Response, error) {
	return a.replicas.StopReplica(ctx, r.body.(*kmsg.StopReplicaRequest)), nil
}
