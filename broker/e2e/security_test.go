package e2e_test

// The security client matrix (issue 9, "How it is shown"): with one broker
// serving SSL (ssl.client.auth=required) and SASL_SSL (SCRAM-SHA-512)
// listeners, keystores made by keytool and certificates by openssl, each
// real client
//
//   - produces and consumes over SASL_SSL as a SCRAM-SHA-512 user and over
//     SSL with a client certificate;
//   - fails, with its own authentication error and within its bounded
//     timeouts, on a wrong password, on a broker certificate signed by a CA
//     it does not trust, and on SSL without a client certificate.
//
// The broker starts once for the file; the clients run in parallel, each
// on its own topics.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	kafkago "github.com/segmentio/kafka-go"
	kafkagoscram "github.com/segmentio/kafka-go/sasl/scram"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	kgoscram "github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/xdg-go/scram"

	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/security/securitytest"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/broker/testcluster/proc"
	"github.com/klassik/klassik/zkpaths"
)

// secRecords is how many records each client sends per protocol.
const secRecords = 200

// secPKI is the matrix's TLS material, made by securitytest with openssl
// and keytool as an operator would (the README's walk-through shows the
// keytool -genkeypair route; bin/klassik-secure-demo.sh runs it).
type secPKI struct {
	password               string // of every store and key
	brokerProps            map[string]string
	truststore             string // JKS: the CA
	ca, otherCA            string // PEM; otherCA signed nothing the broker has
	clientCert, clientKey  string // PEM, signed by ca, CN=client
	clientKeystorePKCS12   string // the client's key and chain
	clientTruststorePKCS12 string // the CA
}

func makeSecPKI(t *testing.T) *secPKI {
	t.Helper()
	ca := securitytest.NewCA(t, "Klassik Test CA")
	other := securitytest.NewCA(t, "Some Other CA")
	brokerID := ca.Issue(t, "broker", "/CN=localhost")
	client := ca.Issue(t, "client", "/CN=client")
	return &secPKI{password: securitytest.Password, brokerProps: brokerID.Props(ca, securitytest.JKS, ""),
		truststore: ca.TrustJKS, ca: ca.CertPEM, otherCA: other.CertPEM,
		clientCert: client.CertPEM, clientKey: client.KeyPEM,
		clientKeystorePKCS12: client.PKCS12, clientTruststorePKCS12: ca.TrustPKCS12}
}

// secBroker is the matrix's broker.
type secBroker struct {
	c                *testcluster.Cluster
	pki              *secPKI
	sslAddr, saslSSL string // host:port of the SSL and SASL_SSL listeners
}

const (
	secUser     = "alice"
	secPassword = "alice-secret"
)

// startSecBroker starts one broker with PLAINTEXT (inter-broker), SSL
// (client certificate required) and SASL_SSL (SCRAM-SHA-512) listeners,
// and gives user alice a SCRAM-SHA-512 credential in /config/users, as
// kafka-configs.sh writes it.
func startSecBroker(t *testing.T) *secBroker {
	t.Helper()
	pki := makeSecPKI(t)
	overrides := map[string]string{
		"listeners":                  "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
		"inter.broker.listener.name": "PLAINTEXT",
		"ssl.client.auth":            "required", // SSL only: SASL_SSL authenticates with SASL (Kafka 2.8's rule)
		"sasl.enabled.mechanisms":    "SCRAM-SHA-512",
		"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
	}
	for k, v := range pki.brokerProps { // the broker's JKS keystore and truststore
		overrides[k] = v
	}
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Overrides: overrides})
	b := &secBroker{c: c, pki: pki, sslAddr: boundAddr(t, c, "SSL"), saslSSL: boundAddr(t, c, "SASL_SSL")}
	f, err := security.NewScramFormatter(security.MechanismScramSHA512)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := f.GenerateCredential(secPassword, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ZK().ChangeUserConfig(secUser, zkpaths.UserConfig{Scram: map[string]string{security.MechanismScramSHA512: cred.String()}}); err != nil {
		t.Fatalf("writing /config/users/%s: %v", secUser, err)
	}
	// The credential reaches the broker through the change notification;
	// wait until alice can log in.
	ok := testcluster.Poll(20*time.Second, func() bool {
		return franzConnect(b.saslSSL, b.franzOpts(b.scram(secPassword), "localhost")...) == nil
	})
	if !ok {
		t.Fatalf("alice cannot log in over SASL_SSL 20s after her credential was written: %v",
			franzConnect(b.saslSSL, b.franzOpts(b.scram(secPassword), "localhost")...))
	}
	return b
}

