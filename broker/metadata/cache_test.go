package metadata

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func str(s string) *string { return &s }

type part struct {
	topic                  string
	id                     [16]byte
	p, leader, epoch       int32
	isr, replicas, offline []int32
}

type liveBroker struct {
	id   int32
	rack *string
	eps  []Endpoint
}

// umr builds an UpdateMetadataRequest of version v the way the controller
// does (grouped by topic from v5, endpoints with listener names from v3).
func umr(v int16, controller int32, brokers []liveBroker, parts ...part) *kmsg.UpdateMetadataRequest {
	r := kmsg.NewPtrUpdateMetadataRequest()
	r.Version, r.ControllerID, r.ControllerEpoch = v, controller, 3
	for _, b := range brokers {
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID, lb.Rack = b.id, b.rack
		if v == 0 {
			lb.Host, lb.Port = b.eps[0].Host, b.eps[0].Port
		}
		for _, e := range b.eps {
			ep := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
			ep.Host, ep.Port, ep.ListenerName, ep.SecurityProtocol = e.Host, e.Port, e.Listener, e.SecurityProtocol
			lb.Endpoints = append(lb.Endpoints, ep)
		}
		r.LiveBrokers = append(r.LiveBrokers, lb)
	}
	byTopic := map[string]int{}
	for _, p := range parts {
		ps := kmsg.NewUpdateMetadataRequestTopicPartition()
		ps.Topic, ps.Partition, ps.Leader, ps.LeaderEpoch = p.topic, p.p, p.leader, p.epoch
		ps.ISR, ps.Replicas, ps.OfflineReplicas, ps.ZKVersion, ps.ControllerEpoch = p.isr, p.replicas, p.offline, 7, 2
		if v <= 4 {
			r.PartitionStates = append(r.PartitionStates, ps)
			continue
		}
		i, ok := byTopic[p.topic]
		if !ok {
			ts := kmsg.NewUpdateMetadataRequestTopicState()
			ts.Topic, ts.TopicID = p.topic, p.id
			r.TopicStates = append(r.TopicStates, ts)
			i = len(r.TopicStates) - 1
			byTopic[p.topic] = i
		}
		r.TopicStates[i].PartitionStates = append(r.TopicStates[i].PartitionStates, ps)
	}
	return r
}

var (
	idA = [16]byte{1}
	idB = [16]byte{2}
	// three brokers: 1 and 2 have PLAINTEXT and INTERNAL, 3 only INTERNAL.
	threeBrokers = []liveBroker{
		{1, str("r1"), []Endpoint{{"PLAINTEXT", "h1", 9092, 0}, {"INTERNAL", "i1", 9093, 0}}},
		{2, nil, []Endpoint{{"PLAINTEXT", "h2", 9092, 0}, {"INTERNAL", "i2", 9093, 0}}},
		{3, str("r3"), []Endpoint{{"INTERNAL", "i3", 9093, 0}}},
	}
)

