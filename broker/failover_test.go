package broker_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/controller"
	"github.com/klassik/klassik/zkpaths"
)

// Killing the controller's broker makes another broker controller with
// /controller_epoch + 1, and a LeaderAndIsr still carrying the old epoch is
// refused by the brokers that have seen the new one (zombie-controller
// fencing: a broker rejects every controller request whose controller
// epoch is below the highest it has seen, with STALE_CONTROLLER_EPOCH).
func TestControllerFailoverFencesOldEpoch(t *testing.T) {
	c := startRacked(t)
	oldCtrl, _ := c.Controller()
	oldEpoch := c.ControllerEpoch()

	killed := time.Now()
	c.KillBroker(c.Index(oldCtrl))
	limit := 6*time.Second + 2*time.Second
	var newCtrl int32
	c.WaitFor(limit, "a new controller", func() bool {
		id, ok := c.Controller()
		newCtrl = id
		return ok && id != oldCtrl
	})
	if e := c.ControllerEpoch(); e != oldEpoch+1 {
		t.Fatalf("/controller_epoch = %d after failover, want %d", e, oldEpoch+1)
	}
	t.Logf("controller %d → %d (epoch %d → %d) in %v", oldCtrl, newCtrl, oldEpoch, oldEpoch+1, time.Since(killed).Round(time.Millisecond))

	// A surviving broker that is not the controller, once it has seen the new
	// epoch.
	target := -1
	for i := 0; i < c.N(); i++ {
		if id := c.BrokerID(i); id != oldCtrl && id != newCtrl {
			target = i
		}
	}
	b := c.Broker(target)
	c.WaitFor(30*time.Second, "the new controller epoch at the target broker", func() bool {
		return b.Replicas().ControllerEpoch() == oldEpoch+1
	})

	ctx := ctxT(t, 10*time.Second)
	cl, err := network.Dial(ctx, c.Addr(target), "zombie-controller", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = 5
	req.ControllerID = oldCtrl
	req.ControllerEpoch = oldEpoch
	req.BrokerEpoch = -1
	ps := kmsg.NewLeaderAndISRRequestTopicPartition()
	ps.Topic, ps.Partition, ps.ControllerEpoch, ps.Leader, ps.LeaderEpoch = "zombie", 0, oldEpoch, b.BrokerID(), 100
	ps.ISR, ps.Replicas = []int32{b.BrokerID()}, []int32{b.BrokerID()}
	tt := kmsg.NewLeaderAndISRRequestTopicState()
	tt.Topic = "zombie"
	tt.PartitionStates = []kmsg.LeaderAndISRRequestTopicPartition{ps}
	req.TopicStates = []kmsg.LeaderAndISRRequestTopicState{tt}
	lb := kmsg.NewLeaderAndISRRequestLiveLeader()
	lb.BrokerID, lb.Host, lb.Port = b.BrokerID(), "127.0.0.1", 1
	req.LiveLeaders = []kmsg.LeaderAndISRRequestLiveLeader{lb}
	resp := request[*kmsg.LeaderAndISRResponse](ctx, t, cl, req)
	if err := kerr.ErrorForCode(resp.ErrorCode); !errors.Is(err, kerr.StaleControllerEpoch) {
		t.Fatalf("LeaderAndIsr with the old epoch answered %v, want STALE_CONTROLLER_EPOCH", err)
	}
	if _, ok := b.Replicas().Partition(replicaTP("zombie", 0)); ok {
		t.Fatal("the stale LeaderAndIsr created a partition")
	}
}

// Killing the broker that hosts the only replica of a partition leaves the
// partition without a leader (-1 in ZooKeeper, LEADER_NOT_AVAILABLE or no
// leader in Metadata); after a restart it leads again with its data intact.
func TestSingleReplicaPartitionSurvivesRestart(t *testing.T) {
	c := startRacked(t)
	ctx := ctxT(t, 60*time.Second)
	const topic = "solo"
	c.CreateTopic(topic, 1, 1, nil)
	chk := produceAndCheck(t, c, topic, 500)
	_ = chk

	st, _ := c.PartitionState(topic, 0)
	host := c.Index(st.Leader)
	c.KillBroker(host)
	// The controller learns of the death when the broker's session
	// expires; the deadline leaves room for a loaded machine.
	c.WaitFor(6*time.Second+30*time.Second, "leader -1 in the state znode", func() bool {
		s, ok := c.PartitionState(topic, 0)
		return ok && s.Leader == zkpaths.NoLeader
	})
	cl := c.Client()
	c.WaitFor(30*time.Second, "no leader in Metadata", func() bool {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = []kmsg.MetadataRequestTopic{rt}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || len(resp.Topics) != 1 {
			return false
		}
		tp := resp.Topics[0]
		if tp.ErrorCode == kerr.LeaderNotAvailable.Code {
			return true
		}
		return len(tp.Partitions) == 1 && (tp.Partitions[0].Leader == -1 || tp.Partitions[0].ErrorCode == kerr.LeaderNotAvailable.Code)
	})

	c.RestartBroker(host)
	c.WaitFor(30*time.Second, "the partition's leader back", func() bool {
		s, ok := c.PartitionState(topic, 0)
		return ok && s.Leader == c.BrokerID(host)
	})
	// Every record is still there, at the same offsets.
	cons := c.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := 0
	consumeN(ctx, t, cons, 500, "the records after the restart", func(r *kgo.Record) {
		if r.Offset != int64(seen) {
			t.Errorf("record at offset %d, expected %d", r.Offset, seen)
		}
		seen++
	})
}

// A controller that crashes without closing its ZooKeeper session (as after
// kill -9) is replaced once the server expires that session: another broker
// is controller with /controller_epoch + 1, no sooner than the session
// could expire (normally within zookeeper.session.timeout.ms + 2 s).
func TestControllerCrashFailoverWithinSessionTimeout(t *testing.T) {
	const session = 6 * time.Second
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Racks: racks, ZKProxy: true, SessionTimeout: session})
	oldCtrl, _ := c.Controller()
	oldEpoch := c.ControllerEpoch()
	i := c.Index(oldCtrl)
	// Cut the controller off first, so that killing it cannot close its
	// session: the session lingers on the server until it expires.
	c.PauseZK(i)
	crashed := time.Now()
	c.KillBroker(i)
	// The deadline is generous: the new controller comes once the server
	// expires the old session, plus whatever delay a loaded machine adds,
	// so the time is logged, not judged.
	c.WaitFor(session+30*time.Second, "a new controller after the session timeout", func() bool {
		id, ok := c.Controller()
		return ok && id != oldCtrl
	})
	took := time.Since(crashed)
	if e := c.ControllerEpoch(); e != oldEpoch+1 {
		t.Fatalf("/controller_epoch = %d, want %d", e, oldEpoch+1)
	}
	if took < session/2 {
		t.Fatalf("failover after %v: the old session was closed, not expired", took)
	}
	t.Logf("controller crash → new controller in %v (session timeout %v)", took.Round(time.Millisecond), session)
	if took > session+2*time.Second {
		t.Logf("failover took more than the session timeout + 2 s (a loaded machine)")
	}
}

