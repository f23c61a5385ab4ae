package broker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/faulttest"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/replica"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// replicationOverrides keep the ISR timings short: a stuck follower leaves
// the ISR within 1.5 × 2 s.
var replicationOverrides = map[string]string{
	"min.insync.replicas":       "2",
	"replica.lag.time.max.ms":   "2000",
	"replica.fetch.wait.max.ms": "200",
	"replica.fetch.backoff.ms":  "100",
}

// startReplicated starts three brokers with replicationOverrides and
// creates topic with one partition on all three, waiting until it has a
// leader and a full ISR; it returns the cluster, that partition state and
// the leader's index.
func startReplicated(t *testing.T, topic string) (*testcluster.Cluster, zkpaths.LeaderAndIsr, int) {
	t.Helper()
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Overrides: replicationOverrides})
	c.CreateTopic(topic, 1, 3, nil)
	var st zkpaths.LeaderAndIsr
	c.WaitFor(20*time.Second, topic+" led with a full ISR", func() bool {
		var ok bool
		st, ok = c.PartitionState(topic, 0)
		return ok && st.Leader >= 0 && len(st.ISR) == 3
	})
	return c, st, c.Index(st.Leader)
}

// replicaBytes reads broker i's log of topic-0 below end.
func replicaBytes(t *testing.T, c *testcluster.Cluster, i int, topic string, end int64) ([]byte, int64) {
	t.Helper()
	b := c.Broker(i)
	if b == nil {
		t.Fatalf("broker %d not running", i)
	}
	l, ok := b.LogManager().GetLog(common.TopicPartition{Topic: topic, Partition: 0})
	if !ok {
		return nil, -1
	}
	if end < 0 {
		end = l.HighWatermark()
	}
	if end == 0 {
		return nil, l.HighWatermark()
	}
	fd, err := l.Read(l.LogStartOffset(), 1<<30, end, true)
	if err != nil {
		t.Fatalf("reading broker %d's log: %v", i, err)
	}
	data, err := fd.Records.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return data, l.HighWatermark()
}

// waitIdenticalReplicas waits until every listed broker's HW equals the
// leader's and their logs below it are byte-for-byte equal (every replica
// agrees byte for byte on every offset below the leader's high watermark).
func waitIdenticalReplicas(t *testing.T, c *testcluster.Cluster, topic string, idx ...int) int64 {
	t.Helper()
	var hw int64
	c.WaitFor(20*time.Second, fmt.Sprintf("brokers %v identical below the HW", idx), func() bool {
		ref, refHW := replicaBytes(t, c, idx[0], topic, -1)
		if refHW <= 0 {
			return false
		}
		for _, i := range idx[1:] {
			data, h := replicaBytes(t, c, i, topic, refHW)
			if h != refHW || !bytes.Equal(data, ref) {
				return false
			}
		}
		hw = refHW
		return true
	})
	return hw
}

// produceTracked produces n records "<prefix>-<seq>" with acks=all and
// records every acknowledgement in chk. It returns the number acknowledged
// without error.
func produceTracked(t *testing.T, cl *kgo.Client, chk *testcluster.Checker, topic, prefix string, from, n int, each func(seq int)) int {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	var firstErr error
	for seq := from; seq < from+n; seq++ {
		id := prefix + "-" + strconv.Itoa(seq)
		wg.Add(1)
		cl.Produce(context.Background(), &kgo.Record{Topic: topic, Value: []byte(id)}, func(r *kgo.Record, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			ok++
			chk.Acked(id, int64(seq), r.Partition, r.Offset)
		})
		if each != nil {
			each(seq)
		}
	}
	wg.Wait()
	if firstErr != nil {
		t.Logf("some produces failed (not acknowledged, so not required to survive): %v", firstErr)
	}
	return ok
}

func consumeAllTracked(t *testing.T, c *testcluster.Cluster, chk *testcluster.Checker, topic string, want int) {
	t.Helper()
	cl := c.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	consumeN(ctxT(t, 30*time.Second), t, cl, want, "the acknowledged records of "+topic, func(r *kgo.Record) {
		chk.Consumed(string(r.Value), r.Partition, r.Offset)
	})
}

