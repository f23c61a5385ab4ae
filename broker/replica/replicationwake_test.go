package replica

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
)

// TestAcksAllCompletesThroughParkedFollowerFetches follows one acks=all
// produce through the leader at RF=3: the followers' fetches, parked at the
// log end with a max wait far beyond the test, return the records as soon
// as the leader appends them (not at replica.fetch.wait.max.ms); the
// produce stays parked while only one follower has fetched past the
// records; the other follower's next fetch raises the high watermark and
// completes it with NONE.
func TestAcksAllCompletesThroughParkedFollowerFetches(t *testing.T) {
	m, _ := newTestManager(t, nil)
	makeLeader(t, m, "t", 0, 0, 1, 2, 3)
	tp := common.TopicPartition{Topic: "t", Partition: 0}
	key := partitionKey(tp)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	// parkedFetch starts follower r's long poll at offset; its response
	// (or error) arrives on the returned channel.
	type fetched struct {
		resp kmsg.Response
		err  error
	}
	parkedFetch := func(r int32, offset int64) <-chan fetched {
		req := fetchReq("t", 0, offset, func(q *kmsg.FetchRequest) {
			q.ReplicaID = r
			q.MinBytes = 1
			q.MaxWaitMillis = 600_000
			q.Topics[0].Partitions[0].CurrentLeaderEpoch = 0
			q.Topics[0].Partitions[0].LastFetchedEpoch = -1
		})
		out := make(chan fetched, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := m.Fetch(ctx, req)
			out <- fetched{resp, err}
		}()
		return out
	}
	values := func(f fetched) []string {
		t.Helper()
		if f.err != nil {
			t.Fatalf("follower fetch: %v", f.err)
		}
		fp := onlyFetchPartition(t, decodeFetch(t, f.resp, 12))
		_, vals, _ := batchValues(fp.RecordBatches)
		return vals
	}

	f2, f3 := parkedFetch(2, 0), parkedFetch(3, 0)
	waitFor(t, "both follower fetches to park", func() bool { return m.fetches.Watched(key) == 2 })

	produced := make(chan kmsg.ProduceResponseTopicPartition, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		req := produceReq(-1, "t", 0, makeBatch(1, "acked"))
		req.TimeoutMillis = 600_000
		resp := m.Produce(ctx, req)
		if resp == nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Errorf("unexpected produce response: %+v", resp)
			close(produced)
			return
		}
		produced <- resp.Topics[0].Partitions[0]
	}()

	// The append completes both parked fetches with the record.
	for _, f := range []<-chan fetched{f2, f3} {
		if vals := values(<-f); !slices.Equal(vals, []string{"acked"}) {
			t.Fatalf("woken follower fetch returned %v, want [acked]", vals)
		}
	}
	waitFor(t, "the produce to park", func() bool { return m.produces.Watched(key) == 1 })

	// Follower 2 has the record; follower 3 has not said so yet: the HW
	// stays at 0 and the produce waits. Follower 2's fetch parks at the
	// log end.
	next2 := parkedFetch(2, 1)
	waitFor(t, "follower 2's next fetch to park", func() bool { return m.fetches.Watched(key) == 1 })
	p, _ := m.Partition(tp)
	if hw := p.Log().HighWatermark(); hw != 0 {
		t.Fatalf("HW %d with one of two followers caught up, want 0", hw)
	}
	if m.produces.Watched(key) != 1 {
		t.Fatal("acks=all produce completed before the whole ISR had the record")
	}

	// Follower 3's next fetch raises the HW and completes the produce.
	next3 := parkedFetch(3, 1)
	sp, ok := <-produced
	if !ok {
		return
	}
	if sp.ErrorCode != 0 || sp.BaseOffset != 0 {
		t.Fatalf("acks=all produce: error %d, base offset %d", sp.ErrorCode, sp.BaseOffset)
	}
	if hw := p.Log().HighWatermark(); hw != 1 {
		t.Fatalf("HW %d after both followers fetched past the record, want 1", hw)
	}
	waitFor(t, "both next fetches to park", func() bool { return m.fetches.Watched(key) == 2 })
	cancel()
	for _, f := range []<-chan fetched{next2, next3} {
		if r := <-f; r.err == nil {
			t.Fatalf("parked fetch at the log end returned without data or cancellation: %+v", r.resp)
		}
	}
}

// reusingTestClient is a LeaderClient that also serves fetches the way
// network.Client.RequestReusing does: the response is decoded from the
// caller's buffer and its records alias it. Before each call it overwrites
// the whole buffer, so records kept past their fetch would turn to garbage.
type reusingTestClient struct {
	LeaderClient
	reused *atomic.Int64 // calls that got a buffer back from an earlier one
}

func (c *reusingTestClient) RequestReusing(ctx context.Context, req kmsg.Request, buf []byte) (kmsg.Response, []byte, error) {
	full := buf[:cap(buf)]
	for i := range full {
		full[i] = 0xee
	}
	if cap(buf) > 0 {
		c.reused.Add(1)
	}
	resp, err := c.LeaderClient.Request(ctx, req)
	if err != nil {
		return nil, buf, err
	}
	enc := resp.AppendTo(buf[:0])
	out := req.ResponseKind()
	out.SetVersion(req.GetVersion())
	if err := out.ReadFrom(enc); err != nil {
		return nil, buf, err
	}
	return out, enc[:0], nil
}

// TestFetcherReusesResponseBuffer: a fetcher whose client reads every
// fetch response into the same buffer (as the network client does) leaves
// the followers byte for byte equal to the leader over many fetches of
// different sizes, on the memory and the disk store.
func TestFetcherReusesResponseBuffer(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() LogStore) {
		var reused atomic.Int64
		c := newMiniClusterWith(t, newStore, func(cfg *Config) {
			inner := cfg.ReplicaFetch.Dial
			cfg.ReplicaFetch.Dial = func(ctx context.Context, host string, port int32) (LeaderClient, error) {
				lc, err := inner(ctx, host, port)
				if err != nil {
					return nil, err
				}
				return &reusingTestClient{LeaderClient: lc, reused: &reused}, nil
			}
		}, 1, 2, 3)
		all := []int32{1, 2, 3}
		c.lairEach(all, "t", 0, 1, 0, all, all)
		leader := c.broker(1)
		var want []string
		for i := 0; i < 40; i++ {
			vals := make([]string, 1+i%7)
			for j := range vals {
				vals[j] = strings.Repeat(string(rune('a'+i%26)), 1+(i*37+j*101)%3000)
			}
			if r := produceOne(t, leader, -1, "t", 0, makeBatch(0, vals...)); r.ErrorCode != 0 {
				t.Fatalf("acks=all produce %d: code %d", i, r.ErrorCode)
			}
			want = append(want, vals...)
		}
		end := c.log(1, "t", 0).LogEndOffset()
		c.waitSame(all, "t", end)
		for _, id := range []int32{2, 3} {
			if _, vals := c.values(id, "t", 0); !slices.Equal(vals, want) {
				t.Fatalf("broker %d has %d values, not the %d produced", id, len(vals), len(want))
			}
		}
		if reused.Load() == 0 {
			t.Fatal("the fetchers never passed a response buffer back")
		}
	})
}