func boundAddr(t *testing.T, c *testcluster.Cluster, listener string) string {
	t.Helper()
	addr, ok := c.Broker(0).BoundAddr(listener).(*net.TCPAddr)
	if !ok {
		t.Fatalf("the broker has no %s listener", listener)
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(addr.Port))
}

// secConf is the matrix's neutral description of a client's security
// settings; each driver turns it into its library's configuration.
type secConf struct {
	Protocol  string `json:"protocol"`
	Mechanism string `json:"mechanism,omitempty"`
	Username  string `json:"username,omitempty"`
	Password  string `json:"password,omitempty"`
	CA        string `json:"ca"`
	Cert      string `json:"cert,omitempty"`
	Key       string `json:"key,omitempty"`
}

func (b *secBroker) scram(password string) secConf {
	return secConf{Protocol: "SASL_SSL", Mechanism: "SCRAM-SHA-512", Username: secUser, Password: password, CA: b.pki.ca}
}

func (b *secBroker) mtls() secConf {
	return secConf{Protocol: "SSL", CA: b.pki.ca, Cert: b.pki.clientCert, Key: b.pki.clientKey}
}

// secCase is one row of the matrix.
type secCase struct {
	name string
	addr string
	conf secConf
}

func (b *secBroker) failureCases() []secCase {
	untrusted := b.scram(secPassword)
	untrusted.CA = b.pki.otherCA
	noCert := b.mtls()
	noCert.Cert, noCert.Key = "", ""
	return []secCase{
		{"wrong password", b.saslSSL, b.scram("not-" + secPassword)},
		{"untrusted CA", b.saslSSL, untrusted},
		{"no client certificate", b.sslAddr, noCert},
	}
}

// secClient drives one client library.
type secClient struct {
	name string
	// produce sends secRecords records "<prefix>-<i>" to topic.
	produce func(t *testing.T, addr string, sc secConf, topic, prefix string)
	// consume reads secRecords records of topic from the beginning.
	consume func(t *testing.T, addr string, sc secConf, topic string) []consumed
	// connect fetches metadata once; the error is the client's.
	connect func(t *testing.T, addr string, sc secConf) error
	// failures are what the client's error says, per failure case.
	failures map[string]*regexp.Regexp
}

// TestSecurityClients runs the matrix.
func TestSecurityClients(t *testing.T) {
	start := time.Now()
	b := startSecBroker(t)
	t.Logf("broker with SSL and SASL_SSL listeners up in %v", time.Since(start).Round(time.Millisecond))
	clients := []secClient{b.kcatClient(t), b.pythonClient("kafka-python"), b.pythonClient("confluent-kafka"),
		b.kafkajsClient(t), b.franzClient(), b.saramaClient(), b.kafkaGoClient(), b.toolsClient(t)}
	for _, cl := range clients {
		b.c.CreateTopic("sec-"+cl.name+"-sasl", 3, 1, nil)
		b.c.CreateTopic("sec-"+cl.name+"-ssl", 3, 1, nil)
	}
	for _, cl := range clients {
		b.c.WaitLeaders(30*time.Second, "sec-"+cl.name+"-sasl", 3)
		b.c.WaitLeaders(30*time.Second, "sec-"+cl.name+"-ssl", 3)
	}
	t.Run("matrix", func(t *testing.T) {
		for _, cl := range clients {
			t.Run(cl.name, func(t *testing.T) {
				t.Parallel()
				for _, row := range []struct {
					proto, addr string
					conf        secConf
				}{{"SASL_SSL SCRAM-SHA-512", b.saslSSL, b.scram(secPassword)}, {"SSL client certificate", b.sslAddr, b.mtls()}} {
					topic := "sec-" + cl.name + "-ssl"
					if row.conf.Protocol == "SASL_SSL" {
						topic = "sec-" + cl.name + "-sasl"
					}
					began := time.Now()
					prefix := strings.ReplaceAll(cl.name, "-", "_")
					cl.produce(t, row.addr, row.conf, topic, prefix)
					verifyExactlyOnce(t, prefix, secRecords, cl.consume(t, row.addr, row.conf, topic))
					t.Logf("%s over %s: produced and consumed %d records in %v", cl.name, row.proto, secRecords, time.Since(began).Round(time.Millisecond))
				}
				for _, fc := range b.failureCases() {
					began := time.Now()
					err := cl.connect(t, fc.addr, fc.conf)
					took := time.Since(began).Round(time.Millisecond)
					switch want := cl.failures[fc.name]; {
					case err == nil:
						t.Errorf("%s with %s: connected", cl.name, fc.name)
					case want == nil || !want.MatchString(err.Error()):
						t.Errorf("%s with %s: failed after %v with %q, want an error matching %v", cl.name, fc.name, took, err, want)
					default:
						t.Logf("%s with %s: failed after %v: %v", cl.name, fc.name, took, err)
					}
				}
			})
		}
	})
	t.Logf("the matrix took %v with the broker's start", time.Since(start).Round(time.Millisecond))
}

