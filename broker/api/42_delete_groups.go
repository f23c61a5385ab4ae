package api

// DeleteGroups (key 42), versions 0–2 (flexible from 2).
//
// Behaviour: the group coordinator deletes empty or dead groups
// (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, NOT_COORDINATOR, ...).
//
// Authorization: Delete on each group; a denied group answers
// GROUP_AUTHORIZATION_FAILED and is not asked of the coordinator. A group
// named twice is decided and answered once, as Kafka does.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleDeleteGroups(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DeleteGroupsRequest)
	if a.authorizer == nil {
		return a.groups.DeleteGroups(ctx, req), nil
	}
	passed := *req
	passed.Groups = nil
	var denied []kmsg.DeleteGroupsResponseGroup
	seen := map[string]bool{}
	for _, g := range req.Groups {
		if seen[g] {
			continue
		}
		seen[g] = true
		if a.authorize(ctx, r, kmsg.ACLOperationDelete, kmsg.ACLResourceTypeGroup, g) {
			passed.Groups = append(passed.Groups, g)
			continue
		}
		out := kmsg.NewDeleteGroupsResponseGroup()
		out.Group, out.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
		denied = append(denied, out)
	}
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	if len(passed.Groups) > 0 {
		resp = a.groups.DeleteGroups(ctx, &passed)
	}
	resp.Groups = append(resp.Groups, denied...)
	return resp, nil
}
