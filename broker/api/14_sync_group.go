package api

// SyncGroup (key 14), versions 0–5 (flexible from 4).
//
// Behaviour: the group coordinator (broker/group) serves it; a member's
// SyncGroup parks until the leader's assignment arrives. As in Kafka's
// KafkaApis, a v5+ request without protocol_type or protocol_name answers
// INCONSISTENT_GROUP_PROTOCOL before anything else.
//
// Authorization: Read on the group, else GROUP_AUTHORIZATION_FAILED
// without reaching the coordinator.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleSyncGroup(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.SyncGroupRequest)
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	switch {
	case req.Version >= 5 && (req.ProtocolType == nil || req.Protocol == nil):
		resp.ErrorCode = kerr.InconsistentGroupProtocol.Code
	case !a.authorize(ctx, r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group):
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
	default:
		return a.groups.SyncGroup(ctx, req), nil
	}
	return resp, nil
}
