package broker_test

import (
	"context"
	"crypto/tls"
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/security/securitytest"
	"github.com/klassik/klassik/broker/testcluster"
)

// produceThenConsume produces n records of size bytes (acks=all) through a
// client seeded with seeds, then consumes them back, timing each half.
func produceThenConsume(b *testing.B, c *testcluster.Cluster, seeds []string, topic string, n, size int, opts ...kgo.Opt) (prod, cons time.Duration) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, ok := c.Broker(0).LogManager().GetLog(common.TopicPartition{Topic: topic})
	if !ok {
		b.Fatalf("no log of %s-0", topic)
	}
	from := l.LogEndOffset()
	var cs testcluster.Clients
	defer cs.Close()
	p := cs.New(b, "bench", seeds, append([]kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(time.Millisecond)}, opts...)...)
	q := cs.New(b, "bench", seeds, append([]kgo.Opt{kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(from)}}),
		kgo.FetchMaxBytes(8 << 20)}, opts...)...)
	if err := p.Ping(ctx); err != nil { // connections (and TLS handshakes) before the clock
		b.Fatal(err)
	}
	if err := q.Ping(ctx); err != nil {
		b.Fatal(err)
	}
	value := make([]byte, size)
	errs := make(chan error, 1)
	start := time.Now()
	for range n {
		p.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		})
	}
	if err := p.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	prod = time.Since(start)
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	start = time.Now()
	for got := 0; got < n; {
		fs := q.PollFetches(ctx)
		if ctx.Err() != nil {
			b.Fatalf("consumed %d of %d", got, n)
		}
		got += fs.NumRecords()
	}
	return prod, time.Since(start)
}

// BenchmarkSSLThroughput compares produce and consume MB/s over an SSL
// listener (TLS 1.3, a P-256 key, Go's default suites) with PLAINTEXT on
// the same one-broker cluster in the same run, taking turns so drift
// favours neither. It also reports what crypto/tls alone moves over
// loopback in one direction (tls-MB/s), the bound TLS puts on one
// connection. Run with -benchtime=1x; each iteration is rounds × records.
func BenchmarkSSLThroughput(b *testing.B) {
	const rounds, records, size = 4, 40000, 1024
	ca := securitytest.NewCA(b, "Klassik Bench CA")
	id := ca.Issue(b, "broker", "/CN=broker")
	c := testcluster.Start(b, testcluster.Options{Brokers: 1, Overrides: id.Props(ca, securitytest.PKCS12, "listener.name.ssl."), ExtraListeners: []string{"SSL"}})
	c.CreateTopic("load", 1, 1, nil)
	c.WaitLeaders(20*time.Second, "load", 1)
	cli, err := security.ClientTLSConfig(map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": ca.CertPEM}, "")
	if err != nil {
		b.Fatal(err)
	}
	plain, ssl := c.Bootstrap(), c.ListenerBootstrap("SSL")
	produceThenConsume(b, c, plain, "load", 2000, size) // warm up
	produceThenConsume(b, c, ssl, "load", 2000, size, kgo.DialTLSConfig(cli))
	var pp, pc, sp, sc time.Duration
	b.ResetTimer()
	for range b.N {
		for r := range rounds {
			runPlain := func() { p, q := produceThenConsume(b, c, plain, "load", records, size); pp += p; pc += q }
			runSSL := func() {
				p, q := produceThenConsume(b, c, ssl, "load", records, size, kgo.DialTLSConfig(cli))
				sp += p
				sc += q
			}
			if r%2 == 0 {
				runPlain()
				runSSL()
			} else {
				runSSL()
				runPlain()
			}
		}
	}
	b.StopTimer()
	mb := float64(b.N*rounds*records*size) / (1 << 20)
	b.ReportMetric(mb/pp.Seconds(), "plain-produce-MB/s")
	b.ReportMetric(mb/sp.Seconds(), "ssl-produce-MB/s")
	b.ReportMetric(mb/pc.Seconds(), "plain-consume-MB/s")
	b.ReportMetric(mb/sc.Seconds(), "ssl-consume-MB/s")
	b.ReportMetric(rawTLSMBps(b, id.Props(ca, securitytest.PKCS12, ""), cli), "tls-MB/s")
}

// rawTLSMBps is crypto/tls's one-way throughput over loopback with the
// broker's key and the client's configuration: 256 MiB in 64 KiB writes.
func rawTLSMBps(b *testing.B, srvProps map[string]string, cli *tls.Config) float64 {
	b.Helper()
	srv, _, err := security.ServerTLSConfig(srvProps, "SSL")
	if err != nil {
		b.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srv)
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	const total = 256 << 20
	done := make(chan error, 1)
	go func() { // the reader; joined through done
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		_, err = io.CopyN(io.Discard, c, total)
		done <- err
	}()
	conn, err := tls.Dial("tcp", ln.Addr().String(), cli)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	buf := make([]byte, 64<<10)
	start := time.Now()
	for sent := 0; sent < total; sent += len(buf) {
		if _, err := conn.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return float64(total) / (1 << 20) / time.Since(start).Seconds()
}
