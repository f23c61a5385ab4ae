package replica

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

// makeTxnBatch is makeProducerBatch with the transactional attribute.
func makeTxnBatch(pid int64, epoch int16, seq int32, ts int64, values ...string) []byte {
	b := makeProducerBatch(pid, epoch, seq, ts, values...)
	binary.BigEndian.PutUint16(b[21:], binary.BigEndian.Uint16(b[21:])|0x10)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
	return b
}

func produceTxn(t *testing.T, m *Manager, topic string, partition int32, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	req := produceReq(-1, topic, partition, batch)
	tx := "tx"
	req.TransactionID = &tx
	resp := m.Produce(context.Background(), req)
	return resp.Topics[0].Partitions[0]
}

func markersReq(markers ...kmsg.WriteTxnMarkersRequestMarker) *kmsg.WriteTxnMarkersRequest {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 1
	req.Markers = markers
	return req
}

func marker(pid int64, epoch int16, commit bool, coordEpoch int32, topic string, partitions ...int32) kmsg.WriteTxnMarkersRequestMarker {
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch = pid, epoch, commit, coordEpoch
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic = topic
	mt.Partitions = partitions
	mk.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{mt}
	return mk
}

// markerCodes flattens a response to "producer/topic/partition" → code.
func markerCodes(resp *kmsg.WriteTxnMarkersResponse) map[string]int16 {
	out := map[string]int16{}
	for _, mk := range resp.Markers {
		for _, t := range mk.Topics {
			for _, p := range t.Partitions {
				out[kmsgKey(mk.ProducerID, t.Topic, p.Partition)] = p.ErrorCode
			}
		}
	}
	return out
}

func kmsgKey(pid int64, topic string, p int32) string {
	return topic + "/" + string(rune('0'+p)) + "/" + string(rune('0'+pid))
}

func listOffsetsCommitted(t *testing.T, m *Manager, topic string) int64 {
	t.Helper()
	lo := listOffsetsReq(5, topic, 0, -1)
	lo.IsolationLevel = 1
	p := m.ListOffsets(context.Background(), lo).Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("ListOffsets read_committed: %s", kerr.ErrorForCode(p.ErrorCode))
	}
	return p.Offset
}