// TestReplicationLeaderKilledMidProduce is Kafka's
// replication_test.test_replication_with_broker_failure (hard_shutdown of
// the leader) in miniature: RF 3, min.insync.replicas 2, an idempotent
// acks=all producer; the leader is killed (kill -9 equivalent) mid-produce.
// A new leader is elected from the ISR, and "every record acknowledged with
// acks=all is readable from the partition" exactly once, in order (an
// acknowledged record survives any failure the ISR survives, and a new
// leader comes only from the ISR). The replicas then agree byte
// for byte below the HW, including the killed broker once it has restarted
// and rejoined the ISR.
func TestReplicationLeaderKilledMidProduce(t *testing.T) {
	const topic = "repl-failover"
	c, st, leaderIdx := startReplicated(t, topic)

	chk := testcluster.NewChecker()
	cl := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0), kgo.RecordDeliveryTimeout(40*time.Second))
	const first, second = 300, 300
	acked := produceTracked(t, cl, chk, topic, "r", 0, first, nil)
	if acked != first {
		t.Fatalf("only %d of %d acknowledged before the failure", acked, first)
	}
	// The ISR holds every acknowledged record: all three replicas agree.
	waitIdenticalReplicas(t, c, topic, 0, 1, 2)

	var once sync.Once
	acked += produceTracked(t, cl, chk, topic, "r", first, second, func(seq int) {
		if seq == first+second/3 {
			once.Do(func() { c.KillBroker(leaderIdx) })
		}
	})
	c.WaitFor(20*time.Second, "a new leader from the ISR", func() bool {
		ns, ok := c.PartitionState(topic, 0)
		return ok && ns.Leader >= 0 && ns.Leader != st.Leader && slices.Contains(st.ISR, ns.Leader)
	})
	consumeAllTracked(t, c, chk, topic, acked)
	if rep := chk.Report(); !rep.OK() {
		t.Fatalf("delivery check failed:\n%s", rep)
	}
	var alive []int
	for i := range 3 {
		if i != leaderIdx {
			alive = append(alive, i)
		}
	}
	waitIdenticalReplicas(t, c, topic, alive...)

	// The killed broker returns as a follower, truncates by epoch, catches
	// up and rejoins the ISR; then all three agree again.
	c.RestartBroker(leaderIdx)
	c.WaitFor(30*time.Second, "the restarted broker back in the ISR", func() bool {
		ns, ok := c.PartitionState(topic, 0)
		return ok && len(ns.ISR) == 3
	})
	produceTracked(t, cl, chk, topic, "after", 0, 10, nil)
	waitIdenticalReplicas(t, c, topic, 0, 1, 2)
}

// TestReplicationStuckFollowerLeavesAndRejoinsIsr is Kafka's
// replication_replica_failure_test in miniature: a follower whose fetches
// the leader stops serving leaves the ISR (the leader drops a follower that
// has not caught up to its log end for replica.lag.time.max.ms)
// — the leader's own conditional write shows in the partition state znode —
// and rejoins once it has caught up. Meanwhile acks=all produce keeps
// working with the two remaining ISR members (min.insync.replicas 2).
func TestReplicationStuckFollowerLeavesAndRejoinsIsr(t *testing.T) {
	const topic = "repl-isr"
	c, st, leaderIdx := startReplicated(t, topic)
	var stuck int32 = -1
	for _, id := range st.ISR {
		if id != st.Leader {
			stuck = id
			break
		}
	}

	// The leader answers the stuck follower's fetches with an error and no
	// data, as if the follower could not reach it.
	c.Intercept(leaderIdx, 1, func(_ context.Context, req *network.Request) (kmsg.Response, bool, error) {
		fr, ok := req.Body.(*kmsg.FetchRequest)
		if !ok || fr.ReplicaID != stuck {
			return nil, false, nil
		}
		time.Sleep(50 * time.Millisecond)
		resp := fr.ResponseKind().(*kmsg.FetchResponse)
		resp.Version = fr.Version
		resp.ErrorCode = kerr.UnknownServerError.Code
		return resp, true, nil
	})
	chk := testcluster.NewChecker()
	cl := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0), kgo.RecordDeliveryTimeout(30*time.Second))
	start := time.Now()
	if n := produceTracked(t, cl, chk, topic, "s", 0, 20, nil); n != 20 {
		t.Fatalf("acks=all with one follower stuck: %d of 20 acknowledged", n)
	}
	c.WaitFor(30*time.Second, "the stuck follower out of the ISR", func() bool {
		ns, ok := c.PartitionState(topic, 0)
		return ok && len(ns.ISR) == 2 && !slices.Contains(ns.ISR, stuck) && ns.Leader == st.Leader
	})
	t.Logf("follower %d left the ISR %v after the first produce", stuck, time.Since(start).Round(100*time.Millisecond))
	ns, _ := c.PartitionState(topic, 0)
	if ns.LeaderEpoch != st.LeaderEpoch {
		t.Fatalf("the leader's own ISR write keeps the leader epoch: %d → %d", st.LeaderEpoch, ns.LeaderEpoch)
	}
	// The leader's /isr_change_notification makes the controller send
	// UpdateMetadata: clients see the smaller ISR too.
	adm := c.Admin()
	c.WaitFor(20*time.Second, "the shrunk ISR in client metadata", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return false
		}
		p, ok := md.Topics[topic].Partitions[0]
		return ok && len(p.ISR) == 2 && !slices.Contains(p.ISR, stuck)
	})
	produceTracked(t, cl, chk, topic, "s", 20, 20, nil)

	c.Intercept(leaderIdx, 1, nil)
	c.WaitFor(30*time.Second, "the follower back in the ISR", func() bool {
		ns, ok := c.PartitionState(topic, 0)
		return ok && len(ns.ISR) == 3
	})
	waitIdenticalReplicas(t, c, topic, 0, 1, 2)
	// Kafka's ReplicaManager metrics on the leader.
	reg := c.Broker(leaderIdx).Metrics()
	meter := func(name string) int64 {
		m, ok := reg.Get("kafka.server.ReplicaManager." + name).(gometrics.Meter)
		if !ok {
			t.Fatalf("metric %s not registered", name)
		}
		return m.Count()
	}
	if meter("IsrShrinksPerSec") < 1 || meter("IsrExpandsPerSec") < 1 {
		t.Fatalf("IsrShrinksPerSec %d, IsrExpandsPerSec %d", meter("IsrShrinksPerSec"), meter("IsrExpandsPerSec"))
	}
	if g, ok := reg.Get("kafka.server.ReplicaManager.UnderReplicatedPartitions").(gometrics.Gauge); !ok || g.Value() != 0 {
		t.Fatalf("UnderReplicatedPartitions after the follower rejoined: %v", g)
	}
	consumeAllTracked(t, c, chk, topic, 40)
	if rep := chk.Report(); !rep.OK() {
		t.Fatalf("delivery check failed:\n%s", rep)
	}
}

