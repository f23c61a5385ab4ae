package api

// DescribeAcls (key 29), versions 0–3 (flexible from 2).
//
// Behaviour (Kafka's handleDescribeAcls): DESCRIBE on the Cluster is
// required (else CLUSTER_AUTHORIZATION_FAILED); without an authorizer the
// answer is SECURITY_DISABLED "No Authorizer is configured on the broker".
// The filter is Kafka's AclBindingFilter: null name, principal and host
// match all; resource type ANY, pattern type ANY (exact name, any pattern
// type) or MATCH (every pattern affecting the name), operation and
// permission ANY. Version 0 knows only literal patterns: its filter is
// LITERAL, and ANY is read as LITERAL. A filter with an UNKNOWN element
// answers INVALID_REQUEST. Matching bindings are grouped by resource
// pattern.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/security"
)

// noAuthorizer is Kafka's SecurityDisabledException message of the ACL APIs
// (DescribeAcls writes it without the final period).
const noAuthorizer = "No Authorizer is configured on the broker."

func (a *Apis) handleDescribeACLs(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeACLsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	fail := func(err *kerr.Error, msg string) (kmsg.Response, error) {
		resp.ErrorCode = err.Code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return resp, nil
	}
	if !a.authorize(ctx, r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeCluster, clusterResource) {
		return fail(kerr.ClusterAuthorizationFailed, "")
	}
	if a.acls == nil {
		return fail(kerr.SecurityDisabled, noAuthorizer[:len(noAuthorizer)-1])
	}
	f := aclFilter(req.Version, int8(req.ResourceType), req.ResourceName, int8(req.ResourcePatternType), req.Principal, req.Host,
		int8(req.Operation), int8(req.PermissionType))
	if req.Version == 0 && f.Pattern.PatternType != kmsg.ACLResourcePatternTypeLiteral {
		return fail(kerr.UnsupportedVersion, "Version 0 only supports literal resource pattern types")
	}
	if !f.Known() {
		return fail(kerr.InvalidRequest, "DescribeAclsRequest contains UNKNOWN elements")
	}
	var cur *kmsg.DescribeACLsResponseResource
	for _, b := range a.acls.ACLs(f) { // sorted by pattern
		if cur == nil || cur.ResourceType != b.Pattern.ResourceType || cur.ResourceName != b.Pattern.Name || cur.ResourcePatternType != b.Pattern.PatternType {
			res := kmsg.NewDescribeACLsResponseResource()
			res.ResourceType, res.ResourceName, res.ResourcePatternType = b.Pattern.ResourceType, b.Pattern.Name, b.Pattern.PatternType
			resp.Resources = append(resp.Resources, res)
			cur = &resp.Resources[len(resp.Resources)-1]
		}
		d := kmsg.NewDescribeACLsResponseResourceACL()
		d.Principal, d.Host, d.Operation, d.PermissionType = b.Entry.Principal, b.Entry.Host, b.Entry.Operation, b.Entry.Permission
		cur.ACLs = append(cur.ACLs, d)
	}
	return resp, nil
}

// aclFilter reads a DescribeAcls or DeleteAcls filter with 2.8's enum
// codes (later codes are UNKNOWN). Version 0 filters are literal: they
// carry no pattern type, and ANY means LITERAL.
func aclFilter(version int16, rt int8, name *string, pt int8, principal, host *string, op, perm int8) security.ACLFilter {
	patternType := security.PatternTypeFromCode(pt)
	if version == 0 && (patternType == kmsg.ACLResourcePatternTypeAny || patternType == kmsg.ACLResourcePatternTypeUnknown) {
		patternType = kmsg.ACLResourcePatternTypeLiteral
	}
	return security.ACLFilter{
		Pattern: security.PatternFilter{ResourceType: security.ResourceTypeFromCode(rt), Name: name, PatternType: patternType},
		Entry: security.EntryFilter{Principal: principal, Host: host, Operation: security.OperationFromCode(op),
			Permission: security.PermissionFromCode(perm)},
	}
}
