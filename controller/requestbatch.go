package controller

// ControllerBrokerRequestBatch (Kafka's AbstractControllerBrokerRequestBatch).
// The batch collects LeaderAndIsr, UpdateMetadata
// and StopReplica entries during one state-machine call and builds kmsg
// requests from them; sending them is the channel manager's job.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/klassik/klassik/broker/common"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Request versions sent at IBP 3.4; capped per broker by
// what it advertises.
const (
	leaderAndIsrVersion   int16 = 7
	updateMetadataVersion int16 = 8
	stopReplicaVersion    int16 = 4
)

type lisrEntry struct {
	leadership LeaderIsrAndControllerEpoch
	assignment ReplicaAssignment
	isNew      bool
}

type stopEntry struct {
	leaderEpoch int32
	delete      bool
}

// requestKind says how the caller should treat the response.
type requestKind int8

const (
	kindLeaderAndIsr requestKind = iota
	kindUpdateMetadata
	kindStopReplica
)

// outgoingRequest is one request for one broker, ready for its queue.
type outgoingRequest struct {
	broker int32
	kind   requestKind
	req    kmsg.Request
	// deletePartitions lists the partitions of a StopReplica with delete=true
	// (their responses drive topic deletion).
	deletePartitions []common.TopicPartition
	// enqueued is when the channel manager queued it (queue time metric).
	enqueued time.Time
}

type requestBatch struct {
	ctx          *Context
	controllerID int32
	// maxVersion returns the highest version of key the broker supports, or
	// -1 when unknown (then the default version is used).
	maxVersion func(broker int32, key int16) int16

	leaderAndIsr map[int32]map[common.TopicPartition]lisrEntry
	stopReplica  map[int32]map[common.TopicPartition]stopEntry
	umBrokers    map[int32]bool
	umPartitions map[common.TopicPartition]kmsg.UpdateMetadataRequestTopicPartition
}

func newRequestBatch(ctx *Context, controllerID int32) *requestBatch {
	b := &requestBatch{ctx: ctx, controllerID: controllerID}
	b.clear()
	return b
}

func (b *requestBatch) clear() {
	b.leaderAndIsr = map[int32]map[common.TopicPartition]lisrEntry{}
	b.stopReplica = map[int32]map[common.TopicPartition]stopEntry{}
	b.umBrokers = map[int32]bool{}
	b.umPartitions = map[common.TopicPartition]kmsg.UpdateMetadataRequestTopicPartition{}
}

func (b *requestBatch) empty() bool {
	return len(b.leaderAndIsr) == 0 && len(b.stopReplica) == 0 && len(b.umBrokers) == 0 && len(b.umPartitions) == 0
}

// newBatch checks that the previous batch was flushed; a leftover means a
// bug or an interrupted handler, which the controller treats as an illegal
// state (it resigns).
func (b *requestBatch) newBatch() error {
	if !b.empty() {
		return fmt.Errorf("controller: a new request batch was started while the previous one still has %d LeaderAndIsr, %d StopReplica and %d UpdateMetadata brokers", len(b.leaderAndIsr), len(b.stopReplica), len(b.umBrokers))
	}
	return nil
}

// addLeaderAndIsr adds the partition's leadership for each broker; isNew is
// sticky within the batch. Every addition also adds UpdateMetadata for the
// partition to all registered brokers.
func (b *requestBatch) addLeaderAndIsr(brokers []int32, tp common.TopicPartition, l LeaderIsrAndControllerEpoch, a ReplicaAssignment, isNew bool) {
	addPerBroker(b.leaderAndIsr, brokers, tp, func(prev lisrEntry) lisrEntry {
		return lisrEntry{leadership: l, assignment: a, isNew: isNew || prev.isNew}
	})
	// UpdateMetadata to every registered broker (a set: no sorted id list
	// per partition).
	for id := range b.ctx.liveBrokers {
		b.umBrokers[id] = true
	}
	b.addUpdateMetadataPartition(tp)
}

