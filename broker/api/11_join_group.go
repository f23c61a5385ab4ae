package api

// JoinGroup (key 11), versions 0–9 (flexible from 6).
//
// Behaviour: delegated to the group coordinator
// (broker/group): MEMBER_ID_REQUIRED from v4, static members from v5, the
// join parks until the rebalance completes. This layer supplies what the
// coordinator records about the member: its client id and its host in
// Kafka's "/ip" form.
//
// Authorization: Read on the group, else GROUP_AUTHORIZATION_FAILED with
// an empty member id and generation −1, without reaching the coordinator.

import (
	"context"
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/group"
)

func (a *Apis) handleJoinGroup(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.JoinGroupRequest)
	if !a.authorize(ctx, r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		if req.Version < 7 {
			resp.Protocol = kmsg.StringPtr("") // not nullable before v7
		}
		return resp, nil
	}
	info := group.JoinInfo{ClientID: r.net.ClientIDOrEmpty()}
	if r.net.RemoteAddr != nil {
		host := r.net.RemoteAddr.String()
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		info.ClientHost = "/" + host
	}
	return a.groups.JoinGroup(ctx, req, info), nil
}
