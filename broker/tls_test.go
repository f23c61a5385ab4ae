package broker_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/security/securitytest"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
)

// sslCluster starts three brokers whose inter-broker listener is SSL with
// ssl.client.auth=required (the brokers present their key store to each
// other), beside the harness's PLAINTEXT listener. Every broker uses the
// same broker identity; storeFormat picks the key store type.
func sslCluster(t *testing.T, storeFormat string, extra map[string]string) (*testcluster.Cluster, *securitytest.CA, *securitytest.Identity) {
	t.Helper()
	ca := securitytest.NewCA(t, "Klassik Test CA")
	brokerID := ca.Issue(t, "broker", "/C=DE/O=Klassik/OU=brokers/CN=broker")
	overrides := maps.Clone(replicationOverrides)
	maps.Copy(overrides, brokerID.Props(ca, storeFormat, ""))
	overrides["ssl.client.auth"] = "required"
	overrides["security.inter.broker.protocol"] = "SSL"
	maps.Copy(overrides, extra)
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Overrides: overrides, ExtraListeners: []string{"SSL"}})
	return c, ca, brokerID
}

func clientTLS(t *testing.T, props map[string]string) *tls.Config {
	t.Helper()
	c, err := security.ClientTLSConfig(props, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSSLInterBrokerReplicationFailover: with SSL between the brokers
// (client certificates required), an RF=3 topic is replicated by fetchers
// that dial TLS, the controller reaches every broker over TLS, and after
// the leader is killed every record acknowledged with acks=all is still
// read back — all through a client that itself speaks SSL with a client
// certificate and learns the SSL endpoints from Metadata.
func TestSSLInterBrokerReplicationFailover(t *testing.T) {
	c, ca, _ := sslCluster(t, securitytest.JKS, nil)
	alice := ca.Issue(t, "alice", "/C=DE/O=Klassik/OU=eng/CN=alice")

	// /brokers/ids/<id> lists both endpoints and the protocol map as Kafka
	// writes them.
	for i := 0; i < c.N(); i++ {
		info, ok, err := c.ZK().GetBroker(c.BrokerID(i))
		if err != nil || !ok {
			t.Fatalf("registration of broker %d: %v %v", c.BrokerID(i), ok, err)
		}
		var js struct {
			Endpoints []string          `json:"endpoints"`
			Map       map[string]string `json:"listener_security_protocol_map"`
			Host      string            `json:"host"`
			Port      int               `json:"port"`
		}
		if err := json.Unmarshal(info.Encode(), &js); err != nil {
			t.Fatal(err)
		}
		wantEP := []string{"PLAINTEXT://" + c.Addr(i), "SSL://" + c.ListenerAddr(i, "SSL")}
		if !slices.Equal(js.Endpoints, wantEP) || js.Map["SSL"] != "SSL" || js.Map["PLAINTEXT"] != "PLAINTEXT" || len(js.Map) != 2 || js.Host != "127.0.0.1" {
			t.Fatalf("registration %s, want endpoints %v", info.Encode(), wantEP)
		}
		if ep, ok := info.EndPointFor("SSL"); !ok || ep.SecurityProtocol != "SSL" {
			t.Fatalf("decoded SSL endpoint %+v %v", ep, ok)
		}
	}

	const topic = "ssl-failover"
	c.CreateTopic(topic, 1, 3, nil)
	var st zkpaths.LeaderAndIsr
	c.WaitFor(30*time.Second, topic+" led with a full ISR", func() bool {
		var ok bool
		st, ok = c.PartitionState(topic, 0)
		return ok && st.Leader >= 0 && len(st.ISR) == 3
	})
	leaderIdx := c.Index(st.Leader)

	aliceTLS := clientTLS(t, alice.Props(ca, securitytest.PKCS12, ""))
	var cs testcluster.Clients
	defer cs.Close()
	sslOpts := []kgo.Opt{kgo.DialTLSConfig(aliceTLS), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0), kgo.RecordDeliveryTimeout(40 * time.Second)}
	cl := cs.New(t, "ssl", c.ListenerBootstrap("SSL"), sslOpts...)

	// Metadata over the SSL listener names the SSL endpoints.
	ctx := ctxT(t, 20*time.Second)
	brokers, err := kgoBrokers(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(brokers) != 3 {
		t.Fatalf("metadata lists %v", brokers)
	}
	for _, b := range brokers {
		if !slices.Contains(c.ListenerBootstrap("SSL"), b) {
			t.Fatalf("metadata over SSL lists %v, want the SSL endpoints %v", brokers, c.ListenerBootstrap("SSL"))
		}
	}

	chk := testcluster.NewChecker()
	const first, second = 200, 200
	if acked := produceTracked(t, cl, chk, topic, "s", 0, first, nil); acked != first {
		t.Fatalf("only %d of %d acknowledged before the failure", acked, first)
	}
	waitIdenticalReplicas(t, c, topic, 0, 1, 2) // replicated by TLS fetchers
	var once sync.Once
	acked := first + produceTracked(t, cl, chk, topic, "s", first, second, func(seq int) {
		if seq == first+second/3 {
			once.Do(func() { c.KillBroker(leaderIdx) })
		}
	})
	c.WaitFor(20*time.Second, "a new leader from the ISR", func() bool {
		ns, ok := c.PartitionState(topic, 0)
		return ok && ns.Leader >= 0 && ns.Leader != st.Leader && slices.Contains(st.ISR, ns.Leader)
	})
	consumer := cs.New(t, "ssl-consumer", c.ListenerBootstrap("SSL"), kgo.DialTLSConfig(aliceTLS),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	consumeN(ctxT(t, 30*time.Second), t, consumer, acked, "the acknowledged records over SSL", func(r *kgo.Record) {
		chk.Consumed(string(r.Value), r.Partition, r.Offset)
	})
	if rep := chk.Report(); !rep.OK() {
		t.Fatalf("delivery check failed:\n%s", rep)
	}
	// The killed broker comes back, catches up over TLS and rejoins.
	c.RestartBroker(leaderIdx)
	c.WaitFor(30*time.Second, "the restarted broker back in the ISR", func() bool {
		ns, ok := c.PartitionState(topic, 0)
		return ok && len(ns.ISR) == 3
	})
	waitIdenticalReplicas(t, c, topic, 0, 1, 2)
}

// kgoBrokers returns the broker addresses Metadata gives a client.
func kgoBrokers(ctx context.Context, cl *kgo.Client) ([]string, error) {
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range md.Brokers {
		out = append(out, net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))))
	}
	return out, nil
}