// addStopReplica adds a StopReplica entry; delete is sticky.
func (b *requestBatch) addStopReplica(brokers []int32, tp common.TopicPartition, deletePartition bool) {
	addPerBroker(b.stopReplica, brokers, tp, func(prev stopEntry) stopEntry {
		return stopEntry{leaderEpoch: b.ctx.LeaderEpochForStopReplica(tp), delete: deletePartition || prev.delete}
	})
}

// addPerBroker sets m[id][tp] to merge(the entry there, zero if none) for
// each broker id; ids below 0 (no broker) are skipped.
func addPerBroker[E any](m map[int32]map[common.TopicPartition]E, brokers []int32, tp common.TopicPartition, merge func(prev E) E) {
	for _, id := range brokers {
		if id < 0 {
			continue
		}
		pm := m[id]
		if pm == nil {
			pm = map[common.TopicPartition]E{}
			m[id] = pm
		}
		pm[tp] = merge(pm[tp])
	}
}

// addUpdateMetadata addresses UpdateMetadata to brokers with the given
// partitions' current cached state (partitions without leadership are
// skipped; topics queued for deletion carry leader -2). An empty partition
// list still sends the live-broker list.
func (b *requestBatch) addUpdateMetadata(brokers []int32, tps []common.TopicPartition) {
	for _, id := range brokers {
		if id >= 0 {
			b.umBrokers[id] = true
		}
	}
	for _, tp := range tps {
		b.addUpdateMetadataPartition(tp)
	}
}

// addUpdateMetadataPartition sets the partition's UpdateMetadata state
// from the cache (nothing without leadership).
func (b *requestBatch) addUpdateMetadataPartition(tp common.TopicPartition) {
	l, ok := b.ctx.Leadership(tp)
	if !ok {
		return
	}
	leader := l.Leader
	if b.ctx.IsTopicQueuedForDeletion(tp.Topic) {
		leader = LeaderDuringDelete
	}
	replicas := b.ctx.Replicas(tp)
	offline := filter(replicas, func(r int32) bool { return !b.ctx.IsReplicaOnline(r, tp, true) })
	b.umPartitions[tp] = kmsg.UpdateMetadataRequestTopicPartition{
		Topic:           tp.Topic,
		Partition:       tp.Partition,
		ControllerEpoch: l.ControllerEpoch,
		Leader:          leader,
		LeaderEpoch:     l.LeaderEpoch,
		ISR:             slices.Clone(l.ISR),
		ZKVersion:       l.PartitionEpoch,
		Replicas:        slices.Clone(replicas),
		OfflineReplicas: offline,
	}
}

func (b *requestBatch) version(broker int32, key, dflt int16) int16 {
	if b.maxVersion == nil {
		return dflt
	}
	if v := b.maxVersion(broker, key); v >= 0 && v < dflt {
		return v
	}
	return dflt
}

// flush builds the requests in Kafka's order (all LeaderAndIsr, then all
// UpdateMetadata, then all StopReplica) and clears the batch. Requests for
// brokers that are not registered are dropped.
func (b *requestBatch) flush(controllerEpoch int32) []outgoingRequest {
	var out []outgoingRequest
	for _, id := range sortedMapKeys(b.leaderAndIsr) {
		broker, ok := b.ctx.LiveOrShuttingDownBroker(id)
		if !ok {
			continue
		}
		out = append(out, outgoingRequest{broker: id, kind: kindLeaderAndIsr, req: b.buildLeaderAndIsr(broker, b.leaderAndIsr[id], controllerEpoch)})
	}
	if len(b.umBrokers) > 0 {
		// Every broker gets the same partition states: laid out once.
		tps := sortedKeys(b.umPartitions)
		states := make([]kmsg.UpdateMetadataRequestTopicPartition, 0, len(tps))
		for _, tp := range tps {
			states = append(states, b.umPartitions[tp])
		}
		for _, id := range sortedMapKeys(b.umBrokers) {
			broker, ok := b.ctx.LiveOrShuttingDownBroker(id)
			if !ok {
				continue
			}
			out = append(out, outgoingRequest{broker: id, kind: kindUpdateMetadata, req: b.buildUpdateMetadata(broker, controllerEpoch, tps, states)})
		}
	}
	for _, id := range sortedMapKeys(b.stopReplica) {
		broker, ok := b.ctx.LiveOrShuttingDownBroker(id)
		if !ok {
			continue
		}
		out = append(out, b.buildStopReplica(broker, b.stopReplica[id], controllerEpoch)...)
	}
	b.clear()
	return out
}

