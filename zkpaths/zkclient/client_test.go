package zkclient_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
	"github.com/klassik/klassik/zkpaths/zktest"
)

func TestParseConnectString(t *testing.T) {
	cases := []struct {
		in      string
		servers []string
		chroot  string
		bad     bool
	}{
		{"zk1:2181", []string{"zk1:2181"}, "", false},
		{"zk1:2181,zk2:2181,zk3:2181/kafka/prod", []string{"zk1:2181", "zk2:2181", "zk3:2181"}, "/kafka/prod", false},
		{"zk1:2181/", []string{"zk1:2181"}, "", false},
		{"/kafka", nil, "", true},
		{"zk1:2181/a//b", nil, "", true},
	}
	for _, c := range cases {
		s, ch, err := zkclient.ParseConnectString(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("%q: expected error", c.in)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(s, c.servers) || ch != c.chroot {
			t.Errorf("%q: got %v %q %v", c.in, s, ch, err)
		}
	}
}

// "A broker creates a missing chroot itself before starting its real
// session ... every level P, null data".
func TestConnectCreatesChroot(t *testing.T) {
	b := newRealBackend(t)
	nested := b.chroot + "/kafka/prod"
	c, err := zkclient.Connect(b.srv.ConnectString(nested), sessionTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range []string{b.chroot, b.chroot + "/kafka", nested} {
		data, st, err := b.admin.Get(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if data != nil || st.DataLength != 0 {
			t.Fatalf("%s: data %q, want null", p, data)
		}
	}
	// Paths are chroot-relative, including those returned by sequential creates.
	mustNoErr(t, c.EnsureTopLevelPaths())
	name, err := c.CreateIsrChangeNotification([]common.TopicPartition{{Topic: "t", Partition: 0}})
	mustNoErr(t, err)
	if name != "isr_change_0000000000" {
		t.Fatalf("sequential child %q", name)
	}
	if ok, _, _ := b.admin.Exists(nested + "/isr_change_notification/" + name); !ok {
		t.Fatalf("notification not under the chroot")
	}
}

func TestTopLevelPathsAndClusterID(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := readyClient(t, b)
		mustNoErr(t, c.EnsureTopLevelPaths()) // idempotent
		for _, p := range append(zkpaths.PersistentZkPaths, zkpaths.BrokersPath, zkpaths.ConfigPathRoot, zkpaths.AdminPath) {
			data, _, err := c.Get(p)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if data != nil {
				t.Fatalf("%s holds %q, structural nodes hold null", p, data)
			}
		}
		if ok, _, err := c.Exists(zkpaths.ClusterIDPath); err != nil || ok {
			t.Fatalf("cluster id before creation: %v %v", ok, err)
		}
		id, err := c.GetOrCreateClusterID()
		mustNoErr(t, err)
		if len(id) != 22 || !zkpaths.ValidUUID(id) {
			t.Fatalf("cluster id %q is not a 22-char base64url uuid", id)
		}
		again, err := b.client(t).GetOrCreateClusterID()
		if err != nil || again != id {
			t.Fatalf("second broker got %q, %v; want %q", again, err, id)
		}
		data, _, _ := c.Get(zkpaths.ClusterIDPath)
		if string(data) != `{"version":"1","id":"`+id+`"}` {
			t.Fatalf("/cluster/id = %s", data)
		}
	})
}

func brokerInfo(id int32) zkpaths.BrokerInfo {
	return zkpaths.BrokerInfo{ID: id, JMXPort: -1, Timestamp: 1700000000123,
		Endpoints: []zkpaths.EndPoint{{ListenerName: "PLAINTEXT", Host: "localhost", Port: 9092 + id, SecurityProtocol: "PLAINTEXT"}}}
}

// "owner == current session id: our own earlier attempt succeeded ... any
// other owner -> fail with NODEEXISTS".
func TestRegisterBrokerCheckedEphemeral(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		a, other := b.client(t), b.client(t)
		mustNoErr(t, a.EnsureTopLevelPaths())
		epoch, err := a.RegisterBroker(brokerInfo(1))
		mustNoErr(t, err)
		_, st, err := a.Get(zkpaths.BrokerIDPath(1))
		mustNoErr(t, err)
		if st.Czxid != epoch || st.Version != 1 || st.Mzxid != st.Czxid || st.EphemeralOwner != a.SessionID() {
			t.Fatalf("registration stat %+v, epoch %d: want dataVersion 1, mzxid = czxid = epoch, owner = session", st, epoch)
		}
		// Same session again: accepted, same epoch.
		again, err := a.RegisterBroker(brokerInfo(1))
		if err != nil || again != epoch {
			t.Fatalf("re-register in same session: %d, %v", again, err)
		}
		// Another live session holding the id: refused with NodeExists.
		_, err = other.RegisterBroker(brokerInfo(1))
		if !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("duplicate registration: %v, want ErrNodeExists", err)
		}
		info, ok, err := other.GetBroker(1)
		if err != nil || !ok || info.Epoch != epoch || info.Endpoints[0].Port != 9093 {
			t.Fatalf("GetBroker: %+v %v %v", info, ok, err)
		}
		_, err = other.RegisterBroker(brokerInfo(2))
		mustNoErr(t, err)
		all, err := other.GetAllBrokers()
		mustNoErr(t, err)
		if len(all) != 2 || all[0].ID != 1 || all[1].ID != 2 || all[0].Epoch == all[1].Epoch {
			t.Fatalf("GetAllBrokers %+v", all)
		}
		// Closing a session removes its registration at once.
		a.Close()
		waitFor(t, 5*time.Second, "broker 1 to vanish", func() bool {
			_, ok, err := other.GetBroker(1)
			return err == nil && !ok
		})
		e2, err := other.RegisterBroker(brokerInfo(1))
		if err != nil || e2 <= epoch {
			t.Fatalf("takeover after close: %d, %v (old epoch %d)", e2, err, epoch)
		}
	})
}

