package quota

import (
	"errors"
	"math"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kerr"
)

func testConfig() Config {
	return Config{ProducerDefault: math.MaxInt64, ConsumerDefault: math.MaxInt64, WindowNum: 11, Window: time.Second,
		ControllerWindowNum: 11, ControllerWindow: time.Second}
}

func f(v float64) *float64 { return &v }

// TestPrecedenceLevels checks each of Kafka's eight levels (and the static
// default) by removing them one at a time, most specific first.
func TestPrecedenceLevels(t *testing.T) {
	m := New(Config{ProducerDefault: 99, WindowNum: 11, Window: time.Second}).Produce
	u, c := Named("alice"), Named("app")
	levels := []struct {
		e Entity
		v float64
	}{
		{Entity{u, c}, 1},                     // /config/users/<user>/clients/<client-id>
		{Entity{u, DefaultPart}, 2},           // /config/users/<user>/clients/<default>
		{Entity{User: u}, 3},                  // /config/users/<user>
		{Entity{DefaultPart, c}, 4},           // /config/users/<default>/clients/<client-id>
		{Entity{DefaultPart, DefaultPart}, 5}, // /config/users/<default>/clients/<default>
		{Entity{User: DefaultPart}, 6},        // /config/users/<default>
		{Entity{Client: c}, 7},                // /config/clients/<client-id>
		{Entity{Client: DefaultPart}, 8},      // /config/clients/<default>
	}
	for _, l := range levels {
		m.Update(l.e, f(l.v))
	}
	for _, l := range levels {
		got, ok := m.Quota("alice", "app")
		if !ok || got != l.v {
			t.Fatalf("with levels from %s down: quota %v %v, want %v", l.e, got, ok, l.v)
		}
		m.Update(l.e, nil)
	}
	if got, ok := m.Quota("alice", "app"); !ok || got != 99 {
		t.Fatalf("without dynamic quotas: %v %v, want the static default 99", got, ok)
	}
	// Others are not affected by alice's entries.
	m.Update(Entity{u, c}, f(1))
	m.Update(Entity{Client: DefaultPart}, f(8))
	if got, _ := m.Quota("bob", "app"); got != 8 {
		t.Fatalf("bob/app: %v, want the client default 8", got)
	}
}

// checkQuota and TestQuotaConfigPrecedence are ported from Apache Kafka's
// ClientQuotaManagerTest (core/src/test/scala/unit/kafka/server, branch 2.8,
// Apache License 2.0): which bound applies and which clients share a
// sensor.
func checkQuota(t *testing.T, m *Manager, now time.Time, user, client string, bound float64, value float64, throttle bool) {
	t.Helper()
	got, ok := m.Quota(user, client)
	if !ok || got != bound {
		t.Fatalf("%s/%s: bound %v %v, want %v", user, client, got, ok, bound)
	}
	if w := m.MaxValueInWindow(user, client); math.Abs(w-bound*10) > 0.01 {
		t.Fatalf("%s/%s: max value in window %v, want %v", user, client, w, bound*10)
	}
	d := m.Record(user, client, value*11, now)
	if throttle != (d > 0) {
		t.Fatalf("%s/%s recording %v: throttle %v, want throttled=%v", user, client, value*11, d, throttle)
	}
}

