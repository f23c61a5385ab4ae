package api

// CreateAcls (key 30), versions 0–3 (flexible from 2).
//
// Behaviour (Kafka's handleCreateAcls): ALTER on the Cluster is required,
// else every creation answers CLUSTER_AUTHORIZATION_FAILED; without an
// authorizer every creation answers SECURITY_DISABLED. Per creation:
// INVALID_REQUEST "The only valid name for the CLUSTER resource is
// kafka-cluster", "Invalid empty resource name", or "Failed to create ACL"
// for a binding with an UNKNOWN, ANY or MATCH element or a principal not
// of the form type:name; version 0 allows only literal patterns
// (UNSUPPORTED_VERSION). Valid bindings go to the authorizer, which writes
// them to ZooKeeper; one result per creation, in request order.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/security"
)

func (a *Apis) handleCreateACLs(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.CreateACLsRequest)
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	resp.Results = make([]kmsg.CreateACLsResponseResult, len(req.Creations))
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewCreateACLsResponseResult()
	}
	setAll := func(err *kerr.Error, msg string) (kmsg.Response, error) {
		for i := range resp.Results {
			setCreateResult(&resp.Results[i], &security.ACLError{Err: err, Message: msg})
		}
		return resp, nil
	}
	if !a.authorize(ctx, r, kmsg.ACLOperationAlter, kmsg.ACLResourceTypeCluster, clusterResource) {
		return setAll(kerr.ClusterAuthorizationFailed, "")
	}
	if a.acls == nil {
		return setAll(kerr.SecurityDisabled, noAuthorizer)
	}
	var valid []security.ACLBinding
	var at []int
	for i, c := range req.Creations {
		pt := security.PatternTypeFromCode(int8(c.ResourcePatternType))
		if req.Version == 0 {
			pt = kmsg.ACLResourcePatternTypeLiteral
		}
		b := security.ACLBinding{
			Pattern: security.ResourcePattern{ResourceType: security.ResourceTypeFromCode(int8(c.ResourceType)), Name: c.ResourceName, PatternType: pt},
			Entry: security.AccessControlEntry{Principal: c.Principal, Host: c.Host, Operation: security.OperationFromCode(int8(c.Operation)),
				Permission: security.PermissionFromCode(int8(c.PermissionType))},
		}
		var bad *security.ACLError
		switch {
		case b.Pattern.ResourceType == kmsg.ACLResourceTypeCluster && b.Pattern.Name != clusterResource:
			bad = &security.ACLError{Err: kerr.InvalidRequest, Message: "The only valid name for the CLUSTER resource is " + clusterResource}
		case b.Pattern.Name == "":
			bad = &security.ACLError{Err: kerr.InvalidRequest, Message: "Invalid empty resource name"}
		case !b.Valid():
			bad = &security.ACLError{Err: kerr.InvalidRequest, Message: "Failed to create ACL"}
		}
		if bad != nil {
			setCreateResult(&resp.Results[i], bad)
			continue
		}
		valid = append(valid, b)
		at = append(at, i)
	}
	if len(valid) > 0 {
		for j, res := range a.acls.CreateACLs(ctx, valid) {
			if res != nil {
				setCreateResult(&resp.Results[at[j]], res)
			}
		}
	}
	return resp, nil
}

func setCreateResult(r *kmsg.CreateACLsResponseResult, e *security.ACLError) {
	r.ErrorCode = e.Err.Code
	if e.Message != "" {
		m := e.Message
		r.ErrorMessage = &m
	}
}
