package group

// SyncGroup (Kafka's handleSyncGroup): followers park until the leader's
// assignment for the generation is persisted; then every member gets its
// share and the group is Stable.

import (
	"context"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SyncGroup handles SyncGroup v0-v5. Followers park until the leader's
// assignment is persisted.
func (c *Coordinator) SyncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	res := c.syncGroup(ctx, req)
	resp.ErrorCode = res.code
	if res.code == 0 {
		resp.MemberAssignment = res.assignment
		resp.ProtocolType, resp.Protocol = &res.protocolType, &res.protocol
	}
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	return resp
}

func (c *Coordinator) syncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) syncResult {
	if req.Group == "" {
		return syncResult{code: kerr.InvalidGroupID.Code}
	}
	g, code := c.lookup(req.Group, false)
	if code == kerr.CoordinatorLoadInProgress.Code {
		// The rebalance state was lost with the old coordinator; older
		// clients do not expect COORDINATOR_LOAD_IN_PROGRESS here, and
		// REBALANCE_IN_PROGRESS makes them rejoin.
		return syncResult{code: kerr.RebalanceInProgress.Code}
	}
	if code != 0 {
		return syncResult{code: code}
	}
	if g == nil {
		return syncResult{code: kerr.UnknownMemberID.Code}
	}
	g.mu.Lock()
	if code := lockedCode(g); code != 0 {
		g.mu.Unlock()
		return syncResult{code: code}
	}
	code, ch, persist := c.syncLocked(g, req)
	g.mu.Unlock()
	if code != 0 {
		return syncResult{code: code}
	}
	if persist != nil {
		persist()
	}
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		return syncResult{code: kerr.CoordinatorNotAvailable.Code}
	}
}

// syncLocked validates a SyncGroup and parks it; for the leader it also
// returns the write that completes the generation, run without the lock.
func (c *Coordinator) syncLocked(g *Group, req *kmsg.SyncGroupRequest) (int16, chan syncResult, func()) {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable.Code, nil, nil
	}
	if code := g.checkStaticLocked(req.MemberID, req.InstanceID); code != 0 {
		return code, nil, nil
	}
	m := g.members[req.MemberID]
	if m == nil {
		return kerr.UnknownMemberID.Code, nil, nil
	}
	if req.Generation != g.generation {
		return kerr.IllegalGeneration.Code, nil, nil
	}
	if req.Version >= 5 && ((req.ProtocolType != nil && *req.ProtocolType != g.protocolType) ||
		(req.Protocol != nil && *req.Protocol != g.protocol)) {
		return kerr.InconsistentGroupProtocol.Code, nil, nil
	}
	switch g.state {
	case Empty:
		return kerr.UnknownMemberID.Code, nil, nil
	case PreparingRebalance:
		return kerr.RebalanceInProgress.Code, nil, nil
	case Stable:
		delete(g.pendingSync, m.ID)
		c.touchSessionLocked(g, m)
		ch := make(chan syncResult, 1)
		ch <- syncResult{assignment: m.Assignment, protocolType: g.protocolType, protocol: g.protocol}
		return 0, ch, nil
	}
	// CompletingRebalance.
	delete(g.pendingSync, m.ID)
	c.touchSessionLocked(g, m)
	if m.syncCh != nil {
		m.syncCh <- syncResult{code: kerr.RebalanceInProgress.Code}
	}
	m.syncCh = make(chan syncResult, 1)
	ch := m.syncCh
	if m.ID != g.leader {
		return 0, ch, nil
	}
	assign := leaderAssignmentLocked(g, req)
	gen := g.generation
	batch := buildBatch(c.clock.Now(), []record.Record{{Key: EncodeGroupKey(g.id), Value: g.groupValueLocked(assign)}})
	return 0, ch, func() { c.persistAssignment(g, gen, batch, assign) }
}

// leaderAssignmentLocked is the leader's assignment for the current
// members: entries for departed members are dropped, and a member the
// leader left out gets an empty assignment.
func leaderAssignmentLocked(g *Group, req *kmsg.SyncGroupRequest) map[string][]byte {
	assign := map[string][]byte{}
	for _, a := range req.GroupAssignment {
		if g.members[a.MemberID] != nil {
			assign[a.MemberID] = a.MemberAssignment
		}
	}
	for id := range g.members {
		if assign[id] == nil {
			assign[id] = []byte{}
		}
	}
	return assign
}

// persistAssignment writes the leader's assignment (batch) without holding
// the group lock across the I/O, then, if generation gen is still
// completing, answers every parked SyncGroup: with its assignment and the
// group Stable, or on a failed write with the error and a new rebalance.
func (c *Coordinator) persistAssignment(g *Group, gen int32, batch []byte, assign map[string][]byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	err := c.writeLocked(g, batch)
	if g.generation != gen || g.state != CompletingRebalance {
		return // a rebalance overtook this generation; its syncs were answered
	}
	if err != nil {
		code := appendErrorCode(err)
		c.log.Warn("failed to persist group assignment", "group", g.id, "generation", gen, "err", err)
		for _, m := range g.members {
			m.Assignment = nil
			if m.syncCh != nil {
				m.syncCh <- syncResult{code: code}
				m.syncCh = nil
			}
		}
		c.maybePrepareRebalanceLocked(g, "error persisting group assignment")
		c.tryCompleteJoinLocked(g)
		return
	}
	for id, m := range g.members {
		m.Assignment = assign[id]
		if m.syncCh != nil {
			m.syncCh <- syncResult{assignment: m.Assignment, protocolType: g.protocolType, protocol: g.protocol}
			m.syncCh = nil
		}
	}
	if err := g.transitionLocked(Stable, c.clock.Now()); err != nil {
		c.log.Error("illegal group state transition", "group", g.id, "err", err)
		return
	}
	c.log.Info("assignment received from leader, group is now stable", "group", g.id, "generation", gen)
}