// runErr runs a client process with a deadline; a non-zero exit is
// returned with its output, a hang past the deadline too.
func runErr(timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("no verdict within %v (a hang): %s", timeout, tailLines(string(out)))
	}
	if err != nil {
		return string(out), fmt.Errorf("%v: %s", err, strings.TrimSpace(tailLines(string(out))))
	}
	return string(out), nil
}

func (b *secBroker) kcatClient(t *testing.T) secClient {
	kcat := requireTool(t, "kcat", "apt-get install -y kcat")
	args := func(addr string, sc secConf) []string {
		a := []string{"-b", addr, "-X", "security.protocol=" + sc.Protocol, "-X", "ssl.ca.location=" + sc.CA,
			"-X", "ssl.endpoint.identification.algorithm=https"}
		if sc.Cert != "" {
			a = append(a, "-X", "ssl.certificate.location="+sc.Cert, "-X", "ssl.key.location="+sc.Key)
		}
		if sc.Mechanism != "" {
			a = append(a, "-X", "sasl.mechanisms="+sc.Mechanism, "-X", "sasl.username="+sc.Username, "-X", "sasl.password="+sc.Password)
		}
		return a
	}
	return secClient{
		name: "kcat",
		produce: func(t *testing.T, addr string, sc secConf, topic, prefix string) {
			var in strings.Builder
			for i := 0; i < secRecords; i++ {
				fmt.Fprintf(&in, "k%d:%s-%d\n", i, prefix, i)
			}
			run(t, 60*time.Second, []byte(in.String()), kcat, append(args(addr, sc), "-t", topic, "-P", "-K:", "-X", "linger.ms=5")...)
		},
		consume: func(t *testing.T, addr string, sc secConf, topic string) []consumed {
			out := run(t, 60*time.Second, nil, kcat, append(args(addr, sc), "-t", topic, "-C", "-o", "beginning", "-e",
				"-c", fmt.Sprint(secRecords), "-f", "%p %o %s\n", "-q")...)
			return parseLines(t, out)
		},
		connect: func(t *testing.T, addr string, sc secConf) error {
			_, err := runErr(30*time.Second, kcat, append(args(addr, sc), "-L", "-m", "3")...)
			return err
		},
		failures: map[string]*regexp.Regexp{
			"wrong password":        regexp.MustCompile(`SASL authentication error: Authentication failed`),
			"untrusted CA":          regexp.MustCompile(`certificate verify failed`),
			"no client certificate": regexp.MustCompile(`(?i)certificate.required`),
		},
	}
}

