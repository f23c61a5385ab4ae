package broker_test

// Audit of the replication issue's controller-side demands on a real
// ZooKeeper with in-process brokers: each test names the demand it proves.

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/faulttest"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
)

// createAssigned creates topic with an explicit replica assignment (one
// slice per partition) and topic configs, through CreateTopics as
// kafka-topics.sh --replica-assignment does, and waits for every partition
// to have a leader and a full ISR.
func createAssigned(t *testing.T, c *testcluster.Cluster, topic string, assignment [][]int32, configs map[string]string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p, rs := range assignment {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = int32(p), rs
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	}
	for k, v := range configs {
		cf := kmsg.NewCreateTopicsRequestTopicConfig()
		cf.Name, cf.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, cf)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctxT(t, 30*time.Second), c.Client())
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	for p, rs := range assignment {
		c.WaitFor(20*time.Second, topic+" leader and full ISR", func() bool {
			s, ok := c.PartitionState(topic, int32(p))
			return ok && s.Leader >= 0 && len(s.ISR) == len(rs)
		})
	}
}

// otherTwo returns the indexes of the two brokers that are not the
// controller, so a test can stop them without a controller failover.
func otherTwo(c *testcluster.Cluster) (int, int) {
	ctrl, _ := c.Controller()
	ci := c.Index(ctrl)
	return (ci + 1) % 3, (ci + 2) % 3
}

// Issue part 5, controlled shutdown "with retries": the controller refuses
// the first ControlledShutdown; the broker waits
// controlled.shutdown.retry.backoff.ms and asks again, and only the second
// (successful) answer lets it stop, with its leadership already moved. When
// every attempt fails the broker makes exactly
// controlled.shutdown.max.retries attempts and then stops anyway (Kafka's
// "proceeding to do an unclean shutdown").
func TestAuditControlledShutdownRetries(t *testing.T) {
	const backoff = 300 * time.Millisecond
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Overrides: map[string]string{
		"controlled.shutdown.max.retries":      "3",
		"controlled.shutdown.retry.backoff.ms": "300",
	}})
	ctrl, _ := c.Controller()
	ci := c.Index(ctrl)
	victim, _ := otherTwo(c)
	id := c.BrokerID(victim)
	var parts [][]int32
	for i := 0; i < 3; i++ { // the victim is preferred leader of partition 0
		parts = append(parts, []int32{c.BrokerID((victim + i) % 3), c.BrokerID((victim + i + 1) % 3), c.BrokerID((victim + i + 2) % 3)})
	}
	createAssigned(t, c, "cs", parts, nil)
	if s, _ := c.PartitionState("cs", 0); s.Leader != id {
		t.Fatalf("cs-0 led by %d, want the victim %d", s.Leader, id)
	}

	var mu sync.Mutex
	var calls []time.Time
	failFirst := 1
	c.Intercept(ci, int16(kmsg.ControlledShutdown), func(_ context.Context, req *network.Request) (kmsg.Response, bool, error) {
		mu.Lock()
		calls = append(calls, time.Now())
		n := len(calls)
		mu.Unlock()
		if n > failFirst {
			return nil, false, nil
		}
		resp := req.Body.ResponseKind().(*kmsg.ControlledShutdownResponse)
		resp.ErrorCode = kerr.UnknownServerError.Code
		return resp, true, nil
	})
	c.StopBroker(victim)

	mu.Lock()
	got := slices.Clone(calls)
	mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("ControlledShutdown requests: %d, want 2 (one refused, one retried)", len(got))
	}
	if gap := got[1].Sub(got[0]); gap < backoff {
		t.Errorf("retry after %v, want at least controlled.shutdown.retry.backoff.ms=%v", gap, backoff)
	}
	// "First": the state znode of the partition the victim led was last
	// written before the victim's /brokers/ids child went away (the
	// parent's pzxid is the zxid of that deletion).
	_, ids, err := c.ZK().Exists(zkpaths.BrokerIDsPath)
	if err != nil {
		t.Fatal(err)
	}
	_, st, err := c.ZK().Exists(zkpaths.PartitionStatePath("cs", 0))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mzxid >= ids.Pzxid {
		t.Errorf("cs-0 state written at zxid %d, not before the victim deregistered at %d", st.Mzxid, ids.Pzxid)
	}
	for p := int32(0); p < 3; p++ {
		s, _ := c.PartitionState("cs", p)
		if s.Leader == id || s.Leader < 0 || slices.Contains(s.ISR, id) {
			t.Errorf("cs-%d after the controlled shutdown of %d: %s", p, id, s)
		}
	}

	// Every attempt refused: exactly max.retries attempts, then the stop.
	c.RestartBroker(victim)
	c.WaitFor(30*time.Second, "the victim back in every ISR", func() bool {
		for p := int32(0); p < 3; p++ {
			if s, ok := c.PartitionState("cs", p); !ok || !slices.Contains(s.ISR, id) {
				return false
			}
		}
		return true
	})
	mu.Lock()
	calls, failFirst = nil, 1<<30
	mu.Unlock()
	start := time.Now()
	c.StopBroker(victim)
	took := time.Since(start)
	mu.Lock()
	n := len(calls)
	mu.Unlock()
	if n != 3 {
		t.Errorf("ControlledShutdown attempts when all fail: %d, want controlled.shutdown.max.retries=3", n)
	}
	if took < 2*backoff {
		t.Errorf("three failed attempts took %v, want at least two backoffs (%v)", took, 2*backoff)
	}
	c.Intercept(ci, int16(kmsg.ControlledShutdown), nil)
	c.WaitFor(20*time.Second, "leadership off the stopped broker", func() bool {
		for p := int32(0); p < 3; p++ {
			if s, ok := c.PartitionState("cs", p); !ok || s.Leader == id || s.Leader < 0 {
				return false
			}
		}
		return true
	})
}

