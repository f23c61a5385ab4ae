package replica

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/klassik/klassik/broker/common"
)

// stubQuota is a ReplicaQuota whose verdict the test sets; it counts the
// bytes recorded and the checks made.
type stubQuota struct {
	exceeded atomic.Bool
	recorded atomic.Int64
	checks   atomic.Int64

	mu        sync.Mutex
	throttled map[common.TopicPartition]bool
}

func newStubQuota(tps ...common.TopicPartition) *stubQuota {
	q := &stubQuota{throttled: map[common.TopicPartition]bool{}}
	for _, tp := range tps {
		q.throttled[tp] = true
	}
	return q
}

func (q *stubQuota) Record(n int64) { q.recorded.Add(n) }
func (q *stubQuota) IsThrottled(tp common.TopicPartition) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.throttled[tp]
}
func (q *stubQuota) IsQuotaExceeded() bool { q.checks.Add(1); return q.exceeded.Load() }

var t0 = common.TopicPartition{Topic: "t", Partition: 0}

// Kafka's shouldLeaderThrottle: "!isReplicaInSync &&
// quota.isThrottled(partition) && quota.isQuotaExceeded". A follower
// outside the ISR gets no records while the quota is exceeded, the HW
// still; an ISR member always gets them; the bytes of a throttled
// partition are recorded whoever fetched them.
func TestLeaderThrottlesOnlyFollowersOutsideIsr(t *testing.T) {
	q := newStubQuota(t0)
	m, _ := newTestManager(t, func(c *Config) { c.LeaderQuota = q })
	if code := lairCode(t, m.LeaderAndIsr(context.Background(), lairReq(1, "t", topicIDFor("t"), 0, 1, 0, []int32{1}, []int32{1, 2}))); code != 0 {
		t.Fatalf("LeaderAndIsr: %d", code)
	}
	produceValues(t, m, 1, "t", "a", "b", "c")

	q.exceeded.Store(true)
	p := followerFetch(t, m, 2, "t", 0, 0, 0)
	if p.ErrorCode != 0 || len(p.RecordBatches) != 0 || p.HighWatermark < 0 {
		t.Fatalf("throttled follower outside the ISR: code %d, %d bytes, HW %d; want no records, no error, a HW", p.ErrorCode, len(p.RecordBatches), p.HighWatermark)
	}
	if q.recorded.Load() != 0 {
		t.Fatalf("recorded %d bytes for an empty response", q.recorded.Load())
	}

	q.exceeded.Store(false)
	p = followerFetch(t, m, 2, "t", 0, 0, 0)
	if len(p.RecordBatches) == 0 {
		t.Fatal("under the quota the follower got no records")
	}
	if got := q.recorded.Load(); got != int64(len(p.RecordBatches)) {
		t.Fatalf("recorded %d bytes, sent %d", got, len(p.RecordBatches))
	}

	// Broker 2 caught up and joined the ISR: the throttle no longer
	// applies to it, but its bytes still count.
	followerFetch(t, m, 2, "t", 0, 3, 0) // at the HW: joins the ISR
	waitFor(t, "broker 2 in the ISR", func() bool {
		p, ok := m.Partition(t0)
		return ok && containsBroker(p.State().ISR, 2)
	})
	produceValues(t, m, 1, "t", "d")
	q.exceeded.Store(true)
	before := q.recorded.Load()
	p = followerFetch(t, m, 2, "t", 0, 3, 0)
	if len(p.RecordBatches) == 0 {
		t.Fatal("an ISR member was throttled")
	}
	if q.recorded.Load()-before != int64(len(p.RecordBatches)) {
		t.Fatal("an ISR member's bytes of a throttled partition were not recorded")
	}
	// Consumers are never subject to the replication quota.
	q.exceeded.Store(true)
	if p := onlyFetchPartition(t, doFetch(t, m, fetchReq("t", 0, 0))); len(p.RecordBatches) == 0 {
		t.Fatal("a consumer fetch was throttled")
	}
}

// A partition that is not throttled is never held back.
func TestLeaderDoesNotThrottleOtherPartitions(t *testing.T) {
	q := newStubQuota(common.TopicPartition{Topic: "t", Partition: 1})
	q.exceeded.Store(true)
	m, _ := newTestManager(t, func(c *Config) { c.LeaderQuota = q })
	if code := lairCode(t, m.LeaderAndIsr(context.Background(), lairReq(1, "t", topicIDFor("t"), 0, 1, 0, []int32{1}, []int32{1, 2}))); code != 0 {
		t.Fatalf("LeaderAndIsr: %d", code)
	}
	produceValues(t, m, 1, "t", "a")
	if p := followerFetch(t, m, 2, "t", 0, 0, 0); len(p.RecordBatches) == 0 {
		t.Fatal("an unthrottled partition was held back")
	}
	if q.recorded.Load() != 0 {
		t.Fatal("bytes of an unthrottled partition were recorded")
	}
}

// Kafka's shouldFollowerThrottle: "!fetchState.isReplicaInSync &&
// quota.isThrottled(topicPartition) && quota.isQuotaExceeded". A new
// follower of a throttled partition sends no fetch for it while the quota
// is exceeded, catches up once it is not, and, caught up (lag 0), keeps
// replicating even when the quota is exceeded again. Every record arrives
// once, in order.
func TestFollowerThrottlesUntilCaughtUp(t *testing.T) {
	q := newStubQuota(t0)
	q.exceeded.Store(true)
	c := newMiniCluster(t, func(cfg *Config) {
		if cfg.BrokerID == 2 {
			cfg.ReplicaFetch.Quota = q
		}
	}, 1, 2)
	c.lair(1, "t", 0, 1, 0, []int32{1}, []int32{1})
	produceValues(t, c.broker(1), 1, "t", "a", "b", "c", "d")
	c.addFollower2()

	waitFor(t, "the follower to check its quota a few times", func() bool { return q.checks.Load() >= 5 })
	if l := c.log(2, "t", 0); l != nil && l.LogEndOffset() != 0 {
		t.Fatalf("throttled follower fetched up to %d", l.LogEndOffset())
	}

	q.exceeded.Store(false)
	c.waitSame([]int32{1, 2}, "t", 4)
	if q.recorded.Load() == 0 {
		t.Fatal("the follower recorded no bytes of a throttled partition")
	}
	// Caught up: lag 0 at the last fetch with records, so the
	// follower throttle spares it.
	waitFor(t, "lag 0", func() bool { return c.broker(2).fetcher.inSync(t0) })
	q.exceeded.Store(true)
	produceValues(t, c.broker(1), 1, "t", "e", "f")
	c.waitSame([]int32{1, 2}, "t", 6)
	offs, vals := c.values(2, "t", 0)
	want := []string{"a", "b", "c", "d", "e", "f"}
	for i := range want {
		if i >= len(vals) || vals[i] != want[i] || offs[i] != int64(i) {
			t.Fatalf("follower log %v %v, want %v at offsets 0..5", offs, vals, want)
		}
	}
}

// inSync reports whether the fetcher counts tp as caught up (lag 0).
func (f *FetcherManager) inSync(tp common.TopicPartition) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.threads {
		t.mu.Lock()
		s := t.parts[tp]
		t.mu.Unlock()
		if s != nil {
			return s.lag == 0
		}
	}
	return false
}
