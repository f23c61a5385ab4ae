package broker_test

import (
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/controller"
	"github.com/klassik/klassik/zkpaths"
)

// A 3-broker cluster on racks a, b, c: every broker is in Metadata with its
// rack, the controller named in Metadata is the one /controller names.
func TestClusterMetadataAndController(t *testing.T) {
	c := startRacked(t)
	ctrl, ok := c.Controller()
	if !ok {
		t.Fatal("no /controller")
	}
	cl := c.Client()
	var resp *kmsg.MetadataResponse
	c.WaitFor(30*time.Second, "metadata with 3 brokers and the controller", func() bool {
		req := kmsg.NewPtrMetadataRequest()
		r, err := req.RequestWith(ctxT(t, 5*time.Second), cl)
		if err != nil {
			return false
		}
		resp = r
		return len(r.Brokers) == 3 && r.ControllerID == ctrl
	})
	var ids []int32
	for _, b := range resp.Brokers {
		ids = append(ids, b.NodeID)
		i := c.Index(b.NodeID)
		if b.Rack == nil || *b.Rack != racks[i] {
			t.Errorf("broker %d rack = %v, want %s", b.NodeID, b.Rack, racks[i])
		}
		if b.Host != "127.0.0.1" {
			t.Errorf("broker %d host %q", b.NodeID, b.Host)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if len(ids) != 3 || ids[0] != 1 || ids[2] != 3 {
		t.Fatalf("brokers %v", ids)
	}
	if resp.ClusterID == nil || *resp.ClusterID != c.Broker(0).ClusterID() {
		t.Fatalf("cluster id %v, want %s", resp.ClusterID, c.Broker(0).ClusterID())
	}
	// Kafka's ActiveControllerCount: 1 on the controller, 0 elsewhere.
	c.WaitFor(30*time.Second, "ActiveControllerCount 1 on the controller only", func() bool {
		for i := 0; i < c.N(); i++ {
			g, ok := c.Broker(i).Metrics().Get("kafka.controller.KafkaController.ActiveControllerCount").(gometrics.Gauge)
			if !ok {
				return false
			}
			want := int64(0)
			if c.BrokerID(i) == ctrl {
				want = 1
			}
			if g.Value() != want {
				return false
			}
		}
		return true
	})
}

// Topic creation through kadm lands in ZooKeeper exactly as the controller's
// assignment function computes it (same deterministic start index), the
// controller elects leaders into the state znodes, and an idempotent
// producer's 10,000 records come back complete, once and in order.
func TestCreateTopicProduceConsume(t *testing.T) {
	start := 0
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Racks: racks, FixedStartIndex: &start})
	adm := c.Admin()
	const topic = "orders"
	ctx := ctxT(t, 60*time.Second)
	res, err := adm.CreateTopic(ctx, 6, 3, nil, topic)
	if err != nil || res.Err != nil {
		t.Fatalf("create topic: %v / %v", err, res.Err)
	}

	var brokers []controller.BrokerMetadata
	for i := 0; i < 3; i++ {
		r := racks[i]
		brokers = append(brokers, controller.BrokerMetadata{ID: c.BrokerID(i), Rack: &r})
	}
	want, err := controller.AssignReplicasToBrokers(brokers, 6, 3, start, -1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.ZK().GetReplicaAssignment(topic)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("assignment in /brokers/topics/%s = %v, want %v", topic, got, want)
	}
	for p := int32(0); p < 6; p++ {
		var st zkpaths.LeaderAndIsr
		c.WaitFor(30*time.Second, fmt.Sprintf("state znode of %s-%d", topic, p), func() bool {
			s, ok := c.PartitionState(topic, p)
			st = s
			return ok && s.Leader >= 0
		})
		if st.Leader != want[p][0] {
			t.Errorf("partition %d leader %d, want the preferred replica %d", p, st.Leader, want[p][0])
		}
		if len(st.ISR) != 3 {
			t.Errorf("partition %d isr %v, want all 3 replicas", p, st.ISR)
		}
	}

	produceAndCheck(t, c, topic, 10000)
}

