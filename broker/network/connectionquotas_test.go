package network

import (
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"
)

// Kafka's Rate: with 11 samples of 1 s the window is at least 10 s, so
// the first second admits 10 × the bound before the quota bites, and the
// throttle time is (rate - bound) / bound × window.
func TestRateSensorKafkaWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := newRateSensor(11, time.Second, 5)
	for i := 0; i < 50; i++ {
		if d := r.recordAndThrottle(t0, time.Second); d != 0 {
			t.Fatalf("event %d throttled %v; the 10 s minimum window admits 50", i, d)
		}
	}
	// The 51st: rate 5.1/s over 10 s → (0.1/5)×10 s = 200 ms.
	if d := r.recordAndThrottle(t0, time.Second); d != 200*time.Millisecond {
		t.Fatalf("throttle %v, want 200ms", d)
	}
	// Bounded by the window.
	for i := 0; i < 100; i++ {
		r.record(1, t0)
	}
	if d := r.recordAndThrottle(t0, time.Second); d != time.Second {
		t.Fatalf("throttle %v, want the 1s bound", d)
	}
	// Samples older than 11 windows are forgotten.
	if got := r.rate(t0.Add(12 * time.Second)); got != 0 {
		t.Fatalf("rate after expiry %v", got)
	}
}

func testQuotas(cfg ConnectionQuotaConfig, listeners ...string) *connectionQuotas {
	return newConnectionQuotas(cfg, listeners, slog.New(slog.DiscardHandler))
}

func TestQuotasPerIPAndOverrides(t *testing.T) {
	cfg := UnlimitedConnections()
	cfg.MaxConnectionsPerIP = 2
	cfg.MaxConnectionsPerIPOverrides = map[string]int{"127.0.0.2": 0, "::1": 3}
	q := testQuotas(cfg, "PLAINTEXT")
	a := netip.MustParseAddr("127.0.0.1")
	for i := 0; i < 2; i++ {
		if err := q.inc("PLAINTEXT", a); err != nil {
			t.Fatal(err)
		}
	}
	err := q.inc("PLAINTEXT", a)
	tm, ok := err.(*errTooManyConnections)
	if !ok || tm.max != 2 || tm.Error() != "Too many connections from /127.0.0.1 (maximum = 2)" {
		t.Fatalf("third connection: %v", err)
	}
	q.dec("PLAINTEXT", a)
	if err := q.inc("PLAINTEXT", netip.MustParseAddr("127.0.0.2")); err == nil {
		t.Fatal("override 0 admitted a connection")
	}
	for i := 0; i < 3; i++ {
		if err := q.inc("PLAINTEXT", netip.MustParseAddr("::1")); err != nil {
			t.Fatalf("override 3, connection %d: %v", i, err)
		}
	}
	// IPv4-mapped addresses count as the IPv4 address.
	if got := q.get(netip.MustParseAddr("::ffff:127.0.0.1")); got != 2 {
		t.Fatalf("count %d", got)
	}
}

// max.connections blocks the acceptor of an unprotected listener until a
// slot frees; the inter-broker listener is protected and goes over it.
func TestQuotasBrokerMaxBlocksAndProtectsInterBroker(t *testing.T) {
	cfg := UnlimitedConnections()
	cfg.MaxConnections = 1
	cfg.InterBrokerListener = "INTERNAL"
	q := testQuotas(cfg, "EXTERNAL", "INTERNAL")
	ip := netip.MustParseAddr("127.0.0.1")
	if err := q.inc("EXTERNAL", ip); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- q.inc("EXTERNAL", ip) }()
	select {
	case err := <-done:
		t.Fatalf("second connection admitted over max.connections: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := q.inc("INTERNAL", ip); err != nil {
		t.Fatalf("inter-broker connection: %v", err)
	}
	if q.excess() != 1 {
		t.Fatalf("excess %d", q.excess())
	}
	q.dec("INTERNAL", ip)
	q.dec("EXTERNAL", ip)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiting acceptor not woken by a freed slot")
	}
	// Raising the limit live wakes waiters too.
	go func() { done <- q.inc("EXTERNAL", ip) }()
	time.Sleep(20 * time.Millisecond)
	cfg.MaxConnections = 5
	q.update(cfg)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiting acceptor not woken by a raised limit")
	}
	// And Shutdown.
	cfg.MaxConnections = 2
	q.update(cfg)
	go func() { done <- q.inc("EXTERNAL", ip) }()
	time.Sleep(20 * time.Millisecond)
	q.close()
	if err := <-done; err != errQuotasClosed {
		t.Fatalf("after close: %v", err)
	}
}