// WriteTxnMarkers closes transactions with control batches; the LSO
// (ListOffsets isolation_level=1, read_committed fetches) waits for the
// earliest open transaction and an aborted one is listed for consumers.
func TestStorageWriteTxnMarkers(t *testing.T) {
	m, lm, _ := newStorageManager(t, nil)
	makeLeader(t, m, "t", 0, 0)
	l, _ := lm.GetLog(common.TopicPartition{Topic: "t", Partition: 0})

	if r := produceTxn(t, m, "t", 0, makeTxnBatch(5, 0, 0, 1, "a", "b")); r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Fatalf("txn produce pid 5: %+v", r)
	}
	if r := produceTxn(t, m, "t", 0, makeTxnBatch(6, 0, 0, 1, "x")); r.ErrorCode != 0 || r.BaseOffset != 2 {
		t.Fatalf("txn produce pid 6: %+v", r)
	}
	if lso := listOffsetsCommitted(t, m, "t"); lso != 0 {
		t.Fatalf("LSO with two open transactions: %d", lso)
	}
	dp := m.DescribeProducers(context.Background(), &kmsg.DescribeProducersRequest{Topics: []kmsg.DescribeProducersRequestTopic{{Topic: "t", Partitions: []int32{0}}}})
	ps := dp.Topics[0].Partitions[0]
	if ps.ErrorCode != 0 || len(ps.ActiveProducers) != 2 || ps.ActiveProducers[0].ProducerID != 5 ||
		ps.ActiveProducers[0].CurrentTxnStartOffset != 0 || ps.ActiveProducers[1].CurrentTxnStartOffset != 2 ||
		ps.ActiveProducers[0].LastSequence != 1 || ps.ActiveProducers[0].CoordinatorEpoch != -1 {
		t.Fatalf("DescribeProducers with open transactions: %+v", ps)
	}

	resp := m.WriteTxnMarkers(context.Background(), markersReq(marker(5, 0, false, 3, "t", 0)))
	if c := markerCodes(resp); len(c) != 1 || c[kmsgKey(5, "t", 0)] != 0 {
		t.Fatalf("abort marker: %v", c)
	}
	if l.LogEndOffset() != 4 {
		t.Fatalf("log end after the abort marker: %d", l.LogEndOffset())
	}
	if lso := listOffsetsCommitted(t, m, "t"); lso != 2 {
		t.Fatalf("LSO with pid 6 still open: %d", lso)
	}
	resp = m.WriteTxnMarkers(context.Background(), markersReq(marker(6, 0, true, 3, "t", 0)))
	if c := markerCodes(resp); c[kmsgKey(6, "t", 0)] != 0 {
		t.Fatalf("commit marker: %v", c)
	}
	if lso := listOffsetsCommitted(t, m, "t"); lso != 5 {
		t.Fatalf("LSO after both markers: %d", lso)
	}

	// The markers are control batches of the producers.
	data, err := m.readAll(t, "t")
	if err != nil {
		t.Fatal(err)
	}
	var ctl []record.BatchHeader
	_ = record.ForEachBatch(data, func(b []byte, h record.BatchHeader) error {
		if h.IsControl() {
			ctl = append(ctl, h)
			_ = record.ForEachRecord(b, func(r *record.Record) error {
				_, typ, _ := record.ParseControlKey(r.Key)
				_, ce, _ := record.ParseEndTxnMarker(r.Value)
				if (h.ProducerID == 5) != (typ == record.ControlAbort) || ce != 3 {
					t.Errorf("marker of %d: %v coordinator epoch %d", h.ProducerID, typ, ce)
				}
				return nil
			})
		}
		return nil
	})
	if len(ctl) != 2 || ctl[0].BaseOffset != 3 || ctl[1].BaseOffset != 4 || !ctl[0].IsTransactional() || ctl[0].BaseSequence != -1 {
		t.Fatalf("control batches %+v", ctl)
	}

	// read_committed: everything below the LSO with pid 5's aborted
	// transaction listed (.txnindex).
	fp := onlyFetchPartition(t, doFetch(t, m, fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.IsolationLevel = 1 })))
	if fp.LastStableOffset != 5 || len(fp.AbortedTransactions) != 1 || fp.AbortedTransactions[0].ProducerID != 5 ||
		fp.AbortedTransactions[0].FirstOffset != 0 {
		t.Fatalf("read_committed fetch: lso %d aborted %+v", fp.LastStableOffset, fp.AbortedTransactions)
	}
	dp = m.DescribeProducers(context.Background(), &kmsg.DescribeProducersRequest{Topics: []kmsg.DescribeProducersRequestTopic{{Topic: "t", Partitions: []int32{0}}}})
	for _, p := range dp.Topics[0].Partitions[0].ActiveProducers {
		if p.CurrentTxnStartOffset != -1 || p.CoordinatorEpoch != 3 {
			t.Fatalf("DescribeProducers after the markers: %+v", p)
		}
	}
}

// readAll returns the partition's log bytes.
func (m *Manager) readAll(t *testing.T, topic string) ([]byte, error) {
	t.Helper()
	var out []byte
	err := m.ReadLocalLog(context.Background(), common.TopicPartition{Topic: topic}, 0, func(b []byte) error {
		out = append(out, b...)
		return nil
	})
	return out, err
}

func TestStorageWriteTxnMarkersErrors(t *testing.T) {
	m, _, _ := newStorageManager(t, nil)
	makeLeader(t, m, "t", 0, 0)
	// Followed partition: hosted here, led by broker 2.
	resp := m.LeaderAndIsr(context.Background(), lairReq(1, "f", topicIDFor("f"), 0, 2, 0, []int32{1, 2}, []int32{1, 2}))
	if c := lairCode(t, resp); c != 0 {
		t.Fatalf("follower LeaderAndIsr: %d", c)
	}
	if r := produceTxn(t, m, "t", 0, makeTxnBatch(5, 3, 0, 1, "a")); r.ErrorCode != 0 {
		t.Fatalf("txn produce: %+v", r)
	}
	if c := markerCodes(m.WriteTxnMarkers(context.Background(), markersReq(marker(5, 3, true, 4, "t", 0)))); c[kmsgKey(5, "t", 0)] != 0 {
		t.Fatalf("commit: %v", c)
	}
	got := markerCodes(m.WriteTxnMarkers(context.Background(), markersReq(
		marker(5, 3, true, 2, "t", 0),       // coordinator epoch below 4
		marker(6, 0, true, 0, "unknown", 0), // not hosted
		marker(7, 0, true, 0, "f", 0),       // follower
		marker(8, 0, false, 0, "t", 0),      // a producer the partition never saw: fine
		marker(5, 2, false, 9, "t", 0),      // epoch below 3
	)))
	want := map[string]int16{
		kmsgKey(5, "t", 0):       kerr.InvalidProducerEpoch.Code, // last answer for pid 5
		kmsgKey(6, "unknown", 0): kerr.UnknownTopicOrPartition.Code,
		kmsgKey(7, "f", 0):       kerr.NotLeaderForPartition.Code,
		kmsgKey(8, "t", 0):       0,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s, want %s", k, errName(got[k]), errName(w))
		}
	}
	fenced := markerCodes(m.WriteTxnMarkers(context.Background(), markersReq(marker(5, 3, true, 2, "t", 0))))
	if fenced[kmsgKey(5, "t", 0)] != kerr.TransactionCoordinatorFenced.Code {
		t.Errorf("stale coordinator epoch: %s", errName(fenced[kmsgKey(5, "t", 0)]))
	}
	dp := m.DescribeProducers(context.Background(), &kmsg.DescribeProducersRequest{Topics: []kmsg.DescribeProducersRequestTopic{
		{Topic: "unknown", Partitions: []int32{0}}, {Topic: "f", Partitions: []int32{0}}}})
	if c := dp.Topics[0].Partitions[0].ErrorCode; c != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("DescribeProducers unknown: %s", errName(c))
	}
	if c := dp.Topics[1].Partitions[0].ErrorCode; c != 0 {
		t.Errorf("DescribeProducers on a follower (Kafka 2.8 answers from any replica): %s", errName(c))
	}
}