// produceAndCheck produces n records with unique ids through an idempotent
// franz-go producer (its default) and consumes the topic from the start,
// reporting any loss, duplicate or reordering.
func produceAndCheck(t *testing.T, c *testcluster.Cluster, topic string, n int, producerOpts ...kgo.Opt) *testcluster.Checker {
	t.Helper()
	chk := testcluster.NewChecker()
	// A bounded delivery timeout keeps a stuck cluster from hanging the test:
	// unacknowledged records fail instead of being retried forever.
	prod := c.Client(append([]kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5 * time.Millisecond),
		kgo.RecordDeliveryTimeout(60 * time.Second)}, producerOpts...)...)
	ctx := ctxT(t, 90*time.Second)
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Value
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("rec-%06d", i)
		seq := int64(i)
		wg.Add(1)
		prod.Produce(ctx, &kgo.Record{Key: []byte(id), Value: []byte(id)}, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
				return
			}
			chk.Acked(id, seq, r.Partition, r.Offset)
		})
	}
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }() // ends when every callback ran
	select {
	case <-waited:
	case <-time.After(100 * time.Second):
		t.Fatalf("produce callbacks still pending after 100 s (%d failures so far)", failed.Load())
	}
	if f := failed.Load(); f > 0 {
		t.Fatalf("%d produce failures, first: %v", f, firstErr.Load())
	}

	cons := c.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	consumeN(ctx, t, cons, n, topic, func(r *kgo.Record) { chk.Consumed(string(r.Value), r.Partition, r.Offset) })
	rep := chk.Report()
	if !rep.OK() || rep.Acked != n || rep.Consumed != n {
		t.Fatalf("delivery check failed: %s", rep)
	}
	return chk
}

// consumeAll reads n records of topic from the start and checks that every
// partition's offsets are dense from 0.
func consumeAll(t *testing.T, c *testcluster.Cluster, topic string, n int) {
	t.Helper()
	ctx := ctxT(t, 60*time.Second)
	cons := c.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	next := map[int32]int64{}
	consumeN(ctx, t, cons, n, topic, func(r *kgo.Record) {
		if r.Offset != next[r.Partition] {
			t.Errorf("partition %d: offset %d, expected %d", r.Partition, r.Offset, next[r.Partition])
		}
		next[r.Partition] = r.Offset + 1
	})
}

// A second broker configured with the id of a live broker refuses to start
// (its registration is "checked ephemeral"), and the live broker keeps its
// registration; a broker with a different id joins.
func TestDuplicateBrokerIDRefused(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	info, _, err := c.ZK().GetBroker(c.BrokerID(0))
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]string{
		"broker.id":                    fmt.Sprint(c.BrokerID(0)),
		"listeners":                    "PLAINTEXT://127.0.0.1:0",
		"log.dirs":                     t.TempDir(),
		"zookeeper.connect":            c.ZKConnect(),
		"zookeeper.session.timeout.ms": "6000",
	}
	cfg, err := config.FromMap(props)
	if err != nil {
		t.Fatal(err)
	}
	dup, err := broker.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	err = dup.Startup(ctxT(t, 30*time.Second))
	dup.Shutdown()
	if err == nil || !strings.Contains(err.Error(), "register") {
		t.Fatalf("duplicate broker id started: %v", err)
	}
	after, ok, err := c.ZK().GetBroker(c.BrokerID(0))
	if err != nil || !ok || after.Epoch != info.Epoch {
		t.Fatalf("the live broker's registration changed: %+v %v %v", after, ok, err)
	}

	props["broker.id"] = "42"
	props["log.dirs"] = t.TempDir()
	cfg, err = config.FromMap(props)
	if err != nil {
		t.Fatal(err)
	}
	other, err := broker.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Startup(ctxT(t, 30*time.Second)); err != nil {
		t.Fatalf("broker 42: %v", err)
	}
	defer other.Shutdown()
	if _, ok, _ := c.ZK().GetBroker(42); !ok {
		t.Fatal("broker 42 not registered")
	}
	if other.ClusterID() != c.Broker(0).ClusterID() {
		t.Fatalf("cluster ids differ: %s vs %s", other.ClusterID(), c.Broker(0).ClusterID())
	}
}
