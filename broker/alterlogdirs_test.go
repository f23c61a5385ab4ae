package broker_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/klassik/klassik/broker/testcluster"
)

// Moving replicas between the log.dirs of one broker (JBOD,
// AlterReplicaLogDirs / DescribeLogDirs) on real brokers with two log
// directories each and a real ZooKeeper.

// alterLogDir asks broker i to move its replica of topic-p to dir and
// returns the partition's error code.
func alterLogDir(t *testing.T, c *testcluster.Cluster, i int, topic string, p int32, dir string) int16 {
	t.Helper()
	req := kmsg.NewPtrAlterReplicaLogDirsRequest()
	d := kmsg.NewAlterReplicaLogDirsRequestDir()
	d.Dir = dir
	rt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
	rt.Topic, rt.Partitions = topic, []int32{p}
	d.Topics = append(d.Topics, rt)
	req.Dirs = append(req.Dirs, d)
	resp := request[*kmsg.AlterReplicaLogDirsResponse](ctxT(t, 10*time.Second), t, c.Direct(i), req)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("AlterReplicaLogDirs answer %+v", resp)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// describeLogDirs asks broker i for its log directories (topics nil: all).
func describeLogDirs(t *testing.T, c *testcluster.Cluster, i int, topics map[string][]int32) *kmsg.DescribeLogDirsResponse {
	t.Helper()
	req := kmsg.NewPtrDescribeLogDirsRequest()
	for topic, ps := range topics {
		rt := kmsg.NewDescribeLogDirsRequestTopic()
		rt.Topic, rt.Partitions = topic, ps
		req.Topics = append(req.Topics, rt)
	}
	// The first request after a restart may meet the old connection's EOF.
	var err error
	for range 3 {
		var resp kmsg.Response
		if resp, err = c.Direct(i).Request(ctxT(t, 10*time.Second), req); err == nil {
			return resp.(*kmsg.DescribeLogDirsResponse)
		}
	}
	t.Fatalf("DescribeLogDirs to broker %d: %v", c.BrokerID(i), err)
	return nil
}

// setLogDirThrottle sets the cluster-wide dynamic
// replica.alter.log.dirs.io.max.bytes.per.second (a dynamic-only key, as
// in Kafka) and waits until every broker applies it.
func setLogDirThrottle(t *testing.T, c *testcluster.Cluster, rate int64) {
	t.Helper()
	v := strconv.FormatInt(rate, 10)
	res, err := c.Admin().AlterBrokerConfigs(ctxT(t, 10*time.Second), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "replica.alter.log.dirs.io.max.bytes.per.second", Value: &v}})
	if err == nil {
		for _, r := range res {
			if r.Err != nil {
				err = r.Err
			}
		}
	}
	if err != nil {
		t.Fatalf("set the log dir throttle: %v", err)
	}
	for i := 0; i < c.N(); i++ {
		c.WaitFor(20*time.Second, "the log dir throttle applied", func() bool {
			return c.Broker(i).Dynamic().Current().ReplicaAlterLogDirsIOMaxBytesPerSecond == rate
		})
	}
}

// otherDir is broker i's log directory that does not hold tp.
func otherDir(t *testing.T, c *testcluster.Cluster, i int, tp common.TopicPartition) (from, to string) {
	t.Helper()
	lm := c.Broker(i).LogManager()
	cur, _ := lm.LogDirs(tp)
	for _, d := range lm.Dirs() {
		if d != cur {
			return cur, d
		}
	}
	t.Fatalf("broker %d has no second log dir besides %q", c.BrokerID(i), cur)
	return "", ""
}

// replicaKeys reads every record of the log from its files: offset → key.
func replicaKeys(t *testing.T, l *storage.Log) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		recs, err := l.ReadRecords(off, 1<<20, l.LogEndOffset(), true)
		if err != nil || recs == nil {
			t.Fatalf("read %s at %d: %v (nil records: %v)", l.Dir(), off, err, recs == nil)
		}
		data, err := recs.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		// A read ends at its byte limit, maybe inside a batch.
		whole := 0
		for whole+12 <= len(data) {
			size := 12 + int(binary.BigEndian.Uint32(data[whole+8:]))
			if whole+size > len(data) {
				break
			}
			whole += size
		}
		err = record.ForEachBatch(data[:whole], func(batch []byte, h record.BatchHeader) error {
			if err := record.CheckCRC(batch); err != nil {
				return err
			}
			off = h.NextOffset()
			if h.IsControl() {
				return nil
			}
			rs, err := record.Records(batch)
			for _, r := range rs {
				out[r.Offset(h)] = string(r.Key)
			}
			return err
		})
		if err != nil {
			t.Fatalf("decode %s: %v", l.Dir(), err)
		}
	}
	return out
}

