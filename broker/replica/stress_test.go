package replica

import (
	"context"
	"encoding/binary"
	"sync"
	"testing"

	"github.com/klassik/klassik/broker/common"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestConcurrentProduceFetchAndEpochBumps: appends, long-polling fetches
// and leader-epoch bumps race. Checked: every offset is assigned exactly
// once, the HW ends at the log end, and the epochs stamped into the batches
// never decrease with the offset ("no append straddles an epoch change").
func TestConcurrentProduceFetchAndEpochBumps(t *testing.T) {
	m, store := newT0Leader(t)
	tp := common.TopicPartition{Topic: "t", Partition: 0}
	const producers, perProducer, bumps = 4, 40, 10

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	offsets := make(chan int64, producers*perProducer)
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perProducer; i++ {
				resp := m.Produce(ctx, produceReq(1, "t", 0, makeBatch(1, "v")))
				part := resp.Topics[0].Partitions[0]
				if part.ErrorCode != 0 {
					t.Errorf("produce: %d", part.ErrorCode)
					return
				}
				offsets <- part.BaseOffset
			}
		}()
	}
	var fetchers sync.WaitGroup
	for c := 0; c < 2; c++ {
		fetchers.Add(1)
		go func() {
			defer fetchers.Done()
			next := int64(0)
			for ctx.Err() == nil && next < producers*perProducer {
				raw, err := m.Fetch(ctx, fetchReq("t", 0, next, func(r *kmsg.FetchRequest) { r.MinBytes = 1; r.MaxWaitMillis = 50 }))
				if err != nil {
					return
				}
				resp := kmsg.NewPtrFetchResponse()
				resp.Version = 12
				if err := resp.ReadFrom(raw.AppendTo(nil)); err != nil {
					t.Errorf("decoding fetch response: %v", err)
					return
				}
				fp := resp.Topics[0].Partitions[0]
				if fp.ErrorCode != 0 {
					t.Errorf("fetch: %d", fp.ErrorCode)
					return
				}
				offs, _, err := batchValues(fp.RecordBatches)
				if err != nil {
					t.Errorf("decoding fetched batches: %v", err)
					return
				}
				for _, o := range offs {
					if o != next {
						t.Errorf("fetched offset %d, expected %d", o, next)
						return
					}
					next++
				}
				if next > fp.HighWatermark {
					t.Errorf("read past the HW: next %d hw %d", next, fp.HighWatermark)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for e := int32(1); e <= bumps; e++ {
			resp := m.LeaderAndIsr(ctx, lairReq(1, "t", topicIDFor("t"), 0, 1, e, []int32{1}, []int32{1}))
			if resp.Topics[0].Partitions[0].ErrorCode != 0 {
				t.Errorf("epoch bump %d failed", e)
			}
		}
	}()
	wg.Wait()
	close(offsets)
	seen := make(map[int64]bool)
	for o := range offsets {
		if seen[o] {
			t.Fatalf("offset %d assigned twice", o)
		}
		seen[o] = true
	}
	const total = producers * perProducer
	for o := int64(0); o < total; o++ {
		if !seen[o] {
			t.Fatalf("offset %d never assigned", o)
		}
	}
	fetchers.Wait()

	l := store.logs[tp]
	if l.HighWatermark() != total || l.LogEndOffset() != total {
		t.Fatalf("hw %d leo %d, want %d", l.HighWatermark(), l.LogEndOffset(), total)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	last := int32(-1)
	for _, b := range l.batches {
		e := int32(binary.BigEndian.Uint32(b[12:]))
		if e < last {
			t.Fatalf("batch at %d has epoch %d after epoch %d", batchBase(b), e, last)
		}
		last = e
	}
	if last > bumps {
		t.Fatalf("epoch %d beyond the last bump", last)
	}
}
