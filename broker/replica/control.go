package replica

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// checkControlEpochsLocked applies the request-level rules shared by
// LeaderAndIsr, StopReplica and UpdateMetadata: a request addressed to an
// earlier incarnation of this broker (broker epoch below ours, -1 skips the
// check) is STALE_BROKER_EPOCH, one from a controller epoch older than the
// highest seen is STALE_CONTROLLER_EPOCH; otherwise a newer controller
// epoch is recorded. Must hold controlMu.
func (m *Manager) checkControlEpochsLocked(hasBrokerEpoch bool, brokerEpoch int64, controllerEpoch int32, api string) *kerr.Error {
	if hasBrokerEpoch && brokerEpoch != -1 && m.cfg.BrokerEpoch != nil {
		if cur := m.cfg.BrokerEpoch(); brokerEpoch < cur {
			m.state.Warn("ignoring control request for an earlier broker incarnation",
				"api", api, "request_broker_epoch", brokerEpoch, "broker_epoch", cur)
			return kerr.StaleBrokerEpoch
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if controllerEpoch < m.controllerEpoch {
		m.state.Warn("ignoring control request from a stale controller",
			"api", api, "request_controller_epoch", controllerEpoch, "controller_epoch", m.controllerEpoch)
		return kerr.StaleControllerEpoch
	}
	m.controllerEpoch = controllerEpoch
	return nil
}

// topicLogConfig is a topic's resolved log configuration, or why it could
// not be resolved.
type topicLogConfig struct {
	cfg storage.LogConfig
	err error
}

// lairPartition is one LeaderAndIsr partition state with its topic.
type lairPartition struct {
	topic   string
	topicID [16]byte
	st      *kmsg.LeaderAndISRRequestTopicPartition
}

// LeaderAndIsr makes this broker leader or follower of the listed
// partitions: after the request-level epoch checks, each partition state
// with a leader epoch newer than ours switches the partition's role.
func (m *Manager) LeaderAndIsr(_ context.Context, req *kmsg.LeaderAndISRRequest) *kmsg.LeaderAndISRResponse {
	resp := req.ResponseKind().(*kmsg.LeaderAndISRResponse)
	resp.Version = req.Version

	parts := lairPartitions(req)
	logCfgs := m.resolveLogConfigs(parts)

	m.controlMu.Lock()
	defer m.controlMu.Unlock()
	// As Kafka's state-change log, a request's start and end with its
	// duration, so a slow one is seen without a profile (a long
	// LeaderAndIsr delays everything the controller sent after it: the
	// UpdateMetadata of the same change waits in its queue).
	start := time.Now()
	m.state.Info("handling LeaderAndIsr request", "controller", req.ControllerID,
		"controller_epoch", req.ControllerEpoch, "partitions", len(parts))
	defer func() {
		m.state.Info("finished LeaderAndIsr request", "controller", req.ControllerID,
			"controller_epoch", req.ControllerEpoch, "partitions", len(parts), "elapsed_ms", time.Since(start).Milliseconds())
	}()
	if e := m.checkControlEpochsLocked(req.Version >= 2, req.BrokerEpoch, req.ControllerEpoch, "LeaderAndIsr"); e != nil {
		resp.ErrorCode = e.Code
		// Kafka answers the top-level error with every partition carrying it.
		m.fillLeaderAndIsrResponse(req, resp, parts, func(int) int16 { return e.Code })
		return resp
	}

	outs := make([]lairOutcome, len(parts))
	forEachPartition(len(parts), func(i int) {
		lp := parts[i]
		tp := common.TopicPartition{Topic: lp.topic, Partition: lp.st.Partition}
		o := &outs[i]
		o.code, o.follow, o.wasFollowing = m.applyPartitionState(req, lp, tp, logCfgs[lp.topic])
	})
	codes := make([]int16, len(parts))
	var changes []LeadershipChange
	var toFetch map[common.TopicPartition]FollowerStart
	var toStopFetching []common.TopicPartition
	for i, lp := range parts {
		tp := common.TopicPartition{Topic: lp.topic, Partition: lp.st.Partition}
		code, follow, wasFollowing := outs[i].code, outs[i].follow, outs[i].wasFollowing
		codes[i] = code
		if code == 0 {
			changes = append(changes, LeadershipChange{TopicPartition: tp, Leader: lp.st.Leader == m.cfg.BrokerID, LeaderEpoch: lp.st.LeaderEpoch})
		}
		if wasFollowing {
			toStopFetching = append(toStopFetching, tp)
		}
		if follow != nil {
			if !liveLeader(req, follow) {
				// A follower's log is created even without a live leader
				// (its HW is checkpointed), but there is nobody to fetch from.
				m.state.Warn("leader of followed partition is not live; not fetching",
					"topic", tp.Topic, "partition", tp.Partition, "leader", follow.LeaderID)
				continue
			}
			if toFetch == nil {
				toFetch = make(map[common.TopicPartition]FollowerStart)
			}
			toFetch[tp] = *follow
		}
	}
	// Fetcher changes happen after every partition switched, outside
	// partition locks (they may do network I/O).
	if m.cfg.Fetcher != nil {
		if len(toStopFetching) > 0 {
			m.cfg.Fetcher.RemovePartitions(toStopFetching)
		}
		if len(toFetch) > 0 {
			m.cfg.Fetcher.AddPartitions(toFetch)
		}
	}
	if len(changes) > 0 && m.cfg.OnLeadershipChange != nil {
		m.cfg.OnLeadershipChange(changes)
	}
	moved := make([]common.TopicPartition, len(changes))
	for i, c := range changes {
		moved[i] = c.TopicPartition
	}
	m.maybeAddLogDirMovers(moved)
	m.fillLeaderAndIsrResponse(req, resp, parts, func(i int) int16 { return codes[i] })
	return resp
}

// lairOutcome is what applyPartitionState did with one partition state.
type lairOutcome struct {
	code         int16
	follow       *FollowerStart
	wasFollowing bool
}

// lairWorkers is how many partitions of one LeaderAndIsr switch roles at
// once. A switch mostly waits in the file system: a new log's directory
// and files are made (none is fsync'd on the way: the directory's entry
// is made durable by the log's first flush, partition.metadata and leader
// epochs are written by storage right after). Partitions are independent
// (each switch holds only its own partition's lock and Manager.mu for map
// access), so concurrent switches overlap their system calls instead of
// paying each in turn: 10,000 new replicas in one request took tens of
// seconds one at a time, when each switch still waited for fsyncs.
//
// The rule for the count: a switch waits for the file system, not the
// CPU, so the workers are sized by how many calls should be in flight, not
// by the CPUs. BenchmarkLeaderAndIsrEpochBump (3,333 leaders, alternating
// counts on one directory, when each epoch bump still wrote its
// checkpoint with two fsyncs inside the switch): 1.25 s with 16 workers,
// 1.15 s with 128.
var lairWorkers = 128 // a variable only so that BenchmarkLeaderAndIsrEpochBump can compare counts

// forEachPartition calls f(i) for i in [0, n), on up to lairWorkers
// goroutines when n is large enough to gain from it, and returns when
// every call returned. The goroutines are its own and end with it.
func forEachPartition(n int, f func(i int)) {
	workers := min(lairWorkers, n/4)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() { // one of forEachPartition's workers; joined below
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

// lairPartitions lists the request's partition states with their topics
// (flat before v2, grouped by topic from v2).
func lairPartitions(req *kmsg.LeaderAndISRRequest) []lairPartition {
	var parts []lairPartition
	if req.Version < 2 {
		for i := range req.PartitionStates {
			ps := &req.PartitionStates[i]
			parts = append(parts, lairPartition{topic: ps.Topic, st: ps})
		}
		return parts
	}
	for i := range req.TopicStates {
		ts := &req.TopicStates[i]
		for j := range ts.PartitionStates {
			parts = append(parts, lairPartition{topic: ts.Topic, topicID: ts.TopicID, st: &ts.PartitionStates[j]})
		}
	}
	return parts
}

// resolveLogConfigs resolves the configuration of each log the request may
// create. It can come from ZooKeeper, so it is called before taking any
// lock.
func (m *Manager) resolveLogConfigs(parts []lairPartition) map[string]topicLogConfig {
	logCfgs := make(map[string]topicLogConfig)
	for _, lp := range parts {
		if _, ok := logCfgs[lp.topic]; !ok {
			cfg, err := m.logConfig(lp.topic)
			logCfgs[lp.topic] = topicLogConfig{cfg, err}
		}
	}
	return logCfgs
}

// liveLeader fills follow's leader address from the request's live
// leaders; false when its leader is not among them.
func liveLeader(req *kmsg.LeaderAndISRRequest, follow *FollowerStart) bool {
	live := false
	for _, ll := range req.LiveLeaders {
		if ll.BrokerID == follow.LeaderID {
			follow.LeaderHost, follow.LeaderPort, live = ll.Host, ll.Port, true
		}
	}
	return live
}

func (m *Manager) fillLeaderAndIsrResponse(req *kmsg.LeaderAndISRRequest, resp *kmsg.LeaderAndISRResponse, parts []lairPartition, code func(int) int16) {
	if req.Version < 5 {
		for i, lp := range parts {
			rp := kmsg.NewLeaderAndISRResponseTopicPartition()
			rp.Topic = lp.topic
			rp.Partition = lp.st.Partition
			rp.ErrorCode = code(i)
			resp.Partitions = append(resp.Partitions, rp)
		}
		return
	}
	// v5+: grouped by topic id.
	for i, lp := range parts {
		if len(resp.Topics) == 0 || resp.Topics[len(resp.Topics)-1].TopicID != lp.topicID ||
			(i > 0 && parts[i-1].topic != lp.topic) {
			t := kmsg.NewLeaderAndISRResponseTopic()
			t.TopicID = lp.topicID
			resp.Topics = append(resp.Topics, t)
		}
		rp := kmsg.NewLeaderAndISRResponseTopicPartition()
		rp.Partition = lp.st.Partition
		rp.ErrorCode = code(i)
		last := &resp.Topics[len(resp.Topics)-1]
		last.Partitions = append(last.Partitions, rp)
	}
}

// applyPartitionState runs the per-partition acceptance rules and the
// become-leader / become-follower transition. follow is non-nil when the
// partition became a follower and should fetch; wasFollowing reports that
// its fetcher (if any) must stop.
func (m *Manager) applyPartitionState(req *kmsg.LeaderAndISRRequest, lp lairPartition, tp common.TopicPartition, logCfg topicLogConfig) (code int16, follow *FollowerStart, wasFollowing bool) {
	st := lp.st
	if code := m.checkNotOnOfflineDir(tp, st.IsNew); code != 0 {
		return code, nil, false
	}
	m.mu.Lock()
	if e := m.offlineErrorLocked(tp); e != nil {
		m.mu.Unlock()
		m.state.Warn("ignoring LeaderAndIsr for a partition in an offline log directory",
			"topic", tp.Topic, "partition", tp.Partition, "leader_epoch", st.LeaderEpoch)
		return e.Code, nil, false
	}
	p, ok := m.partitions[tp]
	if !ok {
		p = newPartition(tp, m.cfg.BrokerID)
		m.partitions[tp] = p
	}
	m.rememberTopicIDLocked(lp.topic, lp.topicID)
	m.mu.Unlock()
	if !ok {
		m.registerPartitionMetrics(p)
	}

	p.mu.Lock()
	defer func() {
		p.mu.Unlock()
		if code == 0 {
			// Parked fetches and acks=all produces re-check leadership
			// (and the HW); appends were fenced by the write lock.
			m.wakeOnHighWatermark(tp)
		}
	}()

	if code := m.acceptPartitionStateLocked(req, p, lp); code != 0 {
		return code, nil, false
	}
	if code := m.ensureLogLocked(p, lp.topicID, logCfg); code != 0 {
		return code, nil, false
	}

	wasLeader := p.isLeaderLocked()
	wasFollowing = !wasLeader && p.leaderID != noLeader
	from := roleName(wasLeader, p.leaderID)
	p.controllerEpoch = st.ControllerEpoch
	p.replicas = slices.Clone(st.Replicas)
	m.setReassignmentLocked(p, st.AddingReplicas, st.RemovingReplicas)
	p.partitionEpoch = st.ZKVersion
	p.leaderEpoch = st.LeaderEpoch

	if st.Leader == m.cfg.BrokerID {
		if err := p.makeLeaderLocked(st.LeaderEpoch, st.ISR, wasLeader, m.cfg.Clock(), m.cfg.ReplicaLagTimeMax); err != nil {
			// The cache in memory is updated even when the checkpoint
			// write fails; the next successful write persists it.
			m.log.Error("recording leader epoch", "topic", tp.Topic, "partition", tp.Partition,
				"leader_epoch", st.LeaderEpoch, "err", err)
		}
		m.state.Info("partition state change", "topic", tp.Topic, "partition", tp.Partition,
			"from", from, "to", "leader", "leader_epoch", st.LeaderEpoch, "isr", st.ISR,
			"controller_epoch", req.ControllerEpoch, "reason", "LeaderAndIsr")
		return 0, nil, wasFollowing
	}
	p.makeFollowerLocked(st.Leader)
	m.state.Info("partition state change", "topic", tp.Topic, "partition", tp.Partition,
		"from", from, "to", "follower", "leader", st.Leader, "leader_epoch", st.LeaderEpoch,
		"controller_epoch", req.ControllerEpoch, "reason", "LeaderAndIsr")
	if st.Leader < 0 {
		return 0, nil, wasFollowing
	}
	// Every epoch bump restarts the fetcher so the follower re-runs the
	// divergence check.
	return 0, &FollowerStart{
		LeaderID:    st.Leader,
		LeaderEpoch: st.LeaderEpoch,
		TopicID:     p.topicID,
		FetchOffset: p.log.LogEndOffset(),
	}, wasFollowing
}

// acceptPartitionStateLocked applies the per-partition acceptance rules of
// LeaderAndIsr: a topic id other than the partition's is
// INCONSISTENT_TOPIC_ID; a leader epoch not newer than ours is ignored
// (STALE_CONTROLLER_EPOCH, though a missing topic id is still attached); a
// state whose replicas do not include this broker is
// UNKNOWN_TOPIC_OR_PARTITION. Must hold p.mu (write).
func (m *Manager) acceptPartitionStateLocked(req *kmsg.LeaderAndISRRequest, p *Partition, lp lairPartition) int16 {
	st, tp := lp.st, p.tp
	if p.topicID != ([16]byte{}) && lp.topicID != ([16]byte{}) && p.topicID != lp.topicID {
		return kerr.InconsistentTopicID.Code
	}
	if st.LeaderEpoch <= p.leaderEpoch {
		if p.topicID == ([16]byte{}) {
			p.topicID = lp.topicID
		}
		m.state.Info("ignoring LeaderAndIsr partition state with a leader epoch not newer than the current one",
			"topic", tp.Topic, "partition", tp.Partition, "leader_epoch", st.LeaderEpoch, "current_leader_epoch", p.leaderEpoch,
			"controller_epoch", req.ControllerEpoch)
		return kerr.StaleControllerEpoch.Code
	}
	if !containsBroker(st.Replicas, m.cfg.BrokerID) {
		m.state.Warn("ignoring LeaderAndIsr for a partition this broker is not a replica of",
			"topic", tp.Topic, "partition", tp.Partition, "replicas", st.Replicas)
		return kerr.UnknownTopicOrPartition.Code
	}
	return 0
}

// ensureLogLocked opens or creates the partition's log with its resolved
// config and records the topic id (storage writes partition.metadata
// before any record of this incarnation is appended); a directory of an older incarnation of
// the topic answers INCONSISTENT_TOPIC_ID. Must hold p.mu (write).
func (m *Manager) ensureLogLocked(p *Partition, topicID [16]byte, logCfg topicLogConfig) int16 {
	tp := p.tp
	if p.log == nil {
		if logCfg.err != nil {
			return m.storageErrorCode(logCfg.err, tp, "topic_config")
		}
		log, err := m.logs.GetOrCreateLog(tp, logCfg.cfg)
		if err != nil {
			p.logErr = m.storageErrorCode(err, tp, "create_log")
			return p.logErr
		}
		p.log = log
		p.logErr = 0
	}
	if topicID == ([16]byte{}) {
		return 0
	}
	if err := p.log.SetTopicID(topicID); err != nil {
		if errors.Is(err, kerr.InconsistentTopicID) {
			m.state.Error("partition directory belongs to another incarnation of the topic",
				"topic", tp.Topic, "partition", tp.Partition, "err", err)
			return kerr.InconsistentTopicID.Code
		}
		return m.storageErrorCode(err, tp, "partition_metadata")
	}
	p.topicID = topicID
	return 0
}

func roleName(leader bool, leaderID int32) string {
	switch {
	case leader:
		return "leader"
	case leaderID == noLeader:
		return "none"
	default:
		return "follower"
	}
}

// StopReplica stops (and optionally deletes) partition replicas, after the
// same request-level epoch checks as LeaderAndIsr; a partition leader epoch
// older than ours is FENCED_LEADER_EPOCH.
func (m *Manager) StopReplica(_ context.Context, req *kmsg.StopReplicaRequest) *kmsg.StopReplicaResponse {
	resp := req.ResponseKind().(*kmsg.StopReplicaResponse)
	resp.Version = req.Version

	type stopPart struct {
		tp          common.TopicPartition
		leaderEpoch int32
		delete      bool
	}
	var parts []stopPart
	for _, t := range req.Topics {
		switch {
		case req.Version == 0:
			parts = append(parts, stopPart{common.TopicPartition{Topic: t.Topic, Partition: t.Partition}, -1, req.DeletePartitions})
		case req.Version <= 2:
			for _, p := range t.Partitions {
				parts = append(parts, stopPart{common.TopicPartition{Topic: t.Topic, Partition: p}, -1, req.DeletePartitions})
			}
		default:
			for _, ps := range t.PartitionStates {
				parts = append(parts, stopPart{common.TopicPartition{Topic: t.Topic, Partition: ps.Partition}, ps.LeaderEpoch, ps.Delete})
			}
		}
	}

	m.controlMu.Lock()
	defer m.controlMu.Unlock()
	if e := m.checkControlEpochsLocked(req.Version >= 1, req.BrokerEpoch, req.ControllerEpoch, "StopReplica"); e != nil {
		resp.ErrorCode = e.Code
		return resp
	}

	var stopped []common.TopicPartition
	var resigned []LeadershipChange
	for _, sp := range parts {
		code := m.stopPartition(sp.tp, sp.leaderEpoch, sp.delete)
		if code == 0 {
			stopped = append(stopped, sp.tp)
			if sp.delete {
				resigned = append(resigned, LeadershipChange{TopicPartition: sp.tp, LeaderEpoch: max(sp.leaderEpoch, -1)})
			}
		}
		rp := kmsg.NewStopReplicaResponsePartition()
		rp.Topic = sp.tp.Topic
		rp.Partition = sp.tp.Partition
		rp.ErrorCode = code
		resp.Partitions = append(resp.Partitions, rp)
	}
	if m.cfg.Fetcher != nil && len(stopped) > 0 {
		m.cfg.Fetcher.RemovePartitions(stopped)
	}
	if len(resigned) > 0 && m.cfg.OnLeadershipChange != nil {
		m.cfg.OnLeadershipChange(resigned)
	}
	return resp
}

func (m *Manager) stopPartition(tp common.TopicPartition, leaderEpoch int32, del bool) int16 {
	if m.IsOffline(tp) {
		return kerr.KafkaStorageError.Code
	}
	p, hosted := m.Partition(tp)
	if !hosted {
		// Not hosted: NONE, but remove a stray log directory on delete.
		if del {
			if _, ok := m.logs.GetLog(tp); ok {
				if err := m.logs.DeleteLog(tp); err != nil {
					return m.storageErrorCode(err, tp, "delete_log")
				}
			}
		}
		return 0
	}
	p.mu.Lock()
	current := p.leaderEpoch
	// -2: the topic is being deleted; -1: no epoch (requests before v3).
	if leaderEpoch != -2 && leaderEpoch != -1 && leaderEpoch < current {
		p.mu.Unlock()
		m.state.Warn("ignoring StopReplica with an older leader epoch", "topic", tp.Topic, "partition", tp.Partition,
			"leader_epoch", leaderEpoch, "current_leader_epoch", current)
		return kerr.FencedLeaderEpoch.Code
	}
	if del {
		// Removing the partition first makes new requests see it unknown;
		// the write lock waits for in-flight appends and reads.
		p.log = nil
		p.leaderID = noLeader
		p.isr = nil
		p.pendingIsr = nil
		m.setReassignmentLocked(p, nil, nil)
		p.mu.Unlock()
		m.mu.Lock()
		removed := m.partitions[tp] == p
		if removed {
			delete(m.partitions, tp)
		}
		m.mu.Unlock()
		if removed {
			m.unregisterPartitionMetrics(tp)
		}
		m.state.Info("partition state change", "topic", tp.Topic, "partition", tp.Partition,
			"to", "deleted", "reason", "StopReplica")
		// Parked fetches and produces complete now (they will see the
		// partition gone).
		m.wakeOnHighWatermark(tp)
		m.stopLogDirMover(tp)
		if _, ok := m.logs.GetLog(tp); ok {
			if err := m.logs.DeleteLog(tp); err != nil {
				return m.storageErrorCode(err, tp, "delete_log")
			}
		}
		return 0
	}
	p.mu.Unlock()
	m.state.Info("partition state change", "topic", tp.Topic, "partition", tp.Partition,
		"to", "stopped", "reason", "StopReplica")
	m.wakeOnHighWatermark(tp)
	return 0
}

func (m *Manager) storageErrorCode(err error, tp common.TopicPartition, op string) int16 {
	c := m.errorCode(err, tp, op)
	if c == kerr.UnknownServerError.Code {
		c = kerr.KafkaStorageError.Code
	}
	return c
}

// UpdateMetadata applies the controller's cluster view:
// epoch checks first, then the metadata cache; partitions the cache reports
// deleted and still hosted here are removed with their logs.
func (m *Manager) UpdateMetadata(_ context.Context, req *kmsg.UpdateMetadataRequest) *kmsg.UpdateMetadataResponse {
	resp := req.ResponseKind().(*kmsg.UpdateMetadataResponse)
	resp.Version = req.Version

	m.controlMu.Lock()
	if e := m.checkControlEpochsLocked(req.Version >= 5, req.BrokerEpoch, req.ControllerEpoch, "UpdateMetadata"); e != nil {
		m.controlMu.Unlock()
		resp.ErrorCode = e.Code
		return resp
	}
	m.mu.Lock()
	for _, ts := range req.TopicStates {
		m.rememberTopicIDLocked(ts.Topic, ts.TopicID)
	}
	m.mu.Unlock()
	deleted := m.meta.Update(req)
	for _, tp := range deleted {
		if _, hosted := m.Partition(tp); hosted {
			m.stopPartition(tp, -2, true)
		}
	}
	m.controlMu.Unlock()
	if len(deleted) > 0 && m.cfg.OnPartitionsDeleted != nil {
		m.cfg.OnPartitionsDeleted(deleted)
	}
	return resp
}