// Session expiry: expiry handlers run before new-session handlers; the
// ephemeral registration is gone and re-registering yields a larger broker
// epoch.
func TestSessionExpiryAndReregistration(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := readyClient(t, b)
		epoch, err := c.RegisterBroker(brokerInfo(7))
		mustNoErr(t, err)

		var mu sync.Mutex
		var order []string
		newEpoch := make(chan int64, 1)
		c.OnSessionExpired(func() { mu.Lock(); order = append(order, "expired"); mu.Unlock() })
		c.OnNewSession(func() {
			mu.Lock()
			order = append(order, "new")
			mu.Unlock()
			e, err := c.RegisterBroker(brokerInfo(7))
			if err != nil {
				t.Errorf("re-register: %v", err)
			}
			newEpoch <- e
		})
		oldSession := c.SessionID()
		b.expire(t, c)
		select {
		case e := <-newEpoch:
			if e <= epoch {
				t.Fatalf("new broker epoch %d not above old %d", e, epoch)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("OnNewSession handler did not run")
		}
		mu.Lock()
		got := strings.Join(order, ",")
		mu.Unlock()
		if got != "expired,new" {
			t.Fatalf("handler order %q", got)
		}
		_, st, err := c.Get(zkpaths.BrokerIDPath(7))
		mustNoErr(t, err)
		if st.EphemeralOwner == oldSession || st.EphemeralOwner != c.SessionID() {
			t.Fatalf("registration owned by 0x%x; session 0x%x (old 0x%x)", st.EphemeralOwner, c.SessionID(), oldSession)
		}
	})
}

// Watches are one-shot in ZooKeeper; the client re-arms them before calling
// back, and again after a new session.
func TestWatchDataRearms(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c, writer := b.client(t), b.client(t)
		var n counter
		cancel := c.WatchData("/watched", n.inc)
		defer cancel()
		_, err := writer.Create("/watched", []byte("a"), zkclient.Persistent)
		mustNoErr(t, err)
		waitFor(t, 5*time.Second, "create event", func() bool { return n.get() >= 1 })
		for i := 2; i <= 4; i++ {
			base := n.get()
			_, err := writer.Set("/watched", []byte{byte('a' + i)}, -1)
			mustNoErr(t, err)
			waitFor(t, 5*time.Second, "data change event", func() bool { return n.get() > base })
		}
		base := n.get()
		mustNoErr(t, writer.Delete("/watched", -1))
		waitFor(t, 5*time.Second, "delete event", func() bool { return n.get() > base })

		// After a new session the watch is armed again and fires once.
		base = n.get()
		b.expire(t, c)
		waitFor(t, 10*time.Second, "callback after new session", func() bool { return n.get() > base })
		base = n.get()
		_, err = writer.Create("/watched", nil, zkclient.Persistent)
		mustNoErr(t, err)
		waitFor(t, 5*time.Second, "create event after new session", func() bool { return n.get() > base })

		// Cancelled watches stay silent.
		cancel()
		base = n.get()
		_, err = writer.Set("/watched", []byte("z"), -1)
		mustNoErr(t, err)
		time.Sleep(200 * time.Millisecond)
		if n.get() != base {
			t.Fatalf("cancelled watch fired")
		}
	})
}

func TestWatchChildren(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c, writer := b.client(t), b.client(t)
		var n counter
		defer c.WatchChildren("/dir", n.inc)()
		// Missing parent: the watch waits for its creation.
		mustNoErr(t, writer.EnsurePath("/dir"))
		waitFor(t, 5*time.Second, "parent creation", func() bool { return n.get() >= 1 })
		for i := 0; i < 3; i++ {
			base := n.get()
			_, err := writer.Create("/dir/child_", nil, zkclient.PersistentSequential)
			mustNoErr(t, err)
			waitFor(t, 5*time.Second, "child event", func() bool { return n.get() > base })
		}
		kids, err := c.Children("/dir")
		mustNoErr(t, err)
		if !reflect.DeepEqual(kids, []string{"child_0000000000", "child_0000000001", "child_0000000002"}) {
			t.Fatalf("children %v", kids)
		}
		base := n.get()
		_, err = writer.Set("/dir", []byte("x"), -1) // data changes do not fire child watches
		mustNoErr(t, err)
		mustNoErr(t, writer.Delete("/dir/child_0000000001", -1))
		waitFor(t, 5*time.Second, "child delete event", func() bool { return n.get() > base })
	})
}

