package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/metadata"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/txn"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/controller"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// fakeZK is an in-memory AdminZK for the handlers' validation logic; the
// real ZooKeeper path is covered by the broker's integration tests.
type fakeZK struct {
	mu       sync.Mutex
	brokers  []controller.BrokerMetadata
	topics   map[string]zkpaths.TopicAssignment
	versions map[string]int32
	marked   map[string]bool
	configs  map[string]map[string]string
	changes  []string
	block    int64
	failPIDs bool
	offsets  map[string]int64
}

func newFakeZK(racks ...string) *fakeZK {
	z := &fakeZK{topics: map[string]zkpaths.TopicAssignment{}, versions: map[string]int32{},
		marked: map[string]bool{}, configs: map[string]map[string]string{}, block: -1}
	for i, r := range racks {
		bm := controller.BrokerMetadata{ID: int32(i + 1)}
		if r != "" {
			r := r
			bm.Rack = &r
		}
		z.brokers = append(z.brokers, bm)
	}
	return z
}

func (z *fakeZK) GetAllBrokers() ([]zkpaths.BrokerInfo, error) {
	out := make([]zkpaths.BrokerInfo, len(z.brokers))
	for i, b := range z.brokers {
		out[i] = zkpaths.BrokerInfo{ID: b.ID}
		if b.Rack != nil {
			out[i].Rack = *b.Rack
		}
	}
	return out, nil
}

func (z *fakeZK) GetAllTopics() ([]string, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	var out []string
	for t := range z.topics {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}

func (z *fakeZK) GetTopicAssignment(topic string) (zkpaths.TopicAssignment, int32, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	ta, ok := z.topics[topic]
	if !ok {
		return ta, 0, zkclient.ErrTopicNotFound
	}
	return ta, z.versions[topic], nil
}

func (z *fakeZK) IsTopicMarkedForDeletion(topic string) (bool, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.marked[topic], nil
}

func (z *fakeZK) CreateTopic(topic string, a zkpaths.TopicAssignment, cfgs map[string]string) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	if _, ok := z.topics[topic]; ok {
		return zkclient.ErrTopicExists
	}
	z.configs[topic] = maps.Clone(cfgs)
	z.topics[topic] = a
	return nil
}

func (z *fakeZK) UpdateTopicAssignment(topic string, a zkpaths.TopicAssignment, version int32) (int32, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.versions[topic] != version {
		return 0, errors.New("bad version")
	}
	z.topics[topic] = a
	z.versions[topic]++
	return z.versions[topic], nil
}

func (z *fakeZK) CreateDeleteTopicPath(topic string) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.marked[topic] {
		return zkclient.ErrTopicAlreadyMarkedForDeletion
	}
	z.marked[topic] = true
	return nil
}

func (z *fakeZK) GetEntityConfigs(_, name string) (map[string]string, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	return maps.Clone(z.configs[name]), nil
}

func (z *fakeZK) ChangeEntityConfigs(typ, name string, cfgs map[string]string) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.configs[name] = maps.Clone(cfgs)
	z.changes = append(z.changes, typ+"/"+name)
	return nil
}

func (z *fakeZK) AllocateProducerIDBlock(broker int32) (zkpaths.ProducerIDBlock, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.failPIDs {
		return zkpaths.ProducerIDBlock{}, errors.New("zookeeper unavailable")
	}
	start := z.block + 1
	z.block = start + txn.ProducerIDBlockSize - 1
	return zkpaths.ProducerIDBlock{BrokerID: broker, BlockStart: start, BlockEnd: z.block}, nil
}

func (z *fakeZK) GetConsumerOffset(g, t string, p int32) (int64, bool, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	o, ok := z.offsets[fmt.Sprintf("%s/%s/%d", g, t, p)]
	return o, ok, nil
}

func (z *fakeZK) SetConsumerOffset(g, t string, p int32, o int64) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.offsets == nil {
		z.offsets = map[string]int64{}
	}
	z.offsets[fmt.Sprintf("%s/%s/%d", g, t, p)] = o
	return nil
}

// fakeMeta answers Metadata with every requested topic unknown and knows
// partition leaders set by the test.
type fakeMeta struct {
	mu      sync.Mutex
	leaders map[string]map[int32]int32
}

func (m *fakeMeta) MetadataResponse(req *kmsg.MetadataRequest, _ string) *kmsg.MetadataResponse {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewMetadataResponseTopic()
		rt.Topic = t.Topic
		rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
func (m *fakeMeta) ControllerID() int32 { return 1 }
func (m *fakeMeta) AliveEndpoints(string) []metadata.BrokerEndpoint {
	return []metadata.BrokerEndpoint{{ID: 1, Host: "127.0.0.1", Port: 9092}}
}
func (m *fakeMeta) HasPartition(topic string, p int32) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.leaders[topic][p]
	return ok
}
func (m *fakeMeta) PartitionLeaders(topic string) (map[int32]int32, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.leaders[topic]
	return maps.Clone(l), ok
}

