package console_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/console"
	"github.com/klassik/klassik/broker/testcluster"
)

func ptr(s string) *string { return &s }

// TestAPI checks every /api/v1/ endpoint against a real 3-broker cluster:
// the ZooKeeper view, the LEO/HW picture gathered from every broker, the
// controller's history proxied from the controller, a group's state,
// generation, assignment and lag, a replica's segments and index, and the
// fan-out after a broker is killed.
func TestAPI(t *testing.T) {
	c := startConsoleCluster(t, testcluster.Options{Racks: []string{"a", "b", "c"}})
	ctlID, _ := c.Controller()
	serve := (c.Index(ctlID) + 1) % c.N() // a broker that is not the controller
	c.CreateTopic("t", 2, 3, map[string]*string{"index.interval.bytes": ptr("1"), "segment.bytes": ptr("16384")})
	c.WaitLeaders(30*time.Second, "t", 2)

	var cl console.Cluster
	if err := c.get(t, serve, "/api/v1/cluster", &cl); err != nil {
		t.Fatal(err)
	}
	if cl.Controller != ctlID || cl.ControllerEpoch != c.ControllerEpoch() || cl.ServedBy != c.BrokerID(serve) {
		t.Fatalf("cluster: controller %d epoch %d served by %d, want %d, %d, %d", cl.Controller, cl.ControllerEpoch, cl.ServedBy, ctlID, c.ControllerEpoch(), c.BrokerID(serve))
	}
	if len(cl.Brokers) != 3 {
		t.Fatalf("cluster: %d brokers, want 3: %+v", len(cl.Brokers), cl.Brokers)
	}
	for i, b := range cl.Brokers {
		if b.ID != c.BrokerID(i) || b.Rack != []string{"a", "b", "c"}[i] || len(b.Endpoints) != 1 || b.Endpoints[0].Port == 0 || b.Console != c.urls[i] {
			t.Fatalf("cluster: broker %d = %+v", i, b)
		}
	}
	var topic *console.Topic
	for i := range cl.Topics {
		if cl.Topics[i].Name == "t" {
			topic = &cl.Topics[i]
		}
	}
	if topic == nil || len(topic.Partitions) != 2 {
		t.Fatalf("cluster: topic t missing or wrong: %+v", cl.Topics)
	}
	for _, p := range topic.Partitions {
		zs, _ := c.PartitionState("t", p.Partition)
		if !p.HasState || p.Leader != zs.Leader || p.LeaderEpoch != zs.LeaderEpoch || len(p.Replicas) != 3 || !slices.Equal(p.ISR, zs.ISR) {
			t.Fatalf("cluster: partition %+v, ZooKeeper has %+v", p, zs)
		}
	}

	// Records, then a group that consumes and commits them.
	const n = 50
	pr := c.Client(kgo.DefaultProduceTopic("t"), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < n; i++ {
		if err := pr.ProduceSync(ctx, &kgo.Record{Partition: int32(i % 2), Value: []byte(fmt.Sprintf("record %d", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var reps console.Replicas
	c.WaitFor(15*time.Second, "every replica of t at LEO=HW, total LEO "+fmt.Sprint(n), func() bool {
		if err := c.get(t, serve, "/api/v1/replicas", &reps); err != nil {
			t.Log(err)
			return false
		}
		leo, count := int64(0), 0
		for _, r := range reps.Replicas {
			if r.Topic != "t" {
				continue
			}
			count++
			if r.HighWatermark != r.LogEndOffset {
				return false
			}
			if r.IsLeader {
				leo += r.LogEndOffset
			}
		}
		return count == 6 && leo == n
	})
	for _, s := range reps.Brokers {
		if !s.OK {
			t.Fatalf("replicas: broker %d did not answer: %s", s.ID, s.Error)
		}
	}

	// The controller section asked of a non-controller broker is the
	// controller's history.
	var ctl console.Controller
	if err := c.get(t, serve, "/api/v1/controller", &ctl); err != nil {
		t.Fatal(err)
	}
	if ctl.Source != ctlID || !ctl.Active || ctl.Controller != ctlID || len(ctl.Events) == 0 {
		t.Fatalf("controller: source %d active %v controller %d, %d events; want the history of %d", ctl.Source, ctl.Active, ctl.Controller, len(ctl.Events), ctlID)
	}
	online := false
	for _, sc := range ctl.StateChanges {
		if sc.Kind == "partition" && sc.Topic == "t" && sc.From == "NewPartition" && sc.To == "OnlinePartition" {
			online = true
		}
	}
	if !online {
		t.Fatalf("controller: no NewPartition->OnlinePartition change of t in %+v", ctl.StateChanges)
	}
	names := map[string]bool{}
	for _, e := range ctl.Events {
		names[e.Name] = true
	}
	if !names["TopicChange"] {
		t.Fatalf("controller: no TopicChange event in %v", names)
	}

	cons := c.Client(kgo.ConsumeTopics("t"), kgo.ConsumerGroup("g"), kgo.DisableAutoCommit())
	got := 0
	for got < n {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", got, n, err)
		}
		got += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	var gs console.Groups
	c.WaitFor(15*time.Second, "group g Stable with its assignment and zero lag", func() bool {
		if err := c.get(t, serve, "/api/v1/groups", &gs); err != nil {
			t.Log(err)
			return false
		}
		for _, g := range gs.Groups {
			if g.Group != "g" || g.State != "Stable" || g.Generation < 1 || len(g.Members) != 1 || len(g.Members[0].Assignment["t"]) != 2 || len(g.Offsets) != 2 {
				continue
			}
			for _, o := range g.Offsets {
				if o.Lag != 0 || o.HighWatermark <= 0 {
					return false
				}
			}
			return true
		}
		return false
	})
	cons.Close()
	c.WaitFor(15*time.Second, "group g Empty after its member left", func() bool {
		if err := c.get(t, serve, "/api/v1/groups", &gs); err != nil {
			return false
		}
		for _, g := range gs.Groups {
			if g.Group == "g" {
				return g.State == "Empty"
			}
		}
		return false
	})

	// Segments of partition 0 on every broker: the local one and, through
	// broker=, the others'; one index entry per batch (index.interval.bytes=1).
	for i := 0; i < c.N(); i++ {
		var seg console.Segments
		if err := c.get(t, serve, fmt.Sprintf("/api/v1/segments?topic=t&partition=0&broker=%d", c.BrokerID(i)), &seg); err != nil {
			t.Fatal(err)
		}
		if seg.Broker != c.BrokerID(i) || len(seg.Segments) == 0 || seg.Segments[0].BaseOffset != 0 || seg.LogEndOffset != n/2 {
			t.Fatalf("segments of broker %d: %+v", c.BrokerID(i), seg)
		}
		entries := 0
		for _, s := range seg.Segments {
			entries += s.IndexEntries
			if s.Size <= 0 && s.BaseOffset < seg.LogEndOffset {
				t.Fatalf("segments of broker %d: empty segment %+v", c.BrokerID(i), s)
			}
		}
		if entries < n/2-len(seg.Segments) {
			t.Fatalf("segments of broker %d: %d index entries for %d batches: %+v", c.BrokerID(i), entries, n/2, seg)
		}
	}
	var e map[string]string
	if err := c.get(t, serve, "/api/v1/segments?topic=nope&partition=0", &e); err == nil {
		t.Fatal("segments of an unknown partition answered 200")
	}

	// A killed broker leaves /brokers/ids; the fan-out stops asking it and
	// the ISR shrinks.
	dead := (serve + 1) % c.N()
	if c.BrokerID(dead) == ctlID {
		dead = (serve + 2) % c.N()
	}
	c.KillBroker(dead)
	c.WaitFor(20*time.Second, "broker gone from cluster and ISRs", func() bool {
		if err := c.get(t, serve, "/api/v1/cluster", &cl); err != nil {
			return false
		}
		for _, b := range cl.Brokers {
			if b.ID == c.BrokerID(dead) {
				return false
			}
		}
		for _, tp := range cl.Topics {
			for _, p := range tp.Partitions {
				if tp.Name == "t" && slices.Contains(p.ISR, c.BrokerID(dead)) {
					return false
				}
			}
		}
		return true
	})
	if err := c.get(t, serve, "/api/v1/replicas", &reps); err != nil {
		t.Fatal(err)
	}
	if len(reps.Brokers) != 2 {
		t.Fatalf("replicas after the kill asked %+v, want the 2 live brokers", reps.Brokers)
	}
}