// Election and fencing: the winner bumps /controller_epoch in
// the same multi that creates /controller; a zombie's fenced write fails.
func TestControllerElectionAndFencing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		a, bb := b.client(t), b.client(t)
		mustNoErr(t, a.EnsureTopLevelPaths())
		if _, ok, err := a.GetController(); err != nil || ok {
			t.Fatalf("controller before election: %v %v", ok, err)
		}
		epoch, ver, err := a.RegisterControllerAndIncrementEpoch(1)
		mustNoErr(t, err)
		if epoch != 1 || ver != 1 {
			t.Fatalf("first election: epoch %d version %d, want 1 1", epoch, ver)
		}
		data, st, err := a.Get(zkpaths.ControllerEpochPath)
		mustNoErr(t, err)
		if string(data) != "1" || st.Version != 1 {
			t.Fatalf("/controller_epoch = %q v%d", data, st.Version)
		}
		ctrlData, _, err := bb.Get(zkpaths.ControllerPath)
		mustNoErr(t, err)
		info, err := zkpaths.DecodeController(ctrlData)
		if err != nil || info.BrokerID != 1 || info.Version != 2 || info.KRaftControllerEpoch != -1 {
			t.Fatalf("controller info %+v %v", info, err)
		}
		_, st, _ = a.Get(zkpaths.ControllerPath)
		if st.EphemeralOwner != a.SessionID() {
			t.Fatalf("/controller not ephemeral to the winner")
		}
		// The loser gets ErrControllerMoved.
		if _, _, err := bb.RegisterControllerAndIncrementEpoch(2); !errors.Is(err, zkclient.ErrControllerMoved) {
			t.Fatalf("second candidate: %v, want ErrControllerMoved", err)
		}
		// Fenced writes of the active controller succeed.
		mustNoErr(t, a.CreateTopic("orders", zkpaths.TopicAssignment{Partitions: map[int32][]int32{0: {1, 2}}}, nil))
		tp := common.TopicPartition{Topic: "orders", Partition: 0}
		zv, err := createState(a, ver, tp, zkpaths.LeaderAndIsr{Leader: 1, ISR: []int32{1, 2}, ControllerEpoch: epoch})
		mustNoErr(t, err)
		if zv != 0 {
			t.Fatalf("new state znode version %d", zv)
		}
		// Operator deletes /controller; b wins epoch 2.
		mustNoErr(t, bb.Delete(zkpaths.ControllerPath, -1))
		epoch2, ver2, err := bb.RegisterControllerAndIncrementEpoch(2)
		mustNoErr(t, err)
		if epoch2 != 2 || ver2 != 2 {
			t.Fatalf("second election: %d %d", epoch2, ver2)
		}
		// The zombie (a, epochZkVersion 1) is fenced and changes nothing.
		s, _, _ := a.GetPartitionState(tp)
		s.Leader, s.LeaderEpoch = 2, 1
		if _, err := updateState(a, ver, tp, s); !errors.Is(err, zkclient.ErrControllerMoved) {
			t.Fatalf("zombie write: %v, want ErrControllerMoved", err)
		}
		if err := a.DeleteTopicDeletions(ver, "orders"); !errors.Is(err, zkclient.ErrControllerMoved) {
			t.Fatalf("zombie delete: %v", err)
		}
		cur, _, _ := bb.GetPartitionState(tp)
		if cur.Leader != 1 || cur.ZkVersion != 0 {
			t.Fatalf("zombie write landed: %+v", cur)
		}
		// The new controller's write works and bumps the partition epoch.
		s.ControllerEpoch = epoch2
		zv, err = updateState(bb, ver2, tp, s)
		if err != nil || zv != 1 {
			t.Fatalf("new controller write: %d %v", zv, err)
		}
		// A stale partition epoch is a BadVersion, not a fencing error.
		_, err = updateState(bb, ver2, tp, s)
		if !errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zkclient.ErrControllerMoved) {
			t.Fatalf("stale partition epoch: %v, want ErrBadVersion", err)
		}
		// Forced resignation deletes /controller fenced.
		if err := a.DeleteController(ver); !errors.Is(err, zkclient.ErrControllerMoved) {
			t.Fatalf("zombie DeleteController: %v", err)
		}
		mustNoErr(t, bb.DeleteController(ver2))
		if _, ok, _ := a.GetController(); ok {
			t.Fatalf("/controller still present")
		}
	})
}

// A controller that loses its session loses /controller with it; the next
// election bumps the epoch again.
func TestControllerSessionExpiry(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		a := readyClient(t, b)
		_, ver, err := a.RegisterControllerAndIncrementEpoch(1)
		mustNoErr(t, err)
		b.expire(t, a)
		if _, ok, err := a.GetController(); err != nil || ok {
			t.Fatalf("/controller survived expiry: %v %v", ok, err)
		}
		epoch, ver2, err := a.RegisterControllerAndIncrementEpoch(1)
		if err != nil || epoch != 2 || ver2 != ver+1 {
			t.Fatalf("re-election: %d %d %v", epoch, ver2, err)
		}
	})
}

