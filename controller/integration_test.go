package controller

// Integration tests against a real ZooKeeper server (Debian's package via
// zkpaths/zkserver): several controller instances in one process, each with
// its own session and a fake broker registered in /brokers/ids.

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// zkServer returns the package's shared ZooKeeper (stopped by TestMain);
// each test uses its own chroot. A missing installation fails the test.
func zkServer(t testing.TB) *zkserver.Server {
	t.Helper()
	s, err := zkserver.Shared()
	if err != nil {
		t.Fatalf("starting ZooKeeper (install it with the README's test command): %v", err)
	}
	return s
}

type node struct {
	id     int32
	zk     *zkclient.Client
	fb     *fakeBroker
	ctrl   *Controller
	closed bool
}

type cluster struct {
	t      testing.TB
	srv    *zkserver.Server
	chroot string
	admin  *zkclient.Client
	nodes  map[int32]*node
	// observer, when set, gives each started node's fake broker an
	// observe hook.
	observer func(id int32) func(kmsg.Request)
	// logger, when set, is the controllers' logger (default quiet).
	logger *slog.Logger
	// wrapZK, when set, wraps each started node's ZooKeeper client as its
	// controller sees it.
	wrapZK func(id int32, c zkClient) zkClient
	// hint, when set, gives each started node's controller its
	// Config.LeadersHint.
	hint func(id int32) func(topic string) map[int32]int32
}