func TestUpdateAccessors(t *testing.T) {
	c := New(1, "cluster-x")
	if c.ControllerID() != -1 || len(c.AliveBrokers()) != 0 || len(c.Topics()) != 0 {
		t.Fatal("new cache not empty")
	}
	del := c.Update(umr(8, 2, threeBrokers,
		part{topic: "a", id: idA, p: 0, leader: 1, epoch: 5, isr: []int32{1, 2}, replicas: []int32{1, 2}},
		part{topic: "a", id: idA, p: 1, leader: 2, epoch: 6, isr: []int32{2}, replicas: []int32{2, 3}, offline: []int32{3}},
		part{topic: "b", id: idB, p: 0, leader: -1, epoch: 1, isr: []int32{3}, replicas: []int32{3}},
	))
	if len(del) != 0 {
		t.Fatalf("deleted %v", del)
	}
	if c.ControllerID() != 2 || c.ControllerEpoch() != 3 {
		t.Fatalf("controller %d epoch %d", c.ControllerID(), c.ControllerEpoch())
	}
	if got := c.Topics(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("topics %v", got)
	}
	if n, ok := c.NumPartitions("a"); !ok || n != 2 {
		t.Fatalf("partitions of a: %d %v", n, ok)
	}
	ps, ok := c.Partition("a", 1)
	want := PartitionState{Leader: 2, LeaderEpoch: 6, ISR: []int32{2}, Replicas: []int32{2, 3}, OfflineReplicas: []int32{3}, ZkVersion: 7, ControllerEpoch: 2}
	if !ok || !reflect.DeepEqual(ps, want) {
		t.Fatalf("partition a-1 %+v", ps)
	}
	ps.ISR[0] = 99 // copies: the cache must not change
	if again, _ := c.Partition("a", 1); again.ISR[0] != 2 {
		t.Fatal("Partition returned shared slices")
	}
	if id, ok := c.TopicID("a"); !ok || id != idA {
		t.Fatalf("topic id %v %v", id, ok)
	}
	if name, ok := c.TopicName(idB); !ok || name != "b" {
		t.Fatalf("name of idB %q", name)
	}
	if h, p, ok := c.Endpoint(3, "INTERNAL"); !ok || h != "i3" || p != 9093 {
		t.Fatalf("endpoint %s %d %v", h, p, ok)
	}
	if _, _, ok := c.Endpoint(3, "PLAINTEXT"); ok {
		t.Fatal("broker 3 has no PLAINTEXT endpoint")
	}
	if b, ok := c.Broker(1); !ok || *b.Rack != "r1" || len(b.Endpoints) != 2 {
		t.Fatalf("broker 1 %+v", b)
	}
	if _, ok := c.Partition("a", 7); ok {
		t.Fatal("unknown partition found")
	}

	// Second update: broker list replaced, a-0 deleted (leader -2),
	// b untouched, a-1 updated.
	del = c.Update(umr(8, 1, threeBrokers[:1],
		part{topic: "a", id: idA, p: 0, leader: LeaderDuringDelete, epoch: 5},
		part{topic: "a", id: idA, p: 1, leader: 1, epoch: 7, isr: []int32{1}, replicas: []int32{1}},
	))
	if !reflect.DeepEqual(del, []common.TopicPartition{{Topic: "a", Partition: 0}}) {
		t.Fatalf("deleted %v", del)
	}
	if len(c.AliveBrokers()) != 1 || c.IsAlive(2) || !c.IsAlive(1) {
		t.Fatalf("brokers %v", c.AliveBrokers())
	}
	if ps, _ := c.Partition("a", 1); ps.LeaderEpoch != 7 {
		t.Fatalf("a-1 not updated: %+v", ps)
	}
	if _, ok := c.Partition("b", 0); !ok {
		t.Fatal("b-0 lost by an update that did not mention it")
	}
	// Deleting the last partition removes the topic and its id.
	del = c.Update(umr(8, 1, threeBrokers[:1], part{topic: "a", id: idA, p: 1, leader: LeaderDuringDelete}))
	if len(del) != 1 || c.Contains("a") {
		t.Fatalf("topic a still present, deleted %v", del)
	}
	if _, ok := c.TopicName(idA); ok {
		t.Fatal("id of deleted topic still known")
	}
	// Deleting what is not there reports nothing.
	if del := c.Update(umr(8, 1, threeBrokers[:1], part{topic: "zzz", p: 0, leader: LeaderDuringDelete})); len(del) != 0 || c.Contains("zzz") {
		t.Fatalf("phantom delete %v", del)
	}
}

