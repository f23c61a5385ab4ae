package replica_test

// The partition side of transactions on a real cluster (real ZooKeeper,
// in-process brokers): transactional batches produced over the wire,
// markers written with WriteTxnMarkers as the transaction coordinator
// would, and franz-go consumers reading with both isolation levels.

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/klassik/klassik/broker/testcluster"
)

// TestMain shares one real ZooKeeper server between the cluster tests of
// this package (started only by the first test that needs it).
func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// txnBatch is a transactional batch of one producer, one record per value.
func txnBatch(pid int64, seq int32, values ...string) []byte {
	o := record.DefaultBuildOptions()
	o.Transactional = true
	o.ProducerID, o.ProducerEpoch, o.BaseSequence = pid, 0, seq
	o.BaseTimestamp = time.Now().UnixMilli()
	recs := make([]record.Record, len(values))
	for i, v := range values {
		recs[i] = record.Record{OffsetDelta: int32(i), Value: []byte(v)}
	}
	return record.Build(o, recs)
}

// plainBatch is a batch without producer id.
func plainBatch(values ...string) []byte {
	o := record.DefaultBuildOptions()
	o.BaseTimestamp = time.Now().UnixMilli()
	recs := make([]record.Record, len(values))
	for i, v := range values {
		recs[i] = record.Record{OffsetDelta: int32(i), Value: []byte(v)}
	}
	return record.Build(o, recs)
}

// txnCluster is a cluster with a one-partition topic and its leader.
type txnCluster struct {
	t      *testing.T
	c      *testcluster.Cluster
	topic  string
	leader int // index of the partition's leader
}

func startTxnCluster(t *testing.T, brokers int, topic string) *txnCluster {
	c := testcluster.Start(t, testcluster.Options{Brokers: brokers})
	c.CreateTopic(topic, 1, int16(brokers), nil)
	tc := &txnCluster{t: t, c: c, topic: topic}
	tc.findLeader()
	return tc
}

func (tc *txnCluster) findLeader() {
	tc.t.Helper()
	tc.c.WaitLeaders(60*time.Second, tc.topic, 1)
	st, _ := tc.c.PartitionState(tc.topic, 0)
	tc.leader = tc.c.Index(st.Leader)
}