// acks are the acknowledged records of one partition: offset → key.
type acks struct {
	mu       sync.Mutex
	byOffset map[int64]string
}

func (a *acks) add(offset int64, key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byOffset == nil {
		a.byOffset = map[int64]string{}
	}
	a.byOffset[offset] = key
}

func (a *acks) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.byOffset)
}

// loadProducer produces keyed 1 KiB records with acks=all to partition 0
// until stop is closed, recording every acknowledgement in chk and ack;
// wait returns the number of acknowledged records and fails the test on
// any produce error.
func loadProducer(t *testing.T, c *testcluster.Cluster, topic string, chk *testcluster.Checker, ack *acks, stop <-chan struct{}) (wait func() int) {
	prod := c.Client(kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(2*time.Millisecond),
		kgo.RecordDeliveryTimeout(60*time.Second), kgo.MaxBufferedRecords(2000))
	var wg sync.WaitGroup
	var acked, failed atomic.Int64
	var firstErr atomic.Value
	value := []byte(strings.Repeat("v", 1024))
	done := make(chan struct{})
	go func() { // the load; ends when stop closes
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := fmt.Sprintf("key-%07d", i)
			seq := int64(i)
			wg.Add(1)
			prod.Produce(context.Background(), &kgo.Record{Key: []byte(id), Value: value}, func(r *kgo.Record, err error) {
				defer wg.Done()
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					return
				}
				acked.Add(1)
				chk.Acked(id, seq, r.Partition, r.Offset)
				ack.add(r.Offset, id)
			})
		}
	}()
	return func() int {
		<-done
		flushed := make(chan struct{})
		go func() { wg.Wait(); close(flushed) }() // ends when every callback ran
		select {
		case <-flushed:
		case <-time.After(90 * time.Second):
			t.Fatalf("produce callbacks pending after 90 s")
		}
		if f := failed.Load(); f > 0 {
			t.Fatalf("%d produce failures, first: %v", f, firstErr.Load())
		}
		return int(acked.Load())
	}
}

