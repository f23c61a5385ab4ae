package api

// DeleteAcls (key 31), versions 0–3 (flexible from 2).
//
// Behaviour (Kafka's handleDeleteAcls): ALTER on the Cluster is required,
// else every filter answers CLUSTER_AUTHORIZATION_FAILED; without an
// authorizer every filter answers SECURITY_DISABLED. Each filter is an
// AclBindingFilter as in DescribeAcls (version 0: literal only, ANY read as
// LITERAL); one with an UNKNOWN element answers INVALID_REQUEST. The
// authorizer removes every matching binding from ZooKeeper; each filter's
// result lists the bindings it deleted (a binding several filters match is
// listed under the first), each with its own error code.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/security"
)

func (a *Apis) handleDeleteACLs(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DeleteACLsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	resp.Results = make([]kmsg.DeleteACLsResponseResult, len(req.Filters))
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewDeleteACLsResponseResult()
	}
	setErr := func(r *kmsg.DeleteACLsResponseResult, e *security.ACLError) {
		r.ErrorCode = e.Err.Code
		if e.Message != "" {
			m := e.Message
			r.ErrorMessage = &m
		}
	}
	setAll := func(err *kerr.Error, msg string) (kmsg.Response, error) {
		for i := range resp.Results {
			setErr(&resp.Results[i], &security.ACLError{Err: err, Message: msg})
		}
		return resp, nil
	}
	if !a.authorize(ctx, r, kmsg.ACLOperationAlter, kmsg.ACLResourceTypeCluster, clusterResource) {
		return setAll(kerr.ClusterAuthorizationFailed, "")
	}
	if a.acls == nil {
		return setAll(kerr.SecurityDisabled, noAuthorizer)
	}
	var filters []security.ACLFilter
	var at []int
	for i, f := range req.Filters {
		af := aclFilter(req.Version, int8(f.ResourceType), f.ResourceName, int8(f.ResourcePatternType), f.Principal, f.Host,
			int8(f.Operation), int8(f.PermissionType))
		switch {
		case req.Version == 0 && af.Pattern.PatternType != kmsg.ACLResourcePatternTypeLiteral:
			setErr(&resp.Results[i], &security.ACLError{Err: kerr.UnsupportedVersion, Message: "Version 0 does not support pattern type " +
				af.Pattern.PatternType.String() + " (only LITERAL and ANY are supported)"})
		case !af.Known():
			setErr(&resp.Results[i], &security.ACLError{Err: kerr.InvalidRequest, Message: "Filters contain UNKNOWN elements"})
		default:
			filters = append(filters, af)
			at = append(at, i)
		}
	}
	if len(filters) == 0 {
		return resp, nil
	}
	for j, res := range a.acls.DeleteACLs(ctx, filters) {
		out := &resp.Results[at[j]]
		if res.Err != nil {
			setErr(out, res.Err)
		}
		for k, b := range res.Deleted {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName, m.ResourcePatternType = b.Pattern.ResourceType, b.Pattern.Name, b.Pattern.PatternType
			m.Principal, m.Host, m.Operation, m.PermissionType = b.Entry.Principal, b.Entry.Host, b.Entry.Operation, b.Entry.Permission
			if e := res.Failures[k]; e != nil {
				m.ErrorCode = e.Err.Code
				if e.Message != "" {
					msg := e.Message
					m.ErrorMessage = &msg
				}
			}
			out.MatchingACLs = append(out.MatchingACLs, m)
		}
	}
	return resp, nil
}