// newBrokerFromProps loads props as a server.properties and builds (does
// not start) a broker.
func newBrokerFromProps(props map[string]string) (*broker.Broker, error) {
	cfg, err := config.FromMap(props)
	if err != nil {
		return nil, err
	}
	return broker.New(cfg, slog.New(slog.DiscardHandler))
}

// TestSSLListenerStartupErrors: an SSL listener whose key store cannot be
// read stops broker start-up with the file named.
func TestSSLListenerStartupErrors(t *testing.T) {
	ca := securitytest.NewCA(t, "Klassik Test CA")
	id := ca.Issue(t, "broker", "/CN=broker")
	props := id.Props(ca, securitytest.JKS, "")
	props["ssl.keystore.password"] = "wrong"
	props["zookeeper.connect"] = "127.0.0.1:1"
	props["listeners"] = "SSL://127.0.0.1:0"
	props["security.inter.broker.protocol"] = "SSL"
	props["log.dirs"] = t.TempDir()
	_, err := newBrokerFromProps(props)
	if err == nil || !strings.Contains(err.Error(), id.JKS) || !strings.Contains(err.Error(), "password") {
		t.Fatalf("start-up error %v, want one naming %s and the password", err, id.JKS)
	}
}

// TestSSLInterBrokerKeystoreRotation: the inter-broker listener's key and
// trust stores are rotated with per-broker AlterConfigs to a certificate
// of another CA (same DN and SANs), after which only the new CA is
// trusted. The broker's own inter-broker dials follow the reload: a
// follower of a topic created after the rotation dials its leader with
// the new certificate and trust store, so its acks=all writes are
// acknowledged. A dial that kept the stores of start-up would present a
// certificate the leader no longer trusts.
func TestSSLInterBrokerKeystoreRotation(t *testing.T) {
	securitytest.Need(t, "keytool", "openssl")
	ca1 := securitytest.NewCA(t, "Klassik Test CA 1")
	ca2 := securitytest.NewCA(t, "Klassik Test CA 2")
	const dn = "/C=DE/O=Klassik/OU=brokers/CN=broker"
	before, after := ca1.Issue(t, "broker-before", dn), ca2.Issue(t, "broker-after", dn)
	pem := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bothCAs := filepath.Join(t.TempDir(), "both-cas.pem")
	if err := os.WriteFile(bothCAs, append(pem(ca1.CertPEM), pem(ca2.CertPEM)...), 0o600); err != nil {
		t.Fatal(err)
	}
	overrides := maps.Clone(replicationOverrides)
	maps.Copy(overrides, before.Props(ca1, securitytest.PEM, ""))
	overrides["ssl.truststore.location"] = bothCAs
	overrides["ssl.client.auth"] = "required"
	overrides["security.inter.broker.protocol"] = "SSL"
	overrides["password.encoder.secret"] = "encoder-secret"
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Overrides: overrides, ExtraListeners: []string{"SSL"}})

	// Both CAs number their certificates alike: the issuer tells them apart.
	servedIssuer := func(addr string) string {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Issuer.CommonName
	}
	const prefix = "listener.name.ssl."
	for i := 0; i < c.N(); i++ {
		if got := servedIssuer(c.ListenerAddr(i, "SSL")); got != "Klassik Test CA 1" {
			t.Fatalf("broker %d serves a certificate of %q before the rotation", c.BrokerID(i), got)
		}
		if msg := alterBrokerKV(t, c.Admin(), c.BrokerID(i),
			prefix+"ssl.keystore.type", "PEM", prefix+"ssl.keystore.location", after.PEMStore, prefix+"ssl.key.password", securitytest.Password,
			prefix+"ssl.truststore.type", "PEM", prefix+"ssl.truststore.location", ca2.CertPEM); msg != "" {
			t.Fatalf("rotating broker %d: %s", c.BrokerID(i), msg)
		}
		waitFor(t, "the rotated certificate served", 10*time.Second, func() bool {
			return servedIssuer(c.ListenerAddr(i, "SSL")) == "Klassik Test CA 2"
		})
	}

	const topic = "after-rotation"
	c.CreateTopic(topic, 1, 2, nil)
	c.WaitLeaders(20*time.Second, topic, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var code int16
	waitFor(t, "an acks=all write acknowledged by both replicas after the rotation", 30*time.Second, func() bool {
		s, _ := c.PartitionState(topic, 0)
		code = produceAcks(ctx, t, c.Direct(c.Index(s.Leader)), topic, -1)
		return code == 0
	})
	if s, _ := c.PartitionState(topic, 0); len(s.ISR) != 2 {
		t.Errorf("ISR after the acknowledged write: %v, want both replicas", s.ISR)
	}
}