func (b *secBroker) pythonClient(lib string) secClient {
	script := func(t *testing.T) string {
		if lib == "kafka-python" {
			requirePython(t, "kafka", "python3-kafka")
		} else {
			requirePython(t, "confluent_kafka", "python3-confluent-kafka")
		}
		return filepath.Join(clientsDir(t), "security_client.py")
	}
	args := func(t *testing.T, mode, addr string, sc secConf, rest ...string) []string {
		js, _ := json.Marshal(sc)
		return append([]string{script(t), lib, mode, "--bootstrap", addr, "--security", string(js)}, rest...)
	}
	failures := map[string]*regexp.Regexp{
		// librdkafka: the broker's SASL_AUTHENTICATION_FAILED; kafka-python
		// (legacy unframed SASL): the connection closed in its SCRAM step.
		"wrong password":        regexp.MustCompile(`SASL authentication error: Authentication failed|_try_authenticate_scram`),
		"untrusted CA":          regexp.MustCompile(`certificate verify failed`),
		"no client certificate": regexp.MustCompile(`(?i)certificate.required`),
	}
	return secClient{
		name: lib,
		produce: func(t *testing.T, addr string, sc secConf, topic, prefix string) {
			out := run(t, 60*time.Second, nil, "/usr/bin/python3", args(t, "produce", addr, sc, "--topic", topic,
				"--count", fmt.Sprint(secRecords), "--prefix", prefix)...)
			if !strings.Contains(string(out), fmt.Sprintf("produced %d", secRecords)) {
				t.Fatalf("%s producer: %s", lib, out)
			}
		},
		consume: func(t *testing.T, addr string, sc secConf, topic string) []consumed {
			return parseLines(t, run(t, 60*time.Second, nil, "/usr/bin/python3", args(t, "consume", addr, sc, "--topic", topic,
				"--count", fmt.Sprint(secRecords))...))
		},
		connect: func(t *testing.T, addr string, sc secConf) error {
			_, err := runErr(30*time.Second, "/usr/bin/python3", args(t, "connect", addr, sc, "--timeout", "3")...)
			return err
		},
		failures: failures,
	}
}

func (b *secBroker) kafkajsClient(t *testing.T) secClient {
	node := requireTool(t, "node", "apt-get install -y nodejs")
	dir := clientsDir(t)
	if err := fileExists(filepath.Join(dir, "node_modules", "kafkajs", "package.json")); err != nil {
		t.Fatalf("kafkajs is not installed in testdata/clients: run (cd testdata/clients && npm ci) or bin/klassik-install-deps.sh: %v", err)
	}
	script := filepath.Join(dir, "security_kafkajs.js")
	js := func(sc secConf) string { b, _ := json.Marshal(sc); return string(b) }
	return secClient{
		name: "kafkajs",
		produce: func(t *testing.T, addr string, sc secConf, topic, prefix string) {
			out := run(t, 60*time.Second, nil, node, script, "produce", addr, js(sc), topic, fmt.Sprint(secRecords), prefix)
			if !strings.Contains(string(out), fmt.Sprintf("produced %d", secRecords)) {
				t.Fatalf("kafkajs producer: %s", out)
			}
		},
		consume: func(t *testing.T, addr string, sc secConf, topic string) []consumed {
			return parseLines(t, run(t, 60*time.Second, nil, node, script, "consume", addr, js(sc), topic, fmt.Sprint(secRecords), topic+"-group"))
		},
		connect: func(t *testing.T, addr string, sc secConf) error {
			_, err := runErr(30*time.Second, node, script, "connect", addr, js(sc))
			return err
		},
		failures: map[string]*regexp.Regexp{
			"wrong password":        regexp.MustCompile(`KafkaJSSASLAuthenticationError`),
			"untrusted CA":          regexp.MustCompile(`self-signed certificate in certificate chain`),
			"no client certificate": regexp.MustCompile(`(?i)certificate.required`),
		},
	}
}

// goTLS is the Go clients' TLS configuration for sc; serverName is what
// the certificate is checked against.
func goTLS(sc secConf, serverName string) (*tls.Config, error) {
	ca, err := os.ReadFile(sc.CA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("no CA certificate in " + sc.CA)
	}
	cfg := &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12}
	if sc.Cert != "" {
		cert, err := tls.LoadX509KeyPair(sc.Cert, sc.Key)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

func (b *secBroker) franzOpts(sc secConf, serverName string) []kgo.Opt {
	cfg, err := goTLS(sc, serverName)
	if err != nil {
		panic(err) // the test's own files
	}
	opts := []kgo.Opt{kgo.DialTLSConfig(cfg), kgo.DialTimeout(5 * time.Second), kgo.RetryTimeout(10 * time.Second)}
	if sc.Mechanism != "" {
		opts = append(opts, kgo.SASL(kgoscram.Auth{User: sc.Username, Pass: sc.Password}.AsSha512Mechanism()))
	}
	return opts
}

// franzConnect asks addr for metadata once.
func franzConnect(addr string, opts ...kgo.Opt) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_, err = kadm.NewClient(cl).BrokerMetadata(ctx)
	return err
}

