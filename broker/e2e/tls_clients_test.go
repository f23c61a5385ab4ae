package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/security/securitytest"
	"github.com/klassik/klassik/broker/testcluster"
)

// tlsRecords is how many records each client sends over SSL.
const tlsRecords = 500

// TestClientsOverSSL: one broker with an SSL listener that requires a
// client certificate (PEM key store, KIP-651). kcat, franz-go,
// confluent-kafka and kafka-python each produce and consume over SSL with
// a client certificate signed by the broker's CA; with a trust store of
// another CA, and without a client certificate, each fails with its own
// SSL error within seconds instead of hanging.
func TestClientsOverSSL(t *testing.T) {
	ca := securitytest.NewCA(t, "Klassik Test CA")
	other := securitytest.NewCA(t, "Untrusted CA")
	brokerID := ca.Issue(t, "broker", "/C=DE/O=Klassik/CN=broker")
	alice := ca.Issue(t, "alice", "/C=DE/O=Klassik/OU=eng/CN=alice")
	overrides := brokerID.Props(ca, securitytest.PEM, "listener.name.ssl.")
	overrides["listener.name.ssl.ssl.client.auth"] = "required"
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Overrides: overrides, ExtraListeners: []string{"SSL"}})
	boot := strings.Join(c.ListenerBootstrap("SSL"), ",")

	// Client credentials: a good one, one trusting another CA, one
	// without a certificate.
	type creds struct{ ca, cert, key string }
	good := creds{ca.CertPEM, alice.CertPEM, alice.KeyPEM}
	untrusted := creds{other.CertPEM, alice.CertPEM, alice.KeyPEM}
	noCert := creds{ca.CertPEM, "", ""}

	topic := func(name string) string {
		tp := "ssl-" + name
		c.CreateTopic(tp, 1, 1, nil)
		c.WaitLeaders(30*time.Second, tp, 1)
		return tp
	}
	// failsFast runs a client's connection attempt, which must fail within
	// limit with output mentioning one of want.
	failsFast := func(t *testing.T, what string, limit time.Duration, want []string, name string, args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		start := time.Now()
		out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("%s: still running after %v (a hang)\n%s", what, limit, tailLines(string(out)))
		}
		if err == nil {
			t.Fatalf("%s: succeeded\n%s", what, tailLines(string(out)))
		}
		for _, w := range want {
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, w) {
					t.Logf("%s failed in %v: %s", what, time.Since(start).Round(10*time.Millisecond), strings.TrimSpace(line))
					return
				}
			}
		}
		t.Fatalf("%s: output mentions none of %q:\n%s", what, want, tailLines(string(out)))
	}

	t.Run("kcat", func(t *testing.T) {
		kcat := requireTool(t, "kcat", "apt-get install -y kcat")
		tp := topic("kcat")
		sslArgs := func(cr creds) []string {
			a := []string{"-X", "security.protocol=ssl", "-X", "ssl.ca.location=" + cr.ca}
			if cr.cert != "" {
				a = append(a, "-X", "ssl.certificate.location="+cr.cert, "-X", "ssl.key.location="+cr.key)
			}
			return a
		}
		var in strings.Builder
		for i := 0; i < tlsRecords; i++ {
			fmt.Fprintf(&in, "kcat-%d\n", i)
		}
		run(t, 60*time.Second, []byte(in.String()), kcat, append([]string{"-b", boot, "-t", tp, "-P", "-X", "acks=all"}, sslArgs(good)...)...)
		out := run(t, 60*time.Second, nil, kcat, append([]string{"-b", boot, "-t", tp, "-C", "-o", "beginning", "-e",
			"-c", fmt.Sprint(tlsRecords), "-f", "%p %o %s\n", "-q"}, sslArgs(good)...)...)
		verifyExactlyOnce(t, "kcat", tlsRecords, parseLines(t, out))

		failsFast(t, "kcat with an untrusted CA", 30*time.Second, []string{"certificate verify failed"}, kcat, append([]string{"-b", boot, "-L", "-m", "5"}, sslArgs(untrusted)...)...)
		failsFast(t, "kcat without a client certificate", 30*time.Second, []string{"certificate required"}, kcat, append([]string{"-b", boot, "-L", "-m", "5"}, sslArgs(noCert)...)...)
	})

	t.Run("franz-go", func(t *testing.T) {
		tp := topic("franz-go")
		tlsFor := func(cr creds) *kgo.Client {
			p := map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": cr.ca}
			if cr.cert != "" {
				p = alice.Props(ca, securitytest.PEM, "")
				p["ssl.truststore.location"] = cr.ca
			}
			cfg, err := security.ClientTLSConfig(p, "")
			if err != nil {
				t.Fatal(err)
			}
			cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenerBootstrap("SSL")...), kgo.DialTLSConfig(cfg),
				kgo.ConsumeTopics(tp), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RequestRetries(1),
				kgo.RetryTimeout(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(cl.Close)
			return cl
		}
		cl := tlsFor(good)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		for i := 0; i < tlsRecords; i++ {
			cl.Produce(ctx, &kgo.Record{Topic: tp, Value: []byte(fmt.Sprintf("franz-go-%d", i))}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		verifyExactlyOnce(t, "franz-go", tlsRecords, pollRecords(t, cl, tp, tlsRecords, nil))

		for name, cr := range map[string]creds{"untrusted CA": untrusted, "no client certificate": noCert} {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			err := tlsFor(cr).Ping(ctx)
			cancel()
			if err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("franz-go with %s: %v", name, err)
			}
			if !strings.Contains(err.Error(), "certificate") && !strings.Contains(err.Error(), "tls") {
				t.Fatalf("franz-go with %s: not a TLS error: %v", name, err)
			}
			t.Logf("franz-go with %s: %v", name, err)
		}
	})

	python := func(t *testing.T, module, pkg, name, script string) {
		requirePython(t, module, pkg)
		tp := topic(name)
		path := filepath.Join(t.TempDir(), name+".py")
		if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		args := func(mode string, cr creds) []string {
			return []string{path, mode, boot, tp, fmt.Sprint(tlsRecords), name, cr.ca, cr.cert, cr.key}
		}
		out := run(t, 120*time.Second, nil, "/usr/bin/python3", args("produce", good)...)
		if !bytes.Contains(out, []byte(fmt.Sprintf("produced %d", tlsRecords))) {
			t.Fatalf("%s producer: %s", name, out)
		}
		out = run(t, 120*time.Second, nil, "/usr/bin/python3", args("consume", good)...)
		verifyExactlyOnce(t, name, tlsRecords, parseLines(t, out))
		failsFast(t, name+" with an untrusted CA", 45*time.Second, []string{"CERTIFICATE_VERIFY_FAILED", "certificate verify failed"}, "/usr/bin/python3", args("probe", untrusted)...)
		failsFast(t, name+" without a client certificate", 45*time.Second, []string{"CERTIFICATE_REQUIRED", "certificate required", "SSLEOFError"}, "/usr/bin/python3", args("probe", noCert)...)
	}
	t.Run("confluent-kafka", func(t *testing.T) {
		python(t, "confluent_kafka", "python3-confluent-kafka", "confluent-kafka", confluentSSLScript)
	})
	t.Run("kafka-python", func(t *testing.T) {
		python(t, "kafka", "python3-kafka", "kafka-python", kafkaPythonSSLScript)
	})
}