func TestPartitionStates(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := readyClient(t, b)
		epoch, ver, err := c.RegisterControllerAndIncrementEpoch(1)
		mustNoErr(t, err)
		mustNoErr(t, c.CreateTopic("t", zkpaths.TopicAssignment{Partitions: map[int32][]int32{0: {1}}}, nil))
		states := map[common.TopicPartition]zkpaths.LeaderAndIsr{}
		for p := int32(0); p < 20; p++ {
			states[common.TopicPartition{Topic: "t", Partition: p}] = zkpaths.LeaderAndIsr{Leader: p % 3, ISR: []int32{p % 3, (p + 1) % 3}, ControllerEpoch: epoch}
		}
		res, err := c.CreatePartitionStates(ver, states)
		mustNoErr(t, err)
		for tp, r := range res {
			if r.Err != nil || r.ZkVersion != 0 {
				t.Fatalf("%s: %+v", tp, r)
			}
		}
		// Creating again: NodeExists per partition, not fatal.
		res, err = c.CreatePartitionStates(ver, states)
		mustNoErr(t, err)
		if !errors.Is(res[common.TopicPartition{Topic: "t", Partition: 3}].Err, zk.ErrNodeExists) {
			t.Fatalf("re-create: %+v", res)
		}
		parts, err := c.Children(zkpaths.TopicPartitionsPath("t"))
		mustNoErr(t, err)
		if len(parts) != 20 {
			t.Fatalf("partitions %v", parts)
		}
		tps := make([]common.TopicPartition, 0, 21)
		for tp := range states {
			tps = append(tps, tp)
		}
		tps = append(tps, common.TopicPartition{Topic: "t", Partition: 99})
		got, err := c.GetPartitionStates(tps)
		mustNoErr(t, err)
		if len(got) != 20 {
			t.Fatalf("read %d states", len(got))
		}
		for tp, s := range states {
			if !got[tp].Equal(s) {
				t.Fatalf("%s: %+v vs %+v", tp, got[tp], s)
			}
		}
		data, _, _ := c.Get(zkpaths.PartitionStatePath("t", 4))
		if string(data) != `{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}` {
			t.Fatalf("state bytes %s", data)
		}
		// Leader-side conditional update: success, then a resend of the same
		// content with the stale version counts as landed.
		tp := common.TopicPartition{Topic: "t", Partition: 4}
		s := got[tp]
		s.ISR = []int32{1}
		v1, err := c.UpdateLeaderAndIsrConditional(tp, s)
		if err != nil || v1 != 1 {
			t.Fatalf("leader ISR update: %d %v", v1, err)
		}
		v1again, err := c.UpdateLeaderAndIsrConditional(tp, s)
		if err != nil || v1again != 1 {
			t.Fatalf("resend: %d %v", v1again, err)
		}
		s.ISR = []int32{1, 2}
		if _, err := c.UpdateLeaderAndIsrConditional(tp, s); !errors.Is(err, zk.ErrBadVersion) {
			t.Fatalf("stale leader update: %v", err)
		}
		// Many leader updates at once: each op has the outcome it would
		// have had alone (partition 4's stale version with other content
		// fails it only;
		// partition 99 has no state; the others land at version 1).
		var btps []common.TopicPartition
		var bstates []zkpaths.LeaderAndIsr
		for p := int32(0); p < 10; p++ {
			btp := common.TopicPartition{Topic: "t", Partition: p}
			st := got[btp]
			st.ISR = []int32{st.Leader}
			if p == 4 {
				st.ISR = []int32{1, 2} // not what is stored: a lost race
			}
			btps, bstates = append(btps, btp), append(bstates, st)
		}
		btps = append(btps, common.TopicPartition{Topic: "t", Partition: 99})
		bstates = append(bstates, zkpaths.LeaderAndIsr{Leader: 1, ISR: []int32{1}})
		versions, errs := c.UpdateLeaderAndIsrsConditional(btps, bstates)
		for i, btp := range btps {
			switch btp.Partition {
			case 4:
				if !errors.Is(errs[i], zk.ErrBadVersion) {
					t.Fatalf("stale batched update of %s: %v", btp, errs[i])
				}
			case 99:
				if !errors.Is(errs[i], zk.ErrNoNode) {
					t.Fatalf("batched update of a missing state: %v", errs[i])
				}
			default:
				if errs[i] != nil || versions[i] != 1 {
					t.Fatalf("batched update of %s: %d %v", btp, versions[i], errs[i])
				}
				if cur, _, _ := c.GetPartitionState(btp); !slices.Equal(cur.ISR, bstates[i].ISR) {
					t.Fatalf("%s: ISR %v after the batched write", btp, cur.ISR)
				}
			}
		}
		// A resend of landed writes with their old versions counts as landed.
		versions, errs = c.UpdateLeaderAndIsrsConditional(btps[:2], bstates[:2])
		if errs[0] != nil || errs[1] != nil || versions[0] != 1 || versions[1] != 1 {
			t.Fatalf("batched resend: %v %v", versions, errs)
		}
	})
}

func TestTopicLifecycle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := readyClient(t, b)
		a := zkpaths.TopicAssignment{Partitions: map[int32][]int32{0: {1, 2}, 1: {2, 1}}, TopicID: "ztFyzQr5QwmEYeGhG6khTg"}
		mustNoErr(t, c.CreateTopic("orders.v1", a, map[string]string{"retention.ms": "1000"}))
		if err := c.CreateTopic("orders.v1", a, nil); !errors.Is(err, zkclient.ErrTopicExists) {
			t.Fatalf("duplicate: %v", err)
		}
		if err := c.CreateTopic("orders_v1", a, nil); !errors.Is(err, zkclient.ErrTopicCollision) {
			t.Fatalf("collision: %v", err)
		}
		cfg, _, _ := c.Get(zkpaths.ConfigPath(zkpaths.ConfigTypeTopic, "orders.v1"))
		if string(cfg) != `{"version":1,"config":{"retention.ms":"1000"}}` {
			t.Fatalf("config %s", cfg)
		}
		// No change notification on creation.
		if kids, _ := c.Children(zkpaths.ConfigChangesPath); len(kids) != 0 {
			t.Fatalf("notifications %v", kids)
		}
		got, zv, err := c.GetTopicAssignment("orders.v1")
		if err != nil || zv != 0 || !reflect.DeepEqual(got.Partitions, a.Partitions) || got.TopicID != a.TopicID {
			t.Fatalf("assignment %+v %d %v", got, zv, err)
		}
		if _, _, err := c.GetTopicAssignment("nope"); !errors.Is(err, zkclient.ErrTopicNotFound) || !errors.Is(err, zk.ErrNoNode) {
			t.Fatalf("missing topic: %v", err)
		}
		topics, _ := c.GetAllTopics()
		if !reflect.DeepEqual(topics, []string{"orders.v1"}) {
			t.Fatalf("topics %v", topics)
		}
		// Partition addition (admin path, any-version).
		a.Partitions[2] = []int32{1, 2}
		zv, err = c.UpdateTopicAssignment("orders.v1", a, -1)
		if err != nil || zv != 1 {
			t.Fatalf("add partitions: %d %v", zv, err)
		}
		// Deletion marker, then creation is refused.
		if err := c.CreateDeleteTopicPath("nope"); !errors.Is(err, zkclient.ErrTopicNotFound) {
			t.Fatalf("mark missing: %v", err)
		}
		mustNoErr(t, c.CreateDeleteTopicPath("orders.v1"))
		if err := c.CreateDeleteTopicPath("orders.v1"); !errors.Is(err, zkclient.ErrTopicAlreadyMarkedForDeletion) {
			t.Fatalf("mark twice: %v", err)
		}
		if err := c.CreateTopic("orders.v1", a, nil); !errors.Is(err, zkclient.ErrTopicMarkedForDeletion) {
			t.Fatalf("create while deleting: %v", err)
		}
		del, _ := c.GetTopicDeletions()
		if !reflect.DeepEqual(del, []string{"orders.v1"}) {
			t.Fatalf("deletions %v", del)
		}
		// Controller completes the deletion with fenced deletes.
		epoch, ver, err := c.RegisterControllerAndIncrementEpoch(1)
		mustNoErr(t, err)
		_, err = createState(c, ver, common.TopicPartition{Topic: "orders.v1", Partition: 0}, zkpaths.LeaderAndIsr{Leader: 1, ISR: []int32{1}, ControllerEpoch: epoch})
		mustNoErr(t, err)
		a.Removing = map[int32][]int32{0: {2}}
		zv, err = c.SetTopicAssignment(ver, "orders.v1", a, 1)
		if err != nil || zv != 2 {
			t.Fatalf("fenced topic write: %d %v", zv, err)
		}
		mustNoErr(t, c.DeleteTopicZNode(ver, "orders.v1"))
		mustNoErr(t, c.DeleteTopicConfigs(ver, "orders.v1"))
		mustNoErr(t, c.DeleteTopicDeletions(ver, "orders.v1"))
		for _, p := range []string{zkpaths.TopicPath("orders.v1"), zkpaths.ConfigPath("topics", "orders.v1"), zkpaths.DeleteTopicPath("orders.v1")} {
			if ok, _, _ := c.Exists(p); ok {
				t.Fatalf("%s survived deletion", p)
			}
		}
	})
}

