package group

// LeaveGroup (Kafka's handleLeaveGroup): members leave one by one (v3+:
// several per request, each with its own error), and the group
// rebalances.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LeaveGroup handles LeaveGroup v0-v5 (a batch of members from v3).
func (c *Coordinator) LeaveGroup(_ context.Context, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	leaving := req.Members
	if req.Version < 3 {
		leaving = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	if req.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp
	}
	g, code := c.lookup(req.Group, false)
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	codes := make([]int16, len(leaving))
	if g == nil {
		for i := range codes {
			codes[i] = kerr.UnknownMemberID.Code
		}
	} else {
		g.mu.Lock()
		if code := lockedCode(g); code != 0 {
			g.mu.Unlock()
			resp.ErrorCode = code
			return resp
		}
		if g.state == Dead {
			g.mu.Unlock()
			resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
			return resp
		}
		for i, l := range leaving {
			codes[i] = c.leaveOneLocked(g, l)
		}
		g.mu.Unlock()
	}
	if req.Version < 3 {
		resp.ErrorCode = codes[0]
		return resp
	}
	for i, l := range leaving {
		resp.Members = append(resp.Members, kmsg.LeaveGroupResponseMember{MemberID: l.MemberID, InstanceID: l.InstanceID, ErrorCode: codes[i]})
	}
	return resp
}

func (c *Coordinator) leaveOneLocked(g *Group, l kmsg.LeaveGroupRequestMember) int16 {
	id := l.MemberID
	if id != "" && g.checkStaticLocked(id, l.InstanceID) != 0 {
		return kerr.FencedInstanceID.Code
	}
	if l.InstanceID != nil && g.static[*l.InstanceID] != "" {
		id = g.static[*l.InstanceID] // an admin may remove a static member by instance id alone
	}
	if t, ok := g.pending[id]; ok {
		t.Stop()
		delete(g.pending, id)
		if g.state == PreparingRebalance {
			c.tryCompleteJoinLocked(g)
		}
		return 0
	}
	m := g.members[id]
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	c.log.Info("member is leaving the group", "group", g.id, "member", id)
	c.removeMemberAndRebalanceLocked(g, m, "removing member "+id+" on LeaveGroup")
	return 0
}