// Issue part 5, election rules: with the ISR's only member dead, a clean
// election leaves the partition offline (Leader: none) even when another
// replica comes back; unclean.leader.election.enable=true on the topic
// elects that out-of-sync replica (counted in UncleanLeaderElectionsPerSec,
// logged as possible data loss), and turning the override on later (an
// AlterConfigs) triggers the same election for a partition already offline.
func TestAuditUncleanLeaderElection(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	xi, yi := otherTwo(c)
	x, y := c.BrokerID(xi), c.BrokerID(yi)
	ctrl, _ := c.Controller()
	as := [][]int32{{x, y}}
	createAssigned(t, c, "clean", as, nil)
	createAssigned(t, c, "unclean", as, map[string]string{"unclean.leader.election.enable": "true"})
	createAssigned(t, c, "later", as, nil)
	topics := []string{"clean", "unclean", "later"}

	c.KillBroker(yi)
	c.WaitFor(20*time.Second, "ISR [x] everywhere", func() bool {
		for _, tp := range topics {
			if s, ok := c.PartitionState(tp, 0); !ok || !reflect.DeepEqual(s.ISR, []int32{x}) || s.Leader != x {
				return false
			}
		}
		return true
	})
	c.KillBroker(xi)
	c.WaitFor(20*time.Second, "every partition offline", func() bool {
		for _, tp := range topics {
			if s, ok := c.PartitionState(tp, 0); !ok || s.Leader != -1 {
				return false
			}
		}
		return true
	})
	c.RestartBroker(yi)
	c.WaitFor(20*time.Second, "unclean-0 led by the out-of-sync replica", func() bool {
		s, ok := c.PartitionState("unclean", 0)
		return ok && s.Leader == y && reflect.DeepEqual(s.ISR, []int32{y})
	})
	// The same OnlinePartition transition on broker startup handled every
	// offline partition, so the clean ones are decided already.
	for _, tp := range []string{"clean", "later"} {
		if s, _ := c.PartitionState(tp, 0); s.Leader != -1 {
			t.Errorf("%s-0 with unclean election disabled: %s, want Leader: none", tp, s)
		}
	}
	uncleanCount := func() int64 {
		m, ok := c.Broker(c.Index(ctrl)).Metrics().Get("kafka.controller.ControllerStats.UncleanLeaderElectionsPerSec").(gometrics.Meter)
		if !ok {
			t.Fatal("no UncleanLeaderElectionsPerSec meter on the controller")
		}
		return m.Count()
	}
	if n := uncleanCount(); n != 1 {
		t.Errorf("UncleanLeaderElectionsPerSec count %d, want 1", n)
	}

	res, err := c.Admin().AlterTopicConfigs(ctxT(t, 20*time.Second), []kadm.AlterConfig{{Name: "unclean.leader.election.enable", Value: kmsg.StringPtr("true")}}, "later")
	if err != nil || res[0].Err != nil {
		t.Fatalf("alter configs: %v %+v", err, res)
	}
	c.WaitFor(20*time.Second, "later-0 elected uncleanly after the override", func() bool {
		s, ok := c.PartitionState("later", 0)
		return ok && s.Leader == y
	})
	if n := uncleanCount(); n != 2 {
		t.Errorf("UncleanLeaderElectionsPerSec count %d, want 2", n)
	}
	if s, _ := c.PartitionState("clean", 0); s.Leader != -1 {
		t.Errorf("clean-0 after the other topic's override: %s, want Leader: none", s)
	}
	// The clean topic's ISR member returns: a clean election.
	c.RestartBroker(xi)
	c.WaitFor(20*time.Second, "clean-0 led by its ISR member", func() bool {
		s, ok := c.PartitionState("clean", 0)
		return ok && s.Leader == x
	})
}