func TestNotificationsAndAdminNodes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := readyClient(t, b)
		_, ver, err := c.RegisterControllerAndIncrementEpoch(1)
		mustNoErr(t, err)
		n1, err := c.CreateIsrChangeNotification([]common.TopicPartition{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 1}})
		mustNoErr(t, err)
		n2, err := c.CreateIsrChangeNotification([]common.TopicPartition{{Topic: "a", Partition: 1}, {Topic: "b", Partition: 0}})
		mustNoErr(t, err)
		if n1 != "isr_change_0000000000" || n2 != "isr_change_0000000001" {
			t.Fatalf("names %s %s", n1, n2)
		}
		names, _ := c.GetAllIsrChangeNotifications()
		tps, err := c.GetPartitionsFromIsrChangeNotifications(append(names, "isr_change_0000000099"))
		mustNoErr(t, err)
		if len(tps) != 3 {
			t.Fatalf("partitions %v", tps)
		}
		mustNoErr(t, c.DeleteIsrChangeNotifications(ver, names...))
		if left, _ := c.GetAllIsrChangeNotifications(); len(left) != 0 {
			t.Fatalf("left %v", left)
		}
		// Sequence numbers keep growing after deletions.
		n3, _ := c.CreateIsrChangeNotification(nil)
		// ZooKeeper 3.8 numbers sequential children by the parent's
		// cversion, which deletes do not advance.
		if n3 != "isr_change_0000000002" {
			t.Fatalf("after deletes: %s", n3)
		}

		for i := 0; i < 2; i++ {
			_, err := c.CreateRecursive(zkpaths.LogDirEventNotificationSeqPath(), zkpaths.EncodeLogDirEventNotification(2), zkclient.PersistentSequential)
			mustNoErr(t, err)
		}
		evs, _ := c.GetAllLogDirEventNotifications()
		ids, err := c.GetBrokerIDsFromLogDirEvents(evs)
		if err != nil || !reflect.DeepEqual(ids, []int32{2}) {
			t.Fatalf("ids %v %v", ids, err)
		}
		mustNoErr(t, c.DeleteLogDirEventNotifications(ver, evs...))

		r := []zkpaths.PartitionReplicas{{Topic: "a", Partition: 0, Replicas: []int32{3, 2}}}
		mustNoErr(t, c.CreatePartitionReassignment(r))
		if err := c.CreatePartitionReassignment(r); !errors.Is(err, zkclient.ErrReassignmentInProgress) {
			t.Fatalf("second reassignment: %v", err)
		}
		got, ok, err := c.GetPartitionReassignment()
		if err != nil || !ok || !reflect.DeepEqual(got, r) {
			t.Fatalf("reassignment %v %v %v", got, ok, err)
		}
		mustNoErr(t, c.SetOrCreatePartitionReassignment(ver, nil))
		mustNoErr(t, c.DeletePartitionReassignment(ver))
		mustNoErr(t, c.DeletePartitionReassignment(ver)) // already gone: fine
		mustNoErr(t, c.SetOrCreatePartitionReassignment(ver, r))
		if _, ok, _ := c.GetPartitionReassignment(); !ok {
			t.Fatalf("fenced create of reassignment missing")
		}

		mustNoErr(t, c.CreatePreferredReplicaElection([]common.TopicPartition{{Topic: "a", Partition: 0}}))
		if err := c.CreatePreferredReplicaElection(nil); !errors.Is(err, zkclient.ErrPreferredElectionInProgress) {
			t.Fatalf("second election: %v", err)
		}
		pe, ok, err := c.GetPreferredReplicaElection()
		if err != nil || !ok || len(pe) != 1 {
			t.Fatalf("preferred %v %v %v", pe, ok, err)
		}
		mustNoErr(t, c.DeletePreferredReplicaElection(ver))
		if _, ok, _ := c.GetPreferredReplicaElection(); ok {
			t.Fatalf("election node survived")
		}
	})
}