// layoutStates lays out a request's partition states (states[i] is tps[i]'s)
// either as one flat list or, in later versions, grouped into one topic
// entry per topic built by mk. tps is sorted (sortTPs), so each topic's
// states are one run of states: the topic entries share states' array
// instead of copying it (a 10,000-partition request would otherwise copy
// every state once more, growing the per-topic slices as it goes).
func layoutStates[P, T any](flat bool, tps []common.TopicPartition, states []P, mk func(topic string, ps []P) T) ([]P, []T) {
	if flat {
		return states, nil
	}
	var out []T
	for start := 0; start < len(tps); {
		end := start + 1
		for end < len(tps) && tps[end].Topic == tps[start].Topic {
			end++
		}
		out = append(out, mk(tps[start].Topic, states[start:end:end]))
		start = end
	}
	return nil, out
}

// perTopic builds one topic entry per topic of byTopic with mk, in topic
// order (nil when byTopic is empty).
func perTopic[P, T any](byTopic map[string][]P, mk func(topic string, ps []P) T) []T {
	var out []T
	for _, t := range sortedMapKeys(byTopic) {
		out = append(out, mk(t, byTopic[t]))
	}
	return out
}

// sortedMapKeys returns the keys of m in order (never nil), for a
// deterministic request order.
func sortedMapKeys[K cmp.Ordered, V any](m map[K]V) []K {
	out := slices.AppendSeq(make([]K, 0, len(m)), maps.Keys(m))
	slices.Sort(out)
	return out
}

// liveLeaderEndpoint picks the endpoint a follower uses to reach a leader:
// the controller's inter-broker listener.
func (b *requestBatch) buildLeaderAndIsr(to Broker, entries map[common.TopicPartition]lisrEntry, controllerEpoch int32) *kmsg.LeaderAndISRRequest {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = b.version(to.ID, req.Key(), leaderAndIsrVersion)
	req.ControllerID = b.controllerID
	req.ControllerEpoch = controllerEpoch
	req.BrokerEpoch = to.Epoch
	leaders := map[int32]bool{}
	tps := sortedKeys(entries)
	states := make([]kmsg.LeaderAndISRRequestTopicPartition, 0, len(tps))
	for _, tp := range tps {
		e := entries[tp]
		p := kmsg.NewLeaderAndISRRequestTopicPartition()
		p.Topic = tp.Topic
		p.Partition = tp.Partition
		p.ControllerEpoch = e.leadership.ControllerEpoch
		p.Leader = e.leadership.Leader
		p.LeaderEpoch = e.leadership.LeaderEpoch
		p.ISR = slices.Clone(e.leadership.ISR)
		p.ZKVersion = e.leadership.PartitionEpoch
		p.Replicas = slices.Clone(e.assignment.Replicas)
		p.AddingReplicas = slices.Clone(e.assignment.AddingReplicas)
		p.RemovingReplicas = slices.Clone(e.assignment.RemovingReplicas)
		p.IsNew = e.isNew
		p.LeaderRecoveryState = e.leadership.LeaderRecoveryState
		if p.Leader >= 0 {
			leaders[p.Leader] = true
		}
		states = append(states, p)
	}
	// Up to v1 the partition states are one flat list.
	req.PartitionStates, req.TopicStates = layoutStates(req.Version <= 1, tps, states, func(t string, ps []kmsg.LeaderAndISRRequestTopicPartition) kmsg.LeaderAndISRRequestTopicState {
		ts := kmsg.NewLeaderAndISRRequestTopicState()
		ts.Topic, ts.TopicID, ts.PartitionStates = t, b.ctx.TopicID(t), ps
		return ts
	})
	for _, id := range sortedMapKeys(leaders) {
		lb, ok := b.ctx.LiveOrShuttingDownBroker(id)
		if !ok {
			continue
		}
		ep, ok := interBrokerEndpoint(lb, b.listener())
		if !ok {
			continue
		}
		ll := kmsg.NewLeaderAndISRRequestLiveLeader()
		ll.BrokerID, ll.Host, ll.Port = id, ep.Host, ep.Port
		req.LiveLeaders = append(req.LiveLeaders, ll)
	}
	return req
}