// Issue part 3: min.insync.replicas set on a topic beats the broker's
// value in both directions. Brokers say 2; "strict" says 3, "lax" says 1,
// "dflt" inherits 2. Produce is acks=all straight to the leader.
func TestAuditMinInsyncReplicasTopicOverride(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Overrides: map[string]string{"min.insync.replicas": "2"}})
	ctrl, _ := c.Controller()
	ci := c.Index(ctrl)
	xi, yi := otherTwo(c)
	all := [][]int32{{ctrl, c.BrokerID(xi), c.BrokerID(yi)}} // the controller leads
	createAssigned(t, c, "strict", all, map[string]string{"min.insync.replicas": "3"})
	createAssigned(t, c, "lax", all, map[string]string{"min.insync.replicas": "1"})
	createAssigned(t, c, "dflt", all, nil)
	addr := c.Addr(ci)
	expect := func(topic string, want int16, what string) {
		t.Helper()
		var code int16
		var err error
		ok := testcluster.Poll(20*time.Second, func() bool {
			code, _, err = faulttest.ProduceDirect(addr, topic, 0, []byte(what), 2*time.Second)
			return err == nil && code == want
		})
		if !ok {
			t.Errorf("%s: acks=all produce to %s: %v / %v, want %v", what, topic, kerr.ErrorForCode(code), err, kerr.ErrorForCode(want))
		}
	}
	for _, tp := range []string{"strict", "lax", "dflt"} {
		expect(tp, 0, "full ISR")
	}
	shrunk := func(n int) func() bool {
		return func() bool {
			for _, tp := range []string{"strict", "lax", "dflt"} {
				if s, ok := c.PartitionState(tp, 0); !ok || len(s.ISR) != n {
					return false
				}
			}
			return true
		}
	}
	c.KillBroker(xi)
	c.WaitFor(20*time.Second, "ISR of 2", shrunk(2))
	expect("strict", kerr.NotEnoughReplicas.Code, "ISR 2 < topic 3")
	expect("dflt", 0, "ISR 2 = broker 2")
	expect("lax", 0, "ISR 2 > topic 1")
	c.KillBroker(yi)
	c.WaitFor(20*time.Second, "ISR of 1", shrunk(1))
	expect("dflt", kerr.NotEnoughReplicas.Code, "ISR 1 < broker 2")
	expect("lax", 0, "ISR 1 = topic 1")
}

