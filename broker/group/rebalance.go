package group

// Rebalancing (Kafka's GroupCoordinator.prepareRebalance, DelayedJoin,
// InitialDelayedJoin and onCompleteJoin): moving a group to
// PreparingRebalance, the delayed-join and pending-sync timers, completing
// the join, and removing members.

import (
	"time"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
)

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