func (b *secBroker) franzClient() secClient {
	return secClient{
		name: "franz-go",
		produce: func(t *testing.T, addr string, sc secConf, topic, prefix string) {
			cl, err := kgo.NewClient(append(b.franzOpts(sc, "localhost"), kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic))...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var recs []*kgo.Record
			for i := 0; i < secRecords; i++ {
				recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("%s-%d", prefix, i))})
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Fatalf("franz-go produce: %v", err)
			}
		},
		consume: func(t *testing.T, addr string, sc secConf, topic string) []consumed {
			cl, err := kgo.NewClient(append(b.franzOpts(sc, "localhost"), kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			return pollRecords(t, cl, topic, secRecords, nil)
		},
		connect: func(t *testing.T, addr string, sc secConf) error {
			return franzConnect(addr, b.franzOpts(sc, "localhost")...)
		},
		failures: map[string]*regexp.Regexp{
			"wrong password":        regexp.MustCompile(`SASL_AUTHENTICATION_FAILED`),
			"untrusted CA":          regexp.MustCompile(`certificate signed by unknown authority`),
			"no client certificate": regexp.MustCompile(`(?i)certificate.required`),
		},
	}
}

// saramaSCRAM is sarama's SCRAMClient over xdg-go/scram (sarama leaves the
// SCRAM implementation to the application).
type saramaSCRAM struct {
	conv *scram.ClientConversation
}

func (s *saramaSCRAM) Begin(user, password, authzID string) error {
	c, err := scram.SHA512.NewClient(user, password, authzID)
	if err != nil {
		return err
	}
	s.conv = c.NewConversation()
	return nil
}

func (s *saramaSCRAM) Step(challenge string) (string, error) { return s.conv.Step(challenge) }

func (s *saramaSCRAM) Done() bool { return s.conv.Done() }

func (b *secBroker) saramaConfig(t *testing.T, sc secConf) *sarama.Config {
	cfg := saramaConfig()
	tc, err := goTLS(sc, "localhost")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Net.TLS.Enable, cfg.Net.TLS.Config = true, tc
	cfg.Net.DialTimeout = 5 * time.Second
	cfg.Metadata.Retry.Max = 0
	if sc.Mechanism != "" {
		cfg.Net.SASL.Enable = true
		cfg.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
		cfg.Net.SASL.User, cfg.Net.SASL.Password = sc.Username, sc.Password
		cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &saramaSCRAM{} }
	}
	return cfg
}

func (b *secBroker) saramaClient() secClient {
	return secClient{
		name: "sarama",
		produce: func(t *testing.T, addr string, sc secConf, topic, prefix string) {
			p, err := sarama.NewSyncProducer([]string{addr}, b.saramaConfig(t, sc))
			if err != nil {
				t.Fatalf("sarama producer: %v", err)
			}
			defer p.Close()
			var msgs []*sarama.ProducerMessage
			for j := 0; j < secRecords; j++ {
				msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(fmt.Sprintf("k%d", j)), Value: sarama.StringEncoder(fmt.Sprintf("%s-%d", prefix, j))})
			}
			if err := p.SendMessages(msgs); err != nil {
				t.Fatalf("sarama SendMessages: %v", err)
			}
		},
		consume: func(t *testing.T, addr string, sc secConf, topic string) []consumed {
			cons, err := sarama.NewConsumer([]string{addr}, b.saramaConfig(t, sc))
			if err != nil {
				t.Fatalf("sarama consumer: %v", err)
			}
			defer cons.Close()
			parts, err := cons.Partitions(topic)
			if err != nil {
				t.Fatalf("sarama partitions: %v", err)
			}
			var col collector
			for _, p := range parts {
				pc, err := cons.ConsumePartition(topic, p, sarama.OffsetOldest)
				if err != nil {
					t.Fatalf("sarama ConsumePartition %d: %v", p, err)
				}
				go func() { // drains one partition consumer; ends when it is closed
					for m := range pc.Messages() {
						col.add(consumed{partition: m.Partition, offset: m.Offset, value: string(m.Value)})
					}
				}()
				defer pc.Close()
			}
			if !testcluster.Poll(60*time.Second, func() bool { return col.len() >= secRecords }) {
				t.Fatalf("sarama read %d of %d records", col.len(), secRecords)
			}
			return col.all()
		},
		connect: func(t *testing.T, addr string, sc secConf) error {
			cl, err := sarama.NewClient([]string{addr}, b.saramaConfig(t, sc))
			if err != nil {
				return err
			}
			defer cl.Close()
			_, err = cl.Controller()
			return err
		},
		failures: map[string]*regexp.Regexp{
			"wrong password":        regexp.MustCompile(`SASL Authentication failed|Authentication failed`),
			"untrusted CA":          regexp.MustCompile(`certificate signed by unknown authority`),
			"no client certificate": regexp.MustCompile(`(?i)certificate.required`),
		},
	}
}

