package broker_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/klassik/klassik/broker"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/config"
)

const (
	plainJaas = `org.apache.kafka.common.security.plain.PlainLoginModule required
		username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`
	scramJaas = `org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";`
)

// scramCredential derives the stored credential of a password (Kafka's
// ScramFormatter).
func scramCredential(t testing.TB, mech, password string) security.ScramCredential {
	t.Helper()
	f, err := security.NewScramFormatter(mech)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := f.Credential(password, []byte("klassik-test-salt"), 4096)
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

// saslCredentials holds SCRAM credentials for admin and alice (the scram
// part loads them from /config/users; here they are put in directly).
func saslCredentials(t testing.TB) *security.CredentialCache {
	cache := security.NewCredentialCache()
	for _, m := range security.ScramMechanisms {
		cache.Put(m, "admin", scramCredential(t, m, "admin-secret"))
		cache.Put(m, "alice", scramCredential(t, m, "alice-secret"))
	}
	return cache
}

// startSASL starts brokers with a PLAINTEXT and a SASL_PLAINTEXT listener
// serving PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512.
func startSASL(t *testing.T, brokers int, extra map[string]string, opts ...broker.Option) *testcluster.Cluster {
	return startSASLWith(t, testcluster.Options{Brokers: brokers}, extra, opts...)
}

func startSASLWith(t *testing.T, co testcluster.Options, extra map[string]string, opts ...broker.Option) *testcluster.Cluster {
	t.Helper()
	o := map[string]string{
		"listeners":               "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config":         plainJaas,
		"listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": scramJaas,
		"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": scramJaas,
	}
	for k, v := range extra {
		o[k] = v
	}
	co.Overrides = o
	co.BrokerOptions = append([]broker.Option{broker.WithCredentialCache(saslCredentials(t))}, opts...)
	return testcluster.Start(t, co)
}

func saslAddr(t *testing.T, c *testcluster.Cluster, i int) string {
	t.Helper()
	a := c.Broker(i).BoundAddr("SASL_PLAINTEXT")
	if a == nil {
		t.Fatal("no SASL_PLAINTEXT listener")
	}
	return a.String()
}

func mechanism(name, user, pass string) sasl.Mechanism {
	switch name {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism()
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
	}
	return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
}

// TestSASLClients: real clients produce and consume over SASL_PLAINTEXT
// with each mechanism they support, and a wrong password fails with the
// client's authentication error, promptly.
func TestSASLClients(t *testing.T) {
	c := startSASL(t, 1, nil)
	addr := saslAddr(t, c, 0)
	c.CreateTopic("sasl", 1, 1, nil)

	t.Run("franz-go", func(t *testing.T) {
		for i, m := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
			cl := c.Client(kgo.SeedBrokers(addr), kgo.SASL(mechanism(m, "alice", "alice-secret")), kgo.ConsumeTopics("sasl"))
			ctx := ctxT(t, 30*time.Second)
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "sasl", Value: []byte(m)}).FirstErr(); err != nil {
				t.Fatalf("%s produce: %v", m, err)
			}
			n := 0
			for n <= i {
				fs := cl.PollFetches(ctx)
				if err := fs.Err0(); err != nil {
					t.Fatalf("%s consume: %v", m, err)
				}
				n += fs.NumRecords()
			}
		}
		for _, m := range []string{"PLAIN", "SCRAM-SHA-512"} {
			cl := c.Client(kgo.SeedBrokers(addr), kgo.SASL(mechanism(m, "alice", "wrong")), kgo.RequestRetries(0))
			start := time.Now()
			_, err := cl.Request(ctxT(t, 20*time.Second), kmsg.NewPtrMetadataRequest())
			if !errors.Is(err, kerr.SaslAuthenticationFailed) || time.Since(start) > 15*time.Second {
				t.Fatalf("%s wrong password: %v after %v", m, err, time.Since(start))
			}
			want := "Authentication failed: Invalid username or password"
			if m != "PLAIN" {
				want = "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("%s: %v, want Kafka's message %q", m, err, want)
			}
		}
	})

	t.Run("kcat", func(t *testing.T) {
		kcat, err := exec.LookPath("kcat")
		if err != nil {
			t.Fatal("kcat is required: apt-get install -y kcat (or bin/klassik-install-deps.sh)")
		}
		c.CreateTopic("sasl-kcat", 1, 1, nil)
		for _, m := range []string{"PLAIN", "SCRAM-SHA-512"} {
			args := []string{"-b", addr, "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=" + m,
				"-X", "sasl.username=alice", "-X", "sasl.password=alice-secret", "-t", "sasl-kcat"}
			runCmd(t, 60*time.Second, "kcat-"+m+"\n", kcat, append(args, "-P")...)
			out := runCmd(t, 60*time.Second, "", kcat, append(args, "-C", "-o", "beginning", "-e")...)
			if !strings.Contains(out, "kcat-"+m) {
				t.Fatalf("%s: consumed %q", m, out)
			}
		}
		start := time.Now()
		cmd := exec.Command(kcat, "-b", addr, "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=SCRAM-SHA-512",
			"-X", "sasl.username=alice", "-X", "sasl.password=wrong", "-t", "sasl-kcat", "-P")
		cmd.Stdin = strings.NewReader("x\n")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "uthentication") || time.Since(start) > 25*time.Second {
			t.Fatalf("kcat with a wrong password: %v after %v:\n%s", err, time.Since(start), out)
		}
	})

	python := func(t *testing.T, lib, module, pkg string, mechs []string) {
		if err := exec.Command("/usr/bin/python3", "-c", "import "+module).Run(); err != nil {
			t.Fatalf("/usr/bin/python3 cannot import %s: apt-get install -y %s (or bin/klassik-install-deps.sh)", module, pkg)
		}
		_, file, _, _ := runtime.Caller(0)
		script := filepath.Join(filepath.Dir(file), "..", "testdata", "clients", "sasl_client.py")
		for _, m := range mechs {
			topic := "sasl-" + lib + "-" + strings.ToLower(m)
			c.CreateTopic(topic, 1, 1, nil)
			out := runCmd(t, 90*time.Second, "", "/usr/bin/python3", script, lib, addr, topic, m, "alice", "alice-secret", "5")
			if !strings.Contains(out, "roundtrip 5") {
				t.Fatalf("%s %s: %s", lib, m, out)
			}
		}
		start := time.Now()
		cmd := exec.Command("/usr/bin/python3", script, lib, addr, "sasl", mechs[len(mechs)-1], "alice", "wrong", "1")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 || time.Since(start) > 40*time.Second {
			t.Fatalf("%s with a wrong password: %v after %v:\n%s", lib, err, time.Since(start), out)
		}
	}
	// kafka-python 2.0 uses SaslHandshake v0 and raw tokens.
	t.Run("kafka-python", func(t *testing.T) {
		python(t, "kafka-python", "kafka", "python3-kafka", []string{"PLAIN", "SCRAM-SHA-512"})
	})
	t.Run("confluent-kafka", func(t *testing.T) {
		python(t, "confluent-kafka", "confluent_kafka", "python3-confluent-kafka", []string{"SCRAM-SHA-512"})
	})
}

