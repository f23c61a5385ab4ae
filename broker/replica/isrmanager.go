package replica

import (
	"errors"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/zkpaths"
)

// Timing of ISR change notifications (Kafka's ReplicaManager constants of
// the ZooKeeper-mode path): a check every 2.5 s writes one notification for
// every change recorded since the last one, once no change happened for 5 s
// or the last notification is 60 s old.
const (
	isrChangePropagationInterval = 2500 * time.Millisecond
	isrChangePropagationBlackout = 5000 * time.Millisecond
	isrChangeMaxPropagationDelay = 60000 * time.Millisecond
)

// Startup starts the ISR maintenance goroutine (shrink check every
// replica.lag.time.max.ms / 2, ISR change notifications every 2.5 s). It
// stops in Shutdown. Unit tests drive MaybeShrinkIsr and
// MaybePropagateIsrChanges directly instead.
func (m *Manager) Startup() {
	m.startOnce.Do(func() {
		m.isrWG.Add(1)
		go m.isrLoop()
	})
}

// isrLoop is owned by the manager; it exits when done is closed.
func (m *Manager) isrLoop() {
	defer m.isrWG.Done()
	shrinkEvery := m.cfg.ReplicaLagTimeMax / 2
	if shrinkEvery <= 0 {
		shrinkEvery = 15 * time.Second
	}
	shrink := time.NewTicker(shrinkEvery)
	defer shrink.Stop()
	notify := time.NewTicker(isrChangePropagationInterval)
	defer notify.Stop()
	for {
		select {
		case <-m.done:
			return
		case <-shrink.C:
			m.MaybeShrinkIsr()
		case <-notify.C:
			m.MaybePropagateIsrChanges()
		}
	}
}

// MaybeShrinkIsr removes the followers that have not caught up within
// replica.lag.time.max.ms from the ISR of every partition this broker
// leads.
func (m *Manager) MaybeShrinkIsr() {
	now := m.cfg.Clock()
	for _, p := range m.Partitions() {
		newIsr, epoch, ok := p.maybeShrinkIsr(now, m.cfg.ReplicaLagTimeMax)
		if !ok {
			continue
		}
		m.log.Info("shrinking ISR", "topic", p.tp.Topic, "partition", p.tp.Partition, "leader_epoch", epoch, "new_isr", newIsr)
		m.submitIsrChange(p, epoch, false, newIsr)
	}
}

// maybeExpandIsr adds follower to the ISR if it is a live broker and
// eligible (canJoinIsr). Called after a follower fetch, with no lock held.
func (m *Manager) maybeExpandIsr(p *Partition, follower int32) {
	if m.cfg.IsBrokerAlive != nil && !m.cfg.IsBrokerAlive(follower) {
		return
	}
	newIsr, epoch, ok := p.maybeExpandIsr(follower)
	if !ok {
		return
	}
	m.log.Info("expanding ISR", "topic", p.tp.Topic, "partition", p.tp.Partition, "leader_epoch", epoch, "new_isr", newIsr)
	m.submitIsrChange(p, epoch, true, newIsr)
}

// maybeShrinkIsr is Kafka's Partition.maybeShrinkIsr decision: the ISR
// without the followers that are out of sync at now (outOfSyncReplicas),
// for a leader with no ISR change in flight. ok is false when nothing
// changes. The caller persists the change (submitIsrChange) with no lock
// held; epoch is the leader epoch it was decided in.
func (p *Partition) maybeShrinkIsr(now time.Time, lagMax time.Duration) (newIsr []int32, epoch int32, ok bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.isLeaderLocked() || p.pendingIsr != nil {
		return nil, 0, false
	}
	leo := p.log.LogEndOffset()
	p.remotesMu.Lock()
	out := outOfSyncReplicas(p.brokerID, p.isr, p.remotes, leo, now, lagMax)
	p.remotesMu.Unlock()
	if len(out) == 0 {
		return nil, 0, false
	}
	newIsr = slices.DeleteFunc(slices.Clone(p.isr), func(id int32) bool { return slices.Contains(out, id) })
	return newIsr, p.leaderEpoch, true
}

// maybeExpandIsr is Kafka's Partition.maybeExpandIsr decision: the ISR
// plus follower when it is a replica outside the ISR that may join
// (canJoinIsr), for a leader with no ISR change in flight. The caller
// persists the change with no lock held.
func (p *Partition) maybeExpandIsr(follower int32) (newIsr []int32, epoch int32, ok bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.isLeaderLocked() || p.pendingIsr != nil || containsBroker(p.isr, follower) || !containsBroker(p.replicas, follower) {
		return nil, 0, false
	}
	hw := p.log.HighWatermark()
	p.remotesMu.Lock()
	join := canJoinIsr(p.remotes[follower], hw, p.epochStartOffset)
	p.remotesMu.Unlock()
	if !join {
		return nil, 0, false
	}
	return append(slices.Clone(p.isr), follower), p.leaderEpoch, true
}

