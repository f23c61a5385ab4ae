package group_test

// Transactional offset commits over the real __consumer_offsets log: the
// group coordinator writes through the replica manager (replica.TopicLog)
// into on-disk storage, the partition's producer state fences an old
// producer epoch, the transaction coordinator's marker is a real control
// batch written by WriteTxnMarkers, and a coordinator that loads the
// partition again reads both.

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/group"
	"github.com/klassik/klassik/broker/metadata"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/klassik/klassik/broker/replica"
	"github.com/klassik/klassik/broker/storage"
)

const offsetsPartitions = 2

// offsetsLeader is a replica manager over real storage leading every
// __consumer_offsets partition alone.
func offsetsLeader(t *testing.T) *replica.Manager {
	t.Helper()
	mc := storage.DefaultManagerConfig(t.TempDir())
	mc.Logger = quietLog()
	lm, err := storage.NewLogManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lm.Shutdown() })
	cfg := replica.Config{BrokerID: 1, Logger: quietLog()}
	m := replica.New(cfg, replica.NewLogStore(lm), metadata.New(1, "test"))
	t.Cleanup(m.Shutdown)
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version, req.ControllerEpoch, req.BrokerEpoch = 6, 1, -1
	ts := kmsg.NewLeaderAndISRRequestTopicState()
	ts.Topic = replica.OffsetsTopic
	ts.TopicID = [16]byte{1}
	for p := int32(0); p < offsetsPartitions; p++ {
		ps := kmsg.NewLeaderAndISRRequestTopicPartition()
		ps.Partition, ps.ControllerEpoch, ps.Leader, ps.LeaderEpoch = p, 1, 1, 0
		ps.ISR, ps.Replicas, ps.IsNew = []int32{1}, []int32{1}, true
		ts.PartitionStates = append(ts.PartitionStates, ps)
	}
	req.TopicStates = []kmsg.LeaderAndISRRequestTopicState{ts}
	for _, tp := range m.LeaderAndIsr(context.Background(), req).Topics[0].Partitions {
		if tp.ErrorCode != 0 {
			t.Fatalf("LeaderAndIsr: %v", kerr.ErrorForCode(tp.ErrorCode))
		}
	}
	return m
}

func loadedCoordinator(t *testing.T, m *replica.Manager) *group.Coordinator {
	t.Helper()
	cfg := group.DefaultConfig()
	cfg.OffsetsTopicPartitions = offsetsPartitions
	c, err := group.New(cfg, m.TopicLog(replica.OffsetsTopic), purgatory.RealClock(), quietLog())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for p := int32(0); p < offsetsPartitions; p++ {
		c.OnBecomeLeader(p)
	}
	deadline := time.Now().Add(10 * time.Second)
	for p := int32(0); p < offsetsPartitions; p++ {
		for c.IsLoading(p) {
			if time.Now().After(deadline) {
				t.Fatal("partitions not loaded")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return c
}

func txnOffsetCommit(c *group.Coordinator, pid int64, epoch int16, offset int64) int16 {
	r := kmsg.NewPtrTxnOffsetCommitRequest()
	r.Version = 3
	r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch = "tx", "g", pid, epoch
	r.Generation = -1
	r.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "in", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: offset, LeaderEpoch: -1}}}}
	return c.TxnOffsetCommit(context.Background(), r).Topics[0].Partitions[0].ErrorCode
}

func fetchCommitted(t *testing.T, c *group.Coordinator, requireStable bool) (int64, int16) {
	t.Helper()
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version, r.Group, r.RequireStable = 7, "g", requireStable
	r.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "in", Partitions: []int32{0}}}
	resp := c.OffsetFetch(context.Background(), r)
	if resp.ErrorCode != 0 {
		t.Fatalf("OffsetFetch: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	p := resp.Topics[0].Partitions[0]
	return p.Offset, p.ErrorCode
}

// endTxn writes pid's marker to the group's partition and hands the
// outcome to the coordinator as the api layer does.
func endTxn(t *testing.T, m *replica.Manager, c *group.Coordinator, pid int64, epoch int16, commit bool) {
	t.Helper()
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch = pid, epoch, commit, 0
	mk.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: replica.OffsetsTopic, Partitions: []int32{c.PartitionFor("g")}}}
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 1
	req.Markers = []kmsg.WriteTxnMarkersRequestMarker{mk}
	resp := m.WriteTxnMarkers(context.Background(), req)
	if code := resp.Markers[0].Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("WriteTxnMarkers: %v", kerr.ErrorForCode(code))
	}
	for _, done := range replica.OffsetsTxnCompletions(req, resp) {
		c.HandleTxnCompletion(done.ProducerID, done.Partitions, done.Commit)
	}
}

func TestTxnOffsetCommitOnStorage(t *testing.T) {
	m := offsetsLeader(t)
	c := loadedCoordinator(t, m)
	if code := txnOffsetCommit(c, 9, 1, 42); code != 0 {
		t.Fatalf("TxnOffsetCommit: %v", kerr.ErrorForCode(code))
	}
	// The partition's producer state knows producer 9 at epoch 1 now.
	if code := txnOffsetCommit(c, 9, 0, 43); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("commit with an older producer epoch: %s", kerr.ErrorForCode(code))
	}
	if off, code := fetchCommitted(t, c, false); off != -1 || code != 0 {
		t.Fatalf("pending offset visible: %d %v", off, code)
	}
	if _, code := fetchCommitted(t, c, true); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("require_stable with a pending offset: %v", code)
	}
	p, ok := m.Partition(common.TopicPartition{Topic: replica.OffsetsTopic, Partition: c.PartitionFor("g")})
	if !ok {
		t.Fatal("no offsets partition")
	}
	if lso, hw := p.Log().LastStableOffset(), p.Log().HighWatermark(); lso != 0 || hw != 1 {
		t.Fatalf("offsets partition LSO %d HW %d with the transaction open", lso, hw)
	}
	endTxn(t, m, c, 9, 1, true)
	if off, code := fetchCommitted(t, c, true); off != 42 || code != 0 {
		t.Fatalf("after the COMMIT marker: %d %v", off, code)
	}
	if lso := p.Log().LastStableOffset(); lso != 2 {
		t.Fatalf("offsets partition LSO after the marker: %d", lso)
	}

	// A second transaction is aborted; then a new coordinator loads the
	// partition from disk.
	if code := txnOffsetCommit(c, 9, 1, 50); code != 0 {
		t.Fatalf("second TxnOffsetCommit: %v", kerr.ErrorForCode(code))
	}
	endTxn(t, m, c, 9, 1, false)
	if off, _ := fetchCommitted(t, c, true); off != 42 {
		t.Fatalf("after the ABORT marker: %d", off)
	}
	if code := txnOffsetCommit(c, 9, 1, 60); code != 0 { // left open
		t.Fatalf("third TxnOffsetCommit: %v", kerr.ErrorForCode(code))
	}
	c.Close()
	c2 := loadedCoordinator(t, m)
	if off, code := fetchCommitted(t, c2, false); off != 42 || code != 0 {
		t.Fatalf("loaded: %d %v", off, code)
	}
	if _, code := fetchCommitted(t, c2, true); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("loaded open transaction: require_stable %v", code)
	}
	endTxn(t, m, c2, 9, 1, true)
	if off, _ := fetchCommitted(t, c2, true); off != 60 {
		t.Fatalf("loaded transaction committed: %d", off)
	}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
