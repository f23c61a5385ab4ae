package broker_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"maps"
	"net"
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
