package api

// UpdateMetadata (key 6), versions 0–8 (flexible from 6). Controller → broker.
//
// Behaviour: delegated to the replica manager, which checks
// the controller and broker epochs and then updates the metadata cache. After
// a successful update this layer wakes the admin requests that wait for the
// cache (CreateTopics/DeleteTopics/CreatePartitions timeouts).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleUpdateMetadata(ctx context.Context, r *request) (kmsg.Response, error) {
	resp := a.replicas.UpdateMetadata(ctx, r.body.(*kmsg.UpdateMetadataRequest))
	if resp.ErrorCode == 0 {
		a.metadataChanged()
	}
	return resp, nil
}