type fakeController struct {
	active bool
	err    error // returned by ControlledShutdown when set
}

func (c fakeController) IsActive() bool { return c.active }
func (c fakeController) ControlledShutdown(context.Context, int32, int64) ([]common.TopicPartition, error) {
	if c.err != nil {
		return nil, c.err
	}
	return []common.TopicPartition{{Topic: "t", Partition: 1}, {Topic: "t", Partition: 0}}, nil
}

// The admin elections and reassignments are the controller's (its
// transcripts test them); here they only answer NOT_CONTROLLER.
func (c fakeController) ElectLeaders(context.Context, controller.ElectionType, []common.TopicPartition) (map[common.TopicPartition]controller.ElectionOutcome, error) {
	return nil, kerr.NotController
}
func (c fakeController) AlterPartitionReassignments(context.Context, map[common.TopicPartition][]int32) (map[common.TopicPartition]error, error) {
	return nil, kerr.NotController
}
func (c fakeController) ListPartitionReassignments(context.Context, []common.TopicPartition) (map[common.TopicPartition]controller.ReplicaAssignment, error) {
	return nil, kerr.NotController
}

func newTestApis(t testing.TB, z *fakeZK, props map[string]string) (*Apis, *fakeMeta) {
	t.Helper()
	all := map[string]string{"zookeeper.connect": "127.0.0.1:1/x", "broker.id": "1", "log.dirs": t.TempDir()}
	maps.Copy(all, props)
	cfg, err := config.FromMap(all)
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeMeta{leaders: map[string]map[int32]int32{}}
	a := New(Config{BrokerID: 1, ClusterID: "c1", Broker: cfg, ZK: z, Metadata: m,
		Controller: fakeController{active: true}, FixedStartIndex: 0, Logger: slog.New(slog.DiscardHandler)})
	a.SetReady()
	return a, m
}