// Issue part 5, reassignment through AlterPartitionReassignments and
// ListPartitionReassignments (API 45/46): while the new replica cannot catch
// up, /brokers/topics/<t> carries adding_replicas and removing_replicas and
// the list call reports them (the leader holds the new replica's fetches
// to keep the move in flight); once it catches up the assignment is the
// target, nothing is listed, the removed replica got StopReplica(delete)
// and its log directory is gone from its broker's disk, and every record
// is still there.
func TestAuditReassignmentAPIRemovesLogDir(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 4, Overrides: map[string]string{"log.segment.delete.delay.ms": "100"}})
	ids := []int32{c.BrokerID(0), c.BrokerID(1), c.BrokerID(2), c.BrokerID(3)}
	createAssigned(t, c, "move", [][]int32{{ids[0], ids[1], ids[2]}}, map[string]string{"file.delete.delay.ms": "100"})
	produceAndCheck(t, c, "move", 200)
	leaderIdx := c.Index(ids[0])
	release := make(chan struct{})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	var stalled atomic.Int32
	c.Intercept(leaderIdx, int16(kmsg.Fetch), func(ctx context.Context, req *network.Request) (kmsg.Response, bool, error) {
		if f, ok := req.Body.(*kmsg.FetchRequest); ok && f.ReplicaID == ids[3] {
			stalled.Add(1)
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return nil, false, nil
	})
	adm := c.Admin()
	ctx := ctxT(t, 60*time.Second)
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("move", 0, []int32{ids[1], ids[2], ids[3]})
	ares, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil || ares["move"][0].Err != nil {
		t.Fatalf("alter partition reassignments: %v %+v", err, ares)
	}
	ta, _, err := c.ZK().GetTopicAssignment("move")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ta.Adding[0], []int32{ids[3]}) || !reflect.DeepEqual(ta.Removing[0], []int32{ids[0]}) || len(ta.Partitions[0]) != 4 {
		t.Fatalf("topic znode during the move: partitions %v adding %v removing %v", ta.Partitions, ta.Adding, ta.Removing)
	}
	ts := kadm.TopicsSet{}
	ts.Add("move", 0)
	lres, err := adm.ListPartitionReassignments(ctx, ts)
	if err != nil {
		t.Fatal(err)
	}
	if l := lres["move"][0]; !reflect.DeepEqual(l.AddingReplicas, []int32{ids[3]}) || !reflect.DeepEqual(l.RemovingReplicas, []int32{ids[0]}) {
		t.Fatalf("list during the move: %+v", lres)
	}
	c.WaitFor(20*time.Second, "the new replica's fetch held at the leader", func() bool { return stalled.Load() > 0 })
	if ta, _, _ := c.ZK().GetTopicAssignment("move"); len(ta.Adding) == 0 {
		t.Fatalf("the move completed while the new replica could not fetch: %v", ta.Partitions)
	}
	releaseOnce.Do(func() { close(release) })
	c.Intercept(leaderIdx, int16(kmsg.Fetch), nil)
	c.WaitFor(30*time.Second, "the reassignment complete", func() bool {
		ta, _, err := c.ZK().GetTopicAssignment("move")
		return err == nil && reflect.DeepEqual(ta.Partitions[0], []int32{ids[1], ids[2], ids[3]}) && len(ta.Adding) == 0 && len(ta.Removing) == 0
	})
	lres, err = adm.ListPartitionReassignments(ctx, ts)
	if err != nil || len(lres["move"]) != 0 {
		t.Errorf("list after the move: %v %+v", err, lres)
	}
	s, _ := c.PartitionState("move", 0)
	if s.Leader == ids[0] || slices.Contains(s.ISR, ids[0]) {
		t.Errorf("state after the move still names the removed replica: %s", s)
	}
	dir := c.Broker(0).LogManager().Dirs()[0]
	// StopReplica(delete=true) renames the directory to
	// move-0.<uuid>-delete at once; the LogManager's sweep removes that
	// after file.delete.delay.ms (100 ms on this topic). The sweep's first
	// scheduled run is 30 s after start-up (Kafka's InitialTaskDelayMs), so
	// the test runs the sweep itself instead of waiting.
	lm := c.Broker(0).LogManager()
	gone := testcluster.Poll(20*time.Second, func() bool {
		if _, ok := lm.GetLog(common.TopicPartition{Topic: "move", Partition: 0}); ok {
			return false
		}
		if _, err := os.Stat(filepath.Join(dir, "move-0")); !os.IsNotExist(err) {
			return false
		}
		if err := lm.DeletePending(); err != nil {
			t.Logf("sweep: %v", err)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return false
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "move-0") {
				return false
			}
		}
		return true
	})
	if !gone {
		t.Errorf("move-0 still on the removed replica's disk")
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			t.Logf("left in %s: %s", dir, e.Name())
		}
		_, ok := c.Broker(0).LogManager().GetLog(common.TopicPartition{Topic: "move", Partition: 0})
		t.Logf("broker %d still has the log: %v", ids[0], ok)
	}
	if _, ok := c.Broker(3).LogManager().GetLog(common.TopicPartition{Topic: "move", Partition: 0}); !ok {
		t.Error("the added replica has no log for move-0")
	}
	// Every acknowledged record is still readable from the new replicas.
	cl := c.Client(kgo.ConsumeTopics("move"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	for got < 200 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of 200 records after the move", got)
		}
		got += fs.NumRecords()
	}
	if got != 200 {
		t.Errorf("read %d records after the move, want 200", got)
	}
}

