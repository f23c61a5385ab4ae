package broker_test

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
)

// servedConnections opens n connections to addr at once, each sending
// ApiVersions, and counts those answered.
func servedConnections(t *testing.T, addr string, n int) int {
	t.Helper()
	var ok atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, err := network.Dial(ctx, addr, "quota-probe", 3*time.Second)
			if err != nil {
				return
			}
			defer c.Close()
			if _, err := c.Request(ctx, kmsg.NewPtrApiVersionsRequest()); err == nil {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	return int(ok.Load())
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// KIP-612: connection_creation_rate of /config/ips/<ip> (written as Kafka's
// AdminZkClient does, with its change notification) throttles new
// connections from that IP at once; the IP's own entry beats <default>;
// removing it falls back to the default; an entry present at start-up is
// in force before the first request.
func TestIPConnectionRateQuota(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	b := c.Broker(0)
	lo := netip.MustParseAddr("127.0.0.1")
	zk := c.ZK()
	if err := zk.ChangeEntityConfigs(zkpaths.ConfigTypeIP, zkpaths.ConfigEntityDefault, map[string]string{config.IPConnectionRateKey: "1000"}); err != nil {
		t.Fatal(err)
	}
	if err := zk.ChangeEntityConfigs(zkpaths.ConfigTypeIP, "127.0.0.1", map[string]string{config.IPConnectionRateKey: "2"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the IP quota to apply", 10*time.Second, func() bool { return b.ConnectionRateForIP(lo) == 2 })
	if got := b.ConnectionRateForIP(netip.MustParseAddr("10.1.2.3")); got != 1000 {
		t.Fatalf("default IP rate %d, want 1000", got)
	}
	// Kafka's Rate over 11 one-second samples measures over at least
	// 10 s: at 2/s the window holds 20 connections, the rest are closed
	// after their throttle time.
	served := servedConnections(t, c.Addr(0), 40)
	if served < 15 || served > 22 {
		t.Fatalf("%d of 40 connections served at connection_creation_rate=2 (window of 10 s: ~20)", served)
	}
	// Removing the IP's entry falls back to <default> (1000/s).
	if err := zk.ChangeEntityConfigs(zkpaths.ConfigTypeIP, "127.0.0.1", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the IP quota to be removed", 10*time.Second, func() bool { return b.ConnectionRateForIP(lo) == 1000 })
	if served := servedConnections(t, c.Addr(0), 40); served != 40 {
		t.Fatalf("%d of 40 connections served after the IP quota was removed", served)
	}
	// Loaded at start-up.
	if err := zk.ChangeEntityConfigs(zkpaths.ConfigTypeIP, "127.0.0.1", map[string]string{config.IPConnectionRateKey: "3"}); err != nil {
		t.Fatal(err)
	}
	c.RestartBroker(0)
	if got := c.Broker(0).ConnectionRateForIP(lo); got != 3 {
		t.Fatalf("after restart the IP rate is %d, want 3 from /config/ips/127.0.0.1", got)
	}
	if err := zk.ChangeEntityConfigs(zkpaths.ConfigTypeIP, "127.0.0.1", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the IP quota to be removed", 10*time.Second, func() bool { return c.Broker(0).ConnectionRateForIP(lo) == 1000 })
}
