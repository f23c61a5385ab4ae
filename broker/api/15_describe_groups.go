package api

// DescribeGroups (key 15), versions 0–5 (flexible from 5).
//
// Behaviour: the group coordinator (broker/group) describes each group;
// unknown groups are described as Dead.
//
// Authorization: Describe on each group; a denied group answers
// GROUP_AUTHORIZATION_FAILED with empty state, protocol and members, and is
// not asked of the coordinator. With include_authorized_operations (v3+) a
// group described without error carries the bit field of the operations
// the principal may perform on it (Read, Describe, Delete; all of them
// without an authorizer); otherwise −2^31.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleDescribeGroups(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeGroupsRequest)
	withOps := req.Version >= 3 && req.IncludeAuthorizedOperations
	if a.authorizer == nil && !withOps {
		return a.groups.DescribeGroups(ctx, req), nil
	}
	passed := *req
	passed.Groups = nil
	allowed := make([]bool, len(req.Groups))
	for i, g := range req.Groups {
		allowed[i] = a.authorize(ctx, r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup, g)
		if allowed[i] {
			passed.Groups = append(passed.Groups, g)
		}
	}
	var described []kmsg.DescribeGroupsResponseGroup
	if len(passed.Groups) > 0 {
		described = a.groups.DescribeGroups(ctx, &passed).Groups
	}
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for i, g := range req.Groups {
		if !allowed[i] || len(described) == 0 { // the coordinator answers every group it is asked
			out := kmsg.NewDescribeGroupsResponseGroup()
			out.Group, out.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
			if allowed[i] {
				out.ErrorCode = kerr.UnknownServerError.Code
			}
			out.AuthorizedOperations = authorizedOperationsOmitted
			resp.Groups = append(resp.Groups, out)
			continue
		}
		// The coordinator answers the passed groups in order.
		out := described[0]
		described = described[1:]
		out.AuthorizedOperations = authorizedOperationsOmitted
		if withOps && out.ErrorCode == 0 {
			out.AuthorizedOperations = a.authorizedOperations(ctx, r, kmsg.ACLResourceTypeGroup, g)
		}
		resp.Groups = append(resp.Groups, out)
	}
	return resp, nil
}