// listener is the inter-broker listener name, set by the controller.
func (b *requestBatch) listener() string { return b.ctx.interBrokerListener }

func interBrokerEndpoint(b Broker, listener string) (Endpoint, bool) {
	if ep, ok := b.Endpoint(listener); ok {
		return ep, true
	}
	if listener == "" && len(b.Endpoints) > 0 {
		return b.Endpoints[0], true
	}
	return Endpoint{}, false
}

// buildUpdateMetadata builds the UpdateMetadata for one broker with the
// batch's partition states (states[i] is tps[i]'s, tps sorted). The states
// and their slices are the batch's own copies, made when they were added;
// the requests of all brokers share them, and nothing writes them after
// the flush.
func (b *requestBatch) buildUpdateMetadata(to Broker, controllerEpoch int32, tps []common.TopicPartition, states []kmsg.UpdateMetadataRequestTopicPartition) *kmsg.UpdateMetadataRequest {
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version = b.version(to.ID, req.Key(), updateMetadataVersion)
	req.ControllerID = b.controllerID
	req.ControllerEpoch = controllerEpoch
	req.BrokerEpoch = to.Epoch
	// Up to v4 the partition states are one flat list.
	req.PartitionStates, req.TopicStates = layoutStates(req.Version <= 4, tps, states, func(t string, ps []kmsg.UpdateMetadataRequestTopicPartition) kmsg.UpdateMetadataRequestTopicState {
		ts := kmsg.NewUpdateMetadataRequestTopicState()
		ts.Topic, ts.TopicID, ts.PartitionStates = t, b.ctx.TopicID(t), ps
		return ts
	})
	for _, lb := range b.ctx.LiveOrShuttingDownBrokers() {
		live := kmsg.NewUpdateMetadataRequestLiveBroker()
		live.ID = lb.ID
		live.Rack = lb.Rack
		for _, ep := range lb.Endpoints {
			e := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
			e.Host, e.Port, e.ListenerName, e.SecurityProtocol = ep.Host, ep.Port, ep.Listener, ep.SecurityProtocol
			live.Endpoints = append(live.Endpoints, e)
			if ep.SecurityProtocol == 0 && live.Host == "" { // v0 carries the PLAINTEXT endpoint only
				live.Host, live.Port = ep.Host, ep.Port
			}
		}
		req.LiveBrokers = append(req.LiveBrokers, live)
	}
	return req
}

