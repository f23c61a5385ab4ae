package group

import (
	"context"
	"time"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// JoinInfo is what the network layer knows about the caller and kmsg does
// not carry: the request header's client id and the peer address.
type JoinInfo struct {
	ClientID   string
	ClientHost string // as Kafka prints it, e.g. "/127.0.0.1"
}

func joinError(version int16, memberID string, code int16) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	r.Version = version
	r.ErrorCode = code
	r.Generation = -1
	r.MemberID = memberID
	return r
}

// JoinGroup handles JoinGroup v0-v9. It parks until the rebalance
// completes (or ctx ends, answering COORDINATOR_NOT_AVAILABLE, a response
// nobody reads since the connection is gone).
func (c *Coordinator) JoinGroup(ctx context.Context, req *kmsg.JoinGroupRequest, info JoinInfo) *kmsg.JoinGroupResponse {
	ch, resp := c.joinGroup(req, info)
	if resp != nil {
		return resp
	}
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		return joinError(req.Version, req.MemberID, kerr.CoordinatorNotAvailable.Code)
	}
}

func (c *Coordinator) joinGroup(req *kmsg.JoinGroupRequest, info JoinInfo) (chan *kmsg.JoinGroupResponse, *kmsg.JoinGroupResponse) {
	fail := func(code int16) (chan *kmsg.JoinGroupResponse, *kmsg.JoinGroupResponse) {
		return nil, joinError(req.Version, req.MemberID, code)
	}
	if req.Group == "" {
		return fail(kerr.InvalidGroupID.Code)
	}
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	if session < c.cfg.MinSessionTimeout || session > c.cfg.MaxSessionTimeout {
		return fail(kerr.InvalidSessionTimeout.Code)
	}
	rebalance := time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	if req.Version == 0 {
		rebalance = session // v0 has no rebalance timeout
	}
	unknown := req.MemberID == ""
	g, code := c.lookup(req.Group, unknown)
	if code != 0 {
		return fail(code)
	}
	if g == nil {
		return fail(kerr.UnknownMemberID.Code)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if code := lockedCode(g); code != 0 {
		return fail(code)
	}
	if g.state == Dead {
		return fail(kerr.CoordinatorNotAvailable.Code)
	}
	protocols := make([]Protocol, len(req.Protocols))
	for i, p := range req.Protocols {
		protocols[i] = Protocol{Name: p.Name, Metadata: p.Metadata}
	}
	// A rejoin with the same protocols never conflicts with the group, so
	// check protocol support against everyone but the joiner when known.
	if !c.supportsLocked(g, req.MemberID, req.ProtocolType, protocols) {
		return fail(kerr.InconsistentGroupProtocol.Code)
	}
	_, isPending := g.pending[req.MemberID]
	_, isMember := g.members[req.MemberID]
	isKnownStatic := req.InstanceID != nil && g.static[*req.InstanceID] != ""
	if !isMember && !isPending && !isKnownStatic && len(g.members)+len(g.pending) >= c.cfg.MaxSize {
		return fail(kerr.GroupMaxSizeReached.Code)
	}
	m := &Member{InstanceID: req.InstanceID, ClientID: info.ClientID, ClientHost: info.ClientHost,
		RebalanceTimeout: rebalance, SessionTimeout: session, ProtocolType: req.ProtocolType, Protocols: protocols}
	if unknown {
		return c.newMemberJoinLocked(g, req, m)
	}
	return c.currentMemberJoinLocked(g, req, m)
}

// supportsLocked is GroupMetadata.supportsProtocols, ignoring the joining
// member's own previous protocols (a member may change its own list).
func (c *Coordinator) supportsLocked(g *Group, memberID, protocolType string, ps []Protocol) bool {
	if protocolType == "" || len(ps) == 0 {
		return false
	}
	others := 0
	for id := range g.members {
		if id != memberID {
			others++
		}
	}
	if others == 0 {
		// Nobody else constrains the choice: the joiner defines the group.
		return true
	}
	if protocolType != g.protocolType {
		return false
	}
	for _, p := range ps {
		all := true
		for id, m := range g.members {
			if id != memberID && !hasProtocol(m.Protocols, p.Name) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

func (c *Coordinator) newMemberJoinLocked(g *Group, req *kmsg.JoinGroupRequest, m *Member) (chan *kmsg.JoinGroupResponse, *kmsg.JoinGroupResponse) {
	m.ID = newMemberID(m.ClientID)
	if req.InstanceID != nil {
		if old := g.static[*req.InstanceID]; old != "" {
			return c.replaceStaticMemberLocked(g, req, old, m)
		}
		return c.addMemberAndRebalanceLocked(g, req, m), nil
	}
	if req.Version >= 4 {
		// KIP-394: hand out the id and wait for the member to come back
		// with it, so ids of clients that never rejoin do not pile up.
		id := m.ID
		g.pending[id] = c.clock.AfterFunc(m.SessionTimeout, func() { c.expirePending(g, id) })
		c.log.Debug("new member must rejoin with its member id", "group", g.id, "member", id)
		return nil, joinError(req.Version, id, kerr.MemberIDRequired.Code)
	}
	return c.addMemberAndRebalanceLocked(g, req, m), nil
}

func (c *Coordinator) expirePending(g *Group, id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.pending[id]; !ok {
		return
	}
	delete(g.pending, id)
	if g.state == PreparingRebalance {
		c.tryCompleteJoinLocked(g)
	}
}

func (c *Coordinator) currentMemberJoinLocked(g *Group, req *kmsg.JoinGroupRequest, m *Member) (chan *kmsg.JoinGroupResponse, *kmsg.JoinGroupResponse) {
	if t, ok := g.pending[req.MemberID]; ok {
		t.Stop()
		delete(g.pending, req.MemberID)
		m.ID = req.MemberID
		return c.addMemberAndRebalanceLocked(g, req, m), nil
	}
	if code := g.checkStaticLocked(req.MemberID, req.InstanceID); code != 0 {
		return nil, joinError(req.Version, req.MemberID, code)
	}
	cur := g.members[req.MemberID]
	if cur == nil || (req.InstanceID != nil && g.static[*req.InstanceID] == "") {
		// Unknown id, or a static member whose instance id is unknown:
		// the client resets its member id and joins again.
		return nil, joinError(req.Version, req.MemberID, kerr.UnknownMemberID.Code)
	}
	switch g.state {
	case PreparingRebalance:
		return c.updateMemberAndRebalanceLocked(g, req, cur, m), nil
	case CompletingRebalance:
		if cur.sameProtocols(m.Protocols) {
			// A retried join of the generation just formed: answer it again.
			c.touchSessionLocked(g, cur)
			return nil, g.joinResponseLocked(cur, req.Version)
		}
		return c.updateMemberAndRebalanceLocked(g, req, cur, m), nil
	case Stable:
		if cur.ID == g.leader || !cur.sameProtocols(m.Protocols) {
			// The leader rejoining (e.g. to react to a metadata change)
			// or changed subscriptions force a rebalance.
			return c.updateMemberAndRebalanceLocked(g, req, cur, m), nil
		}
		c.touchSessionLocked(g, cur)
		return nil, g.joinResponseLocked(cur, req.Version)
	default:
		return nil, joinError(req.Version, req.MemberID, kerr.UnknownMemberID.Code)
	}
}

// checkStaticLocked is isStaticMemberFenced: FENCED_INSTANCE_ID when the
// instance id belongs to another member id. An unknown instance id is not
// fenced; the member-id check that follows decides.
func (g *Group) checkStaticLocked(memberID string, instanceID *string) int16 {
	if instanceID == nil {
		return 0
	}
	if cur := g.static[*instanceID]; cur != "" && cur != memberID {
		return kerr.FencedInstanceID.Code
	}
	return 0
}

func (c *Coordinator) replaceStaticMemberLocked(g *Group, req *kmsg.JoinGroupRequest, oldID string, m *Member) (chan *kmsg.JoinGroupResponse, *kmsg.JoinGroupResponse) {
	old := g.members[oldID]
	if old == nil {
		delete(g.static, *req.InstanceID)
		return c.addMemberAndRebalanceLocked(g, req, m), nil
	}
	// The new id takes over the old member's slot and assignment; the old
	// id is fenced from now on.
	c.stopSessionLocked(old)
	delete(g.members, oldID)
	if old.joinCh != nil {
		old.joinCh <- joinError(old.joinVer, oldID, kerr.FencedInstanceID.Code)
		old.joinCh = nil
	}
	if old.syncCh != nil {
		old.syncCh <- syncResult{code: kerr.FencedInstanceID.Code}
		old.syncCh = nil
	}
	if _, ok := g.pendingSync[oldID]; ok {
		delete(g.pendingSync, oldID)
		g.pendingSync[m.ID] = struct{}{}
	}
	m.joinSeq = old.joinSeq
	m.Assignment = old.Assignment
	g.members[m.ID] = m
	g.static[*req.InstanceID] = m.ID
	previousLeader := g.leader
	if g.leader == oldID {
		g.leader = m.ID
	}
	c.log.Info("static member rejoined with a new member id", "group", g.id, "instance", *req.InstanceID,
		"old_member", oldID, "member", m.ID)
	switch g.state {
	case Stable:
		if old.sameProtocols(m.Protocols) {
			// Same subscription: keep the generation and the assignment,
			// record the new member id, and send no member list so that a
			// returning leader does not compute a new assignment.
			c.scheduleSessionLocked(g, m)
			batch := buildBatch(c.clock.Now(), []record.Record{{Key: EncodeGroupKey(g.id), Value: g.groupValueLocked(nil)}})
			c.writeAsyncLocked(g, batch, "static member "+m.ID+" of "+g.id)
			// The previous leader id is returned so that a replaced leader
			// does not believe it leads and compute an assignment that a
			// Stable group would not distribute.
			r := g.joinResponseLocked(m, req.Version)
			r.Members = nil
			r.LeaderID = previousLeader
			return nil, r
		}
		return c.updateMemberAndRebalanceLocked(g, req, m, m), nil
	case CompletingRebalance:
		c.scheduleSessionLocked(g, m)
		return c.updateMemberAndRebalanceLocked(g, req, m, m), nil
	default: // PreparingRebalance
		return c.updateMemberAndRebalanceLocked(g, req, m, m), nil
	}
}

// joinResponseLocked is the response of a completed join for m.
func (g *Group) joinResponseLocked(m *Member, version int16) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	r.Version = version
	r.Generation = g.generation
	pt, p := g.protocolType, g.protocol
	r.ProtocolType = &pt
	r.Protocol = &p
	r.LeaderID = g.leader
	r.MemberID = m.ID
	if m.ID == g.leader {
		for _, o := range g.sortedMembersLocked() {
			r.Members = append(r.Members, kmsg.JoinGroupResponseMember{MemberID: o.ID, InstanceID: o.InstanceID,
				ProtocolMetadata: o.metadataFor(g.protocol)})
		}
	}
	return r
}

func (c *Coordinator) addMemberAndRebalanceLocked(g *Group, req *kmsg.JoinGroupRequest, m *Member) chan *kmsg.JoinGroupResponse {
	g.joinSeq++
	m.joinSeq = g.joinSeq
	m.joinCh = make(chan *kmsg.JoinGroupResponse, 1)
	m.joinVer = req.Version
	if len(g.members) == 0 {
		g.protocolType = m.ProtocolType
	}
	m.Assignment = nil
	g.members[m.ID] = m
	if m.InstanceID != nil {
		g.static[*m.InstanceID] = m.ID
	}
	if g.leader == "" || g.members[g.leader] == nil {
		g.leader = m.ID // the first joiner leads
	}
	if g.generation == 0 {
		// Only a group's first rebalance extends its initial delay.
		g.newMemberAdded = true
	}
	c.scheduleSessionLocked(g, m)
	c.maybePrepareRebalanceLocked(g, "adding new member "+m.ID)
	ch := m.joinCh
	c.tryCompleteJoinLocked(g)
	return ch
}

func (c *Coordinator) updateMemberAndRebalanceLocked(g *Group, req *kmsg.JoinGroupRequest, cur, m *Member) chan *kmsg.JoinGroupResponse {
	cur.Protocols = m.Protocols
	cur.ProtocolType = m.ProtocolType
	if len(g.members) == 1 {
		g.protocolType = m.ProtocolType // the only member defines it
	}
	cur.RebalanceTimeout = m.RebalanceTimeout
	cur.SessionTimeout = m.SessionTimeout
	cur.ClientID, cur.ClientHost = m.ClientID, m.ClientHost
	if cur.joinCh != nil {
		// A second join from the same member replaces the first.
		cur.joinCh <- joinError(cur.joinVer, cur.ID, kerr.RebalanceInProgress.Code)
	}
	cur.joinCh = make(chan *kmsg.JoinGroupResponse, 1)
	cur.joinVer = req.Version
	c.touchSessionLocked(g, cur)
	c.maybePrepareRebalanceLocked(g, "updating metadata for member "+cur.ID)
	ch := cur.joinCh
	c.tryCompleteJoinLocked(g)
	return ch
}

// maybePrepareRebalanceLocked is prepareRebalance for Stable,
// CompletingRebalance and Empty groups.
func (c *Coordinator) maybePrepareRebalanceLocked(g *Group, reason string) {
	switch g.state {
	case Stable, CompletingRebalance, Empty:
	default:
		return
	}
	if g.state == CompletingRebalance {
		// Assignments of the aborted generation are void; parked syncs
		// must rejoin.
		for _, m := range g.members {
			m.Assignment = nil
			if m.syncCh != nil {
				m.syncCh <- syncResult{code: kerr.RebalanceInProgress.Code}
				m.syncCh = nil
			}
		}
	}
	c.stopSyncTimerLocked(g)
	wasEmpty := g.state == Empty
	if err := g.transitionLocked(PreparingRebalance, c.clock.Now()); err != nil {
		c.log.Error("illegal group state transition", "group", g.id, "err", err)
		return
	}
	c.log.Info("preparing to rebalance group", "group", g.id, "generation", g.generation, "reason", reason)
	rt := g.maxRebalanceTimeoutLocked()
	if wasEmpty && c.cfg.InitialRebalanceDelay > 0 {
		g.initialDelay = true
		delay := min(c.cfg.InitialRebalanceDelay, rt)
		g.initialDelayLeft = max(rt-delay, 0)
		g.newMemberAdded = false
		c.armRebalanceLocked(g, delay)
		return
	}
	g.initialDelay = false
	c.armRebalanceLocked(g, rt)
}

func (c *Coordinator) armRebalanceLocked(g *Group, d time.Duration) {
	c.stopRebalanceTimerLocked(g)
	g.rebalanceSeq++
	seq := g.rebalanceSeq
	g.rebalance = c.clock.AfterFunc(d, func() { c.onRebalanceTimer(g, seq) })
}

func (c *Coordinator) stopRebalanceTimerLocked(g *Group) {
	if g.rebalance != nil {
		g.rebalance.Stop()
		g.rebalance = nil
	}
	g.rebalanceSeq++
}

// onRebalanceTimer is the expiry of DelayedJoin / InitialDelayedJoin.
func (c *Coordinator) onRebalanceTimer(g *Group, seq uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if seq != g.rebalanceSeq || g.state != PreparingRebalance {
		return
	}
	g.rebalance = nil
	if g.initialDelay && g.newMemberAdded && g.initialDelayLeft > 0 {
		// InitialDelayedJoin: someone joined during the delay; wait
		// another delay, bounded by the rebalance timeout.
		g.newMemberAdded = false
		d := min(c.cfg.InitialRebalanceDelay, g.initialDelayLeft)
		g.initialDelayLeft -= d
		c.armRebalanceLocked(g, d)
		return
	}
	c.completeJoinLocked(g)
}

// tryCompleteJoinLocked completes the join early when every member has
// rejoined, except during the initial delay of a new group.
func (c *Coordinator) tryCompleteJoinLocked(g *Group) {
	if g.state != PreparingRebalance || g.initialDelay {
		return
	}
	if g.allJoinedLocked() {
		c.stopRebalanceTimerLocked(g)
		c.completeJoinLocked(g)
	}
}

// completeJoinLocked is onCompleteJoin: drop members that did not rejoin,
// start the next generation and answer every parked join.
func (c *Coordinator) completeJoinLocked(g *Group) {
	g.initialDelay = false
	// Dynamic members that did not rejoin are dropped; static ones stay
	// (their session timeout decides), which is what lets a restarting
	// static member keep its place.
	for _, m := range g.sortedMembersLocked() {
		if m.joinCh == nil && m.InstanceID == nil {
			c.log.Info("member did not rejoin in time, removing it", "group", g.id, "member", m.ID)
			c.removeMemberLocked(g, m)
		}
	}
	if len(g.members) > 0 {
		// The leader must be a member that rejoined.
		if l := g.members[g.leader]; l == nil || l.joinCh == nil {
			g.leader = ""
			for _, m := range g.sortedMembersLocked() {
				if m.joinCh != nil {
					g.leader = m.ID
					break
				}
			}
		}
		if g.leader == "" {
			// Only static members that did not rejoin are left: wait
			// another rebalance timeout for them (or their sessions).
			c.log.Warn("group could not complete rebalance because no members rejoined", "group", g.id)
			c.armRebalanceLocked(g, g.maxRebalanceTimeoutLocked())
			return
		}
	}
	now := c.clock.Now()
	g.generation++
	if len(g.members) == 0 {
		g.protocol = ""
		g.leader = ""
		if err := g.transitionLocked(Empty, now); err != nil {
			c.log.Error("illegal group state transition", "group", g.id, "err", err)
			return
		}
		c.log.Info("group is now empty", "group", g.id, "generation", g.generation)
		batch := buildBatch(now, []record.Record{{Key: EncodeGroupKey(g.id), Value: g.groupValueLocked(nil)}})
		c.writeAsyncLocked(g, batch, "empty group "+g.id)
		return
	}
	g.protocol = g.selectProtocolLocked()
	if err := g.transitionLocked(CompletingRebalance, now); err != nil {
		c.log.Error("illegal group state transition", "group", g.id, "err", err)
		return
	}
	c.log.Info("stabilized group", "group", g.id, "generation", g.generation, "protocol", g.protocol,
		"leader", g.leader, "members", len(g.members))
	g.pendingSync = map[string]struct{}{}
	for _, m := range g.members {
		m.Assignment = nil
		g.pendingSync[m.ID] = struct{}{}
		if m.joinCh != nil {
			m.joinCh <- g.joinResponseLocked(m, m.joinVer)
			m.joinCh = nil
		}
		c.touchSessionLocked(g, m)
	}
	c.armSyncTimerLocked(g)
}

// armSyncTimerLocked removes members that do not send SyncGroup for the
// new generation within the rebalance timeout.
func (c *Coordinator) armSyncTimerLocked(g *Group) {
	c.stopSyncTimerLocked(g)
	g.syncSeq++
	seq, gen := g.syncSeq, g.generation
	g.syncTimer = c.clock.AfterFunc(g.maxRebalanceTimeoutLocked(), func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if seq != g.syncSeq || gen != g.generation || (g.state != CompletingRebalance && g.state != Stable) {
			return
		}
		g.syncTimer = nil
		if len(g.pendingSync) == 0 {
			return
		}
		for id := range g.pendingSync {
			if m := g.members[id]; m != nil {
				c.log.Info("member did not sync in time, removing it", "group", g.id, "member", id)
				c.removeMemberLocked(g, m)
			}
		}
		g.pendingSync = map[string]struct{}{}
		c.maybePrepareRebalanceLocked(g, "members failed to sync")
		c.tryCompleteJoinLocked(g)
	})
}

func (c *Coordinator) stopSyncTimerLocked(g *Group) {
	if g.syncTimer != nil {
		g.syncTimer.Stop()
		g.syncTimer = nil
	}
	g.syncSeq++
}

// removeMemberLocked drops m from the group's books, answering its parked
// requests with UNKNOWN_MEMBER_ID; callers decide on the rebalance.
func (c *Coordinator) removeMemberLocked(g *Group, m *Member) {
	c.stopSessionLocked(m)
	delete(g.members, m.ID)
	delete(g.pendingSync, m.ID)
	if m.InstanceID != nil && g.static[*m.InstanceID] == m.ID {
		delete(g.static, *m.InstanceID)
	}
	if m.joinCh != nil {
		m.joinCh <- joinError(m.joinVer, m.ID, kerr.UnknownMemberID.Code)
		m.joinCh = nil
	}
	if m.syncCh != nil {
		m.syncCh <- syncResult{code: kerr.UnknownMemberID.Code}
		m.syncCh = nil
	}
	if g.leader == m.ID {
		g.leader = ""
		if ms := g.sortedMembersLocked(); len(ms) > 0 {
			g.leader = ms[0].ID
		}
	}
}

// removeMemberAndRebalanceLocked is removeMemberAndUpdateGroup.
func (c *Coordinator) removeMemberAndRebalanceLocked(g *Group, m *Member, reason string) {
	c.removeMemberLocked(g, m)
	switch g.state {
	case Stable, CompletingRebalance:
		c.maybePrepareRebalanceLocked(g, reason)
		c.tryCompleteJoinLocked(g)
	case PreparingRebalance:
		c.tryCompleteJoinLocked(g)
	}
}

// ---- sessions ----

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

// ---- SyncGroup ----

// SyncGroup handles SyncGroup v0-v5. Followers park until the leader's
// assignment is persisted.
func (c *Coordinator) SyncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.Version = req.Version
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
	gen := g.generation
	batch := buildBatch(c.clock.Now(), []record.Record{{Key: EncodeGroupKey(g.id), Value: g.groupValueLocked(assign)}})
	persist := func() {
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
	return 0, ch, persist
}

// ---- Heartbeat ----

// Heartbeat handles Heartbeat v0-v4.
func (c *Coordinator) Heartbeat(_ context.Context, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := kmsg.NewPtrHeartbeatResponse()
	resp.Version = req.Version
	resp.ErrorCode = c.heartbeat(req)
	return resp
}

func (c *Coordinator) heartbeat(req *kmsg.HeartbeatRequest) int16 {
	if req.Group == "" {
		return kerr.InvalidGroupID.Code
	}
	g, code := c.lookup(req.Group, false)
	if code == kerr.CoordinatorLoadInProgress.Code {
		// Members keep their session while the new coordinator loads.
		return 0
	}
	if code != 0 {
		return code
	}
	if g == nil {
		return kerr.UnknownMemberID.Code
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if code := lockedCode(g); code != 0 {
		return code
	}
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

// ---- LeaveGroup ----

// LeaveGroup handles LeaveGroup v0-v5 (a batch of members from v3).
func (c *Coordinator) LeaveGroup(_ context.Context, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := kmsg.NewPtrLeaveGroupResponse()
	resp.Version = req.Version
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
