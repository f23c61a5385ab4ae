package api

// ListGroups (key 16), versions 0–4 (flexible from 3; v4 filters by state).
//
// Behaviour: only the groups this broker coordinates are listed (the group
// coordinator's); clients ask every broker.
//
// Authorization: Describe on the Cluster lists every group; without it
// only the groups the principal may Describe are listed (no error).

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleListGroups(ctx context.Context, r *request) (kmsg.Response, error) {
	resp := a.groups.ListGroups(ctx, r.body.(*kmsg.ListGroupsRequest))
	if a.authorize(ctx, r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeCluster, clusterResource) {
		return resp, nil
	}
	resp.Groups = slices.DeleteFunc(resp.Groups, func(g kmsg.ListGroupsResponseGroup) bool {
		return !a.authorize(ctx, r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup, g.Group)
	})
	return resp, nil
}