func TestConfigsSeqIDsProducerIDsOffsets(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := readyClient(t, b)
		mustNoErr(t, c.ChangeEntityConfigs(zkpaths.ConfigTypeBroker, zkpaths.ConfigEntityDefault, map[string]string{"log.cleaner.threads": "2"}))
		cfg, err := c.GetEntityConfigs(zkpaths.ConfigTypeBroker, zkpaths.ConfigEntityDefault)
		if err != nil || cfg["log.cleaner.threads"] != "2" {
			t.Fatalf("config %v %v", cfg, err)
		}
		kids, _ := c.Children(zkpaths.ConfigChangesPath)
		if len(kids) != 1 || kids[0] != "config_change_0000000000" {
			t.Fatalf("notifications %v", kids)
		}
		data, _, _ := c.Get(zkpaths.ConfigChangesPath + "/" + kids[0])
		if string(data) != `{"version":2,"entity_path":"brokers/<default>"}` {
			t.Fatalf("notification %s", data)
		}
		// Quota clean-up: an empty client quota set deletes the node.
		user := zkpaths.Sanitize("CN=app,O=Corp")
		mustNoErr(t, c.ChangeEntityConfigs(zkpaths.ConfigTypeUser, user, map[string]string{"producer_byte_rate": "1024"}))
		mustNoErr(t, c.ChangeEntityConfigs(zkpaths.ConfigTypeUser, user, nil))
		if ok, _, _ := c.Exists(zkpaths.ConfigPath(zkpaths.ConfigTypeUser, user)); ok {
			t.Fatalf("empty user quota node not deleted")
		}
		if cfg, err := c.GetEntityConfigs(zkpaths.ConfigTypeTopic, "missing"); err != nil || len(cfg) != 0 {
			t.Fatalf("missing entity: %v %v", cfg, err)
		}

		// broker.id.generation: first generated id is 1001.
		id1, err := c.GenerateBrokerID(zkpaths.ReservedBrokerMaxIDDefault)
		mustNoErr(t, err)
		id2, err := c.GenerateBrokerID(zkpaths.ReservedBrokerMaxIDDefault)
		mustNoErr(t, err)
		if id1 != 1001 || id2 != 1002 {
			t.Fatalf("generated ids %d %d", id1, id2)
		}
		seq, st, _ := c.Get(zkpaths.BrokerSeqIDPath)
		if seq == nil || len(seq) != 0 || st.Version != 2 {
			t.Fatalf("/brokers/seqid = %v v%d, want zero-length v2", seq, st.Version)
		}

		// Producer id blocks: [0,999], then [1000,1999].
		blk, err := c.AllocateProducerIDBlock(2)
		mustNoErr(t, err)
		blk2, err := b.client(t).AllocateProducerIDBlock(3)
		mustNoErr(t, err)
		if blk.BlockStart != 0 || blk.BlockEnd != 999 || blk2.BlockStart != 1000 || blk2.BlockEnd != 1999 {
			t.Fatalf("blocks %+v %+v", blk, blk2)
		}
		data, _, _ = c.Get(zkpaths.LatestProducerIDBlockPath)
		if string(data) != `{"version":1,"broker":3,"block_start":"1000","block_end":"1999"}` {
			t.Fatalf("block node %s", data)
		}

		// Legacy consumer offsets.
		if _, ok, err := c.GetConsumerOffset("g", "t", 0); err != nil || ok {
			t.Fatalf("offset before commit: %v %v", ok, err)
		}
		mustNoErr(t, c.SetConsumerOffset("g", "t", 0, 42))
		mustNoErr(t, c.SetConsumerOffset("g", "t", 0, 43))
		off, ok, err := c.GetConsumerOffset("g", "t", 0)
		if err != nil || !ok || off != 43 {
			t.Fatalf("offset %d %v %v", off, ok, err)
		}

	})
}

func TestMultiAndFencedMultiResults(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := readyClient(t, b)
		_, ver, err := c.RegisterControllerAndIncrementEpoch(1)
		mustNoErr(t, err)
		res, err := c.Multi(zkclient.CreateOp("/m", nil, zkclient.Persistent), zkclient.CreateOp("/m/s_", []byte("x"), zkclient.PersistentSequential))
		mustNoErr(t, err)
		if res[1].String != "/m/s_0000000000" {
			t.Fatalf("multi created %q", res[1].String)
		}
		// Atomic: a failing second op leaves no trace of the first.
		_, err = c.Multi(zkclient.CreateOp("/n", nil, zkclient.Persistent), zkclient.SetOp("/m", nil, 5))
		if !errors.Is(err, zk.ErrBadVersion) {
			t.Fatalf("multi err %v", err)
		}
		if ok, _, _ := c.Exists("/n"); ok {
			t.Fatalf("multi not atomic")
		}
		// A fenced write reports its own op's failure, or the failed
		// epoch check as ErrControllerMoved.
		_, err = c.SetTopicAssignment(ver, "nope", zkpaths.TopicAssignment{}, -1)
		if !errors.Is(err, zk.ErrNoNode) || errors.Is(err, zkclient.ErrControllerMoved) {
			t.Fatalf("fenced inner error %v", err)
		}
		err = c.DeletePartitionReassignment(ver + 1)
		if !errors.Is(err, zkclient.ErrControllerMoved) {
			t.Fatalf("fenced check: %v", err)
		}
	})
}

