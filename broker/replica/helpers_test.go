package replica

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/metadata"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/klassik/klassik/zkpaths"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newTestManager(t *testing.T, mutate func(*Config)) (*Manager, *memStore) {
	t.Helper()
	store := newMemStore()
	cfg := Config{BrokerID: 1, Logger: quietLogger()}
	if mutate != nil {
		mutate(&cfg)
	}
	m := New(cfg, store, metadata.New(cfg.BrokerID, "test"))
	t.Cleanup(m.Shutdown)
	return m, store
}

// newT0Leader returns a test manager leading partition t-0 in leader
// epoch 0 with itself as the only replica, where most manager tests start.
func newT0Leader(t *testing.T) (*Manager, *memStore) {
	t.Helper()
	m, store := newTestManager(t, nil)
	makeLeader(t, m, "t", 0, 0)
	return m, store
}

// lairReq builds a LeaderAndIsr v6 request for one partition.
func lairReq(controllerEpoch int32, topic string, id [16]byte, partition, leader, leaderEpoch int32, isr, replicas []int32) *kmsg.LeaderAndISRRequest {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = 6
	req.ControllerID = 0
	req.ControllerEpoch = controllerEpoch
	req.BrokerEpoch = -1
	ts := kmsg.NewLeaderAndISRRequestTopicState()
	ts.Topic = topic
	ts.TopicID = id
	ps := kmsg.NewLeaderAndISRRequestTopicPartition()
	ps.Partition = partition
	ps.ControllerEpoch = controllerEpoch
	ps.Leader = leader
	ps.LeaderEpoch = leaderEpoch
	ps.ISR = isr
	ps.Replicas = replicas
	ps.IsNew = true
	ts.PartitionStates = append(ts.PartitionStates, ps)
	req.TopicStates = append(req.TopicStates, ts)
	return req
}