// produce sends records with acks=all over the wire to the leader (with
// a transactional id, which Produce requires for transactional batches).
func (tc *txnCluster) produce(records []byte) int64 {
	tc.t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Version = 8
	tx := "app"
	req.TransactionID = &tx
	req.Acks = -1
	req.TimeoutMillis = 15000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = tc.topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = records
	rt.Partitions = []kmsg.ProduceRequestTopicPartition{rp}
	req.Topics = []kmsg.ProduceRequestTopic{rt}
	resp, err := req.RequestWith(ctxFor(tc.t, 30*time.Second), tc.c.Direct(tc.leader))
	if err != nil {
		tc.t.Fatalf("produce: %v", err)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		tc.t.Fatalf("produce: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	return p.BaseOffset
}

// endTxn writes the marker of pid on the leader, as the transaction
// coordinator's WriteTxnMarkers would, and checks it was written.
func (tc *txnCluster) endTxn(pid int64, commit bool) {
	tc.t.Helper()
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch = pid, 0, commit, 1
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = tc.topic, []int32{0}
	mk.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{mt}
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 1
	req.Markers = []kmsg.WriteTxnMarkersRequestMarker{mk}
	resp := tc.c.Broker(tc.leader).Replicas().WriteTxnMarkers(ctxFor(tc.t, 30*time.Second), req)
	if len(resp.Markers) != 1 || len(resp.Markers[0].Topics) != 1 {
		tc.t.Fatalf("WriteTxnMarkers response %+v", resp)
	}
	if code := resp.Markers[0].Topics[0].Partitions[0].ErrorCode; code != 0 {
		tc.t.Fatalf("WriteTxnMarkers for producer %d: %v", pid, kerr.ErrorForCode(code))
	}
}

// listOffset asks the leader for the latest offset at an isolation level
// (1: read_committed, answered with the LSO).
func (tc *txnCluster) listOffset(isolation int8) int64 {
	tc.t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 5
	req.ReplicaID = -1
	req.IsolationLevel = isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = tc.topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -1
	rp.CurrentLeaderEpoch = -1
	rt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{rp}
	req.Topics = []kmsg.ListOffsetsRequestTopic{rt}
	// Right after a restart the cached connection to the old process
	// fails once; kgo dials again on the next request.
	var resp *kmsg.ListOffsetsResponse
	var err error
	tc.c.WaitFor(30*time.Second, "a ListOffsets answer", func() bool {
		resp, err = req.RequestWith(ctxFor(tc.t, 10*time.Second), tc.c.Direct(tc.leader))
		return err == nil
	})
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		tc.t.Fatalf("ListOffsets: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	return p.Offset
}

// consumer reads the partition from the start at an isolation level.
type consumer struct {
	cl   *kgo.Client
	seen []string
}

func (tc *txnCluster) consumer(level kgo.IsolationLevel) *consumer {
	return &consumer{cl: tc.c.Client(
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{tc.topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(level), kgo.FetchMaxWait(200*time.Millisecond))}
}

// pollUntil polls until n records were seen in all, failing after 30 s.
func (co *consumer) pollUntil(t *testing.T, n int) []string {
	t.Helper()
	ctx := ctxFor(t, 30*time.Second)
	for len(co.seen) < n {
		fs := co.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("timed out with %d of %d records: %v", len(co.seen), n, co.seen)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Logf("fetch error: %v", err) })
		fs.EachRecord(func(r *kgo.Record) { co.seen = append(co.seen, string(r.Value)) })
	}
	return co.seen
}

// "Consumers in read_committed mode only read up to the LSO and filter
// out records of aborted transactions" (KIP-98): a franz-go consumer at
// read_committed sees exactly the committed records in offset order and
// nothing past an open transaction until it ends; a read_uncommitted
// consumer sees every data record. ListOffsets with isolation_level=1
// answers the LSO.
func TestClusterReadCommittedConsumerDropsAbortedRecords(t *testing.T) {
	tc := startTxnCluster(t, 3, "txn-rc")
	tc.produce(txnBatch(100, 0, "c1", "c2")) // 0-1, to commit
	tc.produce(txnBatch(200, 0, "a1", "a2")) // 2-3, to abort
	tc.produce(plainBatch("p1"))             // 4
	tc.produce(txnBatch(100, 2, "c3"))       // 5
	tc.produce(txnBatch(200, 2, "a3"))       // 6
	if lso, hw := tc.listOffset(1), tc.listOffset(0); lso != 0 || hw != 7 {
		t.Fatalf("with two open transactions: LSO %d HW %d, want 0 and 7", lso, hw)
	}
	tc.endTxn(200, false) // 7
	if lso := tc.listOffset(1); lso != 0 {
		t.Fatalf("LSO with producer 100 still open: %d", lso)
	}
	tc.endTxn(100, true) // 8
	if lso := tc.listOffset(1); lso != 9 {
		t.Fatalf("LSO after both markers: %d, want 9", lso)
	}
	if off := tc.produce(txnBatch(300, 0, "o1")); off != 9 {
		t.Fatalf("open transaction at %d", off)
	}
	tc.produce(plainBatch("p2")) // 10, behind the open transaction
	if lso, hw := tc.listOffset(1), tc.listOffset(0); lso != 9 || hw != 11 {
		t.Fatalf("with producer 300 open: LSO %d HW %d", lso, hw)
	}

	rc := tc.consumer(kgo.ReadCommitted())
	if got := rc.pollUntil(t, 4); !slices.Equal(got, []string{"c1", "c2", "p1", "c3"}) {
		t.Fatalf("read_committed before producer 300 ends: %v", got)
	}
	tc.endTxn(300, true) // 11
	if got := rc.pollUntil(t, 6); !slices.Equal(got, []string{"c1", "c2", "p1", "c3", "o1", "p2"}) {
		t.Fatalf("read_committed: %v", got)
	}
	ru := tc.consumer(kgo.ReadUncommitted())
	if got := ru.pollUntil(t, 9); !slices.Equal(got, []string{"c1", "c2", "a1", "a2", "p1", "c3", "a3", "o1", "p2"}) {
		t.Fatalf("read_uncommitted: %v", got)
	}

	// Every replica has the markers and the same LSO once replicated, so
	// a new leader would answer the same.
	for i := 0; i < tc.c.N(); i++ {
		tc.c.WaitFor(30*time.Second, "the LSO on every replica", func() bool {
			p, ok := tc.c.Broker(i).Replicas().Partition(replicaTP(tc.topic))
			return ok && p.Log() != nil && p.Log().LogEndOffset() == 12 && p.Log().LastStableOffset() == 12
		})
	}
}

// "The producer state snapshot [...] includes the ongoing transactions"
// (ProducerStateManager): an open transaction keeps holding the LSO back
// after a crash (state rebuilt from the log by recovery) and after a clean
// restart (state read from the snapshot taken at shutdown), and its marker
// then completes it.
func TestClusterOpenTransactionSurvivesRestart(t *testing.T) {
	tc := startTxnCluster(t, 1, "txn-restart")
	tc.produce(plainBatch("p0"))       // 0
	tc.produce(txnBatch(100, 0, "o1")) // 1, stays open
	tc.produce(plainBatch("p2"))       // 2
	check := func(when string) {
		t.Helper()
		if lso, hw := tc.listOffset(1), tc.listOffset(0); lso != 1 || hw != 3 {
			t.Fatalf("%s: LSO %d HW %d, want 1 and 3", when, lso, hw)
		}
		req := kmsg.NewPtrDescribeProducersRequest()
		req.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: tc.topic, Partitions: []int32{0}}}
		ps := tc.c.Broker(tc.leader).Replicas().DescribeProducers(context.Background(), req).Topics[0].Partitions[0]
		if ps.ErrorCode != 0 || len(ps.ActiveProducers) != 1 || ps.ActiveProducers[0].ProducerID != 100 ||
			ps.ActiveProducers[0].CurrentTxnStartOffset != 1 || ps.ActiveProducers[0].LastSequence != 0 {
			t.Fatalf("%s: DescribeProducers %+v", when, ps)
		}
	}
	check("before restart")
	tc.c.KillBroker(0)
	tc.c.RestartBroker(0)
	tc.findLeader()
	check("after a crash")
	tc.c.StopBroker(0)
	tc.c.RestartBroker(0)
	tc.findLeader()
	check("after a clean restart")
	tc.endTxn(100, true) // 3
	if lso := tc.listOffset(1); lso != 4 {
		t.Fatalf("LSO after the marker: %d", lso)
	}
	rc := tc.consumer(kgo.ReadCommitted())
	if got := rc.pollUntil(t, 3); !slices.Equal(got, []string{"p0", "o1", "p2"}) {
		t.Fatalf("read_committed after restarts: %v", got)
	}
}