// A short connection loss (shorter than the session timeout) is invisible
// to callers: requests are retried after reconnecting, the session and its
// ephemerals survive, no session handlers run, and watches stay armed.
func TestConnectionLossKeepsSession(t *testing.T) {
	t.Run("real", func(t *testing.T) {
		b := newRealBackend(t)
		c, writer := b.client(t), b.client(t)
		mustNoErr(t, c.EnsureTopLevelPaths())
		_, err := c.RegisterBroker(brokerInfo(3))
		mustNoErr(t, err)
		var handlers counter
		c.OnNewSession(handlers.inc)
		c.OnSessionExpired(handlers.inc)
		var n counter
		defer c.WatchData("/w", n.inc)()
		sid := c.SessionID()

		p := b.proxies.get(c)
		p.Pause()
		done := make(chan error, 1)
		go func() {
			_, err := c.Create("/during-outage", nil, zkclient.Persistent)
			done <- err
		}()
		time.Sleep(300 * time.Millisecond) // well inside the 2s session timeout
		p.Resume()
		select {
		case err := <-done:
			mustNoErr(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("request issued during the outage never completed")
		}
		if c.SessionID() != sid {
			t.Fatalf("session changed from 0x%x to 0x%x", sid, c.SessionID())
		}
		if _, ok, err := writer.GetBroker(3); err != nil || !ok {
			t.Fatalf("registration lost: %v %v", ok, err)
		}
		_, err = writer.Create("/w", nil, zkclient.Persistent)
		mustNoErr(t, err)
		waitFor(t, 5*time.Second, "watch event after reconnect", func() bool { return n.get() == 1 })
		if handlers.get() != 0 {
			t.Fatalf("session handlers ran %d times on a mere reconnect", handlers.get())
		}
	})
	t.Run("fake", func(t *testing.T) {
		srv := zktest.NewServer()
		conn, ev := srv.Connect()
		c, err := zkclient.New(conn, ev, "", sessionTimeout)
		mustNoErr(t, err)
		defer c.Close()
		conn.SetDisconnected(true)
		done := make(chan error, 1)
		go func() {
			_, err := c.Create("/during-outage", nil, zkclient.Persistent)
			done <- err
		}()
		time.Sleep(100 * time.Millisecond)
		conn.SetDisconnected(false)
		select {
		case err := <-done:
			mustNoErr(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("request never completed")
		}
		if _, _, ok := srv.Get("/during-outage"); !ok {
			t.Fatal("node missing")
		}
	})
}

// ZOOKEEPER-2985: after an expiry the server may still show our previous
// session's registration; RegisterBroker deletes it and registers again.
// The fake can hold the old session's ephemerals back.
func TestRegisterBrokerReplacesOwnStaleNode(t *testing.T) {
	srv := zktest.NewServer()
	conn, ev := srv.Connect()
	c, err := zkclient.New(conn, ev, "", sessionTimeout)
	mustNoErr(t, err)
	defer c.Close()
	mustNoErr(t, c.EnsureTopLevelPaths())
	epoch, err := c.RegisterBroker(brokerInfo(5))
	mustNoErr(t, err)
	old := c.SessionID()
	srv.ExpireKeepingEphemerals(conn)
	waitFor(t, 5*time.Second, "new session", func() bool { return c.SessionID() != old })
	_, st, ok := srv.Get(zkpaths.BrokerIDPath(5))
	if !ok || st.EphemeralOwner != old {
		t.Fatalf("stale node not present: %v %+v", ok, st)
	}
	e2, err := c.RegisterBroker(brokerInfo(5))
	mustNoErr(t, err)
	_, st, _ = srv.Get(zkpaths.BrokerIDPath(5))
	if e2 <= epoch || st.EphemeralOwner != c.SessionID() {
		t.Fatalf("re-registration: epoch %d (old %d), owner 0x%x", e2, epoch, st.EphemeralOwner)
	}
	// A node of some other stale session is never stolen.
	other, _ := srv.Connect()
	_, err = other.Create("/brokers/ids/6", nil, zkclient.Ephemeral, zk.WorldACL(zk.PermAll))
	mustNoErr(t, err)
	if _, err := c.RegisterBroker(brokerInfo(6)); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("foreign node: %v", err)
	}
}

// zookeeper.set.acl=true: creator-all plus world-read by default,
// creator-only below /config/users, /config/brokers and
// /delegation_token/tokens, world-all on /consumers.
func TestSecureACLs(t *testing.T) {
	b := newRealBackend(t)
	c, err := zkclient.Connect(b.srv.ConnectString(b.chroot), sessionTimeout,
		zkclient.WithSecureACLs(true), zkclient.WithDigestAuth("kafka", "secret"))
	mustNoErr(t, err)
	defer c.Close()
	mustNoErr(t, c.EnsureTopLevelPaths())
	mustNoErr(t, c.ChangeEntityConfigs(zkpaths.ConfigTypeUser, "alice", map[string]string{"producer_byte_rate": "1"}))

	// Reading an ACL needs read or admin rights (ZooKeeper 3.8), so inspect
	// with the same identity; a second, anonymous session checks denial.
	raw, _, err := zk.Connect([]string{b.srv.Addr()}, sessionTimeout, zk.WithLogInfo(false))
	mustNoErr(t, err)
	defer raw.Close()
	mustNoErr(t, raw.AddAuth("digest", []byte("kafka:secret")))
	anon, _, err := zk.Connect([]string{b.srv.Addr()}, sessionTimeout, zk.WithLogInfo(false))
	mustNoErr(t, err)
	defer anon.Close()
	aclOf := func(p string) string {
		acls, _, err := raw.GetACL(b.chroot + p)
		mustNoErr(t, err)
		var parts []string
		for _, a := range acls {
			parts = append(parts, a.Scheme+":"+a.ID+":"+strings.TrimLeft(permString(a.Perms), " "))
		}
		return strings.Join(parts, ",")
	}
	creator := "digest:kafka:" // the id is kafka:<hash>
	cases := map[string][]string{
		zkpaths.TopicsPath:                                  {creator, "cdrwa", "world:anyone:r"},
		zkpaths.ConsumersPath:                               {"world:anyone:cdrwa"},
		zkpaths.ConfigPath(zkpaths.ConfigTypeUser, ""):      {creator, "cdrwa"},
		zkpaths.ConfigPath(zkpaths.ConfigTypeUser, "alice"): {creator, "cdrwa"},
		zkpaths.ConfigPath(zkpaths.ConfigTypeBroker, ""):    {creator, "cdrwa"},
	}
	for p, want := range cases {
		got := aclOf(p)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("ACL of %s = %q, want it to contain %q", p, got, w)
			}
		}
		if p != zkpaths.TopicsPath && p != zkpaths.ConsumersPath && strings.Contains(got, "world") {
			t.Errorf("sensitive %s is world-visible: %q", p, got)
		}
	}
	if _, _, err := anon.Get(b.chroot + zkpaths.TopicsPath); err != nil {
		t.Errorf("anonymous read of /brokers/topics: %v", err)
	}
	// An unauthenticated session cannot read a user's SCRAM/quota node.
	if _, _, err := anon.Get(b.chroot + zkpaths.ConfigPath(zkpaths.ConfigTypeUser, "alice")); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("anonymous read of /config/users/alice: %v, want ErrNoAuth", err)
	}
}

