package group

// Member sessions and Heartbeat (Kafka's DelayedHeartbeat and
// handleHeartbeat): each member has a session timer that every join, sync
// and heartbeat restarts; when it fires the member is removed.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (c *Coordinator) scheduleSessionLocked(g *Group, m *Member) {
	c.stopSessionLocked(m)
	seq := m.sessionSeq
	m.session = c.clock.AfterFunc(m.SessionTimeout, func() { c.onSessionExpired(g, m, seq) })
}

// touchSessionLocked records activity of m (heartbeat, join, sync,
// commit): its session restarts.
func (c *Coordinator) touchSessionLocked(g *Group, m *Member) { c.scheduleSessionLocked(g, m) }

func (c *Coordinator) stopSessionLocked(m *Member) {
	if m.session != nil {
		m.session.Stop()
		m.session = nil
	}
	m.sessionSeq++
}

func (c *Coordinator) onSessionExpired(g *Group, m *Member, seq uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if seq != m.sessionSeq || g.members[m.ID] != m {
		return
	}
	m.session = nil
	if m.joinCh != nil || m.syncCh != nil {
		// A member parked in JoinGroup or SyncGroup cannot heartbeat;
		// the rebalance and sync timers bound its wait instead.
		c.scheduleSessionLocked(g, m)
		return
	}
	c.log.Info("member has failed, removing it from the group", "group", g.id, "member", m.ID,
		"session_timeout_ms", m.SessionTimeout.Milliseconds())
	c.removeMemberAndRebalanceLocked(g, m, "removing member "+m.ID+" on heartbeat expiration")
}

// Heartbeat handles Heartbeat v0-v4.
func (c *Coordinator) Heartbeat(_ context.Context, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = c.heartbeat(req)
	return resp
}

func (c *Coordinator) heartbeat(req *kmsg.HeartbeatRequest) int16 {
	if req.Group == "" {
		return kerr.InvalidGroupID.Code
	}
	g, code := c.lockGroup(req.Group, false, kerr.UnknownMemberID.Code)
	if code == kerr.CoordinatorLoadInProgress.Code {
		// Members keep their session while the new coordinator loads.
		return 0
	}
	if code != 0 {
		return code
	}
	defer g.mu.Unlock()
	switch g.state {
	case Dead:
		return kerr.CoordinatorNotAvailable.Code
	case Empty:
		return kerr.UnknownMemberID.Code
	}
	m := g.members[req.MemberID]
	if code := g.checkStaticLocked(req.MemberID, req.InstanceID); code != 0 {
		return code
	}
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	if req.Generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	c.touchSessionLocked(g, m)
	if g.state == PreparingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}