func newCluster(t testing.TB, ids ...int32) *cluster {
	t.Helper()
	srv := zkServer(t)
	cl := &cluster{t: t, srv: srv, chroot: zkserver.Chroot(t), nodes: map[int32]*node{}}
	admin, err := zkclient.Connect(srv.ConnectString(cl.chroot), 6*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.EnsureTopLevelPaths(); err != nil {
		t.Fatal(err)
	}
	cl.admin = admin
	t.Cleanup(func() {
		for _, n := range cl.nodes {
			cl.stop(n.id)
		}
		admin.Close()
	})
	for _, id := range ids {
		cl.start(id)
	}
	return cl
}

func (cl *cluster) start(id int32) *node {
	cl.t.Helper()
	return cl.startVia(id, cl.srv.ConnectString(cl.chroot), 6*time.Second)
}

// startVia starts a node whose session goes to connect. Like a broker, it
// re-registers itself on every new session before the controller re-elects.
func (cl *cluster) startVia(id int32, connect string, sessionTimeout time.Duration) *node {
	t := cl.t
	t.Helper()
	c, err := zkclient.Connect(connect, sessionTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.EnsureTopLevelPaths(); err != nil {
		t.Fatal(err)
	}
	fb := startFakeBroker(t, id)
	if cl.observer != nil {
		fb.observe = cl.observer(id)
	}
	host, port := fb.addr()
	info := zkpaths.BrokerInfo{
		ID: id, Version: zkpaths.BrokerInfoVersion, JMXPort: -1,
		Endpoints: []zkpaths.EndPoint{{ListenerName: "PLAINTEXT", Host: host, Port: port, SecurityProtocol: "PLAINTEXT"}},
	}
	first, err := c.RegisterBroker(info)
	if err != nil {
		t.Fatal(err)
	}
	var epoch atomic.Int64
	epoch.Store(first)
	c.OnNewSession(func() {
		if e, err := c.RegisterBroker(info); err == nil {
			epoch.Store(e)
		}
	})
	cfg := DefaultConfig(id)
	cfg.AutoLeaderRebalanceEnable = false
	cfg.ControllerSocketTimeout = 5 * time.Second
	cfg.Logger = quietLogger()
	if cl.logger != nil {
		cfg.Logger = cl.logger
		cfg.StateChangeLogger = quietLogger()
	}
	if cl.hint != nil {
		cfg.LeadersHint = cl.hint(id)
	}
	var zc zkClient = c
	if cl.wrapZK != nil {
		zc = cl.wrapZK(id, c)
	}
	ctrl := newController(cfg, zc, epoch.Load)
	ctrl.Startup()
	n := &node{id: id, zk: c, fb: fb, ctrl: ctrl}
	cl.nodes[id] = n
	return n
}

// stop kills a node: its controller module shuts down and its session ends
// (ephemerals vanish at once).
func (cl *cluster) stop(id int32) {
	n := cl.nodes[id]
	if n == nil || n.closed {
		return
	}
	n.closed = true
	// The controller module stops first, then the session ends (its
	// ephemerals vanish at once), as when a broker process exits. Closing
	// the session under a running controller would also work, but races
	// inside zkclient (WatchX concurrent with Close) under -race.
	n.zk.StopWaiting() // as the broker's shutdown does
	n.ctrl.Shutdown()
	n.zk.Close()
	n.fb.srv.Shutdown()
}

func (cl *cluster) waitActive() *node {
	cl.t.Helper()
	return cl.waitActiveWhere("exactly one active controller", func(*node) bool { return true })
}

// waitActiveWhere waits until exactly one controller is active and cond
// holds for it, and returns it.
func (cl *cluster) waitActiveWhere(what string, cond func(*node) bool) *node {
	cl.t.Helper()
	var active *node
	waitFor(cl.t, what, func() bool {
		active = nil
		count := 0
		for _, n := range cl.nodes {
			if !n.closed && n.ctrl.IsActive() {
				active = n
				count++
			}
		}
		return count == 1 && cond(active)
	})
	return active
}

func (cl *cluster) controllerEpoch() (int32, int32) {
	cl.t.Helper()
	e, v, ok, err := cl.admin.GetControllerEpoch()
	if err != nil || !ok {
		cl.t.Fatalf("reading /controller_epoch: ok=%v err=%v", ok, err)
	}
	return e, v
}

func (cl *cluster) state(topic string, p int32) (zkpaths.LeaderAndIsr, bool) {
	s, ok, err := cl.admin.GetPartitionState(common.TopicPartition{Topic: topic, Partition: p})
	if err != nil {
		cl.t.Fatalf("reading partition state: %v", err)
	}
	return s, ok
}

// expandIsr does what a leader does on the classic ISR path: it adds
// replica to tp's ISR in ZooKeeper and notifies the controller.
func (cl *cluster) expandIsr(tp common.TopicPartition, replica int32) {
	cl.t.Helper()
	s, _ := cl.state(tp.Topic, tp.Partition)
	s.ISR = append(s.ISR, replica)
	if _, err := cl.admin.UpdateLeaderAndIsrConditional(tp, s); err != nil {
		cl.t.Fatal(err)
	}
	if _, err := cl.admin.CreateIsrChangeNotification([]common.TopicPartition{tp}); err != nil {
		cl.t.Fatal(err)
	}
}

func (cl *cluster) createTopic(topic string, assignment map[int32][]int32) {
	cl.t.Helper()
	err := cl.admin.CreateTopic(topic, zkpaths.TopicAssignment{Partitions: assignment, TopicID: zkpaths.RandomUUID()}, map[string]string{})
	if err != nil {
		cl.t.Fatal(err)
	}
}

// Election and fencing, checked on a real ZooKeeper: one controller,
// named by /controller; killing its session elects another with the epoch
// one higher; writes fenced with the old epoch version fail.
func TestIntegrationElectionFailoverAndFencing(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	first := cl.waitActive()
	id, ok, err := cl.admin.GetController()
	if err != nil || !ok || id != first.id {
		t.Fatalf("/controller = %d (ok %v, err %v), active = %d", id, ok, err, first.id)
	}
	epoch1, version1 := cl.controllerEpoch()
	if first.ctrl.Epoch() != epoch1 || epoch1 < 1 {
		t.Fatalf("controller epoch %d, /controller_epoch %d", first.ctrl.Epoch(), epoch1)
	}
	for _, n := range cl.nodes {
		waitFor(t, "every node learns the controller id", func() bool { return n.ctrl.ActiveControllerID() == first.id })
	}

	cl.stop(first.id)
	second := cl.waitActive()
	if second.id == first.id {
		t.Fatal("the stopped controller is still active")
	}
	epoch2, _ := cl.controllerEpoch()
	if epoch2 != epoch1+1 || second.ctrl.Epoch() != epoch2 {
		t.Fatalf("epoch after failover %d (controller says %d), want %d", epoch2, second.ctrl.Epoch(), epoch1+1)
	}
	if id, _, _ := cl.admin.GetController(); id != second.id {
		t.Fatalf("/controller = %d, want %d", id, second.id)
	}

	// A zombie still holding the old epochZkVersion cannot write.
	var zombie zkClient = cl.admin
	cl.createTopic("fenced", map[int32][]int32{0: {second.id}})
	waitFor(t, "state znode of fenced-0", func() bool { _, ok := cl.state("fenced", 0); return ok })
	s, _ := cl.state("fenced", 0)
	fencedTP := common.TopicPartition{Topic: "fenced", Partition: 0}
	zombieState := zkpaths.LeaderAndIsr{Leader: 99, ISR: []int32{99}, ControllerEpoch: epoch1, ZkVersion: s.ZkVersion}
	_, err = zombie.UpdatePartitionStates(version1, map[common.TopicPartition]zkpaths.LeaderAndIsr{fencedTP: zombieState})
	if !errors.Is(err, ErrControllerMoved) {
		t.Fatalf("zombie write: err = %v, want ErrControllerMoved", err)
	}
	after, _ := cl.state("fenced", 0)
	if after.Leader != second.id || after.ZkVersion != s.ZkVersion {
		t.Fatalf("zombie write changed the state: %s", after)
	}

	// An operator forces a re-election the usual way: delete /controller.
	if err := cl.admin.Delete(zkpaths.ControllerPath, -1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a new election after deleting /controller", func() bool {
		e, _ := cl.controllerEpoch()
		return e == epoch2+1
	})
	// The epoch in ZooKeeper moves first; the previous controller may
	// still count itself active until it has handled the deletion, and
	// the winner until it has taken the epoch over. Wait for the state
	// that must follow: one active controller, and it holds the new epoch.
	third := cl.waitActiveWhere("exactly one active controller, of the new epoch", func(n *node) bool {
		return n.ctrl.Epoch() == epoch2+1
	})
	if id, _, _ := cl.admin.GetController(); id != third.id {
		t.Fatalf("/controller = %d, active = %d", id, third.id)
	}
}

// A controller whose fenced write fails resigns instead of retrying: a
// failed epoch check means another controller was elected.
func TestIntegrationFencedWriteResigns(t *testing.T) {
	cl := newCluster(t, 1)
	n := cl.waitActive()
	// Another "controller" bumps the epoch behind our back.
	e, v := cl.controllerEpoch()
	if _, err := cl.admin.Set(zkpaths.ControllerEpochPath, zkpaths.EncodeControllerEpoch(e+1), v); err != nil {
		t.Fatal(err)
	}
	cl.createTopic("t", map[int32][]int32{0: {1}})
	waitFor(t, "the controller resigns", func() bool { return !n.ctrl.IsActive() })
	if _, ok := cl.state("t", 0); ok {
		t.Fatal("a fenced controller wrote a state znode")
	}
}

// Creating /brokers/topics/t as kafka-topics does yields state
// znodes with leader = first live replica, isr = live replicas, leader
// epoch 0, and LeaderAndIsr (isNew) to the replicas with our epoch.
func TestIntegrationTopicCreation(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	active := cl.waitActive()
	epoch := active.ctrl.Epoch()
	assignment, err := AssignReplicasToBrokers([]BrokerMetadata{{ID: 1}, {ID: 2}, {ID: 3}}, 3, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	cl.createTopic("orders", assignment)
	for p, replicas := range assignment {
		waitFor(t, fmt.Sprintf("state of orders-%d", p), func() bool { _, ok := cl.state("orders", p); return ok })
		s, _ := cl.state("orders", p)
		if s.Leader != replicas[0] || !reflect.DeepEqual(s.ISR, replicas) || s.LeaderEpoch != 0 || s.ControllerEpoch != epoch || s.ZkVersion != 0 {
			t.Fatalf("orders-%d state %s, replicas %v", p, s, replicas)
		}
		for _, r := range replicas {
			fb := cl.nodes[r].fb
			tp := common.TopicPartition{Topic: "orders", Partition: p}
			waitFor(t, fmt.Sprintf("LeaderAndIsr for %s at broker %d", tp, r), func() bool { st, _ := fb.leaderAndIsrFor(tp); return len(st) > 0 })
			states, epochs := fb.leaderAndIsrFor(tp)
			if !states[0].IsNew || states[0].Leader != replicas[0] || epochs[0] != epoch || !reflect.DeepEqual(states[0].Replicas, replicas) {
				t.Fatalf("LeaderAndIsr at broker %d: %+v epoch %d", r, states[0], epochs[0])
			}
		}
	}
	// Every broker hears UpdateMetadata listing all three live brokers.
	for _, n := range cl.nodes {
		waitFor(t, fmt.Sprintf("UpdateMetadata at broker %d", n.id), func() bool {
			for _, r := range n.fb.requests() {
				if um, ok := r.(*kmsg.UpdateMetadataRequest); ok && len(um.LiveBrokers) == 3 && len(um.TopicStates) > 0 {
					return true
				}
			}
			return false
		})
	}
	// Partition addition through the topic znode.
	more, err := AssignReplicasForNewPartitions([]BrokerMetadata{{ID: 1}, {ID: 2}, {ID: 3}}, assignment, 4)
	if err != nil {
		t.Fatal(err)
	}
	all := map[int32][]int32{}
	for p, r := range assignment {
		all[p] = r
	}
	for p, r := range more {
		all[p] = r
	}
	ta, _, err := cl.admin.GetTopicAssignment("orders")
	if err != nil {
		t.Fatal(err)
	}
	ta.Partitions = all
	if _, err := cl.admin.UpdateTopicAssignment("orders", ta, -1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "state of the added partition orders-3", func() bool { _, ok := cl.state("orders", 3); return ok })
	if s, _ := cl.state("orders", 3); s.Leader != more[3][0] {
		t.Fatalf("orders-3 state %s, replicas %v", s, more[3])
	}
}

// Broker loss moves leadership to a live ISR member; with RF=1 the
// partition is left with leader -1 and its ISR unchanged.
func TestIntegrationBrokerFailure(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	active := cl.waitActive()
	var victim int32
	for _, id := range []int32{1, 2, 3} {
		if id != active.id {
			victim = id
			break
		}
	}
	var other int32
	for _, id := range []int32{1, 2, 3} {
		if id != active.id && id != victim {
			other = id
		}
	}
	cl.createTopic("t", map[int32][]int32{0: {victim}, 1: {victim, other}})
	waitFor(t, "t-1 online", func() bool { s, ok := cl.state("t", 1); return ok && s.Leader == victim })
	waitFor(t, "t-0 online", func() bool { s, ok := cl.state("t", 0); return ok && s.Leader == victim })

	cl.stop(victim)
	waitFor(t, "t-0 offline with leader -1", func() bool { s, _ := cl.state("t", 0); return s.Leader == NoLeader })
	s0, _ := cl.state("t", 0)
	if !reflect.DeepEqual(s0.ISR, []int32{victim}) || s0.LeaderEpoch != 1 {
		t.Fatalf("t-0 after failure: %s", s0)
	}
	waitFor(t, "t-1 moves to the other replica", func() bool { s, _ := cl.state("t", 1); return s.Leader == other })
	waitFor(t, "t-1 ISR shrinks", func() bool { s, _ := cl.state("t", 1); return reflect.DeepEqual(s.ISR, []int32{other}) })
	fb := cl.nodes[other].fb
	waitFor(t, "the surviving replica learns it leads t-1", func() bool {
		states, _ := fb.leaderAndIsrFor(common.TopicPartition{Topic: "t", Partition: 1})
		return len(states) > 0 && states[len(states)-1].Leader == other
	})

	// The broker comes back: t-0 gets its leader again.
	delete(cl.nodes, victim)
	cl.start(victim)
	waitFor(t, "t-0 back online", func() bool { s, _ := cl.state("t", 0); return s.Leader == victim })
}

// Controller failover when the old controller's broker dies with it
// (RF=3 over three brokers): every partition the dead broker led gets a
// live leader from its ISR, the ISR without the dead broker and a leader
// epoch exactly one higher, in one write (elected before the ISR shrinks,
// not after); the partitions it only followed in lose it from the ISR, also
// one epoch up. Each live broker gets one LeaderAndIsr from the new
// controller naming each of its partitions once, with the state in
// ZooKeeper, and one UpdateMetadata carrying the partitions.
func TestIntegrationFailoverElectsOnce(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	old := cl.waitActive()
	const topic, partitions = "fo", 6
	before := cl.createRotatedTopic(topic, partitions)

	dead := old.id
	cl.stop(dead)
	next := cl.waitActive()
	waitFor(t, "the new controller's failover to complete", func() bool { return next.ctrl.lastFailover.Load() != nil })
	epoch := next.ctrl.Epoch()

	checkFailoverOutcome(t, cl, topic, partitions, before, dead, epoch, 2)
}

// createRotatedTopic creates topic with partitions of RF=3 over brokers
// 1-3, partition p's replicas starting at broker p%3+1, waits until each
// is led by its first replica with a full ISR and returns their states.
func (cl *cluster) createRotatedTopic(topic string, partitions int32) map[int32]zkpaths.LeaderAndIsr {
	cl.t.Helper()
	assignment := map[int32][]int32{}
	for p := int32(0); p < partitions; p++ {
		assignment[p] = rotatedReplicas(p)
	}
	cl.createTopic(topic, assignment)
	states := map[int32]zkpaths.LeaderAndIsr{}
	for p := int32(0); p < partitions; p++ {
		waitFor(cl.t, fmt.Sprintf("%s-%d led by its first replica with a full ISR", topic, p), func() bool {
			s, ok := cl.state(topic, p)
			return ok && s.Leader == assignment[p][0] && len(s.ISR) == 3
		})
		states[p], _ = cl.state(topic, p)
	}
	return states
}

// rotatedReplicas is partition p's replicas in createRotatedTopic.
func rotatedReplicas(p int32) []int32 { return []int32{p%3 + 1, (p+1)%3 + 1, (p+2)%3 + 1} }

// checkFailoverOutcome checks topic's partitions after the controller on
// broker dead died and the controller of epoch epoch took over: each
// partition dead led has a live leader from its old ISR (before), the
// others keep theirs, every ISR lost dead with one epoch bump
// (checkDeadLeftOnce), and each live broker got each partition in exactly
// one LeaderAndIsr, in at most maxBatches requests.
func checkFailoverOutcome(t *testing.T, cl *cluster, topic string, partitions int32, before map[int32]zkpaths.LeaderAndIsr, dead, epoch int32, maxBatches int) {
	t.Helper()
	without := func(isr []int32) []int32 { return filter(isr, func(r int32) bool { return r != dead }) }
	after := map[int32]zkpaths.LeaderAndIsr{}
	for p := int32(0); p < partitions; p++ {
		b := before[p]
		a, _ := cl.state(topic, p)
		after[p] = a
		if b.Leader == dead {
			if a.Leader == dead || a.Leader == NoLeader || !slices.Contains(b.ISR, a.Leader) {
				t.Errorf("%s-%d: leader %d after failover, want a live member of the old ISR %v", topic, p, a.Leader, b.ISR)
			}
		} else if a.Leader != b.Leader {
			t.Errorf("%s-%d: leader %d after failover, want %d unchanged", topic, p, a.Leader, b.Leader)
		}
		checkDeadLeftOnce(t, topic, p, b, a, without(b.ISR), epoch)
	}

	// A topic created afterwards is a marker: each broker's requests are
	// sent in order, so once a broker has its LeaderAndIsr, everything
	// the failover sent it has arrived.
	var live []int32
	for id := int32(1); id <= 3; id++ {
		if id != dead {
			live = append(live, id)
		}
	}
	cl.createTopic("marker", map[int32][]int32{0: live})
	for _, id := range live {
		fb := cl.nodes[id].fb
		waitFor(t, fmt.Sprintf("broker %d gets the marker topic's LeaderAndIsr", id), func() bool {
			states, _ := fb.leaderAndIsrFor(common.TopicPartition{Topic: "marker", Partition: 0})
			return len(states) > 0
		})
		checkEachPartitionOnce(t, id, fb.requests(), epoch, topic, partitions, after, maxBatches, "from the new controller")
	}
}

// checkDeadLeftOnce checks a partition's state a after a broker's death,
// against b before it: the ISR is isr (b's without the dead broker), the
// leader epoch went up by exactly one, and controller epoch epoch wrote it.
func checkDeadLeftOnce(t *testing.T, topic string, p int32, b, a zkpaths.LeaderAndIsr, isr []int32, epoch int32) {
	t.Helper()
	if !reflect.DeepEqual(a.ISR, isr) {
		t.Errorf("%s-%d: isr %v after the broker's death, want %v", topic, p, a.ISR, isr)
	}
	if a.LeaderEpoch != b.LeaderEpoch+1 {
		t.Errorf("%s-%d: leader epoch %d -> %d, want one bump", topic, p, b.LeaderEpoch, a.LeaderEpoch)
	}
	if a.ControllerEpoch != epoch {
		t.Errorf("%s-%d: written by controller epoch %d, want %d", topic, p, a.ControllerEpoch, epoch)
	}
}

// checkEachPartitionOnce checks what broker id got in reqs (of controller
// epoch epoch; -1: any) for topic's partitions: each partition named in
// exactly one LeaderAndIsr, with the state ZooKeeper has (after), in one
// to maxBatches LeaderAndIsr and UpdateMetadata requests (the elections,
// then the ISR shrinks: 2). when says which requests, for the messages.
func checkEachPartitionOnce(t *testing.T, id int32, reqs []kmsg.Request, epoch int32, topic string, partitions int32, after map[int32]zkpaths.LeaderAndIsr, maxBatches int, when string) {
	t.Helper()
	var lais, ums int
	seen := map[int32]int{}
	for _, r := range reqs {
		switch r := r.(type) {
		case *kmsg.LeaderAndISRRequest:
			if epoch >= 0 && r.ControllerEpoch != epoch {
				continue
			}
			mentions := false
			for _, ts := range r.TopicStates {
				if ts.Topic != topic {
					continue
				}
				mentions = true
				for _, ps := range ts.PartitionStates {
					seen[ps.Partition]++
					a := after[ps.Partition]
					if ps.Leader != a.Leader || ps.LeaderEpoch != a.LeaderEpoch || !reflect.DeepEqual(ps.ISR, a.ISR) || ps.ZKVersion != a.ZkVersion {
						t.Errorf("broker %d: LeaderAndIsr for %s-%d leader=%d epoch=%d isr=%v version=%d, ZooKeeper has %s",
							id, topic, ps.Partition, ps.Leader, ps.LeaderEpoch, ps.ISR, ps.ZKVersion, a)
					}
				}
			}
			if mentions {
				lais++
			}
		case *kmsg.UpdateMetadataRequest:
			if epoch >= 0 && r.ControllerEpoch != epoch {
				continue
			}
			for _, ts := range r.TopicStates {
				if ts.Topic == topic {
					ums++
				}
			}
		}
	}
	if lais < 1 || lais > maxBatches || ums < 1 || ums > maxBatches {
		t.Errorf("broker %d: %d LeaderAndIsr and %d UpdateMetadata requests with %s's partitions %s, want 1 to %d of each", id, lais, ums, topic, when, maxBatches)
	}
	for p := int32(0); p < partitions; p++ {
		if seen[p] != 1 {
			t.Errorf("broker %d: %s-%d in %d LeaderAndIsr requests %s, want 1", id, topic, p, seen[p], when)
		}
	}
}

// stateCallLog records, in order, the state znode reads and conditional
// writes the controllers whose ZooKeeper clients it wraps make.
type stateCallLog struct {
	mu    sync.Mutex
	calls []stateCall
}

type stateCall struct {
	write bool
	tps   []common.TopicPartition // sorted
}

// wrap is a cluster.wrapZK that logs every node's calls here.
func (l *stateCallLog) wrap(_ int32, c zkClient) zkClient { return loggingZK{c, l} }

func (l *stateCallLog) add(write bool, tps []common.TopicPartition) {
	tps = slices.Clone(tps)
	sortTPs(tps)
	l.mu.Lock()
	l.calls = append(l.calls, stateCall{write, tps})
	l.mu.Unlock()
}

func (l *stateCallLog) snapshot() []stateCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// stateReads counts, per partition, the state znode reads among calls.
func stateReads(calls []stateCall) map[common.TopicPartition]int {
	reads := map[common.TopicPartition]int{}
	for _, c := range calls {
		if !c.write {
			for _, tp := range c.tps {
				reads[tp]++
			}
		}
	}
	return reads
}

type loggingZK struct {
	zkClient
	l *stateCallLog
}

func (z loggingZK) GetPartitionStates(tps []common.TopicPartition) (map[common.TopicPartition]zkpaths.LeaderAndIsr, error) {
	z.l.add(false, tps)
	return z.zkClient.GetPartitionStates(tps)
}

func (z loggingZK) UpdatePartitionStates(epochZkVersion int32, states map[common.TopicPartition]zkpaths.LeaderAndIsr) (map[common.TopicPartition]zkclient.PartitionStateResult, error) {
	tps := make([]common.TopicPartition, 0, len(states))
	for tp := range states {
		tps = append(tps, tp)
	}
	z.l.add(true, tps)
	return z.zkClient.UpdatePartitionStates(epochZkVersion, states)
}

// A broker that is not the controller dies (RF=3 over three brokers):
// every partition it led gets the first live replica of its ISR as
// leader, the ISR without the dead broker and a leader epoch exactly one
// higher, in one write; the partitions it only followed in lose it from
// the ISR, also one epoch up. The controller reads none of those state
// znodes (it wrote or holds each one's current state), and each live
// broker gets one LeaderAndIsr naming each of its partitions once, with
// the state in ZooKeeper, and one UpdateMetadata carrying them. A
// partition whose only replica was the dead broker is left with leader -1
// and its ISR, one epoch up (Kafka's rule: the last ISR member stays).
func TestIntegrationBrokerFailureElectsOnce(t *testing.T) {
	calls := &stateCallLog{}
	cl := newCluster(t)
	cl.wrapZK = calls.wrap
	for _, id := range []int32{1, 2, 3} {
		cl.start(id)
	}
	active := cl.waitActive()
	var dead int32
	var live []int32
	for _, id := range []int32{1, 2, 3} {
		if id != active.id && dead == 0 {
			dead = id
		} else {
			live = append(live, id)
		}
	}
	const topic, partitions = "bf", 6
	before := cl.createRotatedTopic(topic, partitions)
	cl.createTopic("solo", map[int32][]int32{0: {dead}})
	solo := common.TopicPartition{Topic: "solo", Partition: 0}
	waitFor(t, "solo-0 led by its only replica", func() bool { s, ok := cl.state("solo", 0); return ok && s.Leader == dead })
	soloBefore, _ := cl.state("solo", 0)
	// Every live broker has had the creations' requests (the last of
	// them, an UpdateMetadata naming solo) before the failure.
	seenBefore := map[int32]int{}
	for _, id := range live {
		fb := cl.nodes[id].fb
		waitFor(t, fmt.Sprintf("broker %d gets the creations' UpdateMetadata", id), func() bool {
			for _, r := range fb.requests() {
				if um, ok := r.(*kmsg.UpdateMetadataRequest); ok && slices.ContainsFunc(um.TopicStates, func(ts kmsg.UpdateMetadataRequestTopicState) bool { return ts.Topic == "solo" }) {
					return true
				}
			}
			return false
		})
		seenBefore[id] = len(fb.requests())
	}
	callsBefore := len(calls.snapshot())

	cl.stop(dead)
	without := func(isr []int32) []int32 { return filter(isr, func(r int32) bool { return r != dead }) }
	for p := int32(0); p < partitions; p++ {
		waitFor(t, fmt.Sprintf("%s-%d's ISR without broker %d", topic, p, dead), func() bool {
			s, _ := cl.state(topic, p)
			return !slices.Contains(s.ISR, dead)
		})
	}
	waitFor(t, "solo-0 without a leader", func() bool { s, _ := cl.state("solo", 0); return s.Leader == NoLeader })
	// A topic created afterwards is a marker: each broker's requests are
	// sent in order, so once a broker has its LeaderAndIsr, everything
	// the broker failure sent it has arrived.
	cl.createTopic("marker", map[int32][]int32{0: live})
	for _, id := range live {
		fb := cl.nodes[id].fb
		waitFor(t, fmt.Sprintf("broker %d gets the marker topic's LeaderAndIsr", id), func() bool {
			states, _ := fb.leaderAndIsrFor(common.TopicPartition{Topic: "marker", Partition: 0})
			return len(states) > 0
		})
	}
	reads := stateReads(calls.snapshot()[callsBefore:])

	epoch := active.ctrl.Epoch()
	after := map[int32]zkpaths.LeaderAndIsr{}
	for p := int32(0); p < partitions; p++ {
		b := before[p]
		a, _ := cl.state(topic, p)
		after[p] = a
		want := b.Leader
		if b.Leader == dead {
			// The offline election: the first assigned replica that is
			// live and in the ISR.
			want = without(rotatedReplicas(p))[0]
		}
		if a.Leader != want {
			t.Errorf("%s-%d: leader %d after the failure of %d, want %d (old state %s)", topic, p, a.Leader, dead, want, b)
		}
		checkDeadLeftOnce(t, topic, p, b, a, without(b.ISR), epoch)
		tp := common.TopicPartition{Topic: topic, Partition: p}
		if n := reads[tp]; n != 0 {
			t.Errorf("%s: state znode read %d times while the controller handled the failure, want 0", tp, n)
		}
	}
	if s, _ := cl.state("solo", 0); s.Leader != NoLeader || !reflect.DeepEqual(s.ISR, []int32{dead}) || s.LeaderEpoch != soloBefore.LeaderEpoch+1 {
		t.Errorf("solo-0 after the failure: %s, want leader -1, isr [%d], leader epoch %d", s, dead, soloBefore.LeaderEpoch+1)
	}
	// solo-0 has no eligible leader in the cache; the election reads it
	// once before giving up, as it would any partition it cannot elect.
	if n := reads[solo]; n > 1 {
		t.Errorf("%s: state znode read %d times, want at most 1", solo, n)
	}

	for _, id := range live {
		checkEachPartitionOnce(t, id, cl.nodes[id].fb.requests()[seenBefore[id]:], -1, topic, partitions, after, 2, fmt.Sprintf("after the failure of %d", dead))
	}
}

// /admin/delete_topics/<t> leads to StopReplica(delete=true) to the
// replicas and the removal of the topic's znodes.
func TestIntegrationTopicDeletion(t *testing.T) {
	cl := newCluster(t, 1, 2)
	cl.waitActive()
	cl.createTopic("doomed", map[int32][]int32{0: {1, 2}, 1: {2, 1}})
	waitFor(t, "doomed online", func() bool { _, ok := cl.state("doomed", 1); return ok })
	if err := cl.admin.CreateDeleteTopicPath("doomed"); err != nil {
		t.Fatal(err)
	}
	exists := func(p string) bool {
		ok, _, err := cl.admin.Exists(p)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	waitFor(t, "topic znodes removed", func() bool {
		return !exists(zkpaths.TopicPath("doomed")) && !exists(zkpaths.DeleteTopicPath("doomed")) && !exists(zkpaths.ConfigPath(zkpaths.ConfigTypeTopic, "doomed"))
	})
	for _, id := range []int32{1, 2} {
		var sawDelete bool
		for _, r := range cl.nodes[id].fb.requests() {
			if sr, ok := r.(*kmsg.StopReplicaRequest); ok {
				for _, tt := range sr.Topics {
					for _, p := range tt.PartitionStates {
						if tt.Topic == "doomed" && p.Delete && p.LeaderEpoch == EpochDuringDelete {
							sawDelete = true
						}
					}
				}
			}
		}
		if !sawDelete {
			t.Fatalf("broker %d got no StopReplica(delete=true) for doomed", id)
		}
	}
	// A re-created topic of the same name is new again.
	cl.createTopic("doomed", map[int32][]int32{0: {1}})
	waitFor(t, "re-created topic online", func() bool { s, ok := cl.state("doomed", 0); return ok && s.Leader == 1 })
}

// delete.topic.enable=false removes the marker and keeps the topic.
func TestIntegrationDeletionDisabled(t *testing.T) {
	cl := newCluster(t)
	c, err := zkclient.Connect(cl.srv.ConnectString(cl.chroot), 6*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := DefaultConfig(1)
	cfg.DeleteTopicEnable = false
	cfg.AutoLeaderRebalanceEnable = false
	ctrl := New(cfg, c, func() int64 { return 0 })
	ctrl.Startup()
	defer ctrl.Shutdown()
	waitFor(t, "active", ctrl.IsActive)
	cl.createTopic("kept", map[int32][]int32{0: {1}})
	if err := cl.admin.CreateDeleteTopicPath("kept"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "marker removed", func() bool {
		ok, _, _ := cl.admin.Exists(zkpaths.DeleteTopicPath("kept"))
		return !ok
	})
	if ok, _, _ := cl.admin.Exists(zkpaths.TopicPath("kept")); !ok {
		t.Fatal("topic deleted although delete.topic.enable=false")
	}
}

// ControlledShutdown moves leadership to another ISR member.
func TestIntegrationControlledShutdown(t *testing.T) {
	cl := newCluster(t, 1, 2)
	active := cl.waitActive()
	other := int32(1)
	if active.id == 1 {
		other = 2
	}
	cl.createTopic("cs", map[int32][]int32{0: {other, active.id}, 1: {other}})
	waitFor(t, "cs online", func() bool { s, ok := cl.state("cs", 0); return ok && s.Leader == other })
	waitFor(t, "cs-1 online", func() bool { _, ok := cl.state("cs", 1); return ok })
	remaining, err := active.ctrl.ControlledShutdown(t.Context(), other, -1)
	if err != nil || len(remaining) != 0 {
		t.Fatalf("remaining %v err %v", remaining, err)
	}
	s, _ := cl.state("cs", 0)
	if s.Leader != active.id || !reflect.DeepEqual(s.ISR, []int32{active.id}) {
		t.Fatalf("cs-0 after controlled shutdown: %s", s)
	}
	if s1, _ := cl.state("cs", 1); s1.Leader != other {
		t.Fatalf("RF=1 partition moved: %s", s1)
	}
	// A non-controller answers STALE_CONTROLLER_EPOCH.
	if _, err := cl.nodes[other].ctrl.ControlledShutdown(t.Context(), other, -1); err == nil {
		t.Fatal("non-controller accepted ControlledShutdown")
	}
}

func TestMain(m *testing.M) { os.Exit(zkserver.RunShared(m)) }

// On session expiry the controller resigns; with the new
// session it re-registers and re-elects, and is not controller while another
// broker holds /controller.
func TestIntegrationSessionExpiry(t *testing.T) {
	cl := newCluster(t)
	proxy, err := zkserver.NewProxy(cl.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	n1 := cl.startVia(1, proxy.ConnectString(cl.chroot), 2*time.Second)
	waitFor(t, "broker 1 active", n1.ctrl.IsActive)
	epoch1, _ := cl.controllerEpoch()
	n2 := cl.start(2)

	proxy.Pause()
	waitFor(t, "broker 2 takes over after broker 1's session expired", n2.ctrl.IsActive)
	epoch2, _ := cl.controllerEpoch()
	if epoch2 != epoch1+1 {
		t.Fatalf("epoch %d after failover, want %d", epoch2, epoch1+1)
	}
	proxy.Resume()
	waitFor(t, "broker 1 resigns and follows broker 2", func() bool {
		return !n1.ctrl.IsActive() && n1.ctrl.ActiveControllerID() == 2
	})
	// Broker 1 is registered again with its new session.
	waitFor(t, "broker 1 re-registered", func() bool {
		_, ok, err := cl.admin.GetBroker(1)
		return err == nil && ok
	})
	cl.stop(2)
	waitFor(t, "broker 1 re-elected through its new session", n1.ctrl.IsActive)
	if e, _ := cl.controllerEpoch(); e != epoch2+1 || n1.ctrl.Epoch() != e {
		t.Fatalf("epoch %d (controller %d), want %d", e, n1.ctrl.Epoch(), epoch2+1)
	}
}

// On a real ZooKeeper: ElectLeaders(PREFERRED) and the legacy
// /admin/preferred_replica_election znode both move leadership back to the
// preferred replica once it is back in the ISR.
func TestIntegrationPreferredElection(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.waitActive()
	cl.createTopic("p", map[int32][]int32{0: {1, 2}, 1: {2, 1}})
	waitFor(t, "p-0 led by 1", func() bool { s, ok := cl.state("p", 0); return ok && s.Leader == 1 })
	// Broker 1 restarts: p-0 moves to 2; then the leader adds 1 back to the
	// ISR itself and notifies the controller (the classic ISR path).
	bounce := func() {
		cl.stop(1)
		delete(cl.nodes, 1)
		waitFor(t, "p-0 led by 2", func() bool { s, _ := cl.state("p", 0); return s.Leader == 2 })
		cl.start(1)
		cl.expandIsr(common.TopicPartition{Topic: "p", Partition: 0}, 1)
		waitFor(t, "ISR change processed", func() bool {
			names, err := cl.admin.GetAllIsrChangeNotifications()
			return err == nil && len(names) == 0
		})
	}
	bounce()
	ctrl := cl.waitActive().ctrl
	out, err := ctrl.ElectLeaders(t.Context(), ElectPreferred, []common.TopicPartition{{Topic: "p", Partition: 0}, {Topic: "p", Partition: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if o := out[common.TopicPartition{Topic: "p", Partition: 0}]; o.Leader != 1 || o.Err != nil {
		t.Fatalf("p-0: %+v", o)
	}
	if o := out[common.TopicPartition{Topic: "p", Partition: 1}]; !errors.Is(o.Err, kerr.ElectionNotNeeded) || o.Leader != 2 {
		t.Fatalf("p-1: %+v", o)
	}
	if s, _ := cl.state("p", 0); s.Leader != 1 {
		t.Fatalf("p-0 state after the preferred election: %s", s)
	}
	for _, n := range cl.nodes {
		if !n.closed && !n.ctrl.IsActive() {
			if _, err := n.ctrl.ElectLeaders(t.Context(), ElectPreferred, nil); !errors.Is(err, kerr.NotController) {
				t.Fatalf("standby %d answered %v", n.id, err)
			}
		}
	}

	// The legacy znode, as kafka-preferred-replica-election.sh --zookeeper
	// writes it.
	bounce()
	if err := cl.admin.CreatePreferredReplicaElection([]common.TopicPartition{{Topic: "p", Partition: 0}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "p-0 back on 1 and the znode removed", func() bool {
		s, _ := cl.state("p", 0)
		ok, _, _ := cl.admin.Exists(zkpaths.PreferredReplicaElectionPath)
		return s.Leader == 1 && !ok
	})
}

// On a real ZooKeeper: a reassignment through the API writes AR/RR into
// the topic znode, completes once the leader has added the new replica to
// the ISR, and leaves RS = target with no adding/removing replicas.
func TestIntegrationReassignment(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	ctrl := cl.waitActive().ctrl
	cl.createTopic("ra", map[int32][]int32{0: {1, 2}})
	waitFor(t, "ra-0 online", func() bool { s, ok := cl.state("ra", 0); return ok && s.Leader == 1 })
	errs, err := ctrl.AlterPartitionReassignments(t.Context(), map[common.TopicPartition][]int32{{Topic: "ra", Partition: 0}: {3, 2}})
	if err != nil || errs[common.TopicPartition{Topic: "ra", Partition: 0}] != nil {
		t.Fatalf("errs %v err %v", errs, err)
	}
	ta, _, err := cl.admin.GetTopicAssignment("ra")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ta.Partitions[0], []int32{3, 2, 1}) || !reflect.DeepEqual(ta.Adding[0], []int32{3}) || !reflect.DeepEqual(ta.Removing[0], []int32{1}) {
		t.Fatalf("topic znode during the reassignment: %+v", ta)
	}
	listed, err := ctrl.ListPartitionReassignments(t.Context(), nil)
	if err != nil || len(listed) != 1 {
		t.Fatalf("listed %v err %v", listed, err)
	}
	waitFor(t, "broker 3 told to create the replica", func() bool {
		states, _ := cl.nodes[3].fb.leaderAndIsrFor(common.TopicPartition{Topic: "ra", Partition: 0})
		return len(states) > 0 && states[0].IsNew
	})
	// The leader adds 3 to the ISR (classic path) and notifies.
	cl.expandIsr(common.TopicPartition{Topic: "ra", Partition: 0}, 3)
	waitFor(t, "reassignment complete", func() bool {
		ta, _, err := cl.admin.GetTopicAssignment("ra")
		return err == nil && reflect.DeepEqual(ta.Partitions[0], []int32{3, 2}) && len(ta.Adding) == 0 && len(ta.Removing) == 0
	})
	waitFor(t, "new leader and ISR", func() bool {
		s, _ := cl.state("ra", 0)
		return s.Leader == 3 && reflect.DeepEqual(s.ISR, []int32{2, 3})
	})
	waitFor(t, "broker 1 told to delete its replica", func() bool {
		for _, r := range cl.nodes[1].fb.requests() {
			if sr, ok := r.(*kmsg.StopReplicaRequest); ok {
				for _, tt := range sr.Topics {
					for _, p := range tt.PartitionStates {
						if tt.Topic == "ra" && p.Delete {
							return true
						}
					}
				}
			}
		}
		return false
	})
	if listed, _ := ctrl.ListPartitionReassignments(t.Context(), nil); len(listed) != 0 {
		t.Fatalf("still listed: %v", listed)
	}
}