func (b *secBroker) kafkaGoParts(t *testing.T, sc secConf) (*tls.Config, *kafkago.Dialer) {
	tc, err := goTLS(sc, "localhost")
	if err != nil {
		t.Fatal(err)
	}
	d := &kafkago.Dialer{Timeout: 5 * time.Second, DualStack: false, TLS: tc}
	if sc.Mechanism != "" {
		m, err := kafkagoscram.Mechanism(kafkagoscram.SHA512, sc.Username, sc.Password)
		if err != nil {
			t.Fatal(err)
		}
		d.SASLMechanism = m
	}
	return tc, d
}

func (b *secBroker) kafkaGoClient() secClient {
	return secClient{
		name: "kafka-go",
		produce: func(t *testing.T, addr string, sc secConf, topic, prefix string) {
			tc, d := b.kafkaGoParts(t, sc)
			w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: topic, Balancer: &kafkago.Hash{}, RequiredAcks: kafkago.RequireAll,
				BatchTimeout: 5 * time.Millisecond, MaxAttempts: 5,
				Transport: &kafkago.Transport{TLS: tc, SASL: d.SASLMechanism, DialTimeout: 5 * time.Second}}
			defer w.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var msgs []kafkago.Message
			for j := 0; j < secRecords; j++ {
				msgs = append(msgs, kafkago.Message{Key: []byte(fmt.Sprintf("k%d", j)), Value: []byte(fmt.Sprintf("%s-%d", prefix, j))})
			}
			if err := w.WriteMessages(ctx, msgs...); err != nil {
				t.Fatalf("kafka-go WriteMessages: %v", err)
			}
		},
		consume: func(t *testing.T, addr string, sc secConf, topic string) []consumed {
			_, d := b.kafkaGoParts(t, sc)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				t.Fatalf("kafka-go dial: %v", err)
			}
			parts, err := conn.ReadPartitions(topic)
			conn.Close()
			if err != nil {
				t.Fatalf("kafka-go ReadPartitions: %v", err)
			}
			var recs []consumed
			for _, p := range parts {
				r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{addr}, Topic: topic, Partition: p.ID, MaxWait: 200 * time.Millisecond, Dialer: d})
				if err := r.SetOffset(kafkago.FirstOffset); err != nil {
					t.Fatalf("kafka-go SetOffset: %v", err)
				}
				lctx, lcancel := context.WithTimeout(ctx, 10*time.Second)
				end, err := r.ReadLag(lctx)
				lcancel()
				if err != nil {
					r.Close()
					t.Fatalf("kafka-go ReadLag partition %d: %v", p.ID, err)
				}
				for i := int64(0); i < end; i++ {
					m, err := r.ReadMessage(ctx)
					if err != nil {
						r.Close()
						t.Fatalf("kafka-go partition %d after %d records: %v", p.ID, i, err)
					}
					recs = append(recs, consumed{partition: int32(m.Partition), offset: m.Offset, value: string(m.Value)})
				}
				r.Close()
			}
			return recs
		},
		connect: func(t *testing.T, addr string, sc secConf) error {
			_, d := b.kafkaGoParts(t, sc)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return err
			}
			defer conn.Close()
			_, err = conn.Brokers()
			return err
		},
		failures: map[string]*regexp.Regexp{
			"wrong password":        regexp.MustCompile(`SASL Authentication Failed|\[58\]`),
			"untrusted CA":          regexp.MustCompile(`certificate signed by unknown authority`),
			"no client certificate": regexp.MustCompile(`(?i)certificate.required`),
		},
	}
}

