package main

import (
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// TestWatcherSeesChangesUndoneAtOnce runs the cluster watcher against a
// real ZooKeeper and makes changes that are undone in the same
// transaction, so no read can ever see them: the timeline still reports
// each, by the znode's version or czxid. A change the watcher can read by
// itself is reported with its value.
func TestWatcherSeesChangesUndoneAtOnce(t *testing.T) {
	connect := zkserver.ConnectString(t)
	servers, chroot, err := zkclient.ParseConnectString(connect)
	if err != nil {
		t.Fatal(err)
	}
	conn, _, err := zk.Connect(servers, 10*time.Second, zk.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	acl := zk.WorldACL(zk.PermAll)
	state := func(isr ...int32) []byte {
		return zkpaths.LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: isr, ControllerEpoch: 1}.Encode()
	}
	controller := []byte(`{"version":1,"brokerid":1,"timestamp":"1"}`)
	for _, n := range []struct {
		path string
		data []byte
	}{
		{"", nil}, {"/brokers", nil}, {"/brokers/ids", nil}, {"/brokers/ids/1", []byte("{}")}, {"/brokers/ids/2", []byte("{}")},
		{"/brokers/topics", nil}, {"/brokers/topics/t", nil}, {"/brokers/topics/t/partitions", nil},
		{"/brokers/topics/t/partitions/0", nil}, {"/brokers/topics/t/partitions/0/state", state(1, 2)},
		{"/controller_epoch", []byte("1")}, {"/controller", controller},
	} {
		if _, err := conn.Create(chroot+n.path, n.data, 0, acl); err != nil {
			t.Fatalf("create %s: %v", n.path, err)
		}
	}
	tl := &Timeline{start: time.Now()}
	w, err := watchCluster(connect, "t", 1, tl)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			w.Stop()
		}
	}()
	has := func(sub string) bool {
		for _, e := range tl.Events() {
			if e.Source == "cluster" && strings.Contains(e.What, sub) {
				return true
			}
		}
		return false
	}
	for _, first := range []string{"controller is broker 1", "controller epoch 1", "registered brokers [1 2]", "partition 0: leader 1 (epoch 0), isr [1 2]"} {
		if !has(first) {
			t.Fatalf("the first read is not in the timeline: %q\n%v", first, tl.Events())
		}
	}

	// Each change and its undoing in one transaction.
	if _, err := conn.Multi(
		&zk.SetDataRequest{Path: chroot + "/brokers/topics/t/partitions/0/state", Data: state(1), Version: -1},
		&zk.SetDataRequest{Path: chroot + "/brokers/topics/t/partitions/0/state", Data: state(1, 2), Version: -1},
		&zk.DeleteRequest{Path: chroot + "/brokers/ids/2", Version: -1},
		&zk.CreateRequest{Path: chroot + "/brokers/ids/2", Data: []byte("{}"), Acl: acl},
		&zk.DeleteRequest{Path: chroot + "/controller", Version: -1},
		&zk.CreateRequest{Path: chroot + "/controller", Data: controller, Acl: acl},
	); err != nil {
		t.Fatal(err)
	}
	// And one the watcher can read by itself.
	if _, err := conn.Set(chroot+"/controller_epoch", []byte("2"), -1); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"partition 0: rewritten, leader 1 (epoch 0) and isr [1 2] as before (controller epoch 1, zk version 2; 2 writes since the last read (zk version 0 -> 2), 1 not seen by themselves)",
		"broker 2 registered again with a new broker epoch",
		"controller is broker 1 (session 0x0); deleted and created again since the last read",
		"controller epoch 2",
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, s := range want {
		for !has(s) {
			if time.Now().After(deadline) {
				var b strings.Builder
				tl.Print(&b)
				t.Fatalf("the timeline lacks %q:\n%s", s, b.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// A registration seen gone, then back with another czxid: registered
	// again, with the epoch it had before.
	wait := func(sub string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !has(sub) {
			if time.Now().After(deadline) {
				var b strings.Builder
				tl.Print(&b)
				t.Fatalf("the timeline lacks %q:\n%s", sub, b.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if err := conn.Delete(chroot+"/brokers/ids/1", -1); err != nil {
		t.Fatal(err)
	}
	wait("broker 1's registration /brokers/ids/1 is gone")
	if _, err := conn.Create(chroot+"/brokers/ids/1", []byte("{}"), 0, acl); err != nil {
		t.Fatal(err)
	}
	wait("broker 1 registered again with a new broker epoch")
	w.Stop() // returns only once every goroutine of the watcher has ended
	stopped = true
	var b strings.Builder
	tl.Print(&b)
	t.Logf("timeline:\n%s", b.String())
}