// A new controller elects the partitions the dead controller's broker led
// before it reads the other partitions' state znodes: its broker's
// metadata cache, wired into controller.Config.LeadersHint, names them
// with a leader that is not live. The hint is exact here, in every
// interleaving: every broker's cache holds every partition's leader
// before the kill, and no leader moves until the new controller's early
// elections (auto.leader.rebalance.enable=false, and no controller runs
// between the kill and the new one's failover, whose first UpdateMetadata
// names brokers, no partitions); each such partition has a live member in
// its ISR (created with full ISRs, and replica.lag.time.max.ms far beyond
// the test). So the early elections elect exactly those partitions, and
// the outcome is that of a failover without the hint: a live leader from
// the old ISR, the ISR without the dead broker, one leader epoch up.
func TestControllerFailoverElectsDeadLeadersFirst(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Racks: racks, Overrides: map[string]string{
		"auto.leader.rebalance.enable": "false",
		"replica.lag.time.max.ms":      "600000",
	}})
	const topic, partitions = "early", 24
	c.CreateTopic(topic, partitions, 3, nil)
	c.WaitLeaders(60*time.Second, topic, partitions)

	oldCtrl, ok := c.Controller()
	if !ok {
		t.Fatal("no controller")
	}
	oldEpoch := c.ControllerEpoch()
	before := map[int32]zkpaths.LeaderAndIsr{}
	var led []common.TopicPartition
	for p := int32(0); p < partitions; p++ {
		s, ok := c.PartitionState(topic, p)
		if !ok || len(s.ISR) != 3 {
			t.Fatalf("%s-%d before the kill: %s (ok %v), want a full ISR", topic, p, s, ok)
		}
		before[p] = s
		if s.Leader == oldCtrl {
			led = append(led, common.TopicPartition{Topic: topic, Partition: p})
		}
	}
	if len(led) == 0 {
		t.Fatalf("the controller's broker %d leads none of %s's partitions", oldCtrl, topic)
	}

	c.KillBroker(c.Index(oldCtrl))
	var report controller.FailoverReport
	c.WaitFor(60*time.Second, "a new controller's failover", func() bool {
		id, ok := c.Controller()
		if !ok || id == oldCtrl {
			return false
		}
		b := c.Broker(c.Index(id))
		if b == nil {
			return false
		}
		report, ok = b.Controller().LastFailover()
		return ok
	})
	if report.Epoch != oldEpoch+1 || !report.Done {
		t.Fatalf("the new controller's failover: epoch %d, done %v; want epoch %d, done", report.Epoch, report.Done, oldEpoch+1)
	}
	if !slices.Equal(report.EarlyElected, led) {
		t.Errorf("early elections of %v, want the partitions broker %d led: %v", report.EarlyElected, oldCtrl, led)
	}

	c.WaitLeaders(60*time.Second, topic, partitions)
	for p := int32(0); p < partitions; p++ {
		b := before[p]
		a, _ := c.PartitionState(topic, p)
		if b.Leader != oldCtrl {
			if a.Leader != b.Leader {
				t.Errorf("%s-%d: leader %d -> %d, though broker %d did not lead it", topic, p, b.Leader, a.Leader, oldCtrl)
			}
			continue
		}
		if a.Leader == oldCtrl || !slices.Contains(b.ISR, a.Leader) || slices.Contains(a.ISR, oldCtrl) || a.LeaderEpoch != b.LeaderEpoch+1 || a.ControllerEpoch != oldEpoch+1 {
			t.Errorf("%s-%d after the kill of %d: %s; was %s, want a leader from the old ISR, the ISR without %d, one leader epoch up, written by epoch %d",
				topic, p, oldCtrl, a, b, oldCtrl, oldEpoch+1)
		}
	}
}