func permString(p int32) string {
	s := ""
	for _, x := range []struct {
		bit int32
		c   string
	}{{zk.PermCreate, "c"}, {zk.PermDelete, "d"}, {zk.PermRead, "r"}, {zk.PermWrite, "w"}, {zk.PermAdmin, "a"}} {
		if p&x.bit != 0 {
			s += x.c
		}
	}
	return s
}

// A request begun while the connection is down waits for as long as its
// session lives, with no deadline of its own (Kafka's ZooKeeperClient), and
// fails with an error matching zk.ErrSessionExpired once that session has
// expired, without being sent on the new session.
func TestRequestWaitsForItsSession(t *testing.T) {
	// outage is longer than twice the session timeout, the old give-up.
	const outage = 2*sessionTimeout + time.Second
	createAsync := func(c *zkclient.Client, p string) <-chan error {
		done := make(chan error, 1)
		go func() { // ends with the request
			_, err := c.Create(p, nil, zkclient.Persistent)
			done <- err
		}()
		return done
	}
	wait := func(t *testing.T, done <-chan error, what string) error {
		t.Helper()
		select {
		case err := <-done:
			return err
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: the request never returned", what)
			return nil
		}
	}
	t.Run("fake", func(t *testing.T) {
		srv := zktest.NewServer()
		conn, ev := srv.Connect()
		c, err := zkclient.New(conn, ev, "", sessionTimeout)
		mustNoErr(t, err)
		defer c.Close()

		// Connection loss only: the session lives, the request waits.
		conn.SetDisconnected(true)
		done := createAsync(c, "/kept")
		time.Sleep(outage)
		select {
		case err := <-done:
			t.Fatalf("request returned while its session lived and the connection was down: %v", err)
		default:
		}
		conn.SetDisconnected(false)
		mustNoErr(t, wait(t, done, "after reconnecting"))

		// Expiry while it waits: it fails and is not resent.
		conn.SetDisconnected(true)
		done = createAsync(c, "/lost")
		time.Sleep(300 * time.Millisecond)
		srv.Expire(conn)
		err = wait(t, done, "after expiry")
		if !errors.Is(err, zk.ErrSessionExpired) {
			t.Fatalf("request of an expired session: %v, want zk.ErrSessionExpired", err)
		}
		conn.SetDisconnected(false)
		if _, _, ok := srv.Get("/lost"); ok {
			t.Fatal("the request of the expired session was sent on the new one")
		}

		// Once shutdown has begun, nothing waits for a lost connection.
		conn.SetDisconnected(true)
		done = createAsync(c, "/shutdown")
		c.StopWaiting()
		if err := wait(t, done, "after StopWaiting"); !errors.Is(err, zkclient.ErrClosed) {
			t.Fatalf("request waiting for the connection after StopWaiting: %v, want ErrClosed", err)
		}
		conn.SetDisconnected(false)
		_, err = c.Create("/live", nil, zkclient.Persistent)
		mustNoErr(t, err)
	})
	t.Run("real expiry", func(t *testing.T) {
		b := newRealBackend(t)
		c := b.client(t)
		sid := c.SessionID()
		p := b.proxies.get(c)
		p.Pause()
		done := createAsync(c, "/lost")
		waitFor(t, 30*time.Second, "the server to expire the session", func() bool {
			alive, err := zkserver.SessionAlive(b.srv.Addr(), sid)
			return err == nil && !alive
		})
		p.Resume()
		err := wait(t, done, "after expiry")
		if !errors.Is(err, zk.ErrSessionExpired) {
			t.Fatalf("request of the expired session 0x%x: %v, want zk.ErrSessionExpired", sid, err)
		}
		t.Logf("request of the expired session: %v", err)
		waitFor(t, 30*time.Second, "a new session", func() bool { return c.SessionID() != 0 && c.SessionID() != sid })
		if ok, _, err := c.Exists("/lost"); err != nil || ok {
			t.Fatalf("the request of the expired session was sent on the new one (exists %v, %v)", ok, err)
		}
	})
	t.Run("real server restart", func(t *testing.T) {
		// A standalone server killed for longer than twice the session
		// timeout and restarted restores its sessions from its log and
		// gives each a full timeout, so the client may keep its session
		// or, if it reconnects too late, find it expired: either way the
		// request ends with that outcome, never with connection loss.
		srv, err := zkserver.Start(zkserver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Stop()
		c, err := zkclient.Connect(srv.ConnectString("/restart"), 2*sessionTimeout)
		mustNoErr(t, err)
		defer c.Close()
		sid := c.SessionID()
		mustNoErr(t, srv.Kill())
		killed := time.Now()
		done := createAsync(c, "/during-outage")
		time.Sleep(2*2*sessionTimeout + time.Second)
		mustNoErr(t, srv.Restart())
		t.Logf("server serving again %v after the kill", time.Since(killed).Round(time.Millisecond))
		back := time.Now()
		err = wait(t, done, "after the restart")
		switch {
		case err == nil:
			if c.SessionID() != sid {
				t.Fatalf("request succeeded but the session changed 0x%x -> 0x%x", sid, c.SessionID())
			}
			t.Logf("session 0x%x kept; the request completed %v after the server was back", sid, time.Since(back).Round(time.Millisecond))
		case errors.Is(err, zk.ErrSessionExpired):
			t.Logf("session 0x%x expired; the request failed %v after the server was back: %v", sid, time.Since(back).Round(time.Millisecond), err)
		default:
			t.Fatalf("request during the outage: %v, want success or session expiry", err)
		}
	})
}