// Issue part 5, auto.leader.rebalance.enable with
// leader.imbalance.per.broker.percentage: the imbalance is the share of a
// broker's preferred partitions it does not lead. At 25% (threshold 50%)
// nothing moves through several checks; deleting the balanced partitions
// makes it 100% and the controller elects the preferred leader again.
func TestAuditAutoRebalanceThreshold(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Overrides: map[string]string{
		"auto.leader.rebalance.enable":            "true",
		"leader.imbalance.check.interval.seconds": "1",
		"leader.imbalance.per.broker.percentage":  "50",
	}})
	xi, yi := otherTwo(c)
	x, y := c.BrokerID(xi), c.BrokerID(yi)
	createAssigned(t, c, "pair", [][]int32{{x, y}}, nil)
	createAssigned(t, c, "solo", [][]int32{{x}, {x}, {x}}, nil)
	c.StopBroker(xi)
	if s, _ := c.PartitionState("pair", 0); s.Leader != y {
		t.Fatalf("pair-0 after x's controlled shutdown: %s", s)
	}
	c.RestartBroker(xi)
	c.WaitFor(30*time.Second, "x back in pair-0's ISR and leading solo", func() bool {
		s, ok := c.PartitionState("pair", 0)
		if !ok || len(s.ISR) != 2 {
			return false
		}
		for p := int32(0); p < 3; p++ {
			if so, ok := c.PartitionState("solo", p); !ok || so.Leader != x {
				return false
			}
		}
		return true
	})
	// Four checks at 1 s: 1 of x's 4 preferred partitions is led elsewhere.
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		if s, _ := c.PartitionState("pair", 0); s.Leader != y {
			t.Fatalf("pair-0 moved to %d with a 25%% imbalance under a 50%% threshold", s.Leader)
		}
		time.Sleep(100 * time.Millisecond)
	}
	dres, err := c.Admin().DeleteTopics(ctxT(t, 20*time.Second), "solo")
	if err != nil || dres["solo"].Err != nil {
		t.Fatalf("delete solo: %v %+v", err, dres)
	}
	c.WaitFor(20*time.Second, "pair-0 back on its preferred replica", func() bool {
		s, ok := c.PartitionState("pair", 0)
		return ok && s.Leader == x
	})
}