// The Python clients' scripts take: mode (produce, consume, probe),
// bootstrap, topic, count, prefix, CA file, certificate file, key file
// (the last two empty for no client certificate). consume prints
// "<partition> <offset> <value>" lines; probe exits 2 when it cannot
// connect, with the client's errors on stderr.

const confluentSSLScript = `import sys
from confluent_kafka import Producer, Consumer, TopicPartition, KafkaException, OFFSET_BEGINNING
from confluent_kafka.admin import AdminClient
mode, boot, topic, n, prefix, ca, cert, key = sys.argv[1:9]
n = int(n)
errors = []
conf = {'bootstrap.servers': boot, 'security.protocol': 'SSL', 'ssl.ca.location': ca,
        'error_cb': lambda e: errors.append(str(e))}
if cert:
    conf.update({'ssl.certificate.location': cert, 'ssl.key.location': key})
if mode == 'produce':
    p = Producer(dict(conf, acks='all'))
    done = [0]
    def cb(err, msg):
        if err is None:
            done[0] += 1
        else:
            print('delivery failed:', err, file=sys.stderr)
    for i in range(n):
        p.produce(topic, value='%s-%d' % (prefix, i), callback=cb)
        p.poll(0)
    p.flush(60)
    print('produced %d' % done[0])
elif mode == 'consume':
    c = Consumer(dict(conf, **{'group.id': 'ssl-' + topic, 'enable.auto.commit': False}))
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    got = 0
    while got < n:
        m = c.poll(30)
        if m is None:
            print('timed out after %d records' % got, file=sys.stderr)
            sys.exit(1)
        if m.error():
            print('consume error:', m.error(), file=sys.stderr)
            continue
        print('%d %d %s' % (m.partition(), m.offset(), m.value().decode()))
        got += 1
    c.close()
else:
    try:
        AdminClient(conf).list_topics(timeout=8)
    except KafkaException as e:
        print('list_topics failed:', e, '|', ' | '.join(errors), file=sys.stderr)
        sys.exit(2)
    print('connected')
`

const kafkaPythonSSLScript = `import sys, logging
logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
from kafka import KafkaProducer, KafkaConsumer, TopicPartition
mode, boot, topic, n, prefix, ca, cert, key = sys.argv[1:9]
n = int(n)
kw = dict(bootstrap_servers=boot.split(','), security_protocol='SSL', ssl_cafile=ca)
if cert:
    kw.update(ssl_certfile=cert, ssl_keyfile=key)
if mode == 'produce':
    p = KafkaProducer(acks='all', **kw)
    fs = [p.send(topic, ('%s-%d' % (prefix, i)).encode()) for i in range(n)]
    for f in fs:
        f.get(timeout=60)
    p.flush()
    print('produced %d' % n)
elif mode == 'consume':
    c = KafkaConsumer(enable_auto_commit=False, consumer_timeout_ms=30000, **kw)
    tp = TopicPartition(topic, 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    got = 0
    for m in c:
        print('%d %d %s' % (m.partition, m.offset, m.value.decode()))
        got += 1
        if got >= n:
            break
    c.close()
else:
    try:
        KafkaProducer(api_version_auto_timeout_ms=8000, **kw)
    except Exception as e:
        print('connect failed: %s: %s' % (type(e).__name__, e), file=sys.stderr)
        sys.exit(2)
    print('connected')
`