func call[R kmsg.Response](t *testing.T, a *Apis, req kmsg.Request) R {
	t.Helper()
	resp, err := a.Handle(context.Background(), &network.Request{Key: req.Key(), Version: req.GetVersion(), Body: req, Listener: "PLAINTEXT"})
	if err != nil {
		t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp.(R)
}

func TestVersionTableIsKafka34CappedByKmsg(t *testing.T) {
	a, _ := newTestApis(t, newFakeZK("a"), nil)
	want := map[int16][2]int16{0: {0, 9}, 1: {0, 13}, 2: {0, 7}, 3: {0, 12}, 4: {0, 7}, 5: {0, 4}, 6: {0, 8}, 7: {0, 3},
		17: {0, 1}, 18: {0, 3}, 19: {0, 7}, 20: {0, 6}, 21: {0, 2}, 22: {0, 4}, 23: {0, 4}, 29: {0, 3}, 30: {0, 3}, 31: {0, 3}, 32: {0, 4}, 33: {0, 2}, 37: {0, 3}, 43: {0, 2}, 44: {0, 1},
		36: {0, 2}, 45: {0, 0}, 46: {0, 0}, 60: {0, 0}}
	// Without a replica manager the data-path keys are not advertised.
	for _, k := range []int16{0, 1, 2, 4, 5, 6, 21, 23} {
		if _, _, ok := a.Versions(k); ok {
			t.Errorf("key %d advertised without a replica manager", k)
		}
		delete(want, k)
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kgo", "1.20.0"
	resp := call[*kmsg.ApiVersionsResponse](t, a, req)
	if resp.ErrorCode != 0 || len(resp.ApiKeys) != len(want) {
		t.Fatalf("ApiVersions: code %d, %d keys, want %d", resp.ErrorCode, len(resp.ApiKeys), len(want))
	}
	for _, k := range resp.ApiKeys {
		w, ok := want[k.ApiKey]
		if !ok || k.MinVersion != w[0] || k.MaxVersion != w[1] {
			t.Errorf("key %d: %d–%d, want %v", k.ApiKey, k.MinVersion, k.MaxVersion, w)
		}
	}
	for _, k := range []int16{8, 9, 10, 11, 24, 56, 57, 58, 67, 68} {
		if _, _, ok := a.Versions(k); ok {
			t.Errorf("key %d advertised but not implemented", k)
		}
	}
}

func TestApiVersionsRejectsBadSoftwareName(t *testing.T) {
	a, _ := newTestApis(t, newFakeZK("a"), nil)
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "bad name!", "1"
	resp := call[*kmsg.ApiVersionsResponse](t, a, req)
	if resp.ErrorCode != kerr.InvalidRequest.Code || len(resp.ApiKeys) != 0 {
		t.Fatalf("code %d keys %d", resp.ErrorCode, len(resp.ApiKeys))
	}
	// A version above ours is answered with the v0 fallback.
	req = kmsg.NewPtrApiVersionsRequest()
	req.Version = 4
	resp = call[*kmsg.ApiVersionsResponse](t, a, req)
	if resp.Version != 0 || resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != 1 || resp.ApiKeys[0].MaxVersion != 3 {
		t.Fatalf("fallback: %+v", resp)
	}
}

func createReq(timeout int32, validate bool, topics ...kmsg.CreateTopicsRequestTopic) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	req.TimeoutMillis = timeout
	req.ValidateOnly = validate
	req.Topics = topics
	return req
}

func topicReq(name string, n int32, rf int16, cfgs ...string) kmsg.CreateTopicsRequestTopic {
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, n, rf
	for i := 0; i+1 < len(cfgs); i += 2 {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = cfgs[i], kmsg.StringPtr(cfgs[i+1])
		t.Configs = append(t.Configs, c)
	}
	return t
}

func TestCreateTopicsValidation(t *testing.T) {
	z := newFakeZK("a", "b", "c")
	a, _ := newTestApis(t, z, nil)
	z.topics["taken"] = zkpaths.TopicAssignment{Partitions: map[int32][]int32{0: {1}}}
	z.topics["a.b"] = zkpaths.TopicAssignment{Partitions: map[int32][]int32{0: {1}}}
	z.marked["doomed"] = true
	z.topics["doomed"] = zkpaths.TopicAssignment{Partitions: map[int32][]int32{0: {1}}}
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, []int32{1, 1}
	dupReplicas := topicReq("dup-replicas", -1, -1)
	dupReplicas.ReplicaAssignment = []kmsg.CreateTopicsRequestTopicReplicaAssignment{ra}
	both := topicReq("both", 3, -1)
	both.ReplicaAssignment = []kmsg.CreateTopicsRequestTopicReplicaAssignment{ra}
	req := createReq(0, false,
		topicReq("taken", 1, 1), topicReq("a_b", 1, 1), topicReq("doomed", 1, 1),
		topicReq("twice", 1, 1), topicReq("twice", 1, 1),
		topicReq("bad$", 1, 1), topicReq("zero", 0, 1), topicReq("rf4", 1, 4), topicReq("rf0", 1, 0),
		topicReq("cfg", 1, 1, "cleanup.policy", "shred"), dupReplicas, both,
		topicReq("ok", -1, -1, "retention.ms", "1000"))
	resp := call[*kmsg.CreateTopicsResponse](t, a, req)
	want := map[string]int16{
		"taken": kerr.TopicAlreadyExists.Code, "a_b": kerr.InvalidTopicException.Code, "doomed": kerr.TopicAlreadyExists.Code,
		"twice": kerr.InvalidRequest.Code, "bad$": kerr.InvalidTopicException.Code, "zero": kerr.InvalidPartitions.Code,
		"rf4": kerr.InvalidReplicationFactor.Code, "rf0": kerr.InvalidReplicationFactor.Code, "cfg": kerr.InvalidConfig.Code,
		"dup-replicas": kerr.InvalidReplicaAssignment.Code, "both": kerr.InvalidRequest.Code, "ok": 0,
	}
	if len(resp.Topics) != len(req.Topics) {
		t.Fatalf("%d results for %d topics", len(resp.Topics), len(req.Topics))
	}
	for _, rt := range resp.Topics {
		if rt.ErrorCode != want[rt.Topic] {
			t.Errorf("%s: code %d (%v), want %d", rt.Topic, rt.ErrorCode, deref(rt.ErrorMessage), want[rt.Topic])
		}
		if rt.ErrorCode != 0 && rt.ErrorMessage == nil {
			t.Errorf("%s: error without a message", rt.Topic)
		}
	}
	ok := z.topics["ok"]
	if len(ok.Partitions) != 1 || len(ok.Partitions[0]) != 1 {
		t.Fatalf("ok created with %v, want num.partitions=1, default.replication.factor=1", ok.Partitions)
	}
	if z.configs["ok"]["retention.ms"] != "1000" {
		t.Fatalf("configs of ok: %v", z.configs["ok"])
	}
	for _, rt := range resp.Topics {
		if rt.Topic == "ok" && (rt.NumPartitions != 1 || rt.ReplicationFactor != 1 || len(rt.Configs) == 0) {
			t.Errorf("v5+ description of ok: %+v", rt)
		}
	}
}

func TestCreateTopicsRackAwareAssignmentAndValidateOnly(t *testing.T) {
	z := newFakeZK("a", "b", "c")
	a, _ := newTestApis(t, z, nil)
	resp := call[*kmsg.CreateTopicsResponse](t, a, createReq(0, true, topicReq("v", 6, 3)))
	if resp.Topics[0].ErrorCode != 0 || len(z.topics) != 0 {
		t.Fatalf("validate_only: code %d, topics %v", resp.Topics[0].ErrorCode, z.topics)
	}
	call[*kmsg.CreateTopicsResponse](t, a, createReq(0, false, topicReq("r", 6, 3)))
	want, err := controller.AssignReplicasToBrokers(z.brokers, 6, 3, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(z.topics["r"].Partitions) != fmt.Sprint(want) {
		t.Fatalf("assignment %v, want %v", z.topics["r"].Partitions, want)
	}
	// Mixed racks are refused for CreateTopics (Kafka's enforced mode).
	z2 := newFakeZK("a", "", "c")
	a2, _ := newTestApis(t, z2, nil)
	resp = call[*kmsg.CreateTopicsResponse](t, a2, createReq(0, false, topicReq("m", 3, 2)))
	if resp.Topics[0].ErrorCode == 0 {
		t.Fatal("mixed racks accepted")
	}
}

func TestCreateTopicsWaitsForLeaders(t *testing.T) {
	z := newFakeZK("a")
	a, m := newTestApis(t, z, nil)
	done := make(chan *kmsg.CreateTopicsResponse, 1)
	go func() { done <- call[*kmsg.CreateTopicsResponse](t, a, createReq(30000, false, topicReq("w", 2, 1))) }()
	// Leaders appear in two steps; the request must wait for both.
	waitUntil(t, func() bool { _, ok := z.topics["w"]; return ok }, z)
	m.mu.Lock()
	m.leaders["w"] = map[int32]int32{0: 1, 1: -1}
	m.mu.Unlock()
	a.MetadataChanged()
	select {
	case r := <-done:
		t.Fatalf("answered before every leader was elected: %+v", r)
	default:
	}
	m.mu.Lock()
	m.leaders["w"] = map[int32]int32{0: 1, 1: 1}
	m.mu.Unlock()
	a.MetadataChanged()
	r := <-done
	if r.Topics[0].ErrorCode != 0 {
		t.Fatalf("code %d", r.Topics[0].ErrorCode)
	}
	// Never elected: REQUEST_TIMED_OUT, the topic still exists.
	r = call[*kmsg.CreateTopicsResponse](t, a, createReq(50, false, topicReq("never", 1, 1)))
	if r.Topics[0].ErrorCode != kerr.RequestTimedOut.Code || z.topics["never"].Partitions == nil {
		t.Fatalf("code %d", r.Topics[0].ErrorCode)
	}
}

func waitUntil(t *testing.T, cond func() bool, z *fakeZK) {
	t.Helper()
	for i := 0; i < 2000; i++ {
		z.mu.Lock()
		ok := cond()
		z.mu.Unlock()
		if ok {
			return
		}
		sleepMs(5)
	}
	t.Fatal("condition not reached")
}

func TestNotControllerForAdminWrites(t *testing.T) {
	z := newFakeZK("a")
	a, _ := newTestApis(t, z, nil)
	a.controller = fakeController{active: false}
	r := call[*kmsg.CreateTopicsResponse](t, a, createReq(0, false, topicReq("x", 1, 1)))
	if r.Topics[0].ErrorCode != kerr.NotController.Code {
		t.Fatalf("CreateTopics: %d", r.Topics[0].ErrorCode)
	}
	d := kmsg.NewPtrDeleteTopicsRequest()
	d.Version = 5
	d.TopicNames = []string{"x"}
	if dr := call[*kmsg.DeleteTopicsResponse](t, a, d); dr.Topics[0].ErrorCode != kerr.NotController.Code {
		t.Fatalf("DeleteTopics: %d", dr.Topics[0].ErrorCode)
	}
	cp := kmsg.NewPtrCreatePartitionsRequest()
	ct := kmsg.NewCreatePartitionsRequestTopic()
	ct.Topic, ct.Count = "x", 2
	cp.Topics = []kmsg.CreatePartitionsRequestTopic{ct}
	if cr := call[*kmsg.CreatePartitionsResponse](t, a, cp); cr.Topics[0].ErrorCode != kerr.NotController.Code {
		t.Fatalf("CreatePartitions: %d", cr.Topics[0].ErrorCode)
	}
	cs := kmsg.NewPtrControlledShutdownRequest()
	if r := call[*kmsg.ControlledShutdownResponse](t, a, cs); r.ErrorCode != kerr.NotController.Code {
		t.Fatalf("ControlledShutdown: %d", r.ErrorCode)
	}
	a.controller = fakeController{active: true}
	if r := call[*kmsg.ControlledShutdownResponse](t, a, cs); r.ErrorCode != 0 || len(r.PartitionsRemaining) != 2 {
		t.Fatalf("ControlledShutdown at the controller: %+v", r)
	}
	// A controller that is itself shutting down sends the requester on to
	// the next controller rather than answering UNKNOWN_SERVER_ERROR.
	a.controller = fakeController{active: true, err: fmt.Errorf("waiting for the controller: %w", context.Canceled)}
	if r := call[*kmsg.ControlledShutdownResponse](t, a, cs); r.ErrorCode != kerr.NotController.Code {
		t.Fatalf("ControlledShutdown at a stopping controller: code %d, want NOT_CONTROLLER", r.ErrorCode)
	}
}

func TestDeleteTopics(t *testing.T) {
	z := newFakeZK("a")
	a, m := newTestApis(t, z, nil)
	z.topics["gone"] = zkpaths.TopicAssignment{Partitions: map[int32][]int32{0: {1}}, TopicID: zkpaths.RandomUUID()}
	d := kmsg.NewPtrDeleteTopicsRequest()
	d.Version = 6
	byID := kmsg.NewDeleteTopicsRequestTopic()
	byID.TopicID = decodeTopicID(z.topics["gone"].TopicID)
	unknown := kmsg.NewDeleteTopicsRequestTopic()
	unknown.Topic = kmsg.StringPtr("nope")
	badID := kmsg.NewDeleteTopicsRequestTopic()
	badID.TopicID = [16]byte{9}
	d.Topics = []kmsg.DeleteTopicsRequestTopic{byID, unknown, badID}
	d.TimeoutMillis = 0
	r := call[*kmsg.DeleteTopicsResponse](t, a, d)
	codes := []int16{r.Topics[0].ErrorCode, r.Topics[1].ErrorCode, r.Topics[2].ErrorCode}
	if codes[0] != 0 || codes[1] != kerr.UnknownTopicOrPartition.Code || codes[2] != kerr.UnknownTopicID.Code {
		t.Fatalf("codes %v", codes)
	}
	if r.Topics[0].Topic == nil || *r.Topics[0].Topic != "gone" || !z.marked["gone"] {
		t.Fatalf("topic id not resolved or not marked: %v %v", r.Topics[0].Topic, z.marked)
	}
	// Waits for the topic to leave the cache, else REQUEST_TIMED_OUT.
	m.leaders["gone"] = map[int32]int32{0: 1}
	d2 := kmsg.NewPtrDeleteTopicsRequest()
	d2.Version = 5
	d2.TopicNames = []string{"gone"}
	d2.TimeoutMillis = 30
	if r := call[*kmsg.DeleteTopicsResponse](t, a, d2); r.Topics[0].ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("still in the cache: code %d", r.Topics[0].ErrorCode)
	}
	// Disabled deletion.
	a2, _ := newTestApis(t, z, map[string]string{"delete.topic.enable": "false"})
	if r := call[*kmsg.DeleteTopicsResponse](t, a2, d2); r.Topics[0].ErrorCode != kerr.TopicDeletionDisabled.Code {
		t.Fatalf("disabled: code %d", r.Topics[0].ErrorCode)
	}
}

func TestCreatePartitions(t *testing.T) {
	z := newFakeZK("", "", "", "", "")
	a, _ := newTestApis(t, z, nil)
	z.topics["t"] = zkpaths.TopicAssignment{Partitions: map[int32][]int32{0: {2, 3}, 1: {3, 4}, 2: {4, 5}}, TopicID: "id"}
	req := func(count int32, assign ...[]int32) *kmsg.CreatePartitionsRequest {
		r := kmsg.NewPtrCreatePartitionsRequest()
		ct := kmsg.NewCreatePartitionsRequestTopic()
		ct.Topic, ct.Count = "t", count
		r.TimeoutMillis = 0
		for _, as := range assign {
			x := kmsg.NewCreatePartitionsRequestTopicAssignment()
			x.Replicas = as
			ct.Assignment = append(ct.Assignment, x)
		}
		r.Topics = []kmsg.CreatePartitionsRequestTopic{ct}
		return r
	}
	for _, tc := range []struct {
		r    *kmsg.CreatePartitionsRequest
		want int16
	}{
		{req(3), kerr.InvalidPartitions.Code},
		{req(5, []int32{1, 2}), kerr.InvalidReplicaAssignment.Code},
		{req(4, []int32{1, 9}), kerr.InvalidReplicaAssignment.Code},
		{req(4, []int32{1, 1}), kerr.InvalidReplicaAssignment.Code},
		{req(4, []int32{1}), kerr.InvalidReplicaAssignment.Code},
	} {
		if r := call[*kmsg.CreatePartitionsResponse](t, a, tc.r); r.Topics[0].ErrorCode != tc.want {
			t.Errorf("count %d: code %d, want %d", tc.r.Topics[0].Count, r.Topics[0].ErrorCode, tc.want)
		}
	}
	if r := call[*kmsg.CreatePartitionsResponse](t, a, req(5)); r.Topics[0].ErrorCode != 0 {
		t.Fatalf("grow to 5: %d %v", r.Topics[0].ErrorCode, deref(r.Topics[0].ErrorMessage))
	}
	// New partitions continue the existing assignment: its first replica
	// (p0 starts at broker 2 of 1..5) fixes the start, so p3 = 5,2; p4 = 1,3.
	got := z.topics["t"]
	if fmt.Sprint(got.Partitions[3]) != "[5 2]" || fmt.Sprint(got.Partitions[4]) != "[1 3]" || got.TopicID != "id" {
		t.Fatalf("after growth: %v (topic id %q)", got.Partitions, got.TopicID)
	}
}

func TestIncrementalAlterConfigsOps(t *testing.T) {
	cfg := config.Defaults()
	op := func(name string, o kmsg.IncrementalAlterConfigOp, v string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = name, o, kmsg.StringPtr(v)
		return c
	}
	cur := map[string]string{"retention.ms": "1", "segment.bytes": "2048000"}
	next, err := applyIncremental(kmsg.ConfigResourceTypeTopic, cur, []kmsg.IncrementalAlterConfigsRequestResourceConfig{
		op("retention.ms", kmsg.IncrementalAlterConfigOpSet, "5"),
		op("segment.bytes", kmsg.IncrementalAlterConfigOpDelete, ""),
		op("cleanup.policy", kmsg.IncrementalAlterConfigOpAppend, "compact"),
	}, cfg.TopicDefault)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(next) != "map[cleanup.policy:delete,compact retention.ms:5]" {
		t.Fatalf("got %v", next)
	}
	if cur["retention.ms"] != "1" {
		t.Fatal("current overrides modified in place")
	}
	next, err = applyIncremental(kmsg.ConfigResourceTypeTopic, next, []kmsg.IncrementalAlterConfigsRequestResourceConfig{
		op("cleanup.policy", kmsg.IncrementalAlterConfigOpSubtract, "delete"),
	}, cfg.TopicDefault)
	if err != nil || next["cleanup.policy"] != "compact" {
		t.Fatalf("subtract: %v %v", next, err)
	}
	for _, bad := range [][]kmsg.IncrementalAlterConfigsRequestResourceConfig{
		{op("retention.ms", kmsg.IncrementalAlterConfigOpAppend, "1")},
		{op("nope", kmsg.IncrementalAlterConfigOpSet, "1")},
		{op("retention.ms", kmsg.IncrementalAlterConfigOpSet, "1"), op("retention.ms", kmsg.IncrementalAlterConfigOpDelete, "")},
		{op("retention.ms", 9, "1")},
	} {
		if _, err := applyIncremental(kmsg.ConfigResourceTypeTopic, cur, bad, cfg.TopicDefault); err == nil {
			t.Errorf("accepted %v", bad)
		}
	}
}

func TestConfigsHandlers(t *testing.T) {
	z := newFakeZK("a")
	a, _ := newTestApis(t, z, map[string]string{"log.retention.hours": "24"})
	z.topics["t"] = zkpaths.TopicAssignment{Partitions: map[int32][]int32{0: {1}}}
	z.configs["t"] = map[string]string{"segment.bytes": "1048576"}

	inc := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = "max.message.bytes", kmsg.StringPtr("2000000")
	res.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{c}
	missing := res
	missing.ResourceName = "missing"
	inc.Resources = []kmsg.IncrementalAlterConfigsRequestResource{res, missing}
	ir := call[*kmsg.IncrementalAlterConfigsResponse](t, a, inc)
	if ir.Resources[0].ErrorCode != 0 || ir.Resources[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("codes %d %d", ir.Resources[0].ErrorCode, ir.Resources[1].ErrorCode)
	}
	if fmt.Sprint(z.configs["t"]) != "map[max.message.bytes:2000000 segment.bytes:1048576]" || len(z.changes) != 1 {
		t.Fatalf("stored %v, notifications %v", z.configs["t"], z.changes)
	}

	d := kmsg.NewPtrDescribeConfigsRequest()
	d.Version = 4
	d.IncludeSynonyms = true
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
	br := kmsg.NewDescribeConfigsRequestResource()
	br.ResourceType, br.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
	br.ConfigNames = []string{"log.retention.hours", "num.partitions"}
	other := br
	other.ResourceName = "2"
	d.Resources = []kmsg.DescribeConfigsRequestResource{dr, br, other}
	resp := call[*kmsg.DescribeConfigsResponse](t, a, d)
	byName := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, e := range resp.Resources[0].Configs {
		byName[e.Name] = e
	}
	if len(byName) != len(config.TopicConfigs()) {
		t.Errorf("described %d topic configs, want every one (%d)", len(byName), len(config.TopicConfigs()))
	}
	check := func(name, value string, src kmsg.ConfigSource, synonyms ...string) {
		t.Helper()
		e, ok := byName[name]
		if !ok || deref(e.Value) != value || e.Source != src {
			t.Errorf("%s = %q source %v, want %q %v", name, deref(e.Value), e.Source, value, src)
			return
		}
		var got []string
		for _, s := range e.ConfigSynonyms {
			got = append(got, fmt.Sprintf("%s=%s/%d", s.Name, deref(s.Value), s.Source))
		}
		if strings.Join(got, " ") != strings.Join(synonyms, " ") {
			t.Errorf("%s synonyms %v, want %v", name, got, synonyms)
		}
	}
	check("segment.bytes", "1048576", kmsg.ConfigSourceDynamicTopicConfig, "segment.bytes=1048576/1", "log.segment.bytes=1073741824/5")
	// Kafka's ConfigHelper lists a topic config's broker synonyms from the
	// key it defaults from (log.retention.ms) on: log.retention.hours alone
	// leaves none, so the source is DEFAULT_CONFIG although the value is
	// the static hours' (as Kafka 2.8 answers).
	check("retention.ms", "86400000", kmsg.ConfigSourceDefaultConfig)
	check("cleanup.policy", "delete", kmsg.ConfigSourceDefaultConfig, "log.cleanup.policy=delete/5")
	if resp.Resources[1].ErrorCode != 0 || len(resp.Resources[1].Configs) != 2 {
		t.Fatalf("broker resource: %+v", resp.Resources[1])
	}
	for _, e := range resp.Resources[1].Configs {
		if e.Name == "log.retention.hours" && (deref(e.Value) != "24" || e.Source != kmsg.ConfigSourceStaticBrokerConfig) {
			t.Errorf("log.retention.hours: %q %v", deref(e.Value), e.Source)
		}
		if e.Name == "num.partitions" && (deref(e.Value) != "1" || e.Source != kmsg.ConfigSourceDefaultConfig) {
			t.Errorf("num.partitions: %q %v", deref(e.Value), e.Source)
		}
	}
	if resp.Resources[2].ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("another broker's id: code %d", resp.Resources[2].ErrorCode)
	}

	// AlterConfigs replaces the set; a duplicate resource is INVALID_REQUEST.
	al := kmsg.NewPtrAlterConfigsRequest()
	ar := kmsg.NewAlterConfigsRequestResource()
	ar.ResourceType, ar.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
	ac := kmsg.NewAlterConfigsRequestResourceConfig()
	ac.Name, ac.Value = "retention.ms", kmsg.StringPtr("1000")
	ar.Configs = []kmsg.AlterConfigsRequestResourceConfig{ac}
	al.Resources = []kmsg.AlterConfigsRequestResource{ar}
	if r := call[*kmsg.AlterConfigsResponse](t, a, al); r.Resources[0].ErrorCode != 0 {
		t.Fatalf("alter: %d", r.Resources[0].ErrorCode)
	}
	if fmt.Sprint(z.configs["t"]) != "map[retention.ms:1000]" {
		t.Fatalf("after AlterConfigs: %v", z.configs["t"])
	}
	al.Resources = append(al.Resources, ar)
	if r := call[*kmsg.AlterConfigsResponse](t, a, al); r.Resources[0].ErrorCode != kerr.InvalidRequest.Code || r.Resources[1].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("duplicates: %d %d", r.Resources[0].ErrorCode, r.Resources[1].ErrorCode)
	}
	// A broker key that is not dynamic: INVALID_REQUEST with Kafka's text.
	bres := kmsg.NewAlterConfigsRequestResource()
	bres.ResourceType, bres.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
	ac.Name, ac.Value = "log.dirs", kmsg.StringPtr("/tmp/x")
	bres.Configs = []kmsg.AlterConfigsRequestResourceConfig{ac}
	al.Resources = []kmsg.AlterConfigsRequestResource{bres}
	want := "Invalid config value for resource ConfigResource(type=BROKER, name='1'): Cannot update these configs dynamically: Set(log.dirs)"
	if r := call[*kmsg.AlterConfigsResponse](t, a, al); r.Resources[0].ErrorCode != kerr.InvalidRequest.Code || deref(r.Resources[0].ErrorMessage) != want {
		t.Fatalf("broker alter: %d %q", r.Resources[0].ErrorCode, deref(r.Resources[0].ErrorMessage))
	}
}