func TestQuotasIPRateThrottleUnrecords(t *testing.T) {
	cfg := UnlimitedConnections()
	cfg.QuotaWindowNum, cfg.QuotaWindowSize = 2, time.Second
	q := testQuotas(cfg, "PLAINTEXT")
	t0 := time.Unix(5000, 0)
	q.now = func() time.Time { return t0 }
	ip := netip.MustParseAddr("10.0.0.1")
	q.updateIPConnectionRate(ip, 2)
	if q.connectionRateForIP(ip) != 2 || q.connectionRateForIP(netip.MustParseAddr("10.0.0.2")) != Unlimited {
		t.Fatal("rates")
	}
	// Window ≥ 1 s with 2 samples: two connections pass, the third is
	// throttled and not counted.
	for i := 0; i < 2; i++ {
		if err := q.inc("PLAINTEXT", ip); err != nil {
			t.Fatal(err)
		}
	}
	err := q.inc("PLAINTEXT", ip)
	th, ok := err.(*errConnectionThrottled)
	if !ok || th.throttle <= 0 {
		t.Fatalf("third: %v", err)
	}
	if q.get(ip) != 2 || q.listeners["PLAINTEXT"].rate.samples[0].value != 2 {
		t.Fatalf("throttled connection counted: %d, listener rate %v", q.get(ip), q.listeners["PLAINTEXT"].rate.samples)
	}
	// The default applies to other IPs; removing the override falls back
	// to it.
	q.updateIPConnectionRate(netip.Addr{}, 7)
	q.updateIPConnectionRate(ip, -1)
	if q.connectionRateForIP(ip) != 7 {
		t.Fatal("default")
	}
}

func quotaServer(t *testing.T, qc ConnectionQuotaConfig, listeners ...ListenerConfig) *Server {
	return startServer(t, Config{Listeners: listeners, ConnectionQuotas: &qc}, &testHandler{})
}

func dialServed(t *testing.T, addr string, corr int32) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	expectServed(t, c, "t", corr, "connection not served")
	return c
}

// Lowering max.connections.per.ip live refuses the next connection from
// 127.0.0.1 and leaves the open ones alone.
func TestServerPerIPLimitLive(t *testing.T) {
	s := quotaServer(t, UnlimitedConnections())
	addr := addrOf(s)
	c1 := dialServed(t, addr, 1)
	dialServed(t, addr, 2)
	qc := UnlimitedConnections()
	qc.MaxConnectionsPerIP = 2
	s.UpdateConnectionQuotas(qc)
	c3, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	expectClosed(t, c3)
	expectServed(t, c1, "t", 3, "open connection broken by the new limit")
	qc.MaxConnectionsPerIPOverrides = map[string]int{"127.0.0.1": 3}
	s.UpdateConnectionQuotas(qc)
	dialServed(t, addr, 4)
}

// Lowering max.connections live closes the least recently used
// connections of unprotected listeners; the inter-broker listener still
// accepts.
func TestServerMaxConnectionsLiveClosesLRUAndProtectsInterBroker(t *testing.T) {
	qc := UnlimitedConnections()
	qc.InterBrokerListener = "INTERNAL"
	s := quotaServer(t, qc,
		ListenerConfig{Name: "PLAINTEXT", Host: "127.0.0.1", SecurityProtocol: "PLAINTEXT"},
		ListenerConfig{Name: "INTERNAL", Host: "127.0.0.1", SecurityProtocol: "PLAINTEXT"})
	ext := addrOf(s)
	old := dialServed(t, ext, 1)
	time.Sleep(5 * time.Millisecond)
	recent := dialServed(t, ext, 2)
	qc.MaxConnections = 1
	s.UpdateConnectionQuotas(qc)
	expectClosed(t, old)
	expectServed(t, recent, "t", 3, "most recent connection closed")
	// The inter-broker listener goes over the limit; the external
	// connection makes room.
	dialServed(t, s.BoundAddr("INTERNAL").String(), 4)
	expectClosed(t, recent)
}

// max.connection.creation.rate delays the acceptor: with a 1 s window of
// 2 samples the rate is measured over ≥ 1 s, so 20 connections at 10/s
// take about a second after the first 10.
func TestServerConnectionCreationRate(t *testing.T) {
	qc := UnlimitedConnections()
	qc.MaxConnectionCreationRate = 10
	qc.QuotaWindowNum, qc.QuotaWindowSize = 2, time.Second
	s := quotaServer(t, qc)
	addr := addrOf(s)
	start := time.Now()
	for i := 0; i < 30; i++ {
		c := dialServed(t, addr, int32(i))
		c.Close()
	}
	el := time.Since(start)
	// 10 pass in the first second window, then 10/s: ~2 s for 30.
	if el < 1400*time.Millisecond || el > 4*time.Second {
		t.Fatalf("30 connections at 10/s took %v", el)
	}
}