func runCmd(t *testing.T, timeout time.Duration, stdin, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// dialRaw opens an unauthenticated connection to addr.
func dialRaw(t *testing.T, addr string) *network.Client {
	t.Helper()
	cl, err := network.Dial(context.Background(), addr, "sasl-test", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func handshake(t *testing.T, cl *network.Client, version int16, mech string) *kmsg.SASLHandshakeResponse {
	t.Helper()
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version, req.Mechanism = version, mech
	resp, err := cl.Request(context.Background(), req)
	if err != nil {
		t.Fatalf("SaslHandshake: %v", err)
	}
	return resp.(*kmsg.SASLHandshakeResponse)
}

func authenticate(t *testing.T, cl *network.Client, version int16, token []byte) *kmsg.SASLAuthenticateResponse {
	t.Helper()
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version, req.SASLAuthBytes = version, token
	resp, err := cl.Request(context.Background(), req)
	if err != nil {
		t.Fatalf("SaslAuthenticate: %v", err)
	}
	return resp.(*kmsg.SASLAuthenticateResponse)
}

// closed reports whether the peer closed the connection: a request fails.
func closed(cl *network.Client) bool {
	_, err := cl.Request(context.Background(), kmsg.NewPtrMetadataRequest())
	return err != nil
}

// TestSASLAuthenticationGate: before authentication only ApiVersions and
// SASL requests are served — anything else closes the connection and never
// reaches a handler — and failures are answered as Kafka answers them.
func TestSASLAuthenticationGate(t *testing.T) {
	c := startSASL(t, 1, map[string]string{"listener.name.sasl_plaintext.scram-sha-256.connections.max.reauth.ms": "1500"})
	addr := saslAddr(t, c, 0)
	var mu sync.Mutex
	var principals []string
	c.Intercept(0, int16(kmsg.Metadata), func(_ context.Context, req *network.Request) (kmsg.Response, bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if req.Listener == "SASL_PLAINTEXT" {
			if !req.Session.Authenticated {
				t.Errorf("an unauthenticated Metadata request reached the handler")
			}
			principals = append(principals, req.Session.Principal)
		}
		return nil, false, nil
	})
	enabled := []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

	t.Run("requests before authentication", func(t *testing.T) {
		cl := dialRaw(t, addr)
		if _, err := cl.ApiVersions(context.Background()); err != nil {
			t.Fatalf("ApiVersions before authentication: %v", err)
		}
		if !closed(cl) {
			t.Fatal("Metadata before authentication was answered")
		}
		cl = dialRaw(t, addr)
		handshake(t, cl, 1, "PLAIN")
		if !closed(cl) {
			t.Fatal("Metadata between handshake and authentication was answered")
		}
		cl = dialRaw(t, addr)
		req := kmsg.NewPtrSASLAuthenticateRequest()
		if _, err := cl.Request(context.Background(), req); err == nil {
			t.Fatal("SaslAuthenticate before SaslHandshake was answered")
		}
		mu.Lock()
		defer mu.Unlock()
		if len(principals) != 0 {
			t.Fatalf("handlers saw %v", principals)
		}
	})

	t.Run("unsupported mechanism", func(t *testing.T) {
		cl := dialRaw(t, addr)
		r := handshake(t, cl, 1, "GSSAPI")
		if r.ErrorCode != kerr.UnsupportedSaslMechanism.Code || !slices.Equal(r.SupportedMechanisms, enabled) {
			t.Fatalf("GSSAPI handshake: %+v", r)
		}
		if !closed(cl) {
			t.Fatal("connection open after UNSUPPORTED_SASL_MECHANISM")
		}
	})

	t.Run("failures", func(t *testing.T) {
		for _, tc := range []struct{ mech, token, msg string }{
			{"PLAIN", "\x00alice\x00wrong", "Authentication failed: Invalid username or password"},
			{"PLAIN", "bob\x00alice\x00alice-secret", "Authentication failed: Client requested an authorization id that is different from username"},
			{"SCRAM-SHA-512", "n,,n=nobody,r=abcdef", "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"},
			{"SCRAM-SHA-256", "n,,n=alice,r=abc,tokenauth=true", "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"},
			{"SCRAM-SHA-256", "garbage", "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"},
		} {
			cl := dialRaw(t, addr)
			if r := handshake(t, cl, 1, tc.mech); r.ErrorCode != 0 || !slices.Equal(r.SupportedMechanisms, enabled) {
				t.Fatalf("handshake %+v", r)
			}
			r := authenticate(t, cl, 2, []byte(tc.token))
			if r.ErrorCode != kerr.SaslAuthenticationFailed.Code || r.ErrorMessage == nil || *r.ErrorMessage != tc.msg {
				t.Fatalf("%s %q: code %d message %v, want %q", tc.mech, tc.token, r.ErrorCode, r.ErrorMessage, tc.msg)
			}
			// connection.failed.authentication.delay.ms (100 ms) holds
			// the close back.
			start := time.Now()
			if !closed(cl) {
				t.Fatalf("%s: connection open after SASL_AUTHENTICATION_FAILED", tc.mech)
			}
			if d := time.Since(start); d < 50*time.Millisecond {
				t.Fatalf("%s: closed %v after the failure, want connection.failed.authentication.delay.ms", tc.mech, d)
			}
		}
	})

	t.Run("authenticated", func(t *testing.T) {
		cl := dialRaw(t, addr)
		if r := handshake(t, cl, 1, "PLAIN"); r.ErrorCode != 0 {
			t.Fatal(r.ErrorCode)
		}
		if r := authenticate(t, cl, 1, []byte("\x00alice\x00alice-secret")); r.ErrorCode != 0 || r.SessionLifetimeMillis != 0 {
			t.Fatalf("%+v", r)
		}
		if closed(cl) {
			t.Fatal("authenticated Metadata failed")
		}
		if r := authenticate(t, cl, 1, nil); r.ErrorCode != kerr.IllegalSaslState.Code || r.ErrorMessage == nil ||
			*r.ErrorMessage != "SaslAuthenticate request received after successful authentication" {
			t.Fatalf("second SaslAuthenticate: %+v", r)
		}
		mu.Lock()
		got := slices.Clone(principals)
		mu.Unlock()
		if !slices.Equal(got, []string{"User:alice"}) {
			t.Fatalf("principals %v", got)
		}
		// SASL requests on a PLAINTEXT listener are a state error, as in
		// Kafka's KafkaApis.
		if r := handshake(t, dialRaw(t, c.Addr(0)), 1, "PLAIN"); r.ErrorCode != kerr.IllegalSaslState.Code {
			t.Fatalf("PLAINTEXT handshake %+v", r)
		}
	})

	// KIP-368: a SCRAM-SHA-256 session lives 1.5 s on this listener; the
	// client is told so, may re-authenticate, and is disconnected at its
	// first other request after the lifetime.
	t.Run("reauthentication", func(t *testing.T) {
		login := func(cl *network.Client) (time.Time, int64) {
			sess, msg, err := mechanism("SCRAM-SHA-256", "alice", "alice-secret").Authenticate(context.Background(), addr)
			if err != nil {
				t.Fatal(err)
			}
			if r := handshake(t, cl, 1, "SCRAM-SHA-256"); r.ErrorCode != 0 {
				t.Fatal(r.ErrorCode)
			}
			for {
				r := authenticate(t, cl, 1, msg)
				if r.ErrorCode != 0 {
					t.Fatalf("%+v", r)
				}
				done, next, err := sess.Challenge(r.SASLAuthBytes)
				if err != nil {
					t.Fatal(err)
				}
				if done {
					return time.Now(), r.SessionLifetimeMillis
				}
				msg = next
			}
		}
		cl := dialRaw(t, addr)
		_, lifetime := login(cl)
		if lifetime != 1500 {
			t.Fatalf("session_lifetime_ms %d, want 1500", lifetime)
		}
		if closed(cl) {
			t.Fatal("fresh session refused")
		}
		reauthAt, _ := login(cl) // re-authentication on the same connection
		time.Sleep(time.Until(reauthAt.Add(1200 * time.Millisecond)))
		if closed(cl) {
			t.Fatal("a re-authenticated session was closed before its new lifetime ended")
		}
		time.Sleep(time.Until(reauthAt.Add(1700 * time.Millisecond)))
		if !closed(cl) {
			t.Fatal("an expired session was still served")
		}
		// franz-go re-authenticates by itself when told a lifetime.
		cl2 := c.Client(kgo.SeedBrokers(addr), kgo.SASL(mechanism("SCRAM-SHA-256", "alice", "alice-secret")))
		c.CreateTopic("reauth", 1, 1, nil)
		deadline := time.Now().Add(4 * time.Second)
		for time.Now().Before(deadline) {
			if err := cl2.ProduceSync(ctxT(t, 10*time.Second), &kgo.Record{Topic: "reauth", Value: []byte("x")}).FirstErr(); err != nil {
				t.Fatalf("produce across session lifetimes: %v", err)
			}
			time.Sleep(300 * time.Millisecond)
		}
	})
}

// TestSASLInterBrokerSCRAM: brokers whose inter-broker listener is
// SASL_PLAINTEXT log in with SCRAM-SHA-512 (JAAS file from
// -Djava.security.auth.login.config) on every inter-broker connection; the
// cluster replicates and elects as before.
func TestSASLInterBrokerSCRAM(t *testing.T) {
	jaas := filepath.Join(t.TempDir(), "kafka_server_jaas.conf")
	content := fmt.Sprintf("KafkaServer {\n  %s\n  %s\n};\n", scramJaas, plainJaas)
	if err := os.WriteFile(jaas, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	o := map[string]string{
		"listeners":                            "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"inter.broker.listener.name":           "SASL_PLAINTEXT",
		"sasl.enabled.mechanisms":              "SCRAM-SHA-512,PLAIN",
		"sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
	}
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Overrides: o, BrokerOptions: []broker.Option{
		broker.WithCredentialCache(saslCredentials(t)),
		broker.WithSystemProperties(map[string]string{security.JavaLoginConfigProperty: jaas}),
	}})
	var mu sync.Mutex
	fetchers := map[string]bool{}
	for i := 0; i < 2; i++ {
		c.Intercept(i, int16(kmsg.Fetch), func(_ context.Context, req *network.Request) (kmsg.Response, bool, error) {
			if f := req.Body.(*kmsg.FetchRequest); f.ReplicaID >= 0 {
				mu.Lock()
				fetchers[req.Listener+" "+req.Session.Principal] = true
				mu.Unlock()
			}
			return nil, false, nil
		})
	}
	c.CreateTopic("replicated", 2, 2, nil)
	c.WaitLeaders(30*time.Second, "replicated", 2)
	cl := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("replicated"))
	for i := 0; i < 50; i++ {
		if err := cl.ProduceSync(ctxT(t, 30*time.Second), &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	c.WaitFor(30*time.Second, "both replicas in the ISR of every partition", func() bool {
		for p := int32(0); p < 2; p++ {
			st, ok := c.PartitionState("replicated", p)
			if !ok || len(st.ISR) != 2 {
				return false
			}
		}
		return true
	})
	mu.Lock()
	if len(fetchers) != 1 || !fetchers["SASL_PLAINTEXT User:admin"] {
		t.Errorf("replica fetches arrived as %v, want only SASL_PLAINTEXT User:admin", fetchers)
	}
	mu.Unlock()

	// A SCRAM user written straight into ZooKeeper in Kafka's format, with
	// its change notification, can log in on every broker within seconds;
	// deleting the node (and notifying) locks it out of new connections.
	carol := scramCredential(t, "SCRAM-SHA-512", "carol-secret")
	node := fmt.Sprintf(`{"version":1,"config":{"SCRAM-SHA-512":"salt=%s,stored_key=%s,server_key=%s,iterations=4096"}}`,
		base64.StdEncoding.EncodeToString(carol.Salt), base64.StdEncoding.EncodeToString(carol.StoredKey), base64.StdEncoding.EncodeToString(carol.ServerKey))
	zc := c.ZK()
	if _, err := zc.CreateRecursive("/config/users/carol", []byte(node), 0); err != nil {
		t.Fatal(err)
	}
	notify := func() {
		if _, err := zc.Create("/config/changes/config_change_", []byte(`{"version":2,"entity_path":"users/carol"}`), zk.FlagSequence); err != nil {
			t.Fatal(err)
		}
	}
	notify()
	canLogin := func(i int) bool {
		cl, err := network.Dial(context.Background(), saslAddr(t, c, i), "carol", 5*time.Second)
		if err != nil {
			return false
		}
		defer cl.Close()
		return cl.AuthenticateSASL(context.Background(), &network.SASLClient{Mechanism: "SCRAM-SHA-512", Username: "carol", Password: "carol-secret"}) == nil
	}
	for i := 0; i < 2; i++ {
		c.WaitFor(10*time.Second, "carol logs in with SCRAM-SHA-512 after her /config/users node appeared", func() bool { return canLogin(i) })
	}
	if err := zc.Delete("/config/users/carol", -1); err != nil {
		t.Fatal(err)
	}
	notify()
	for i := 0; i < 2; i++ {
		c.WaitFor(10*time.Second, "carol refused after her node was deleted", func() bool { return !canLogin(i) })
	}

	// The controller's LeaderAndIsr travels over SASL too: kill the
	// leader of partition 0 and the other broker takes over.
	st, _ := c.PartitionState("replicated", 0)
	leader := c.Index(st.Leader)
	c.KillBroker(leader)
	c.WaitFor(30*time.Second, "a new leader for partition 0", func() bool {
		st, ok := c.PartitionState("replicated", 0)
		return ok && st.Leader >= 0 && st.Leader != c.BrokerID(leader)
	})
	survivor := 1 - leader
	cons := c.Client(kgo.SeedBrokers(c.Addr(survivor)), kgo.ConsumeTopics("replicated"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	n := 0
	ctx := ctxT(t, 30*time.Second)
	for n < 50 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume after failover (%d of 50): %v", n, err)
		}
		n += fs.NumRecords()
	}
}

// TestSASLStartupErrors: what Klassik cannot serve stops the broker at
// start-up with the key and value named.
func TestSASLStartupErrors(t *testing.T) {
	base := func(kv ...string) map[string]string {
		m := map[string]string{"zookeeper.connect": "127.0.0.1:1", "broker.id": "1", "log.dirs": t.TempDir(),
			"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		props []string
		want  []string
	}{
		{nil, []string{"sasl.enabled.mechanisms", "GSSAPI", "Kerberos"}},
		{[]string{"sasl.enabled.mechanisms", "PLAIN,OAUTHBEARER"}, []string{"sasl.enabled.mechanisms", "OAUTHBEARER"}},
		{[]string{"sasl.enabled.mechanisms", "PLAIN", "listener.name.sasl_plaintext.sasl.enabled.mechanisms", "GSSAPI"},
			[]string{"listener.name.sasl_plaintext.sasl.enabled.mechanisms", "GSSAPI"}},
		{[]string{"sasl.enabled.mechanisms", "PLAIN", "inter.broker.listener.name", "SASL_PLAINTEXT"},
			[]string{"sasl.mechanism.inter.broker.protocol", "GSSAPI"}},
		{[]string{"sasl.enabled.mechanisms", "PLAIN", "inter.broker.listener.name", "SASL_PLAINTEXT", "sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-512"},
			[]string{"sasl.mechanism.inter.broker.protocol", "must be included in sasl.enabled.mechanisms"}},
		{[]string{"sasl.enabled.mechanisms", "PLAIN", "sasl.server.callback.handler.class", "com.example.Handler"},
			[]string{"sasl.server.callback.handler.class"}},
		{[]string{"sasl.enabled.mechanisms", "PLAIN", "listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class", "com.example.Handler"},
			[]string{"listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class"}},
		{[]string{"sasl.enabled.mechanisms", "PLAIN", "listener.name.sasl_plaintext.sasl.jaas.config", plainJaas},
			[]string{"listener.name.sasl_plaintext.sasl.jaas.config", "plain.sasl.jaas.config"}},
	} {
		_, err := config.FromMap(base(tc.props...))
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %v, want it to name %q", tc.props, err, w)
			}
		}
	}
	for _, tc := range []struct {
		props []string
		want  string
	}{
		{[]string{"sasl.enabled.mechanisms", "PLAIN"}, "Could not find a 'KafkaServer' or 'sasl_plaintext.KafkaServer' entry in the JAAS configuration"},
		{[]string{"sasl.enabled.mechanisms", "PLAIN", "sasl.jaas.config", "com.sun.security.auth.module.Krb5LoginModule required;"}, "Krb5LoginModule is not supported"},
		{[]string{"sasl.enabled.mechanisms", "PLAIN", "sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required user_a=\"b\";",
			"inter.broker.listener.name", "SASL_PLAINTEXT", "sasl.mechanism.inter.broker.protocol", "PLAIN"}, "needs username and password options"},
	} {
		cfg, err := config.FromMap(base(tc.props...))
		if err != nil {
			t.Fatalf("%v: %v", tc.props, err)
		}
		if _, err := broker.New(cfg, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: broker.New error %v, want %q", tc.props, err, tc.want)
		}
	}
}

// TestSASLHTTPBasicAuth: with klassik.http.auth=basic the console and its
// JSON want the credentials of a SASL user — a JAAS PLAIN user or a SCRAM
// user — while /metrics stays open.
func TestSASLHTTPBasicAuth(t *testing.T) {
	cache := saslCredentials(t)
	cache.Put("SCRAM-SHA-512", "scrammy", scramCredential(t, "SCRAM-SHA-512", "scram-only"))
	c := startSASLWith(t, testcluster.Options{Brokers: 1, HTTP: true}, map[string]string{"klassik.http.auth": "basic"},
		broker.WithCredentialCache(cache))
	base := "http://" + c.HTTPAddr(0)
	get := func(path, user, pass string) (int, http.Header) {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	for _, path := range []string{"/", "/api/v1/cluster"} {
		code, h := get(path, "", "")
		if code != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("%s without credentials: %d %v", path, code, h)
		}
		for _, bad := range [][2]string{{"alice", "wrong"}, {"nobody", "x"}, {"scrammy", "alice-secret"}} {
			if code, _ := get(path, bad[0], bad[1]); code != http.StatusUnauthorized {
				t.Errorf("%s as %s/%s: %d", path, bad[0], bad[1], code)
			}
		}
		for _, good := range [][2]string{{"alice", "alice-secret"}, {"scrammy", "scram-only"}} {
			if code, _ := get(path, good[0], good[1]); code != http.StatusOK {
				t.Errorf("%s as %s: %d", path, good[0], code)
			}
		}
	}
	if code, _ := get("/metrics", "", ""); code != http.StatusOK {
		t.Errorf("/metrics without credentials: %d", code)
	}
}