// checkReplicaFiles checks that broker i's replica of tp lives in dir and
// holds every acknowledged record at its offset with its key.
func checkReplicaFiles(t *testing.T, c *testcluster.Cluster, i int, tp common.TopicPartition, dir string, ack *acks) {
	t.Helper()
	l, ok := c.Broker(i).LogManager().GetLog(tp)
	if !ok {
		t.Fatalf("broker %d has no log of %s", c.BrokerID(i), tp)
	}
	if got := filepath.Dir(l.Dir()); got != dir {
		t.Fatalf("broker %d: %s is in %s, want %s", c.BrokerID(i), tp, got, dir)
	}
	keys := replicaKeys(t, l)
	missing := 0
	ack.mu.Lock()
	defer ack.mu.Unlock()
	for off, id := range ack.byOffset {
		if keys[off] != id {
			if missing < 5 {
				t.Errorf("broker %d: offset %d holds %q, acknowledged %q", c.BrokerID(i), off, keys[off], id)
			}
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("broker %d: %d acknowledged records not in the moved replica's files", c.BrokerID(i), missing)
	}
}

// TestAlterReplicaLogDirsUnderLoad: both replicas of a partition (the
// leader's and the follower's) move to their broker's other log dir while
// an acks=all producer writes without pause; when the moves are done every
// acknowledged record is in the moved replicas' files at its offset with
// its key and a consumer reads them all; the old directories are marked
// for deletion. A replica
// the broker does not host yet answers REPLICA_NOT_AVAILABLE and is created
// in the requested directory when a reassignment brings it.
func TestAlterReplicaLogDirsUnderLoad(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, LogDirs: 2})
	setLogDirThrottle(t, c, 2000000)
	ids := []int32{c.BrokerID(0), c.BrokerID(1)}
	tp := common.TopicPartition{Topic: "jbod", Partition: 0}
	createAssigned(t, c, tp.Topic, [][]int32{{ids[0], ids[1]}}, map[string]string{
		"min.insync.replicas": "2", "segment.bytes": "262144"})
	chk, ack := testcluster.NewChecker(), &acks{}
	stop := make(chan struct{})
	wait := loadProducer(t, c, tp.Topic, chk, ack, stop)
	c.WaitFor(60*time.Second, "3 MB in the partition", func() bool {
		l, ok := c.Broker(0).LogManager().GetLog(tp)
		return ok && l.Size() > 3<<20
	})
	var from, to [2]string
	for i := range 2 {
		from[i], to[i] = otherDir(t, c, i, tp)
		if code := alterLogDir(t, c, i, tp.Topic, tp.Partition, to[i]); code != 0 {
			t.Fatalf("broker %d AlterReplicaLogDirs: %v", ids[i], kerr.ErrorForCode(code))
		}
	}
	for i := range 2 {
		c.WaitFor(90*time.Second, fmt.Sprintf("broker %d's replica moved", ids[i]), func() bool {
			cur, fut := c.Broker(i).LogManager().LogDirs(tp)
			return cur == to[i] && fut == ""
		})
	}
	// A little more load on the moved replicas, then stop.
	moved := ack.len()
	c.WaitFor(30*time.Second, "records acknowledged after the move", func() bool { return ack.len() > moved+500 })
	close(stop)
	n := wait()
	c.WaitFor(30*time.Second, "the follower caught up", func() bool {
		l0, _ := c.Broker(0).LogManager().GetLog(tp)
		l1, _ := c.Broker(1).LogManager().GetLog(tp)
		return l0.LogEndOffset() == l1.LogEndOffset() && l0.HighWatermark() == l0.LogEndOffset()
	})
	for i := range 2 {
		checkReplicaFiles(t, c, i, tp, to[i], ack)
		// The old directory is renamed <topic>-<p>.<uuid>-delete at once and
		// removed on the log manager's schedule (whose first run is 30 s
		// after start-up); no -future directory is left.
		for _, d := range []string{from[i], to[i]} {
			entries, _ := os.ReadDir(d)
			for _, e := range entries {
				if n := e.Name(); strings.HasPrefix(n, tp.String()) && (d == from[i] && !strings.HasSuffix(n, "-delete") || strings.HasSuffix(n, "-future")) {
					t.Fatalf("broker %d: %s left in %s after the move", ids[i], n, d)
				}
			}
		}
	}
	cons := c.Client(kgo.ConsumeTopics(tp.Topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	consumeN(ctxT(t, 60*time.Second), t, cons, n, tp.Topic, func(r *kgo.Record) { chk.Consumed(string(r.Key), r.Partition, r.Offset) })
	if rep := chk.Report(); !rep.OK() || rep.Acked != n {
		t.Fatalf("delivery check after the moves: %s", rep)
	}

	// The preferred log dir of a replica the broker does not host yet.
	createAssigned(t, c, "later", [][]int32{{ids[0]}}, nil)
	later := common.TopicPartition{Topic: "later", Partition: 0}
	want := c.Broker(1).LogManager().Dirs()[1]
	if code := alterLogDir(t, c, 1, later.Topic, 0, want); code != kerr.ReplicaNotAvailable.Code {
		t.Fatalf("AlterReplicaLogDirs for a replica not hosted yet: %v, want REPLICA_NOT_AVAILABLE", kerr.ErrorForCode(code))
	}
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign(later.Topic, 0, []int32{ids[0], ids[1]})
	if res, err := c.Admin().AlterPartitionAssignments(ctxT(t, 20*time.Second), req); err != nil || res[later.Topic][0].Err != nil {
		t.Fatalf("reassign %s: %v %+v", later, err, res)
	}
	c.WaitFor(30*time.Second, "the new replica created", func() bool {
		cur, _ := c.Broker(1).LogManager().LogDirs(later)
		return cur != ""
	})
	if cur, _ := c.Broker(1).LogManager().LogDirs(later); cur != want {
		t.Fatalf("new replica of %s created in %s, want the preferred %s", later, cur, want)
	}
}

// TestAlterReplicaLogDirsResumesAfterRestart: a broker killed in the
// middle of a throttled move finds the -future directory at start-up,
// loads it as the future replica and finishes the move; every record is
// still there. DescribeLogDirs reports the move as Kafka does: the future
// log with is_future and its lag behind the current log's end, and after
// the move one current log with its size and lag 0; a path outside
// log.dirs is LOG_DIR_NOT_FOUND and an unknown partition
// UNKNOWN_TOPIC_OR_PARTITION.
func TestAlterReplicaLogDirsResumesAfterRestart(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, LogDirs: 2})
	setLogDirThrottle(t, c, 1000000)
	tp := common.TopicPartition{Topic: "resume", Partition: 0}
	createAssigned(t, c, tp.Topic, [][]int32{{c.BrokerID(0)}}, map[string]string{"segment.bytes": "262144"})
	chk, ack := testcluster.NewChecker(), &acks{}
	stop := make(chan struct{})
	wait := loadProducer(t, c, tp.Topic, chk, ack, stop)
	c.WaitFor(60*time.Second, "4 MB in the partition", func() bool {
		l, ok := c.Broker(0).LogManager().GetLog(tp)
		return ok && l.Size() > 4<<20
	})
	close(stop)
	n := wait()
	from, to := otherDir(t, c, 0, tp)

	if code := alterLogDir(t, c, 0, tp.Topic, 0, "/no/such/dir"); code != kerr.LogDirNotFound.Code {
		t.Fatalf("AlterReplicaLogDirs to a path outside log.dirs: %v", kerr.ErrorForCode(code))
	}
	if code := alterLogDir(t, c, 0, "nosuchtopic", 0, to); code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("AlterReplicaLogDirs of an unknown partition: %v", kerr.ErrorForCode(code))
	}
	if code := alterLogDir(t, c, 0, tp.Topic, 0, to); code != 0 {
		t.Fatalf("AlterReplicaLogDirs: %v", kerr.ErrorForCode(code))
	}
	// During the move: the current log in from (lag 0), the future in to.
	var future kmsg.DescribeLogDirsResponseDirTopicPartition
	c.WaitFor(20*time.Second, "a future log with data and a lag", func() bool {
		for _, d := range describeLogDirs(t, c, 0, map[string][]int32{tp.Topic: {0}}).Dirs {
			for _, tt := range d.Topics {
				for _, p := range tt.Partitions {
					if d.Dir == to && p.IsFuture && p.Size > 0 && p.OffsetLag > 0 {
						future = p
						return true
					}
				}
			}
		}
		return false
	})
	l, _ := c.Broker(0).LogManager().GetLog(tp)
	for _, d := range describeLogDirs(t, c, 0, nil).Dirs {
		if d.ErrorCode != 0 {
			t.Fatalf("dir %s error %v", d.Dir, kerr.ErrorForCode(d.ErrorCode))
		}
		if d.Dir == from {
			if len(d.Topics) != 1 || len(d.Topics[0].Partitions) != 1 {
				t.Fatalf("source dir during the move: %+v", d.Topics)
			}
			p := d.Topics[0].Partitions[0]
			if p.IsFuture || p.OffsetLag != 0 || p.Size != l.Size() {
				t.Fatalf("current log during the move: %+v (size %d)", p, l.Size())
			}
		}
	}
	if future.OffsetLag > l.LogEndOffset() {
		t.Fatalf("future lag %d beyond the log end %d", future.OffsetLag, l.LogEndOffset())
	}

	c.KillBroker(0)
	entries, err := os.ReadDir(to)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		found = found || strings.HasPrefix(e.Name(), tp.String()+".") && strings.HasSuffix(e.Name(), "-future")
	}
	if !found {
		t.Fatalf("no -future directory in %s after the kill", to)
	}
	c.RestartBroker(0)
	c.WaitFor(90*time.Second, "the move finished after the restart", func() bool {
		cur, fut := c.Broker(0).LogManager().LogDirs(tp)
		return cur == to && fut == ""
	})
	checkReplicaFiles(t, c, 0, tp, to, ack)
	l, _ = c.Broker(0).LogManager().GetLog(tp)
	res := describeLogDirs(t, c, 0, map[string][]int32{tp.Topic: {0}})
	for _, d := range res.Dirs {
		var parts []kmsg.DescribeLogDirsResponseDirTopicPartition
		for _, tt := range d.Topics {
			parts = append(parts, tt.Partitions...)
		}
		switch {
		case d.Dir == to && (len(parts) != 1 || parts[0].IsFuture || parts[0].OffsetLag != 0 || parts[0].Size != l.Size()):
			t.Fatalf("target dir after the move: %+v (size %d)", parts, l.Size())
		case d.Dir == from && len(parts) != 0:
			t.Fatalf("source dir after the move still lists %+v", parts)
		}
	}
	cons := c.Client(kgo.ConsumeTopics(tp.Topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	consumeN(ctxT(t, 60*time.Second), t, cons, n, tp.Topic, func(r *kgo.Record) { chk.Consumed(string(r.Key), r.Partition, r.Offset) })
	if rep := chk.Report(); !rep.OK() || rep.Acked != n {
		t.Fatalf("delivery check after the restart: %s", rep)
	}
}
