package group

// JoinGroup (Kafka's handleJoinGroup): a new member gets an id (and with
// v4+ must rejoin with it), a known or static member rejoins, and either
// starts or joins the group's rebalance.

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
	g, code := c.lockGroup(req.Group, unknown, kerr.UnknownMemberID.Code)
	if code != 0 {
		return fail(code)
	}
	defer g.mu.Unlock()
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