func TestQuotaConfigPrecedence(t *testing.T) {
	m := New(testConfig()).Produce
	now := time.UnixMilli(1_000_000)
	n := func(s string) Part { return Named(s) }
	m.Update(Entity{User: DefaultPart}, f(1000))
	m.Update(Entity{Client: DefaultPart}, f(2000))
	m.Update(Entity{DefaultPart, DefaultPart}, f(3000))
	m.Update(Entity{User: n("userA")}, f(4000))
	m.Update(Entity{n("userA"), n("client1")}, f(5000))
	m.Update(Entity{User: n("userB")}, f(6000))
	m.Update(Entity{n("userB"), n("client1")}, f(7000))
	m.Update(Entity{n("userB"), DefaultPart}, f(8000))
	m.Update(Entity{User: n("userC")}, f(10000))
	m.Update(Entity{Client: n("client1")}, f(9000))

	checkQuota(t, m, now, "userA", "client1", 5000, 4500, false)
	checkQuota(t, m, now, "userA", "client2", 4000, 4500, true)
	checkQuota(t, m, now, "userA", "client3", 4000, 0, true)
	checkQuota(t, m, now, "userA", "client1", 5000, 0, false)

	checkQuota(t, m, now, "userB", "client1", 7000, 8000, true)
	checkQuota(t, m, now, "userB", "client2", 8000, 7000, false)
	checkQuota(t, m, now, "userB", "client3", 8000, 7000, false)

	checkQuota(t, m, now, "userD", "client1", 3000, 3500, true)
	checkQuota(t, m, now, "userD", "client2", 3000, 2500, false)
	checkQuota(t, m, now, "userE", "client1", 3000, 2500, false)

	m.Update(Entity{DefaultPart, DefaultPart}, nil)
	checkQuota(t, m, now, "userD", "client1", 1000, 0, false)
	checkQuota(t, m, now, "userE", "client4", 1000, 1500, true)
	checkQuota(t, m, now, "userF", "client4", 1000, 800, false)
	checkQuota(t, m, now, "userF", "client5", 1000, 800, true)

	m.Update(Entity{User: DefaultPart}, nil)
	checkQuota(t, m, now, "userF", "client4", 2000, 0, false)
	checkQuota(t, m, now, "userF", "client5", 2000, 0, false)
	checkQuota(t, m, now, "userF", "client5", 2000, 2500, true)
	checkQuota(t, m, now, "userG", "client5", 2000, 0, true)

	m.Update(Entity{User: n("userA")}, f(8000))
	m.Update(Entity{n("userA"), n("client1")}, f(10000))
	checkQuota(t, m, now, "userA", "client2", 8000, 0, false)
	checkQuota(t, m, now, "userA", "client2", 8000, 4500, true)
	checkQuota(t, m, now, "userA", "client1", 10000, 0, false)
	checkQuota(t, m, now, "userA", "client1", 10000, 6000, true)
	m.Update(Entity{n("userA"), n("client1")}, nil)
	checkQuota(t, m, now, "userA", "client6", 8000, 0, true)
	m.Update(Entity{n("userA"), n("client6")}, f(11000))
	checkQuota(t, m, now, "userA", "client6", 11000, 8500, false)
	m.Update(Entity{n("userA"), DefaultPart}, f(12000))
	m.Update(Entity{n("userA"), n("client6")}, nil)
	checkQuota(t, m, now, "userA", "client6", 12000, 4000, true)
}

// TestQuotaViolation is Kafka's ClientQuotaManagerTest.testQuotaViolation:
// 400 bytes a second under a 500 B/s quota is fine; a spike of 2300 half
// a second later makes 6300 bytes over 10.5 s, 600 B/s, a throttle of
// (600−500)/500 × 10.5 s = 2100 ms; ten more seconds of 400 B/s roll the
// spike out.
func TestQuotaViolation(t *testing.T) {
	cfg := testConfig()
	cfg.ProducerDefault = 500
	m := New(cfg).Produce
	now := time.UnixMilli(1_000_000)
	for range 10 {
		if d := m.Record("ANONYMOUS", "unknown", 400, now); d != 0 {
			t.Fatalf("under the quota: throttled %v", d)
		}
		now = now.Add(time.Second)
	}
	now = now.Add(500 * time.Millisecond)
	if d := m.Record("ANONYMOUS", "unknown", 2300, now); d != 2100*time.Millisecond {
		t.Fatalf("spike: throttle %v, want 2.1s", d)
	}
	now = now.Add(2100 * time.Millisecond)
	for range 10 {
		m.Record("ANONYMOUS", "unknown", 400, now)
		now = now.Add(time.Second)
	}
	if d := m.Record("ANONYMOUS", "unknown", 0, now); d != 0 {
		t.Fatalf("after the spike rolled over: throttle %v", d)
	}
}

// TestRequestThrottleBounded: ClientRequestQuotaManager throttles at most
// one window.
func TestRequestThrottleBounded(t *testing.T) {
	m := New(testConfig()).Request
	m.Update(Entity{Client: DefaultPart}, f(1))
	if d := m.Record("u", "c", 10000, time.UnixMilli(5000)); d != time.Second {
		t.Fatalf("throttle %v, want the 1 s window", d)
	}
}

// TestUnrecord: a value taken back no longer counts.
func TestUnrecord(t *testing.T) {
	m := New(testConfig()).Fetch
	m.Update(Entity{Client: Named("c")}, f(100))
	now := time.UnixMilli(5000)
	if d := m.Record("u", "c", 5000, now); d == 0 {
		t.Fatal("5000 bytes under 100 B/s not throttled")
	}
	m.Unrecord("u", "c", 5000, now)
	if d := m.Record("u", "c", 10, now); d != 0 {
		t.Fatalf("after unrecord: throttle %v", d)
	}
}