func replicaTP(topic string) common.TopicPartition {
	return common.TopicPartition{Topic: topic, Partition: 0}
}

// Followers build the same transaction state from the replicated log
// (producer state, .txnindex, LSO): after the leader is killed, the new
// leader answers read_committed with the aborted list of a transaction
// aborted under the old leader, holds the LSO at a transaction still open,
// and takes that transaction's marker.
func TestClusterTransactionStateSurvivesLeaderFailover(t *testing.T) {
	tc := startTxnCluster(t, 3, "txn-failover")
	tc.produce(txnBatch(100, 0, "a1", "a2")) // 0-1, aborted below
	tc.produce(plainBatch("p1"))             // 2
	tc.produce(txnBatch(200, 0, "o1"))       // 3, open across the failover
	tc.endTxn(100, false)                    // 4
	tc.produce(plainBatch("p2"))             // 5
	for i := 0; i < tc.c.N(); i++ {
		tc.c.WaitFor(30*time.Second, "every replica at the log end", func() bool {
			p, ok := tc.c.Broker(i).Replicas().Partition(replicaTP(tc.topic))
			return ok && p.Log() != nil && p.Log().LogEndOffset() == 6 && p.Log().HighWatermark() == 6
		})
	}
	old := tc.leader
	tc.c.KillBroker(old)
	tc.c.WaitFor(60*time.Second, "a new leader", func() bool {
		st, ok := tc.c.PartitionState(tc.topic, 0)
		return ok && st.Leader >= 0 && tc.c.Index(st.Leader) != old
	})
	tc.findLeader()
	if lso := tc.listOffset(1); lso != 3 {
		t.Fatalf("new leader's LSO %d, want 3 (producer 200 open)", lso)
	}
	rc := tc.consumer(kgo.ReadCommitted())
	if got := rc.pollUntil(t, 1); !slices.Equal(got, []string{"p1"}) {
		t.Fatalf("read_committed from the new leader: %v", got)
	}
	tc.endTxn(200, true) // 6
	if got := rc.pollUntil(t, 3); !slices.Equal(got, []string{"p1", "o1", "p2"}) {
		t.Fatalf("read_committed after the commit on the new leader: %v", got)
	}
}