// TestZkIsrUpdaterOnRealZooKeeper checks the leader's own ISR write on a
// real server: a setData
// of the partition state conditional on the partition epoch, in Kafka's
// JSON; a stale version is a conflict (the leader lost the race and waits
// for the controller); notifications are persistent sequential
// isr_change_ znodes listing the partitions.
func TestZkIsrUpdaterOnRealZooKeeper(t *testing.T) {
	zc, err := zkclient.Connect(zkserver.ConnectString(t), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	path := zkpaths.PartitionStatePath("t", 0)
	initial := zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 3, ISR: []int32{1, 2, 3}, ControllerEpoch: 1}
	if _, err := zc.CreateRecursive(path, initial.Encode(), 0); err != nil {
		t.Fatal(err)
	}
	var u replica.IsrUpdater = zc // what a partition leader writes its ISR with
	tp := replicaTP("t", 0)
	write := func(s zkpaths.LeaderAndIsr) (int32, error) {
		versions, errs := u.UpdateLeaderAndIsrsConditional([]common.TopicPartition{tp}, []zkpaths.LeaderAndIsr{s})
		return versions[0], errs[0]
	}
	v, err := write(zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 3, ISR: []int32{1, 2}, ControllerEpoch: 1, ZkVersion: 0})
	if err != nil || v != 1 {
		t.Fatalf("conditional ISR write: version %d, %v", v, err)
	}
	data, st, err := zc.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":3,"isr":[1,2]}`; string(data) != want || st.Version != 1 {
		t.Fatalf("state znode %s (version %d), want %s", data, st.Version, want)
	}
	// The controller moves the state on (e.g. a new leader epoch).
	moved := zkpaths.LeaderAndIsr{Leader: 2, LeaderEpoch: 4, ISR: []int32{2}, ControllerEpoch: 1}
	if _, err := zc.Set(path, moved.Encode(), 1); err != nil {
		t.Fatal(err)
	}
	_, err = write(zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 3, ISR: []int32{1}, ControllerEpoch: 1, ZkVersion: 1})
	if !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("stale partition epoch: %v, want a version conflict", err)
	}
	if data, _, _ := zc.Get(path); !bytes.Equal(data, moved.Encode()) {
		t.Fatalf("a deposed leader overwrote the state: %s", data)
	}
	if _, err := u.CreateIsrChangeNotification([]common.TopicPartition{tp, replicaTP("t", 1)}); err != nil {
		t.Fatal(err)
	}
	names, err := zc.GetAllIsrChangeNotifications()
	if err != nil || len(names) != 1 {
		t.Fatalf("notifications %v, %v", names, err)
	}
	raw, _, err := zc.Get(zkpaths.IsrChangeNotificationPath + "/" + names[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"version":1,"partitions":[{"topic":"t","partition":0},{"topic":"t","partition":1}]}`; string(raw) != want {
		t.Fatalf("notification %s, want %s", raw, want)
	}
}

// TestMinInsyncReplicasTopicOverride: min.insync.replicas set on a topic beats the broker's
// value in both directions. Brokers say 2; "strict" says 3, "lax" says 1,
// "dflt" inherits 2. Produce is acks=all straight to the leader.
func TestMinInsyncReplicasTopicOverride(t *testing.T) {
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