// submitIsrChange makes newIsr pending and hands it to the ISR writer
// (isrwriter.go), which persists it with a conditional write of the
// partition state and then applies the outcome (applyIsrChange). It never
// waits for ZooKeeper: a follower's fetch that adds it to the ISR, or a
// shrink check over thousands of partitions, returns at once, and the
// writer sends everything queued meanwhile in a few batched requests.
//
// While the change is pending no other ISR change of the partition is
// decided, and the HW and acks=all use the maximal ISR (maximalIsrLocked):
// the committed ISR plus a follower being added, or the committed, larger
// ISR during a shrink. The HW is the smallest log end over that set, so it
// never exceeds the log end of any member of the ISR stored in ZooKeeper
// (the set a new leader is elected from): a follower being added only
// holds the HW back until its addition is persisted, and a shrink only
// frees the HW from the removed follower once it is persisted.
func (m *Manager) submitIsrChange(p *Partition, leaderEpoch int32, expand bool, newIsr []int32) {
	p.mu.Lock()
	if !p.isLeaderLocked() || p.pendingIsr != nil || p.leaderEpoch != leaderEpoch {
		p.mu.Unlock()
		return
	}
	change := &isrChange{expand: expand, newIsr: newIsr}
	p.pendingIsr = change
	w := isrWrite{p: p, change: change, st: zkpaths.LeaderAndIsr{
		Leader:              p.brokerID,
		LeaderEpoch:         p.leaderEpoch,
		ISR:                 slices.Clone(newIsr),
		LeaderRecoveryState: zkpaths.LeaderRecovered,
		ControllerEpoch:     p.controllerEpoch,
		ZkVersion:           p.partitionEpoch,
	}}
	p.mu.Unlock()

	if m.cfg.IsrUpdater == nil {
		// No ZooKeeper (unit tests, a standalone manager): the change is
		// applied locally only, at once.
		m.applyIsrChange(w, w.st.ZkVersion+1, nil)
		return
	}
	m.enqueueIsrWrite(w)
}

// applyIsrChange applies the outcome of persisting w (the new partition
// epoch, or the write's error) if the partition is still in the same
// pending state. A version conflict means another writer (the controller)
// changed the state: the partition stays pending, so no further ISR change
// is tried, until the next LeaderAndIsr brings the new state — retrying
// blindly could resurrect a deposed leader's view. Any other error leaves
// nothing pending, so that a later fetch or shrink check tries again. No
// lock may be held.
func (m *Manager) applyIsrChange(w isrWrite, version int32, err error) {
	p, change, st := w.p, w.change, w.st
	p.mu.Lock()
	if p.pendingIsr != change {
		// A LeaderAndIsr (or StopReplica) replaced the state meanwhile; its
		// ISR wins.
		p.mu.Unlock()
		return
	}
	switch {
	case errors.Is(err, zk.ErrBadVersion):
		p.mu.Unlock()
		m.metrics.failedIsrUpdates.Mark(1)
		m.state.Warn("ISR update rejected: partition state changed in ZooKeeper; waiting for the controller's LeaderAndIsr",
			"topic", p.tp.Topic, "partition", p.tp.Partition, "leader_epoch", st.LeaderEpoch,
			"partition_epoch", st.ZkVersion, "new_isr", change.newIsr)
		return
	case err != nil:
		p.pendingIsr = nil // nothing known to be applied: a later check retries
		p.mu.Unlock()
		m.metrics.failedIsrUpdates.Mark(1)
		m.log.Error("ISR update failed", "topic", p.tp.Topic, "partition", p.tp.Partition, "err", err)
		return
	}
	old := p.isr
	p.isr = change.newIsr
	p.partitionEpoch = version
	p.pendingIsr = nil
	hwRose := p.maybeIncrementHighWatermark(p.log, m.cfg.Clock(), m.cfg.ReplicaLagTimeMax)
	p.mu.Unlock()

	expand := change.expand
	m.state.Info("ISR updated", "topic", p.tp.Topic, "partition", p.tp.Partition, "leader_epoch", st.LeaderEpoch,
		"from", old, "to", change.newIsr, "partition_epoch", version, "reason", map[bool]string{true: "expand", false: "shrink"}[expand])
	if expand {
		m.metrics.isrExpands.Mark(1)
	} else {
		m.metrics.isrShrinks.Mark(1)
	}
	m.recordIsrChange(p.tp)
	// An expansion can complete acks=all requests that now meet
	// min.insync.replicas; a shrink can raise the HW.
	if hwRose || expand {
		m.wakeOnHighWatermark(p.tp)
	} else {
		m.wakeProduces(p.tp)
	}
}

// recordIsrChange queues tp for the next ISR change notification.
func (m *Manager) recordIsrChange(tp common.TopicPartition) {
	m.isrNotifyMu.Lock()
	defer m.isrNotifyMu.Unlock()
	m.isrChanged[tp] = struct{}{}
	m.lastIsrChange = m.cfg.Clock()
}

// MaybePropagateIsrChanges writes one /isr_change_notification znode
// listing every partition whose ISR changed, once changes have paused for
// 5 s or the last notification is 60 s old (Kafka's
// maybePropagateIsrChanges). The controller then sends UpdateMetadata.
func (m *Manager) MaybePropagateIsrChanges() {
	now := m.cfg.Clock()
	m.isrNotifyMu.Lock()
	if len(m.isrChanged) == 0 ||
		(now.Sub(m.lastIsrChange) < isrChangePropagationBlackout && now.Sub(m.lastIsrPropagation) < isrChangeMaxPropagationDelay) {
		m.isrNotifyMu.Unlock()
		return
	}
	tps := make([]common.TopicPartition, 0, len(m.isrChanged))
	for tp := range m.isrChanged {
		tps = append(tps, tp)
	}
	clear(m.isrChanged)
	m.lastIsrPropagation = now
	m.isrNotifyMu.Unlock()
	slices.SortFunc(tps, func(a, b common.TopicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	})
	if m.cfg.IsrUpdater == nil {
		return
	}
	if _, err := m.cfg.IsrUpdater.CreateIsrChangeNotification(tps); err != nil {
		m.log.Error("writing ISR change notification; will retry", "partitions", len(tps), "err", err)
		m.isrNotifyMu.Lock()
		for _, tp := range tps {
			m.isrChanged[tp] = struct{}{}
		}
		m.isrNotifyMu.Unlock()
	}
}