// Issue part 5, election rules, broker level: with
// unclean.leader.election.enable=true in server.properties a topic without
// an override elects an out-of-sync replica, while a topic that sets it to
// false stays offline (the topic's value beats the broker's).
func TestAuditUncleanLeaderElectionBrokerDefault(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Overrides: map[string]string{"unclean.leader.election.enable": "true"}})
	xi, yi := otherTwo(c)
	x, y := c.BrokerID(xi), c.BrokerID(yi)
	as := [][]int32{{x, y}}
	createAssigned(t, c, "inherits", as, nil)
	createAssigned(t, c, "refuses", as, map[string]string{"unclean.leader.election.enable": "false"})
	c.KillBroker(yi)
	c.WaitFor(20*time.Second, "ISR [x]", func() bool {
		for _, tp := range []string{"inherits", "refuses"} {
			if s, ok := c.PartitionState(tp, 0); !ok || !reflect.DeepEqual(s.ISR, []int32{x}) {
				return false
			}
		}
		return true
	})
	c.KillBroker(xi)
	c.WaitFor(20*time.Second, "both offline", func() bool {
		for _, tp := range []string{"inherits", "refuses"} {
			if s, ok := c.PartitionState(tp, 0); !ok || s.Leader != -1 {
				return false
			}
		}
		return true
	})
	c.RestartBroker(yi)
	c.WaitFor(20*time.Second, "inherits-0 elected uncleanly", func() bool {
		s, ok := c.PartitionState("inherits", 0)
		return ok && s.Leader == y
	})
	if s, _ := c.PartitionState("refuses", 0); s.Leader != -1 {
		t.Errorf("refuses-0 with the topic override false: %s, want Leader: none", s)
	}
}

// Issue part 5, reassignment through /admin/reassign_partitions (what
// kafka-reassign-partitions.sh --zookeeper writes): the controller moves
// the partition, deletes the znode when done, and the removed replica's
// directory leaves its broker's disk.
func TestAuditReassignmentZnodeRemovesLogDir(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 4})
	ids := []int32{c.BrokerID(0), c.BrokerID(1), c.BrokerID(2), c.BrokerID(3)}
	createAssigned(t, c, "zmove", [][]int32{{ids[0], ids[1], ids[2]}}, map[string]string{"file.delete.delay.ms": "100"})
	produceAndCheck(t, c, "zmove", 100)
	target := []int32{ids[1], ids[2], ids[3]}
	if err := c.ZK().CreatePartitionReassignment([]zkpaths.PartitionReplicas{{Topic: "zmove", Partition: 0, Replicas: target}}); err != nil {
		t.Fatal(err)
	}
	c.WaitFor(30*time.Second, "the reassignment done and the znode deleted", func() bool {
		ok, _, err := c.ZK().Exists(zkpaths.ReassignPartitionsPath)
		ta, _, err2 := c.ZK().GetTopicAssignment("zmove")
		return err == nil && err2 == nil && !ok && reflect.DeepEqual(ta.Partitions[0], target) && len(ta.Adding) == 0 && len(ta.Removing) == 0
	})
	lm := c.Broker(0).LogManager()
	dir := lm.Dirs()[0]
	c.WaitFor(20*time.Second, "zmove-0 gone from the removed replica's disk", func() bool {
		if _, err := os.Stat(filepath.Join(dir, "zmove-0")); !os.IsNotExist(err) {
			return false
		}
		_ = lm.DeletePending() // the sweep, run now rather than after its 30 s initial delay
		ents, err := os.ReadDir(dir)
		if err != nil {
			return false
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "zmove-0") {
				return false
			}
		}
		return true
	})
	s, _ := c.PartitionState("zmove", 0)
	if s.Leader == ids[0] || slices.Contains(s.ISR, ids[0]) || s.Leader < 0 {
		t.Errorf("state after the move: %s", s)
	}
}