// TestNoQuotaNoRecord: without a quota nothing applies, even a static
// default does not reach a user quota level.
func TestNoQuotaNoRecord(t *testing.T) {
	ms := New(testConfig())
	if ms.Produce.Enabled() || ms.Produce.Record("u", "c", 1e12, time.Now()) != 0 {
		t.Fatal("no quota, yet throttled or enabled")
	}
	if !math.IsInf(ms.Fetch.MaxValueInWindow("u", "c"), 1) {
		t.Fatal("no quota, yet a fetch cap")
	}
	if ms.NewMutation("u", "c", true) != nil {
		t.Fatal("no mutation quota, yet a bounded Mutation")
	}
	// Kafka gives an empty client id no client quota.
	ms.Produce.Update(Entity{Client: DefaultPart}, f(1))
	if _, ok := ms.Produce.Quota("u", ""); ok {
		t.Fatal("empty client id has a client quota")
	}
}

// TestControllerMutation: a token bucket of 11 × 1 s × 2 permits/s; a
// strict quota lets the request that empties it through and refuses the
// next until it refilled; a permissive one always lets through and
// throttles.
func TestControllerMutation(t *testing.T) {
	ms := New(testConfig())
	ms.ControllerMutation.Update(Entity{User: Named("u")}, f(2))
	now := time.UnixMilli(1_000_000)
	q := ms.NewMutation("u", "c", true)
	q.now = func() time.Time { return now }
	if err := q.Record(30); err != nil { // 22 - 30 = -8
		t.Fatalf("first mutation: %v", err)
	}
	if err := q.Record(1); !errors.Is(err, kerr.ThrottlingQuotaExceeded) {
		t.Fatalf("second mutation: %v, want THROTTLING_QUOTA_EXCEEDED", err)
	}
	if d := q.ThrottleTime(); d != 4*time.Second {
		t.Fatalf("throttle %v, want 4s (-8 tokens at 2/s)", d)
	}
	now = now.Add(4 * time.Second)
	if err := q.Record(1); err != nil {
		t.Fatalf("after refill: %v", err)
	}
	p := ms.NewMutation("u", "c", false)
	p.now = func() time.Time { return now }
	if err := p.Record(10); err != nil {
		t.Fatalf("permissive: %v", err)
	}
	if d := p.ThrottleTime(); d != 5500*time.Millisecond {
		t.Fatalf("permissive throttle %v, want 5.5s (-11 tokens)", d)
	}
}

func TestEntityFromZK(t *testing.T) {
	for _, c := range []struct {
		typ, name string
		want      Entity
	}{
		{"users", "alice", Entity{User: Named("alice")}},
		{"users", "<default>", Entity{User: DefaultPart}},
		{"users", "alice/clients/app%2A", Entity{Named("alice"), Named("app*")}},
		{"users", "<default>/clients/<default>", Entity{DefaultPart, DefaultPart}},
		{"clients", "<default>", Entity{Client: DefaultPart}},
		{"clients", "my%20app", Entity{Client: Named("my app")}},
	} {
		got, err := EntityFromZK(c.typ, c.name)
		if err != nil || got != c.want {
			t.Errorf("%s/%s: %+v %v, want %+v", c.typ, c.name, got, err, c.want)
		}
		typ, name := got.ZKPath()
		if typ != c.typ || name != c.name {
			t.Errorf("%+v: path %s/%s, want %s/%s", got, typ, name, c.typ, c.name)
		}
	}
	for _, bad := range []string{"", "a/b", "a/clients/", "a/clients/b/c"} {
		if _, err := EntityFromZK("users", bad); err == nil {
			t.Errorf("users/%q accepted", bad)
		}
	}
	if UserOf("User:CN=a b") != "CN%3Da%20b" || UserOf("User:ANONYMOUS") != "ANONYMOUS" {
		t.Error("UserOf does not sanitize the principal's name")
	}
}

// TestMetrics: each entity's sensor publishes Kafka's quota metrics.
func TestMetrics(t *testing.T) {
	cfg := testConfig()
	cfg.Metrics = gometrics.NewRegistry()
	ms := New(cfg)
	ms.Produce.Update(Entity{Client: Named("app")}, f(100))
	now := time.UnixMilli(1_000_000)
	d := ms.Produce.Record("alice", "app", 5000, now)
	ms.Produce.Throttled("alice", "app", d, now)
	rate, ok := cfg.Metrics.Get("kafka.server.Produce.byte-rate.user=.client-id=app").(gometrics.GaugeFloat64)
	if !ok || rate.Value() != 500 {
		t.Fatalf("byte-rate: %v %v, want 500 (5000 B over the 10 s minimum window)", rate, ok)
	}
	tt, ok := cfg.Metrics.Get("kafka.server.Produce.throttle-time.user=.client-id=app").(gometrics.GaugeFloat64)
	if !ok || tt.Value() != float64(d.Milliseconds()) || d == 0 {
		t.Fatalf("throttle-time: %v %v, want %v", tt, ok, d)
	}
}
