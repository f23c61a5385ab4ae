package e2e_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/testcluster"
)

// TestTxnCoordinatorMovesMidCommit: the transaction coordinator dies
// between logging PrepareCommit and getting its markers written. Every
// broker answers WriteTxnMarkers with NOT_ENOUGH_REPLICAS (a retriable
// error, so the coordinator keeps retrying) while the producer commits:
// EndTxn succeeds (Kafka answers it once PrepareCommit is logged), the
// transaction stays PrepareCommit and its records stay invisible to
// read_committed. Then the coordinator is killed and the markers let
// through: the new leader of its __transaction_state partition loads
// PrepareCommit and must finish the commit (KIP-98's coordinator
// failover). read_committed then reads every record, the state is
// CompleteCommit, and the producer's next transaction commits through the
// new coordinator.
func TestTxnCoordinatorMovesMidCommit(t *testing.T) {
	c := startTxnCluster(t)
	const topic, id = "txn-move", "txn-move-id"
	c.CreateTopic(topic, 1, 3, nil)
	c.WaitLeaders(30*time.Second, topic, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	var hold atomic.Bool
	var refused atomic.Int64
	for i := 0; i < c.N(); i++ {
		c.Intercept(i, 27, func(_ context.Context, req *network.Request) (kmsg.Response, bool, error) {
			if !hold.Load() {
				return nil, false, nil
			}
			refused.Add(1)
			in := req.Body.(*kmsg.WriteTxnMarkersRequest)
			resp := kmsg.NewPtrWriteTxnMarkersResponse()
			resp.Version = in.Version
			for _, m := range in.Markers {
				rm := kmsg.NewWriteTxnMarkersResponseMarker()
				rm.ProducerID = m.ProducerID
				for _, tp := range m.Topics {
					rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
					rt.Topic = tp.Topic
					for _, p := range tp.Partitions {
						rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
						rp.Partition = p
						rp.ErrorCode = kerr.NotEnoughReplicas.Code
						rt.Partitions = append(rt.Partitions, rp)
					}
					rm.Topics = append(rm.Topics, rt)
				}
				resp.Markers = append(resp.Markers, rm)
			}
			return resp, true, nil
		})
	}

	log := kgoLogger(clientLog(t, "franz-go"))
	p := c.Client(log, kgo.TransactionalID(id), kgo.TransactionTimeout(60*time.Second), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	records := func(label string) []*kgo.Record {
		var rs []*kgo.Record
		for i := 0; i < 10; i++ {
			k := []byte(fmt.Sprintf("%s-%d", label, i))
			rs = append(rs, &kgo.Record{Key: k, Value: k})
		}
		return rs
	}
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, records("first")...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	hold.Store(true)
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("EndTxn with the markers held back: %v", err)
	}
	if !testcluster.Poll(15*time.Second, func() bool { return refused.Load() >= 2 }) {
		t.Fatalf("the coordinator sent %d WriteTxnMarkers in 15s; expected it to retry the refused markers", refused.Load())
	}
	admin := c.Client()
	state := func() string {
		req := kmsg.NewPtrDescribeTransactionsRequest()
		req.TransactionalIDs = []string{id}
		resp, err := req.RequestWith(ctx, admin)
		if err != nil {
			return err.Error()
		}
		ts := resp.TransactionStates[0]
		if err := kerr.ErrorForCode(ts.ErrorCode); err != nil {
			return err.Error()
		}
		return ts.State
	}
	if st := state(); st != "PrepareCommit" {
		t.Errorf("with the markers refused, DescribeTransactions says %s, want PrepareCommit", st)
	}
	lso, hw := partitionOffsets(t, ctx, admin, topic)
	if lso != 0 || hw != 10 {
		t.Errorf("with the markers refused: last stable offset %d, high watermark %d; want 0 and 10", lso, hw)
	}

	find := kmsg.NewPtrFindCoordinatorRequest()
	find.CoordinatorKey, find.CoordinatorType = id, 1
	fr, err := find.RequestWith(ctx, admin)
	if err != nil || fr.ErrorCode != 0 {
		t.Fatalf("FindCoordinator: %v %v", err, fr)
	}
	victim := c.Index(fr.NodeID)
	t.Logf("killing the coordinator, broker %d, after %d refused WriteTxnMarkers", fr.NodeID, refused.Load())
	c.KillBroker(victim)
	hold.Store(false)

	var st string
	if !testcluster.Poll(45*time.Second, func() bool {
		lso, hw = partitionOffsets(t, ctx, admin, topic)
		st = state()
		return lso == 11 && hw == 11 && st == "CompleteCommit"
	}) {
		t.Fatalf("after the coordinator moved: state %s, last stable offset %d, high watermark %d; want CompleteCommit, 11, 11", st, lso, hw)
	}
	// The producer still has the dead broker as its cached coordinator.
	// franz-go resolves AddPartitionsToTxn's coordinator from that cache
	// while the dead broker is in its metadata, and fails the request
	// with a client-side "unknown broker" (not retried) if a metadata
	// refresh drops the broker between the lookup and the send. The
	// broker's side is not what the race tests, so the producer first
	// learns, from a survivor, that the broker is gone: every survivor
	// has dropped it (for good: it stays dead), then so has the
	// producer's metadata, and its next lookup asks FindCoordinator.
	dead := fr.NodeID
	for i := 0; i < c.N(); i++ {
		if i == victim {
			continue
		}
		c.WaitFor(30*time.Second, fmt.Sprintf("broker %d's metadata to drop broker %d", c.BrokerID(i), dead), func() bool {
			resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, c.Direct(i))
			return err == nil && !listsBroker(resp.Brokers, dead)
		})
	}
	c.WaitFor(30*time.Second, fmt.Sprintf("the producer's metadata to drop broker %d", dead), func() bool {
		// The client's list is the last metadata's brokers; with the
		// victim gone from every survivor it can only shrink to them.
		p.ForceMetadataRefresh()
		return len(p.DiscoveredBrokers()) == c.N()-1
	})
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, records("second")...).FirstErr(); err != nil {
		t.Fatalf("produce after the move: %v", err)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit through the new coordinator: %v", err)
	}
	prod := c.Client(kgo.DefaultProduceTopic(topic))
	if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(txnSentinel), Value: []byte(txnSentinel)}).FirstErr(); err != nil {
		t.Fatalf("sentinel: %v", err)
	}
	var got []string
	for _, r := range readUntilSentinel(t, c, topic, true) {
		got = append(got, r.key)
	}
	var want []string
	for _, l := range []string{"first", "second"} {
		for i := 0; i < 10; i++ {
			want = append(want, fmt.Sprintf("%s-%d", l, i))
		}
	}
	want = append(want, txnSentinel)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("read_committed after the move: %v\n  want %v", got, want)
	}
}

// partitionOffsets returns partition 0's last stable offset and high
// watermark (-1 on an error).
func partitionOffsets(t *testing.T, ctx context.Context, cl *kgo.Client, topic string) (lso, hw int64) {
	t.Helper()
	get := func(iso int8) int64 {
		req := kmsg.NewPtrListOffsetsRequest()
		req.IsolationLevel = iso
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp, rp.CurrentLeaderEpoch = -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode) != nil {
			return -1
		}
		return resp.Topics[0].Partitions[0].Offset
	}
	return get(1), get(0)
}

func listsBroker(bs []kmsg.MetadataResponseBroker, id int32) bool {
	for _, b := range bs {
		if b.NodeID == id {
			return true
		}
	}
	return false
}