func TestInitProducerIDBlocks(t *testing.T) {
	z := newFakeZK("a")
	a, _ := newTestApis(t, z, nil)
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version = 4
	seen := map[int64]bool{}
	for i := 0; i < 2500; i++ {
		r := call[*kmsg.InitProducerIDResponse](t, a, req)
		if r.ErrorCode != 0 || r.ProducerEpoch != 0 || seen[r.ProducerID] {
			t.Fatalf("response %d: %+v", i, r)
		}
		seen[r.ProducerID] = true
	}
	if z.block != 2999 {
		t.Fatalf("claimed up to %d, want three blocks (2999)", z.block)
	}
	req.TransactionalID = kmsg.StringPtr("txn")
	if r := call[*kmsg.InitProducerIDResponse](t, a, req); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("transactional: %d", r.ErrorCode)
	}
	z2 := newFakeZK("a")
	z2.failPIDs = true
	a2, _ := newTestApis(t, z2, nil)
	req.TransactionalID = nil
	if r := call[*kmsg.InitProducerIDResponse](t, a2, req); r.ErrorCode != kerr.CoordinatorNotAvailable.Code || r.ProducerID != -1 {
		t.Fatalf("allocation failure: %+v", r)
	}
}

func TestMetadataAutoCreate(t *testing.T) {
	z := newFakeZK("a")
	a, _ := newTestApis(t, z, nil)
	md := func(allow bool, names ...string) *kmsg.MetadataResponse {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		req.AllowAutoTopicCreation = allow
		for _, n := range names {
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = kmsg.StringPtr(n)
			req.Topics = append(req.Topics, mt)
		}
		return call[*kmsg.MetadataResponse](t, a, req)
	}
	r := md(true, "new", "__consumer_offsets")
	if r.Topics[0].ErrorCode != kerr.LeaderNotAvailable.Code || z.topics["new"].Partitions == nil {
		t.Fatalf("auto-create: code %d, zk %v", r.Topics[0].ErrorCode, z.topics)
	}
	if r.Topics[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("internal topic auto-created: %d", r.Topics[1].ErrorCode)
	}
	// Still not in the cache: LEADER_NOT_AVAILABLE again, not an error.
	if r := md(true, "new"); r.Topics[0].ErrorCode != kerr.LeaderNotAvailable.Code {
		t.Fatalf("second request: %d", r.Topics[0].ErrorCode)
	}
	if r := md(false, "other"); r.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code || z.topics["other"].Partitions != nil {
		t.Fatal("created although the request disallowed it")
	}
	a2, _ := newTestApis(t, z, map[string]string{"auto.create.topics.enable": "false"})
	r = call[*kmsg.MetadataResponse](t, a2, func() kmsg.Request {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 1
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr("off")
		req.Topics = []kmsg.MetadataRequestTopic{mt}
		return req
	}())
	if r.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("auto-creation disabled: %d", r.Topics[0].ErrorCode)
	}
}

