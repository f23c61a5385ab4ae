package broker_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/klassik/klassik/broker"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/security/securitytest"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
)

// TestSASLSSLInterBrokerReplicationFailover: three brokers whose
// inter-broker listener is SASL_SSL (TLS, then a SCRAM-SHA-512 login with
// the JAAS file's ScramLoginModule) replicate an RF=3 topic, elect a new
// leader from the ISR when the leader is killed, and run a consumer group,
// all for a client that itself speaks SASL_SSL with SCRAM-SHA-512. The
// invariant: every record acknowledged with acks=all is read back, and
// the group's committed offsets cover them.
func TestSASLSSLInterBrokerReplicationFailover(t *testing.T) {
	ca := securitytest.NewCA(t, "Klassik Test CA")
	brokerID := ca.Issue(t, "broker", "/C=DE/O=Klassik/OU=brokers/CN=broker")
	jaas := filepath.Join(t.TempDir(), "kafka_server_jaas.conf")
	if err := os.WriteFile(jaas, []byte("KafkaServer {\n  "+scramJaas+"\n};\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	overrides := maps.Clone(replicationOverrides)
	maps.Copy(overrides, brokerID.Props(ca, securitytest.PKCS12, ""))
	maps.Copy(overrides, map[string]string{
		"inter.broker.listener.name":           "SASL_SSL",
		"sasl.enabled.mechanisms":              "SCRAM-SHA-512",
		"sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
	})
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Overrides: overrides, ExtraListeners: []string{"SASL_SSL"},
		BrokerOptions: []broker.Option{
			broker.WithCredentialCache(saslCredentials(t)),
			broker.WithSystemProperties(map[string]string{security.JavaLoginConfigProperty: jaas}),
		}})

	// Every replica fetch arrives over SASL_SSL as the brokers' SCRAM user.
	var mu sync.Mutex
	fetchers := map[string]bool{}
	for i := 0; i < c.N(); i++ {
		c.Intercept(i, 1, func(_ context.Context, req *network.Request) (kmsg.Response, bool, error) {
			if f := req.Body.(*kmsg.FetchRequest); f.ReplicaID >= 0 {
				mu.Lock()
				fetchers[req.Listener+" "+req.Session.Principal] = true
				mu.Unlock()
			}
			return nil, false, nil
		})
	}

	const topic = "sasl-ssl-failover"
	c.CreateTopic(topic, 1, 3, nil)
	var st zkpaths.LeaderAndIsr
	c.WaitFor(30*time.Second, topic+" led with a full ISR", func() bool {
		var ok bool
		st, ok = c.PartitionState(topic, 0)
		return ok && st.Leader >= 0 && len(st.ISR) == 3
	})
	leaderIdx := c.Index(st.Leader)

	tlsCfg := clientTLS(t, map[string]string{"ssl.truststore.location": ca.TrustPKCS12,
		"ssl.truststore.password": securitytest.Password, "ssl.truststore.type": "PKCS12"})
	auth := kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism())
	var cs testcluster.Clients
	defer cs.Close()
	cl := cs.New(t, "sasl-ssl", c.ListenerBootstrap("SASL_SSL"), kgo.DialTLSConfig(tlsCfg), auth,
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0), kgo.RecordDeliveryTimeout(40*time.Second))

	chk := testcluster.NewChecker()
	const first, second = 200, 200
	if acked := produceTracked(t, cl, chk, topic, "s", 0, first, nil); acked != first {
		t.Fatalf("only %d of %d acknowledged before the failure", acked, first)
	}
	waitIdenticalReplicas(t, c, topic, 0, 1, 2)
	mu.Lock()
	if len(fetchers) != 1 || !fetchers["SASL_SSL User:admin"] {
		t.Errorf("replica fetches arrived as %v, want only SASL_SSL User:admin", fetchers)
	}
	mu.Unlock()

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
	// The killed broker comes back, logs in, catches up and rejoins.
	c.RestartBroker(leaderIdx)
	c.WaitFor(30*time.Second, "the restarted broker back in the ISR", func() bool {
		ns, ok := c.PartitionState(topic, 0)
		return ok && len(ns.ISR) == 3
	})
	waitIdenticalReplicas(t, c, topic, 0, 1, 2)

	// A consumer group over SASL_SSL reads every acknowledged record and
	// commits; the committed offset is the log end.
	const group = "sasl-ssl-group"
	consumer := cs.New(t, "sasl-ssl-group", c.ListenerBootstrap("SASL_SSL"), kgo.DialTLSConfig(tlsCfg), auth,
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit())
	var last int64 = -1
	consumeN(ctxT(t, 60*time.Second), t, consumer, acked, "the acknowledged records through the group", func(r *kgo.Record) {
		chk.Consumed(string(r.Value), r.Partition, r.Offset)
		last = max(last, r.Offset)
	})
	if rep := chk.Report(); !rep.OK() {
		t.Fatalf("delivery check failed:\n%s", rep)
	}
	if err := consumer.CommitUncommittedOffsets(ctxT(t, 30*time.Second)); err != nil {
		t.Fatalf("commit over SASL_SSL: %v", err)
	}
	offsets, err := kadm.NewClient(cl).FetchOffsets(ctxT(t, 30*time.Second), group)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offsets.Lookup(topic, 0); !ok || o.Err != nil || o.At != last+1 {
		t.Fatalf("group %s committed %+v, want offset %d", group, o, last+1)
	}
}
