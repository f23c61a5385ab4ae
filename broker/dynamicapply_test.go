package broker_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/security/securitytest"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
)

// alterBrokerKV sets keys (name, value, name, value ...) with
// IncrementalAlterConfigs on broker id (-1: the cluster default) and
// returns the resource's error text, "" on success.
func alterBrokerKV(t *testing.T, adm *kadm.Client, id int32, kv ...string) string {
	t.Helper()
	var cfgs []kadm.AlterConfig
	for i := 0; i < len(kv); i += 2 {
		cfgs = append(cfgs, kadm.AlterConfig{Op: kadm.SetConfig, Name: kv[i], Value: kadm.StringPtr(kv[i+1])})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// Per-broker requests go to that broker: it must be in Metadata.
	waitFor(t, "the brokers in Metadata", 10*time.Second, func() bool {
		md, err := adm.BrokerMetadata(ctx)
		return err == nil && (id < 0 || slices.ContainsFunc(md.Brokers, func(b kadm.BrokerDetail) bool { return b.NodeID == id }))
	})
	var brokers []int32
	if id >= 0 {
		brokers = []int32{id}
	}
	resps, err := adm.AlterBrokerConfigs(ctx, cfgs, brokers...)
	if err != nil {
		t.Fatalf("AlterConfigs %v: %v", kv, err)
	}
	for _, r := range resps {
		if r.Err != nil {
			return r.Err.Error() + ": " + r.ErrMessage
		}
	}
	return ""
}

// probe opens a connection to addr and reports whether ApiVersions is
// answered within d.
func probe(addr string, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	c, err := network.Dial(ctx, addr, "probe", d)
	if err != nil {
		return false
	}
	defer c.Close()
	_, err = c.Request(ctx, kmsg.NewPtrApiVersionsRequest())
	return err == nil
}

// connectionLimitCluster is one broker with an INTERNAL inter-broker
// listener beside the clients' PLAINTEXT one.
func connectionLimitCluster(t *testing.T) *testcluster.Cluster {
	return testcluster.Start(t, testcluster.Options{Brokers: 1, ExtraListeners: []string{"INTERNAL"},
		Overrides: map[string]string{
			"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
			"inter.broker.listener.name":     "INTERNAL",
		}})
}

// Connection limits change without restart: a lowered
// max.connections.per.ip refuses the next connection from 127.0.0.1 at
// once; a lowered max.connections holds the next client connection while
// the inter-broker listener still accepts (and the least recently used
// client connection is closed to make room); a listener's
// max.connection.creation.rate delays connections to the rate.
func TestDynamicConnectionLimits(t *testing.T) {
	c := connectionLimitCluster(t)
	b := c.Broker(0)
	id := c.BrokerID(0)
	lo := netip.MustParseAddr("127.0.0.1")
	adm := c.Admin()
	ext, internal := c.Addr(0), c.ListenerAddr(0, "INTERNAL")
	if !probe(ext, 5*time.Second) {
		t.Fatal("no connection before any limit")
	}
	waitFor(t, "the broker in Metadata", 10*time.Second, func() bool {
		md, err := adm.BrokerMetadata(context.Background())
		return err == nil && len(md.Brokers) == 1
	})

	// max.connections.per.ip: the open connections stay, the next one is
	// closed.
	open := b.ConnectionCount(lo)
	if msg := alterBrokerKV(t, adm, id, "max.connections.per.ip", fmt.Sprint(open)); msg != "" {
		t.Fatal(msg)
	}
	waitFor(t, "max.connections.per.ip to apply", 10*time.Second, func() bool { return b.Dynamic().Current().MaxConnectionsPerIP == int32(open) })
	if probe(ext, 3*time.Second) {
		t.Fatalf("a connection beyond max.connections.per.ip=%d was served", open)
	}
	if msg := alterBrokerKV(t, adm, id, "max.connections.per.ip.overrides", fmt.Sprintf("127.0.0.1:%d", open+5)); msg != "" {
		t.Fatal(msg)
	}
	waitFor(t, "the override to admit connections", 10*time.Second, func() bool { return probe(ext, 2*time.Second) })
	if msg := alterBrokerKV(t, adm, id, "max.connections.per.ip", "1000", "max.connections.per.ip.overrides", ""); msg != "" {
		t.Fatal(msg)
	}
	waitFor(t, "max.connections.per.ip to be raised", 10*time.Second, func() bool { return b.Dynamic().Current().MaxConnectionsPerIP == 1000 })

	// max.connections (cluster default): a new client connection waits,
	// the inter-broker listener is protected.
	total := b.ConnectionCount(lo)
	if msg := alterBrokerKV(t, adm, -1, "max.connections", fmt.Sprint(total)); msg != "" {
		t.Fatal(msg)
	}
	waitFor(t, "max.connections to apply", 10*time.Second, func() bool { return b.Dynamic().Current().MaxConnections == int32(total) })
	if probe(ext, 2*time.Second) {
		t.Fatalf("a client connection beyond max.connections=%d was served", total)
	}
	if !probe(internal, 5*time.Second) {
		t.Fatal("the inter-broker listener refused a connection at max.connections")
	}
	// Lift it through ZooKeeper (the admin client's connection may be
	// the one closed to make room).
	if err := c.ZK().ChangeEntityConfigs(zkpaths.ConfigTypeBroker, zkpaths.ConfigEntityDefault, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "max.connections to be lifted", 10*time.Second, func() bool { return probe(ext, 2*time.Second) })

	// listener.name.plaintext.max.connection.creation.rate=5 at the
	// cluster default: Kafka's rate over 11 one-second samples admits the
	// first 50 at once (10 s window), then 5 per second.
	if msg := alterBrokerKV(t, adm, -1, "listener.name.plaintext.max.connection.creation.rate", "5"); msg != "" {
		t.Fatal(msg)
	}
	waitFor(t, "the listener rate to apply", 10*time.Second, func() bool {
		_, r := b.Dynamic().Current().ListenerConnectionQuota("PLAINTEXT")
		return r == 5
	})
	start := time.Now()
	for i := 0; i < 60; i++ {
		if !probe(ext, 5*time.Second) {
			t.Fatalf("connection %d not served under the creation rate", i)
		}
	}
	el := time.Since(start)
	// Kafka's rate over a window of at least 10 s lets about 50 through
	// at once; each one after that waits until the rate is back at 5/s
	// (up to quota.window.size.seconds each). The steady rate itself is
	// measured in broker/network (TestServerConnectionCreationRate).
	if el < 1200*time.Millisecond || el > 20*time.Second {
		t.Fatalf("60 connections at max.connection.creation.rate=5 took %v", el)
	}
	// The inter-broker listener is not limited by PLAINTEXT's rate.
	start = time.Now()
	for i := 0; i < 20; i++ {
		if !probe(internal, 5*time.Second) {
			t.Fatal("inter-broker connection refused")
		}
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("20 inter-broker connections took %v", el)
	}
}

// num.replica.fetchers changes live within Kafka's half-to-double rule:
// 1 → 2 → 4 → 2 → 1 while an acks=all producer runs, with every
// acknowledged record read back; 1 → 4 and 4 → 1 are refused with
// Kafka's messages.
func TestDynamicReplicaFetchers(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Overrides: map[string]string{"min.insync.replicas": "2"}})
	adm := c.Admin()
	c.CreateTopic("fetchers", 8, 2, nil)
	if msg := alterBrokerKV(t, adm, -1, "num.replica.fetchers", "4"); !strings.Contains(msg, "Dynamic thread count update validation failed for num.replica.fetchers=4, value should not be greater than double the current value 1") {
		t.Fatalf("1 → 4: %q", msg)
	}
	cl := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("fetchers"))
	var acked sync.Map
	var nAcked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprintf("v%d", i)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(v), Value: []byte(v)}).FirstErr(); err == nil {
				acked.Store(v, true)
				nAcked.Add(1)
			}
			cancel()
		}
	}()
	fetchers := func(i int) (n, threads int) {
		f := c.Broker(i).Replicas().Fetchers()
		return f.NumFetchers(), f.FetcherThreads()
	}
	for _, n := range []int{2, 4} {
		if msg := alterBrokerKV(t, adm, -1, "num.replica.fetchers", fmt.Sprint(n)); msg != "" {
			t.Fatalf("→ %d: %s", n, msg)
		}
		waitFor(t, fmt.Sprintf("num.replica.fetchers=%d on both brokers", n), 10*time.Second, func() bool {
			a, _ := fetchers(0)
			b, _ := fetchers(1)
			return a == n && b == n
		})
		before := nAcked.Load()
		waitFor(t, "acks=all produce to go on", 20*time.Second, func() bool { return nAcked.Load() >= before+20 })
	}
	if _, threads := fetchers(0); threads < 2 {
		t.Fatalf("%d fetcher goroutines with num.replica.fetchers=4", threads)
	}
	if msg := alterBrokerKV(t, adm, -1, "num.replica.fetchers", "1"); !strings.Contains(msg, "value should be at least half the current value 4") {
		t.Fatalf("4 → 1: %q", msg)
	}
	for _, n := range []int{2, 1} {
		if msg := alterBrokerKV(t, adm, -1, "num.replica.fetchers", fmt.Sprint(n)); msg != "" {
			t.Fatalf("→ %d: %s", n, msg)
		}
		waitFor(t, fmt.Sprintf("num.replica.fetchers=%d", n), 10*time.Second, func() bool {
			a, _ := fetchers(0)
			b, _ := fetchers(1)
			return a == n && b == n
		})
		before := nAcked.Load()
		waitFor(t, "acks=all produce to go on", 20*time.Second, func() bool { return nAcked.Load() >= before+20 })
	}
	close(stop)
	wg.Wait()
	want := int(nAcked.Load())
	cons := c.Client(kgo.ConsumeTopics("fetchers"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for len(seen) < want {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
	lost := 0
	acked.Range(func(k, _ any) bool {
		if !seen[k.(string)] {
			lost++
		}
		return true
	})
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged records not read back", lost, want)
	}
}

// The log cleaner restarts with dynamic log.cleaner.* values
// (LogCleaner.reconfigure); log.cleaner.threads follows Kafka's
// half-to-double rule.
func TestDynamicLogCleanerConfig(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	adm := c.Admin()
	lm := c.Broker(0).LogManager()
	if msg := alterBrokerKV(t, adm, -1, "log.cleaner.threads", "2", "log.cleaner.backoff.ms", "1234",
		"log.cleaner.io.max.bytes.per.second", "1048576", "log.cleaner.io.buffer.size", "65536"); msg != "" {
		t.Fatal(msg)
	}
	waitFor(t, "the cleaner to restart with the new settings", 10*time.Second, func() bool {
		cfg, ok := lm.CleanerConfigInUse()
		return ok && cfg.BackoffMs == 1234 && cfg.IOMaxBytesPerSecond == 1048576 && cfg.IOBufferSize == 65536 &&
			cfg.DedupeBufferSize == 134217728/2
	})
	if msg := alterBrokerKV(t, adm, -1, "log.cleaner.threads", "5"); !strings.Contains(msg, "Log cleaner threads cannot be increased to more than double the current value 2") {
		t.Fatalf("2 → 5: %q", msg)
	}
}

// servedSerial opens a TLS connection to addr and returns the serial of
// the certificate served.
func servedSerial(t *testing.T, addr string) string {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

// A listener's key store changes with a per-broker AlterConfigs
// (listener.name.ssl.ssl.keystore.*): new TLS connections get the new
// certificate while an open one keeps working; a key store with another
// DN is refused with Kafka's message; naming the same file again reloads
// it when it changed on disk (reloadUpdatedFilesWithoutConfigChange).
func TestDynamicListenerKeystore(t *testing.T) {
	securitytest.Need(t, "keytool", "openssl")
	ca := securitytest.NewCA(t, "Klassik Test CA")
	id1 := ca.Issue(t, "broker-1", "/O=Klassik/CN=broker")
	id2 := ca.Issue(t, "broker-2", "/O=Klassik/CN=broker")
	other := ca.Issue(t, "other", "/O=Klassik/CN=someone-else")
	const prefix = "listener.name.ssl."
	overrides := id1.Props(ca, securitytest.JKS, prefix)
	overrides["password.encoder.secret"] = "encoder-secret"
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, ExtraListeners: []string{"SSL"}, Overrides: overrides})
	adm := c.Admin()
	id := c.BrokerID(0)
	addr := c.ListenerAddr(0, "SSL")
	first := servedSerial(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	open, err := network.DialTLS(ctx, addr, "open", 10*time.Second, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()

	store := func(s *securitytest.Identity) []string {
		var kv []string
		for k, v := range s.Props(ca, securitytest.PKCS12, prefix) {
			if strings.Contains(k, "keystore") || strings.HasSuffix(k, "ssl.key.password") {
				kv = append(kv, k, v)
			}
		}
		return kv
	}
	if msg := alterBrokerKV(t, adm, id, store(id2)...); msg != "" {
		t.Fatal(msg)
	}
	var second string
	waitFor(t, "the new certificate on new connections", 10*time.Second, func() bool {
		second = servedSerial(t, addr)
		return second != first
	})
	if _, err := open.Request(ctx, kmsg.NewPtrApiVersionsRequest()); err != nil {
		t.Fatalf("the connection opened before the change broke: %v", err)
	}

	msg := alterBrokerKV(t, adm, id, store(other)...)
	if !strings.Contains(msg, "Keystore DistinguishedName does not match") {
		t.Fatalf("another DN: %q", msg)
	}
	if got := servedSerial(t, addr); got != second {
		t.Fatal("a refused key store is served")
	}

	// id1's store written over id2's file, then the same keys again.
	data, err := os.ReadFile(id1.PKCS12)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(id2.PKCS12, data, 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	_ = os.Chtimes(id2.PKCS12, later, later)
	if msg := alterBrokerKV(t, adm, id, store(id2)...); msg != "" {
		t.Fatal(msg)
	}
	if got := servedSerial(t, addr); got != first {
		t.Fatalf("after naming the rewritten file again the served serial is %s, want %s", got, first)
	}
}
