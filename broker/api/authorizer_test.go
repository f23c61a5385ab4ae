package api

import (
	"context"
	"log/slog"
	"maps"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/config"
)

// denyList authorizes everything except the listed (resource type, name)
// pairs, and records every question.
type denyList struct {
	mu     sync.Mutex
	denied map[kmsg.ACLResourceType]map[string]bool
	// noneOf answers the "any resource of this type" questions: no.
	noneOf map[kmsg.ACLResourceType]bool
	asked  []Action
}

func (d *denyList) Authorize(_ context.Context, act Action) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.asked = append(d.asked, act)
	if act.AnyResource {
		return !d.noneOf[act.ResourceType]
	}
	return !d.denied[act.ResourceType][act.Name]
}

// recordingTxn is a TxnCoordinator that answers success and records what
// reached it.
type recordingTxn struct {
	mu    sync.Mutex
	calls []string
	added [][]string // AddPartitionsToTxn: topic names per call
}

func (c *recordingTxn) note(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, s)
}
func (c *recordingTxn) PartitionFor(string) int32 { return 0 }
func (c *recordingTxn) InitProducerID(_ context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	c.note("InitProducerID " + *req.TransactionalID)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = 7, 0
	return resp
}
func (c *recordingTxn) AddPartitionsToTxn(_ context.Context, req *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse {
	c.note("AddPartitionsToTxn " + req.TransactionalID)
	return addPartitionsAnswer(req, func(string, int32) int16 { return 0 })
}
func (c *recordingTxn) AddOffsetsToTxn(_ context.Context, req *kmsg.AddOffsetsToTxnRequest) *kmsg.AddOffsetsToTxnResponse {
	c.note("AddOffsetsToTxn " + req.TransactionalID)
	return req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
}
func (c *recordingTxn) EndTxn(_ context.Context, req *kmsg.EndTxnRequest) *kmsg.EndTxnResponse {
	c.note("EndTxn " + req.TransactionalID)
	return req.ResponseKind().(*kmsg.EndTxnResponse)
}
func (c *recordingTxn) DescribeTransactions(_ context.Context, req *kmsg.DescribeTransactionsRequest) *kmsg.DescribeTransactionsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range req.TransactionalIDs {
		c.note("DescribeTransactions " + id)
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID, st.State = id, "Ongoing"
		for _, topic := range []string{"open", "secret"} {
			t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
			t.Topic, t.Partitions = topic, []int32{0}
			st.Topics = append(st.Topics, t)
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp
}
func (c *recordingTxn) ListTransactions(_ context.Context, req *kmsg.ListTransactionsRequest) *kmsg.ListTransactionsResponse {
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	for _, id := range []string{"ok", "denied"} {
		st := kmsg.NewListTransactionsResponseTransactionState()
		st.TransactionalID, st.TransactionState = id, "Ongoing"
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp
}

// recordingData stands in for the replica manager and the group
// coordinator on the keys the hooks guard; the embedded interfaces are nil,
// so any other call fails the test with a panic.
type recordingData struct {
	ReplicaManager
	txn *recordingTxn
}

func (d recordingData) WriteTxnMarkers(_ context.Context, req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse {
	d.txn.note("WriteTxnMarkers")
	return req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
}
func (d recordingData) DescribeProducers(_ context.Context, req *kmsg.DescribeProducersRequest) *kmsg.DescribeProducersResponse {
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	for _, t := range req.Topics {
		d.txn.note("DescribeProducers " + t.Topic)
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
func (d recordingData) ProduceInto(_ context.Context, req *kmsg.ProduceRequest, _ string, _ *kmsg.ProduceResponse) (*kmsg.ProduceResponse, network.Waiter, error) {
	d.txn.note("Produce")
	return req.ResponseKind().(*kmsg.ProduceResponse), nil, nil
}

type recordingGroups struct {
	GroupCoordinator
	txn *recordingTxn
}

func (g recordingGroups) TxnOffsetCommit(_ context.Context, req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, t := range req.Topics {
		g.txn.note("TxnOffsetCommit " + t.Topic)
		resp.Topics = append(resp.Topics, txnCommitTopicAnswer(t, func(int32) int16 { return 0 }))
	}
	return resp
}

// transactionalBatchHeader is the 61-byte header of a magic-2 record batch
// with the transactional attribute set: all the request path reads of it.
func transactionalBatchHeader() []byte {
	b := make([]byte, 61)
	b[16] = 2    // magic
	b[22] = 0x10 // attributes, low byte: transactional
	return b
}

// codes flattens per-partition answers as "topic-partition=code".
func codes[T any](items []T, each func(T, func(topic string, p int32, code int16))) map[string]int16 {
	out := map[string]int16{}
	for _, it := range items {
		each(it, func(topic string, p int32, code int16) { out[topic+"-"+strconv.Itoa(int(p))] = code })
	}
	return out
}

// TestTransactionAuthorizationHooks: every transactional API asks the
// authorizer what KafkaApis asks, answers a denial with the resource
// type's error code without reaching the coordinator, and lets allowed
// requests through; unknown partitions are refused before the coordinator
// too.
func TestTransactionAuthorizationHooks(t *testing.T) {
	deny := &denyList{denied: map[kmsg.ACLResourceType]map[string]bool{
		kmsg.ACLResourceTypeTransactionalId: {"denied": true},
		kmsg.ACLResourceTypeTopic:           {"secret": true},
		kmsg.ACLResourceTypeGroup:           {"g-denied": true},
		kmsg.ACLResourceTypeCluster:         {clusterResource: true},
	}, noneOf: map[kmsg.ACLResourceType]bool{kmsg.ACLResourceTypeTopic: true}}
	rec := &recordingTxn{}
	cfg, err := config.FromMap(map[string]string{"zookeeper.connect": "127.0.0.1:1/x", "broker.id": "1", "log.dirs": t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeMeta{leaders: map[string]map[int32]int32{"open": {0: 1, 1: 1}, "secret": {0: 1}}}
	a := New(Config{BrokerID: 1, ClusterID: "c1", Broker: cfg, ZK: newFakeZK("a"), Metadata: m,
		Replicas: recordingData{txn: rec}, Groups: recordingGroups{txn: rec}, Txn: rec, Authorizer: deny,
		Logger: slog.New(slog.DiscardHandler)})
	a.SetReady()
	send := func(req kmsg.Request) kmsg.Response {
		t.Helper()
		resp, err := a.Handle(context.Background(), &network.Request{Key: req.Key(), Version: req.GetVersion(), Body: req,
			Listener: "PLAINTEXT", Session: &network.Session{Authenticated: true, Principal: "User:alice"},
			RemoteAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 7), Port: 5000}})
		if err != nil {
			t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
		}
		return resp
	}
	reached := func(want ...string) {
		t.Helper()
		rec.mu.Lock()
		got := rec.calls
		rec.calls = nil
		rec.mu.Unlock()
		if len(got) != len(want) {
			t.Fatalf("coordinator calls %q, want %q", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("coordinator calls %q, want %q", got, want)
			}
		}
	}

	// InitProducerId: Write on the id; idempotent producers need
	// IdempotentWrite on the cluster or Write on some topic.
	ipid := kmsg.NewPtrInitProducerIDRequest()
	ipid.Version, ipid.TransactionalID = 4, kmsg.StringPtr("denied")
	if r := send(ipid).(*kmsg.InitProducerIDResponse); r.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Errorf("InitProducerId denied id: %d", r.ErrorCode)
	}
	ipid.TransactionalID = kmsg.StringPtr("ok")
	if r := send(ipid).(*kmsg.InitProducerIDResponse); r.ErrorCode != 0 || r.ProducerID != 7 {
		t.Errorf("InitProducerId allowed id: %+v", r)
	}
	reached("InitProducerID ok")
	ipid.TransactionalID = nil
	if r := send(ipid).(*kmsg.InitProducerIDResponse); r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("idempotent InitProducerId without IdempotentWrite or any topic Write: %d", r.ErrorCode)
	}

	// AddPartitionsToTxn: the id first, then each topic, then existence.
	apt := func(id string, topics map[string][]int32) map[string]int16 {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version, req.TransactionalID = 3, id
		for _, topic := range []string{"open", "secret", "missing"} {
			if ps, ok := topics[topic]; ok {
				rt := kmsg.NewAddPartitionsToTxnRequestTopic()
				rt.Topic, rt.Partitions = topic, ps
				req.Topics = append(req.Topics, rt)
			}
		}
		return codes(send(req).(*kmsg.AddPartitionsToTxnResponse).Topics, func(t kmsg.AddPartitionsToTxnResponseTopic, add func(string, int32, int16)) {
			for _, p := range t.Partitions {
				add(t.Topic, p.Partition, p.ErrorCode)
			}
		})
	}
	wantCodes := func(what string, got, want map[string]int16) {
		t.Helper()
		if !maps.Equal(got, want) {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	wantCodes("AddPartitionsToTxn denied id", apt("denied", map[string][]int32{"open": {0}}),
		map[string]int16{"open-0": kerr.TransactionalIDAuthorizationFailed.Code})
	wantCodes("AddPartitionsToTxn denied topic", apt("ok", map[string][]int32{"open": {0}, "secret": {0}}),
		map[string]int16{"open-0": kerr.OperationNotAttempted.Code, "secret-0": kerr.TopicAuthorizationFailed.Code})
	wantCodes("AddPartitionsToTxn unknown partition", apt("ok", map[string][]int32{"open": {0, 5}, "missing": {0}}),
		map[string]int16{"open-0": kerr.OperationNotAttempted.Code, "open-5": kerr.UnknownTopicOrPartition.Code, "missing-0": kerr.UnknownTopicOrPartition.Code})
	reached()
	wantCodes("AddPartitionsToTxn allowed", apt("ok", map[string][]int32{"open": {0, 1}}), map[string]int16{"open-0": 0, "open-1": 0})
	reached("AddPartitionsToTxn ok")

	// AddOffsetsToTxn and EndTxn.
	aot := kmsg.NewPtrAddOffsetsToTxnRequest()
	aot.Version, aot.TransactionalID, aot.Group = 3, "denied", "g"
	if r := send(aot).(*kmsg.AddOffsetsToTxnResponse); r.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Errorf("AddOffsetsToTxn denied id: %d", r.ErrorCode)
	}
	aot.TransactionalID, aot.Group = "ok", "g-denied"
	if r := send(aot).(*kmsg.AddOffsetsToTxnResponse); r.ErrorCode != kerr.GroupAuthorizationFailed.Code {
		t.Errorf("AddOffsetsToTxn denied group: %d", r.ErrorCode)
	}
	aot.Group = "g"
	if r := send(aot).(*kmsg.AddOffsetsToTxnResponse); r.ErrorCode != 0 {
		t.Errorf("AddOffsetsToTxn allowed: %d", r.ErrorCode)
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.Version, end.TransactionalID = 3, "denied"
	if r := send(end).(*kmsg.EndTxnResponse); r.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Errorf("EndTxn denied id: %d", r.ErrorCode)
	}
	end.TransactionalID = "ok"
	send(end)
	reached("AddOffsetsToTxn ok", "EndTxn ok")

	// FindCoordinator for a transaction: Describe on the id.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorType, fc.CoordinatorKey = 3, 1, "denied"
	if r := send(fc).(*kmsg.FindCoordinatorResponse); r.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Errorf("FindCoordinator denied id: %d", r.ErrorCode)
	}
	fc.CoordinatorType, fc.CoordinatorKey = 0, "g-denied"
	if r := send(fc).(*kmsg.FindCoordinatorResponse); r.ErrorCode != kerr.GroupAuthorizationFailed.Code {
		t.Errorf("FindCoordinator denied group: %d", r.ErrorCode)
	}

	// WriteTxnMarkers needs ClusterAction, denied here for everybody.
	wtm := kmsg.NewPtrWriteTxnMarkersRequest()
	wtm.Version = 1
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID = 7
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = "open", []int32{0, 1}
	mk.Topics = append(mk.Topics, mt)
	wtm.Markers = append(wtm.Markers, mk)
	r := send(wtm).(*kmsg.WriteTxnMarkersResponse)
	wantCodes("WriteTxnMarkers without ClusterAction", codes(r.Markers, func(m kmsg.WriteTxnMarkersResponseMarker, add func(string, int32, int16)) {
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				add(t.Topic, p.Partition, p.ErrorCode)
			}
		}
	}), map[string]int16{"open-0": kerr.ClusterAuthorizationFailed.Code, "open-1": kerr.ClusterAuthorizationFailed.Code})

	// TxnOffsetCommit: id, group, then per topic; allowed partitions are
	// still committed.
	toc := func(id, group string) map[string]int16 {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version, req.TransactionalID, req.Group = 3, id, group
		for _, topic := range []string{"open", "secret", "missing"} {
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset = 0, 10
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
		}
		return codes(send(req).(*kmsg.TxnOffsetCommitResponse).Topics, func(t kmsg.TxnOffsetCommitResponseTopic, add func(string, int32, int16)) {
			for _, p := range t.Partitions {
				add(t.Topic, p.Partition, p.ErrorCode)
			}
		})
	}
	all := func(code int16) map[string]int16 {
		return map[string]int16{"open-0": code, "secret-0": code, "missing-0": code}
	}
	wantCodes("TxnOffsetCommit denied id", toc("denied", "g"), all(kerr.TransactionalIDAuthorizationFailed.Code))
	wantCodes("TxnOffsetCommit denied group", toc("ok", "g-denied"), all(kerr.GroupAuthorizationFailed.Code))
	reached()
	wantCodes("TxnOffsetCommit per topic", toc("ok", "g"),
		map[string]int16{"open-0": 0, "secret-0": kerr.TopicAuthorizationFailed.Code, "missing-0": kerr.UnknownTopicOrPartition.Code})
	reached("TxnOffsetCommit open")

	// Produce of transactional batches needs Write on the transactional id.
	prod := kmsg.NewPtrProduceRequest()
	prod.Version, prod.Acks, prod.TransactionID = 9, -1, kmsg.StringPtr("denied")
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "open"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = transactionalBatchHeader()
	pt.Partitions = append(pt.Partitions, pp)
	prod.Topics = append(prod.Topics, pt)
	pr := send(prod).(*kmsg.ProduceResponse)
	if len(pr.Topics) != 1 || pr.Topics[0].Partitions[0].ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Errorf("Produce with a denied transactional id: %+v", pr.Topics)
	}
	reached()

	// DescribeProducers: Read per topic.
	dp := kmsg.NewPtrDescribeProducersRequest()
	for _, topic := range []string{"open", "secret"} {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = topic, []int32{0}
		dp.Topics = append(dp.Topics, rt)
	}
	dr := send(dp).(*kmsg.DescribeProducersResponse)
	reached("DescribeProducers open")
	if len(dr.Topics) != 2 || dr.Topics[1].Topic != "secret" || dr.Topics[1].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("DescribeProducers: %+v", dr.Topics)
	}

	// DescribeTransactions and ListTransactions: Describe on the id;
	// topics the principal may not Describe are left out.
	dt := kmsg.NewPtrDescribeTransactionsRequest()
	dt.TransactionalIDs = []string{"ok", "denied"}
	dtr := send(dt).(*kmsg.DescribeTransactionsResponse)
	reached("DescribeTransactions ok")
	if len(dtr.TransactionStates) != 2 || dtr.TransactionStates[0].ErrorCode != 0 || len(dtr.TransactionStates[0].Topics) != 1 ||
		dtr.TransactionStates[0].Topics[0].Topic != "open" || dtr.TransactionStates[1].ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Errorf("DescribeTransactions: %+v", dtr.TransactionStates)
	}
	lt := send(kmsg.NewPtrListTransactionsRequest()).(*kmsg.ListTransactionsResponse)
	if len(lt.TransactionStates) != 1 || lt.TransactionStates[0].TransactionalID != "ok" {
		t.Errorf("ListTransactions: %+v", lt.TransactionStates)
	}

	// The questions carry the connection's principal and host.
	deny.mu.Lock()
	defer deny.mu.Unlock()
	for _, act := range deny.asked {
		if act.Principal != "User:alice" || act.Host != "127.0.0.7" {
			t.Fatalf("asked %+v, want principal User:alice from 127.0.0.7", act)
		}
	}
}