func (b *requestBatch) buildStopReplica(to Broker, entries map[common.TopicPartition]stopEntry, controllerEpoch int32) []outgoingRequest {
	version := b.version(to.ID, kmsg.NewPtrStopReplicaRequest().Key(), stopReplicaVersion)
	var deleted []common.TopicPartition
	for _, tp := range sortedKeys(entries) {
		if entries[tp].delete {
			deleted = append(deleted, tp)
		}
	}
	mk := func() *kmsg.StopReplicaRequest {
		req := kmsg.NewPtrStopReplicaRequest()
		req.Version = version
		req.ControllerID = b.controllerID
		req.ControllerEpoch = controllerEpoch
		req.BrokerEpoch = to.Epoch
		return req
	}
	if version >= 3 {
		req := mk()
		byTopic := map[string][]kmsg.StopReplicaRequestTopicPartitionState{}
		for _, tp := range sortedKeys(entries) {
			ps := kmsg.NewStopReplicaRequestTopicPartitionState()
			ps.Partition = tp.Partition
			ps.LeaderEpoch = entries[tp].leaderEpoch
			ps.Delete = entries[tp].delete
			byTopic[tp.Topic] = append(byTopic[tp.Topic], ps)
		}
		req.Topics = perTopic(byTopic, func(t string, ps []kmsg.StopReplicaRequestTopicPartitionState) kmsg.StopReplicaRequestTopic {
			rt := kmsg.NewStopReplicaRequestTopic()
			rt.Topic, rt.PartitionStates = t, ps
			return rt
		})
		return []outgoingRequest{{broker: to.ID, kind: kindStopReplica, req: req, deletePartitions: deleted}}
	}
	// Before v3 the delete flag is request-level: one request per flag value.
	var out []outgoingRequest
	for _, del := range []bool{false, true} {
		req := mk()
		req.DeletePartitions = del
		byTopic := map[string][]int32{}
		var tps []common.TopicPartition
		for _, tp := range sortedKeys(entries) {
			if entries[tp].delete == del {
				byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
				tps = append(tps, tp)
			}
		}
		if len(tps) == 0 {
			continue
		}
		if version == 0 {
			for _, tp := range tps {
				rt := kmsg.NewStopReplicaRequestTopic()
				rt.Topic, rt.Partition = tp.Topic, tp.Partition
				req.Topics = append(req.Topics, rt)
			}
		} else {
			req.Topics = perTopic(byTopic, func(t string, ps []int32) kmsg.StopReplicaRequestTopic {
				rt := kmsg.NewStopReplicaRequestTopic()
				rt.Topic, rt.Partitions = t, ps
				return rt
			})
		}
		o := outgoingRequest{broker: to.ID, kind: kindStopReplica, req: req}
		if del {
			o.deletePartitions = tps
		}
		out = append(out, o)
	}
	return out
}

// sendBatch flushes the request batch onto the brokers' queues.
func (c *Controller) sendBatch() {
	reqs := c.batch.flush(c.ctx.Epoch)
	if c.channels != nil {
		c.channels.send(reqs)
	}
}

func (c *Controller) sendUpdateMetadata(brokers []int32, tps []common.TopicPartition) error {
	if err := c.batch.newBatch(); err != nil {
		return fmt.Errorf("%w: %v", errIllegalState, err)
	}
	c.batch.addUpdateMetadata(brokers, tps)
	c.sendBatch()
	return nil
}

// partitionChange runs one partition state machine call in a fresh batch
// and sends the batch.
func (c *Controller) partitionChange(tps []common.TopicPartition, target PartitionState, spec *electionSpec, reason string) (map[common.TopicPartition]error, error) {
	if err := c.batch.newBatch(); err != nil {
		return nil, fmt.Errorf("%w: %v", errIllegalState, err)
	}
	failed, err := c.psm.handleStateChanges(tps, target, spec, reason)
	if err != nil {
		c.batch.clear()
		return failed, err
	}
	c.sendBatch()
	return failed, nil
}

func (c *Controller) triggerOnline(reason string) error { return c.triggerOnlineForTopic("", reason) }

// triggerOnlineForTopic moves the New and Offline partitions of one topic
// ("" = all topics) Online in one batch.
func (c *Controller) triggerOnlineForTopic(topic, reason string) error {
	if err := c.batch.newBatch(); err != nil {
		return fmt.Errorf("%w: %v", errIllegalState, err)
	}
	_, err := c.psm.triggerOnlinePartitionStateChange(topic, reason)
	if err != nil {
		c.batch.clear()
		return err
	}
	c.sendBatch()
	return nil
}

// replicaChange runs one replica state machine call in a fresh batch.
func (c *Controller) replicaChange(replicas []PartitionReplica, target ReplicaState, reason string) (map[PartitionReplica]error, error) {
	if len(replicas) == 0 {
		return nil, nil
	}
	if err := c.batch.newBatch(); err != nil {
		return nil, fmt.Errorf("%w: %v", errIllegalState, err)
	}
	failed, err := c.rsm.handleStateChanges(replicas, target, reason)
	if err != nil {
		c.batch.clear()
		return failed, err
	}
	c.sendBatch()
	return failed, nil
}