// The response has one entry per producer id, as Kafka's map does, and
// OffsetsTxnCompletions picks the __consumer_offsets partitions written,
// with each marker's outcome.
func TestWriteTxnMarkersResponseShape(t *testing.T) {
	m, _, _ := newStorageManager(t, nil)
	makeLeader(t, m, "t", 0, 0)
	makeLeader(t, m, OffsetsTopic, 0, 0)
	req := markersReq(marker(5, 0, true, 0, "t", 0), marker(5, 0, true, 0, OffsetsTopic, 0, 1), marker(6, 0, false, 0, OffsetsTopic, 0))
	resp := m.WriteTxnMarkers(context.Background(), req)
	if len(resp.Markers) != 2 || len(resp.Markers[0].Topics) != 2 {
		t.Fatalf("response %+v", resp)
	}
	done := OffsetsTxnCompletions(req, resp)
	if len(done) != 2 || done[0].ProducerID != 5 || !done[0].Commit || !slices.Equal(done[0].Partitions, []int32{0}) ||
		done[1].ProducerID != 6 || done[1].Commit || !slices.Equal(done[1].Partitions, []int32{0}) {
		t.Fatalf("completions %+v", done)
	}
}

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(code).Error()
}

// FuzzWriteTxnMarkers decodes WriteTxnMarkers request bytes (any version)
// and serves them on a broker leading t-0. Invariants: nothing panics; the
// response has one entry per distinct producer id; every requested
// partition is answered, in request order within its producer; t-0 grows
// by exactly one batch per marker answered NONE there and nothing else is
// written.
func FuzzWriteTxnMarkers(f *testing.F) {
	seed := markersReq(marker(5, 0, true, 1, "t", 0), marker(6, 2, false, 1, "t", 0, 3), marker(5, 0, false, 0, "x", 0))
	for v := int16(0); v <= 1; v++ {
		seed.Version = v
		f.Add(byte(v), seed.AppendTo(nil))
	}
	f.Fuzz(func(t *testing.T, version byte, data []byte) {
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		req.Version = int16(version % 2)
		if err := req.ReadFrom(data); err != nil {
			return
		}
		n := 0
		for _, mk := range req.Markers {
			for _, tp := range mk.Topics {
				n += len(tp.Partitions)
			}
		}
		if n > 200 {
			return
		}
		m, store := newT0Leader(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		resp := m.WriteTxnMarkers(ctx, req)
		pids := map[int64]bool{}
		want := map[int64][]string{}
		for _, mk := range req.Markers {
			pids[mk.ProducerID] = true
			for _, tp := range mk.Topics {
				for _, p := range tp.Partitions {
					want[mk.ProducerID] = append(want[mk.ProducerID], fmt.Sprintf("%s/%d", tp.Topic, p))
				}
			}
		}
		if len(resp.Markers) != len(pids) {
			t.Fatalf("%d response markers for %d producers", len(resp.Markers), len(pids))
		}
		ok := int64(0)
		for _, rm := range resp.Markers {
			var got []string
			for _, tp := range rm.Topics {
				for _, p := range tp.Partitions {
					got = append(got, fmt.Sprintf("%s/%d", tp.Topic, p.Partition))
					if tp.Topic == "t" && p.Partition == 0 && p.ErrorCode == 0 {
						ok++
					}
				}
			}
			if !slices.Equal(got, want[rm.ProducerID]) {
				t.Fatalf("producer %d answered %v, asked %v", rm.ProducerID, got, want[rm.ProducerID])
			}
		}
		store.wantLogEnd(t, "t", ok, "one marker per successful append")
	})
}
