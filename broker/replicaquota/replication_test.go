package replicaquota

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func newFake() (*fakeClock, func() time.Time) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	return c, c.now
}

// Kafka's SimpleRate divides by the time since the oldest window began,
// but by at least one window: 500 bytes in the first 100 ms are 500 B/s,
// not 5000 B/s.
func TestRateFirstWindowCountsAsOneWindow(t *testing.T) {
	c, now := newFake()
	m := New(Config{Samples: 11, Window: time.Second, Clock: now})
	m.Record(500)
	c.add(100 * time.Millisecond)
	if got := m.Rate(); got != 500 {
		t.Fatalf("rate = %v, want 500", got)
	}
}

// A steady stream measures its own rate once windows fill.
func TestRateSteadyStream(t *testing.T) {
	c, now := newFake()
	m := New(Config{Samples: 11, Window: time.Second, Clock: now})
	for i := 0; i < 300; i++ { // 30 s at 100 KB per 100 ms = 1 MB/s
		m.Record(100_000)
		c.add(100 * time.Millisecond)
	}
	if got := m.Rate(); math.Abs(got-1_000_000) > 100_000 {
		t.Fatalf("rate = %v, want about 1e6", got)
	}
}

// Windows older than samples*window are cleared: after an idle period the
// rate is zero again and a throttle no longer applies.
func TestRateForgetsIdlePeriod(t *testing.T) {
	c, now := newFake()
	m := New(Config{Samples: 3, Window: time.Second, Clock: now})
	m.UpdateQuota(1000)
	m.Record(10_000)
	if !m.IsQuotaExceeded() {
		t.Fatal("10000 B in the first window not above 1000 B/s")
	}
	c.add(3 * time.Second)
	if m.IsQuotaExceeded() || m.Rate() != 0 {
		t.Fatalf("after 3 idle windows: exceeded=%v rate=%v", m.IsQuotaExceeded(), m.Rate())
	}
}

func TestQuotaBound(t *testing.T) {
	c, now := newFake()
	m := New(Config{Clock: now})
	m.Record(1 << 30)
	if m.IsQuotaExceeded() {
		t.Fatal("exceeded without a bound")
	}
	if m.UpperBound() != Unlimited {
		t.Fatalf("bound %d", m.UpperBound())
	}
	m.UpdateQuota(1 << 20)
	if !m.IsQuotaExceeded() {
		t.Fatal("1 GiB in a second not above 1 MiB/s")
	}
	// Exactly at the bound is acceptable (Kafka's Quota.acceptable: <=).
	m2 := New(Config{Clock: now})
	m2.UpdateQuota(1000)
	m2.Record(1000)
	c.add(500 * time.Millisecond)
	if m2.IsQuotaExceeded() {
		t.Fatal("rate equal to the bound counted as exceeded")
	}
	m.UpdateQuota(-1)
	if m.IsQuotaExceeded() {
		t.Fatal("exceeded after removing the bound")
	}
}

func TestParseThrottledReplicas(t *testing.T) {
	for _, c := range []struct {
		in    string
		all   bool
		parts []int32
		bad   bool
	}{
		{in: ""},
		{in: " * ", all: true},
		{in: "0:1,1:2,2:1", parts: []int32{0, 2}},
		{in: "0:1, 1:1", parts: []int32{0, 1}},
		{in: "0:1,,3:1", parts: []int32{0, 3}},
		{in: "0:3"},
		{in: "0", bad: true},
		{in: "a:1", bad: true},
		{in: "0:1,*", bad: true},
	} {
		all, parts, err := ParseThrottledReplicas(c.in, 1)
		if (err != nil) != c.bad || all != c.all || !slices.Equal(parts, c.parts) {
			t.Errorf("%q: all=%v parts=%v err=%v", c.in, all, parts, err)
		}
	}
}

func TestApplyTopicConfig(t *testing.T) {
	m := New(Config{})
	key := "follower.replication.throttled.replicas"
	tp := func(p int32) common.TopicPartition { return common.TopicPartition{Topic: "t", Partition: p} }
	if err := m.ApplyTopicConfig("t", key, map[string]string{key: "0:3,1:2"}, 3); err != nil {
		t.Fatal(err)
	}
	if !m.IsThrottled(tp(0)) || m.IsThrottled(tp(1)) || m.IsThrottled(common.TopicPartition{Topic: "u"}) {
		t.Fatal("0:3 on broker 3 should throttle t-0 only")
	}
	if err := m.ApplyTopicConfig("t", key, map[string]string{key: "*"}, 3); err != nil || !m.IsThrottled(tp(7)) {
		t.Fatalf("* should throttle every partition (err %v)", err)
	}
	if err := m.ApplyTopicConfig("t", key, map[string]string{}, 3); err != nil || m.IsThrottled(tp(0)) {
		t.Fatalf("a removed key should unthrottle (err %v)", err)
	}
	if err := m.ApplyTopicConfig("t", key, map[string]string{key: "junk"}, 3); err == nil || m.IsThrottled(tp(0)) {
		t.Fatal("junk should be an error and throttle nothing")
	}
}

// Concurrent recorders, checkers and config changes (run with -race).
func TestConcurrentUse(t *testing.T) {
	m := New(Config{})
	m.UpdateQuota(1000)
	done := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := 0; j < 1000; j++ {
				m.Record(10)
				m.IsQuotaExceeded()
				m.IsThrottled(common.TopicPartition{Topic: "t"})
				m.MarkAllThrottled("t")
				m.RemoveThrottle("t")
			}
		}()
	}
	for i := 0; i < 4; i++ {
		<-done
	}
}

// FuzzParseThrottledReplicas: any topic config value is either refused
// or yields "*" or partitions that are non-negative, unique and named
// with this broker in the value; never a panic. ApplyTopicConfig agrees
// with it.
func FuzzParseThrottledReplicas(f *testing.F) {
	for _, s := range []string{"", "*", " * ", "0:1", "0:1,1:2", "0:1, 1:1", "0:1,,2:1", "a:b", "0:", ":1", "1:1:1", "-1:1", "99999999999:1", "0:1,*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		all, parts, err := ParseThrottledReplicas(v, 1)
		if err != nil && (all || parts != nil) {
			t.Fatalf("%q: error %v with all=%v parts=%v", v, err, all, parts)
		}
		seen := map[int32]bool{}
		for _, p := range parts {
			if p < 0 || seen[p] {
				t.Fatalf("%q: partitions %v", v, parts)
			}
			seen[p] = true
		}
		m := New(Config{})
		aerr := m.ApplyTopicConfig("t", "k", map[string]string{"k": v}, 1)
		if (aerr != nil) != (err != nil) {
			t.Fatalf("%q: parse error %v, apply error %v", v, err, aerr)
		}
		for _, p := range parts {
			if !m.IsThrottled(common.TopicPartition{Topic: "t", Partition: p}) {
				t.Fatalf("%q: partition %d not throttled", v, p)
			}
		}
	})
}
