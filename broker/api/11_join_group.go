package api

// JoinGroup (key 11), versions 0–9 (flexible from 6).
//
// Behaviour: delegated to the group coordinator
// (broker/group): MEMBER_ID_REQUIRED from v4, static members from v5, the
// join parks until the rebalance completes. This layer supplies what the
// coordinator records about the member: its client id and its host in
// Kafka's "/ip" form.

import (
	"context"
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/group"
)

func (a *Apis) handleJoinGroup(ctx context.Context, r *request) (kmsg.Response, error) {
	info := group.JoinInfo{ClientID: r.net.ClientIDOrEmpty()}
	if r.net.RemoteAddr != nil {
		host := r.net.RemoteAddr.String()
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		info.ClientHost = "/" + host
	}
	return a.groups.JoinGroup(ctx, r.body.(*kmsg.JoinGroupRequest), info), nil
}