func lairCode(t *testing.T, resp *kmsg.LeaderAndISRResponse) int16 {
	t.Helper()
	if resp.ErrorCode != 0 {
		return resp.ErrorCode
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("unexpected LeaderAndIsr response shape: %+v", resp)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

func makeLeader(t *testing.T, m *Manager, topic string, partition, epoch int32, isr ...int32) {
	t.Helper()
	if len(isr) == 0 {
		isr = []int32{m.cfg.BrokerID}
	}
	replicas := append([]int32(nil), isr...)
	if !containsBroker(replicas, m.cfg.BrokerID) {
		replicas = append(replicas, m.cfg.BrokerID)
	}
	resp := m.LeaderAndIsr(context.Background(), lairReq(1, topic, topicIDFor(topic), partition, m.cfg.BrokerID, epoch, isr, replicas))
	if c := lairCode(t, resp); c != 0 {
		t.Fatalf("LeaderAndIsr for %s-%d: error code %d", topic, partition, c)
	}
}

// addDeleteRecordsTopic appends to req a topic entry asking to delete the
// records of its partition 0 before offset.
func addDeleteRecordsTopic(req *kmsg.DeleteRecordsRequest, topic string, offset int64) {
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Offset = offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
}

// stopReplicaReq builds a StopReplica request from controller epoch 1 for
// partitions of one topic (none: no topic at all): v3+ carries the leader
// epoch and delete flag per partition, older versions a partition list and
// the request-level flag.
func stopReplicaReq(version int16, topic string, leaderEpoch int32, del bool, partitions ...int32) *kmsg.StopReplicaRequest {
	req := kmsg.NewPtrStopReplicaRequest()
	req.Version = version
	req.ControllerEpoch = 1
	req.BrokerEpoch = -1
	rt := kmsg.NewStopReplicaRequestTopic()
	rt.Topic = topic
	if version >= 3 {
		for _, p := range partitions {
			ps := kmsg.NewStopReplicaRequestTopicPartitionState()
			ps.Partition = p
			ps.LeaderEpoch = leaderEpoch
			ps.Delete = del
			rt.PartitionStates = append(rt.PartitionStates, ps)
		}
	} else {
		rt.Partitions = partitions
		req.DeletePartitions = del
	}
	if len(partitions) > 0 {
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// updateMetadataReq builds an UpdateMetadata v7 with no brokers or
// partitions from the given controller and broker epochs.
func updateMetadataReq(controllerEpoch int32, brokerEpoch int64) *kmsg.UpdateMetadataRequest {
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version = 7
	req.ControllerEpoch = controllerEpoch
	req.BrokerEpoch = brokerEpoch
	return req
}

func topicIDFor(topic string) [16]byte {
	var id [16]byte
	copy(id[:], "id:"+topic)
	return id
}

func produceReq(acks int16, topic string, partition int32, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks = acks
	req.TimeoutMillis = 1000
	addProduceTopic(req, topic, partition, records)
	return req
}

// addProduceTopic appends to req a topic entry carrying records for one
// partition.
func addProduceTopic(req *kmsg.ProduceRequest, topic string, partition int32, records []byte) {
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
}

// wantLogEnd fails the test unless the in-memory log of topic's partition
// 0 ends at want; why says what the log end shows.
func (s *memStore) wantLogEnd(t *testing.T, topic string, want int64, why string) {
	t.Helper()
	if leo := s.logs[common.TopicPartition{Topic: topic, Partition: 0}].LogEndOffset(); leo != want {
		t.Fatalf("%s: log end %d, want %d", why, leo, want)
	}
}

func produceOne(t *testing.T, m *Manager, acks int16, topic string, partition int32, records []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	resp := m.Produce(context.Background(), produceReq(acks, topic, partition, records))
	if resp == nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("unexpected produce response: %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}

type fetchOpt func(*kmsg.FetchRequest)

func fetchReq(topic string, partition int32, offset int64, opts ...fetchOpt) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID = -1
	req.MaxBytes = 1 << 20
	req.SessionID = 0
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rt.Partitions = append(rt.Partitions, fetchPartition(partition, offset))
	req.Topics = append(req.Topics, rt)
	for _, o := range opts {
		o(req)
	}
	return req
}

// fetchPartition is a consumer's fetch entry for partition at offset.
func fetchPartition(partition int32, offset int64) kmsg.FetchRequestTopicPartition {
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = partition
	rp.FetchOffset = offset
	rp.CurrentLeaderEpoch = -1
	rp.PartitionMaxBytes = 1 << 20
	return rp
}

// sessionFetchReq builds a consumer's incremental fetch in session sid at
// epoch, listing the partitions of topic t in offsets (partition: fetch
// offset) in partition order; with none listed it asks for whatever
// changed.
func sessionFetchReq(sid, epoch int32, offsets map[int32]int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID = -1
	req.MaxBytes = 1 << 20
	req.SessionID, req.SessionEpoch = sid, epoch
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "t"
	for _, p := range slices.Sorted(maps.Keys(offsets)) {
		rt.Partitions = append(rt.Partitions, fetchPartition(p, offsets[p]))
	}
	if len(rt.Partitions) > 0 {
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// doFetch runs a fetch and decodes the (possibly spliced) response the way
// a client would see it on the wire.
func doFetch(t *testing.T, m *Manager, req *kmsg.FetchRequest) *kmsg.FetchResponse {
	t.Helper()
	raw, err := m.Fetch(context.Background(), req)
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	return decodeFetch(t, raw, req.Version)
}

func decodeFetch(t *testing.T, raw kmsg.Response, version int16) *kmsg.FetchResponse {
	t.Helper()
	enc := raw.AppendTo(nil)
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = version
	if err := resp.ReadFrom(enc); err != nil {
		t.Fatalf("decoding fetch response: %v", err)
	}
	return resp
}

func onlyFetchPartition(t *testing.T, resp *kmsg.FetchResponse) kmsg.FetchResponseTopicPartition {
	t.Helper()
	if resp.ErrorCode != 0 {
		t.Fatalf("fetch top-level error %d", resp.ErrorCode)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("unexpected fetch response shape: %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}

// waitFor polls cond every few milliseconds for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// followerFetch sends the fetch a follower (replica id r) would send at
// offset, with no long poll, and returns its only partition.
func followerFetch(t *testing.T, m *Manager, r int32, topic string, partition int32, offset int64, epoch int32) kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := fetchReq(topic, partition, offset, func(q *kmsg.FetchRequest) {
		q.ReplicaID = r
		q.Topics[0].Partitions[0].CurrentLeaderEpoch = epoch
		q.Topics[0].Partitions[0].LastFetchedEpoch = -1
	})
	return onlyFetchPartition(t, doFetch(t, m, req))
}

// newFakeClock is the settable clock of ISR decisions, started at a fixed
// time.
func newFakeClock() *purgatory.FakeClock { return purgatory.NewFakeClock(time.Unix(1700000000, 0)) }

// fakeIsrUpdater records ISR writes; conflict makes the next write fail
// with a version conflict, fail with fail. calls counts the batched calls
// (round trips); with gate set, each call first waits for a value on it.
type fakeIsrUpdater struct {
	mu       sync.Mutex
	writes   []zkpaths.LeaderAndIsr
	notified [][]common.TopicPartition
	conflict bool
	fail     error
	calls    int
	gate     chan struct{}
	entered  chan int // with gate: receives the size of each call's batch
}

func (f *fakeIsrUpdater) UpdateLeaderAndIsrsConditional(tps []common.TopicPartition, states []zkpaths.LeaderAndIsr) ([]int32, []error) {
	f.mu.Lock()
	gate, entered := f.gate, f.entered
	f.calls++
	f.mu.Unlock()
	if gate != nil {
		entered <- len(tps)
		<-gate
	}
	versions, errs := make([]int32, len(tps)), make([]error, len(tps))
	for i, tp := range tps {
		versions[i], errs[i] = f.update(tp, states[i])
	}
	return versions, errs
}

func (f *fakeIsrUpdater) update(tp common.TopicPartition, st zkpaths.LeaderAndIsr) (int32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conflict {
		f.conflict = false
		return 0, fmt.Errorf("write %s-%d: %w", tp.Topic, tp.Partition, zk.ErrBadVersion)
	}
	if f.fail != nil {
		err := f.fail
		f.fail = nil
		return 0, err
	}
	f.writes = append(f.writes, st)
	return st.ZkVersion + 1, nil
}

func (f *fakeIsrUpdater) CreateIsrChangeNotification(tps []common.TopicPartition) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notified = append(f.notified, tps)
	return "", nil
}

func (f *fakeIsrUpdater) lastWrite() (zkpaths.LeaderAndIsr, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.writes) == 0 {
		return zkpaths.LeaderAndIsr{}, 0
	}
	return f.writes[len(f.writes)-1], len(f.writes)
}