// Old UpdateMetadata versions: v0 has a single PLAINTEXT host/port, v1–v2
// name listeners after the security protocol, v4 and older are ungrouped,
// offline replicas only from v4, racks from v2.
func TestUpdateOldVersions(t *testing.T) {
	for _, v := range []int16{0, 1, 2, 3, 4, 5, 6, 7, 8} {
		c := New(1, "")
		brokers := []liveBroker{{1, str("rack"), []Endpoint{{"PLAINTEXT", "h", 9092, 0}}}}
		if v >= 1 && v < 3 {
			brokers[0].eps = append(brokers[0].eps, Endpoint{"", "s", 9094, 1})
		}
		c.Update(umr(v, 1, brokers, part{topic: "t", id: idA, p: 0, leader: 1, isr: []int32{1}, replicas: []int32{1}, offline: []int32{5}}))
		ps, ok := c.Partition("t", 0)
		if !ok || ps.Leader != 1 {
			t.Fatalf("v%d: partition %+v", v, ps)
		}
		if (len(ps.OfflineReplicas) == 1) != (v >= 4) {
			t.Errorf("v%d: offline replicas %v", v, ps.OfflineReplicas)
		}
		if _, hasID := c.TopicID("t"); hasID != (v >= 7) {
			t.Errorf("v%d: topic id present %v", v, hasID)
		}
		b, _ := c.Broker(1)
		if (b.Rack != nil) != (v >= 2) {
			t.Errorf("v%d: rack %v", v, b.Rack)
		}
		if _, _, ok := c.Endpoint(1, "PLAINTEXT"); !ok {
			t.Errorf("v%d: no PLAINTEXT endpoint: %+v", v, b)
		}
		if v >= 1 && v < 3 {
			if h, _, ok := c.Endpoint(1, "SSL"); !ok || h != "s" {
				t.Errorf("v%d: SSL endpoint by security protocol: %+v", v, b)
			}
		}
	}
}

func TestRecreatedTopicGetsNewID(t *testing.T) {
	c := New(1, "")
	c.Update(umr(8, 1, threeBrokers, part{topic: "a", id: idA, p: 0, leader: 1, replicas: []int32{1}, isr: []int32{1}}))
	c.Update(umr(8, 1, threeBrokers, part{topic: "a", id: idB, p: 0, leader: 1, replicas: []int32{1}, isr: []int32{1}}))
	if _, ok := c.TopicName(idA); ok {
		t.Fatal("old id still maps")
	}
	if n, _ := c.TopicName(idB); n != "a" {
		t.Fatal("new id not mapped")
	}
}

// Readers running against concurrent updates always see a consistent
// snapshot (run with -race).
func TestConcurrentReadersAndWriters(t *testing.T) {
	c := New(1, "x")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp := c.MetadataResponse(&kmsg.MetadataRequest{Version: 12}, "PLAINTEXT")
				for _, tp := range resp.Topics {
					// every update writes both partitions with the same epoch
					if len(tp.Partitions) == 2 && tp.Partitions[0].LeaderEpoch != tp.Partitions[1].LeaderEpoch {
						t.Errorf("torn snapshot: %+v", tp.Partitions)
						return
					}
				}
				_ = c.AliveBrokers()
				_, _ = c.Partition("a", 0)
			}
		}()
	}
	for e := int32(0); e < 300; e++ {
		c.Update(umr(8, 1, threeBrokers,
			part{topic: "a", id: idA, p: 0, leader: 1, epoch: e, isr: []int32{1}, replicas: []int32{1}},
			part{topic: "a", id: idA, p: 1, leader: 2, epoch: e, isr: []int32{2}, replicas: []int32{2}}))
		c.MarkCreating("x")
	}
	close(stop)
	wg.Wait()
}

func TestMarkCreatingExpires(t *testing.T) {
	c := New(1, "")
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	c.SetCreatingTTL(time.Second)
	c.MarkCreating("new")
	req := metaReq(4, "new")
	if code := c.MetadataResponse(req, "PLAINTEXT").Topics[0].ErrorCode; code != kerr.LeaderNotAvailable.Code {
		t.Fatalf("creating: code %d", code)
	}
	if got := c.MissingTopics(req); len(got) != 0 {
		t.Fatalf("creating topic listed as missing: %v", got)
	}
	now = now.Add(2 * time.Second)
	if code := c.MetadataResponse(req, "PLAINTEXT").Topics[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("expired: code %d", code)
	}
	// Appearing in an update clears the mark.
	c.MarkCreating("new")
	c.Update(umr(8, 1, threeBrokers, part{topic: "new", p: 0, leader: 1, replicas: []int32{1}, isr: []int32{1}}))
	c.Update(umr(8, 1, threeBrokers, part{topic: "new", p: 0, leader: LeaderDuringDelete}))
	if code := c.MetadataResponse(req, "PLAINTEXT").Topics[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("after create+delete: code %d", code)
	}
}
