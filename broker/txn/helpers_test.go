package txn

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/group"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/klassik/klassik/zkpaths"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The coordinators of a test share one group.MemStore as the in-memory
// __transaction_state log (as its replicas are shared): the same
// Append/Read contract as the __consumer_offsets store.
var _ Store = (*group.MemStore)(nil)

// records returns the partition's records as dump-log text lines.
func records(s *group.MemStore, partition int32) []string {
	var out []string
	_ = record.ForEachBatch(s.Log(partition), func(batch []byte, h record.BatchHeader) error {
		return record.ForEachRecord(batch, func(r *record.Record) error {
			k, v, err := FormatRecordKeyAndValue(r.Key, r.Value)
			if err != nil {
				out = append(out, fmt.Sprintf("offset=%d error: %v", r.Offset(h), err))
				return nil
			}
			out = append(out, fmt.Sprintf("offset=%d %s %s", r.Offset(h), strings.TrimPrefix(k, "transaction_metadata::"), v))
			return nil
		})
	})
	return out
}

// leaderOf returns broker 1's coordinator over store, loaded as the
// leader (coordinator epoch 1) of id's partition, and that partition.
func leaderOf(t testing.TB, store *group.MemStore, id string) (*Coordinator, int32) {
	t.Helper()
	c := newTestCoordinator(t, store, newFakeMarkers(), &pidBlocks{}, purgatory.NewFakeClock(testStart), 1)
	p := c.PartitionFor(id)
	c.OnBecomeLeader(p, 1)
	waitIdle(t, c)
	return c, p
}

// fakeMarkers records WriteTxnMarkers requests and answers them with
// per-partition errors set by the test (NONE otherwise).
type fakeMarkers struct {
	// mu guards the following.
	mu       sync.Mutex
	leaders  map[common.TopicPartition]int32 // default: leaderDefault
	def      int32
	errs     map[common.TopicPartition][]int16 // queued codes, one per send
	downs    map[int32]bool                    // brokers whose sends fail
	sent     []string
	received map[common.TopicPartition][]string // markers written per partition
}

func newFakeMarkers() *fakeMarkers {
	return &fakeMarkers{leaders: map[common.TopicPartition]int32{}, def: 1, errs: map[common.TopicPartition][]int16{},
		downs: map[int32]bool{}, received: map[common.TopicPartition][]string{}}
}

func (f *fakeMarkers) PartitionLeader(topic string, partition int32) int32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l, ok := f.leaders[common.TopicPartition{Topic: topic, Partition: partition}]; ok {
		return l
	}
	return f.def
}

func (f *fakeMarkers) SendWriteTxnMarkers(ctx context.Context, brokerID int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var parts []string
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	resp.Version = req.Version
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		kind := "ABORT"
		if m.Committed {
			kind = "COMMIT"
		}
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				tp := common.TopicPartition{Topic: t.Topic, Partition: p}
				parts = append(parts, tp.String())
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = p
				if q := f.errs[tp]; len(q) > 0 {
					rp.ErrorCode = q[0]
					f.errs[tp] = q[1:]
				}
				if rp.ErrorCode == 0 && !f.downs[brokerID] {
					f.received[tp] = append(f.received[tp], fmt.Sprintf("%s pid=%d epoch=%d ce=%d", kind, m.ProducerID,
						m.ProducerEpoch, m.CoordinatorEpoch))
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
		status := ""
		if f.downs[brokerID] {
			status = " (broker down)"
		}
		f.sent = append(f.sent, fmt.Sprintf("WriteTxnMarkers v%d to broker %d: %s pid=%d epoch=%d coordinator_epoch=%d [%s]%s",
			req.Version, brokerID, kind, m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, strings.Join(parts, " "), status))
	}
	if f.downs[brokerID] {
		return nil, fmt.Errorf("broker %d: connection refused", brokerID)
	}
	return resp, nil
}

func (f *fakeMarkers) takeSent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.sent
	f.sent = nil
	sort.Strings(out)
	return out
}

// pidBlocks hands out producer id blocks as ZooKeeper would.
type pidBlocks struct {
	mu   sync.Mutex
	next int64
	size int64 // ids per block; 0 = ProducerIDBlockSize
	err  error
}

func (b *pidBlocks) claim(brokerID int32) (zkpaths.ProducerIDBlock, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return zkpaths.ProducerIDBlock{}, b.err
	}
	size := b.size
	if size == 0 {
		size = ProducerIDBlockSize
	}
	blk := zkpaths.ProducerIDBlock{BrokerID: brokerID, BlockStart: b.next, BlockEnd: b.next + size - 1}
	b.next += size
	return blk, nil
}

var testStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func testConfig() Config {
	cfg := DefaultConfig()
	cfg.BrokerID = 1
	cfg.NumPartitions = 4
	cfg.MaxTimeout = 15 * time.Minute
	cfg.IDExpiration = time.Hour
	cfg.AbortTimedOutInterval = 10 * time.Second
	cfg.RemoveExpiredInterval = 10 * time.Minute
	cfg.MarkerTimeout = 30 * time.Second
	return cfg
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// waitIdle waits until c has no goroutine working (loads, markers).
func waitIdle(t testing.TB, c *Coordinator) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !c.Idle() {
		if time.Now().After(deadline) {
			t.Fatalf("coordinator did not become idle (busy=%d)", c.busy.Load())
		}
		time.Sleep(20 * time.Microsecond)
	}
}

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if e := kerr.ErrorForCode(code); e != nil {
		return e.(*kerr.Error).Message
	}
	return fmt.Sprint(code)
}

func ptr[T any](v T) *T { return &v }

func tp(topic string, p int32) common.TopicPartition {
	return common.TopicPartition{Topic: topic, Partition: p}
}

func newTestCoordinator(t testing.TB, store *group.MemStore, mk *fakeMarkers, blocks *pidBlocks, clock *purgatory.FakeClock, brokerID int32) *Coordinator {
	t.Helper()
	cfg := testConfig()
	cfg.BrokerID = brokerID
	c, err := New(cfg, store, NewProducerIDManager(brokerID, blocks.claim), mk, clock, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
