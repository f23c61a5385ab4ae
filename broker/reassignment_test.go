package broker_test

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

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Partition reassignment with in-process brokers on a real ZooKeeper, both
// through AlterPartitionReassignments and through /admin/reassign_partitions:
// the new replica catches up, the removed one deletes its log directory.

// TestReassignmentAPIRemovesLogDir: reassignment through AlterPartitionReassignments and
// ListPartitionReassignments (API 45/46): while the new replica cannot catch
// up, /brokers/topics/<t> carries adding_replicas and removing_replicas and
// the list call reports them (the leader holds the new replica's fetches
// to keep the move in flight); once it catches up the assignment is the
// target, nothing is listed, the removed replica got StopReplica(delete)
// and its log directory is gone from its broker's disk, and every record
// is still there.
func TestReassignmentAPIRemovesLogDir(t *testing.T) {
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
		return noEntryFor(dir, "move-0")
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
	got := consumeN(ctx, t, cl, 200, "move after the reassignment", nil)
	if got != 200 {
		t.Errorf("read %d records after the move, want 200", got)
	}
}

// TestReassignmentZnodeRemovesLogDir: reassignment through /admin/reassign_partitions (what
// kafka-reassign-partitions.sh --zookeeper writes): the controller moves
// the partition, deletes the znode when done, and the removed replica's
// directory leaves its broker's disk.
func TestReassignmentZnodeRemovesLogDir(t *testing.T) {
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
		return noEntryFor(dir, "zmove-0")
	})
	s, _ := c.PartitionState("zmove", 0)
	if s.Leader == ids[0] || slices.Contains(s.ISR, ids[0]) || s.Leader < 0 {
		t.Errorf("state after the move: %s", s)
	}
}

// noEntryFor reports whether dir could be read and holds no entry whose name
// starts with partDir (the partition directory or its renamed
// -delete/-future forms).
func noEntryFor(dir, partDir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), partDir) {
			return false
		}
	}
	return true
}