func TestHandlerPanicClosesConnection(t *testing.T) {
	a, _ := newTestApis(t, newFakeZK("a"), nil)
	a.handlers[60] = func(context.Context, *request) (kmsg.Response, error) { panic("boom") }
	_, err := a.Handle(context.Background(), &network.Request{Key: 60, Body: kmsg.NewPtrDescribeClusterRequest()})
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("panic not turned into an error: %v", err)
	}
}

func TestRequestsWaitUntilReady(t *testing.T) {
	cfg := config.Defaults()
	a := New(Config{BrokerID: 1, Broker: cfg, Metadata: &fakeMeta{}, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Handle(ctx, &network.Request{Key: 60, Body: kmsg.NewPtrDescribeClusterRequest()}); err == nil {
		t.Fatal("served before SetReady")
	}
	// ApiVersions is answered while starting.
	if _, err := a.Handle(ctx, &network.Request{Key: 18, Body: kmsg.NewPtrApiVersionsRequest()}); err != nil {
		t.Fatal(err)
	}
	a.SetReady()
	r, err := a.Handle(context.Background(), &network.Request{Key: 60, Body: kmsg.NewPtrDescribeClusterRequest(), Listener: "PLAINTEXT"})
	if err != nil || len(r.(*kmsg.DescribeClusterResponse).Brokers) != 1 || r.(*kmsg.DescribeClusterResponse).ControllerID != 1 {
		t.Fatalf("describe cluster: %v %+v", err, r)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