// toolsClient is Klassik's own console tools and kafka-topics.sh with Kafka's
// client security properties in --producer.config, --consumer.config and
// --command-config files: the JKS truststore over SASL_SSL, PKCS12 stores
// over SSL, a PEM truststore with the other CA.
func (b *secBroker) toolsClient(t *testing.T) secClient {
	repo := repoRoot(t)
	build := t.TempDir()
	buildTools(t, repo, build, "kafka-console-producer", "kafka-console-consumer", "kafka-topics")
	env := []string{"KLASSIK_BUILD_DIR=" + build}
	props := func(t *testing.T, sc secConf) string {
		lines := []string{"security.protocol=" + sc.Protocol}
		switch {
		case sc.CA != b.pki.ca:
			lines = append(lines, "ssl.truststore.type=PEM", "ssl.truststore.location="+sc.CA)
		case sc.Protocol == "SASL_SSL":
			lines = append(lines, "ssl.truststore.location="+b.pki.truststore, "ssl.truststore.password="+b.pki.password)
		default:
			lines = append(lines, "ssl.truststore.type=PKCS12", "ssl.truststore.location="+b.pki.clientTruststorePKCS12,
				"ssl.truststore.password="+b.pki.password)
		}
		if sc.Cert != "" {
			lines = append(lines, "ssl.keystore.type=PKCS12", "ssl.keystore.location="+b.pki.clientKeystorePKCS12,
				"ssl.keystore.password="+b.pki.password)
		}
		if sc.Mechanism != "" {
			lines = append(lines, "sasl.mechanism="+sc.Mechanism, fmt.Sprintf(
				`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";`, sc.Username, sc.Password))
		}
		f := filepath.Join(t.TempDir(), "client.properties")
		if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	script := func(name string) string { return filepath.Join(repo, "bin", name+".sh") }
	return secClient{
		name: "klassik-tools",
		produce: func(t *testing.T, addr string, sc secConf, topic, prefix string) {
			var in strings.Builder
			for i := 0; i < secRecords; i++ {
				fmt.Fprintf(&in, "k%d:%s-%d\n", i, prefix, i)
			}
			cmd := exec.Command(script("kafka-console-producer"), "--bootstrap-server", addr, "--topic", topic,
				"--producer.config", props(t, sc), "--request-required-acks", "all", "--property", "parse.key=true", "--property", "key.separator=:")
			cmd.Env, cmd.Stdin = append(os.Environ(), env...), strings.NewReader(in.String())
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("kafka-console-producer.sh: %v\n%s", err, out)
			}
		},
		consume: func(t *testing.T, addr string, sc secConf, topic string) []consumed {
			out, code, err := proc.Run(60*time.Second, env, script("kafka-console-consumer"), "--bootstrap-server", addr, "--topic", topic,
				"--consumer.config", props(t, sc), "--from-beginning", "--max-messages", fmt.Sprint(secRecords), "--timeout-ms", "30000",
				"--property", "print.partition=true", "--property", "print.offset=true", "--property", "key.separator= ")
			if err != nil || code != 0 {
				t.Fatalf("kafka-console-consumer.sh: exit %d, %v\n%s", code, err, out)
			}
			var recs []consumed
			for _, line := range strings.Split(out, "\n") {
				var r consumed
				if n, _ := fmt.Sscanf(line, "Partition:%d Offset:%d %s", &r.partition, &r.offset, &r.value); n == 3 {
					recs = append(recs, r)
				}
			}
			return recs
		},
		connect: func(t *testing.T, addr string, sc secConf) error {
			out, code, err := proc.Run(30*time.Second, env, script("kafka-topics"), "--bootstrap-server", addr,
				"--command-config", props(t, sc), "--list")
			if err == nil && code != 0 {
				err = fmt.Errorf("exit %d: %s", code, strings.TrimSpace(out))
			}
			return err
		},
		failures: map[string]*regexp.Regexp{
			"wrong password":        regexp.MustCompile(`SASL_AUTHENTICATION_FAILED|SaslAuthenticationException`),
			"untrusted CA":          regexp.MustCompile(`certificate signed by unknown authority`),
			"no client certificate": regexp.MustCompile(`(?i)certificate.required`),
		},
	}
}
