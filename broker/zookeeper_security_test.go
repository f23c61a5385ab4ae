package broker_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker"
	"github.com/klassik/klassik/broker/security/securitytest"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// zookeeper.set.acl=true as Kafka 2.8 does it, on a real ZooKeeper 3.8 with
// a TLS client port (Netty, client certificates needed, x509 auth
// provider) and a digest super user for inspecting ACLs. One ZooKeeper for
// the file; each case works in its own chroot.
func TestZooKeeperSecurity(t *testing.T) {
	ca := securitytest.NewCA(t, "Klassik ZooKeeper Test CA")
	server := ca.Issue(t, "zookeeper", "/O=Klassik/CN=zookeeper")
	so := &zkserver.SecureOptions{KeyStore: server.PKCS12, KeyStorePassword: securitytest.Password,
		TrustStore: ca.TrustPKCS12, TrustStorePassword: securitytest.Password, ClientAuth: "need", SuperDigest: "super:super-secret"}
	srv, err := zkserver.Start(zkserver.Options{Dir: filepath.Join(t.TempDir(), "zk"), Secure: so})
	if err != nil {
		t.Fatalf("secure ZooKeeper: %v", err)
	}
	t.Cleanup(func() { srv.Stop() })
	super, _, err := zk.Connect([]string{srv.Addr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(super.Close)
	if err := super.AddAuth("digest", []byte(so.SuperDigest)); err != nil {
		t.Fatal(err)
	}

	t.Run("x509 over TLS", func(t *testing.T) {
		leaf := ca.Issue(t, "broker", "/O=Klassik/OU=brokers/CN=broker")
		chroot := zkserver.Chroot(t)
		c := testcluster.Start(t, testcluster.Options{Brokers: 2, ZKConnect: srv.Addr() + chroot, Overrides: map[string]string{
			"zookeeper.connect":           srv.SecureAddr() + chroot,
			"zookeeper.set.acl":           "true",
			"zookeeper.ssl.client.enable": "true",
			"zookeeper.clientCnxnSocket":  config.ZkClientCnxnSocketNetty,
			// keytool's JKS for the key, PKCS12 (type from the name) for
			// the trust store.
			"zookeeper.ssl.keystore.location":   leaf.JKS,
			"zookeeper.ssl.keystore.password":   securitytest.Password,
			"zookeeper.ssl.keystore.type":       "JKS",
			"zookeeper.ssl.truststore.location": ca.TrustPKCS12,
			"zookeeper.ssl.truststore.password": securitytest.Password,
		}})
		checkSecuredCluster(t, c, srv, super, chroot, "x509:"+zkserver.X509ID(leaf.DN)+":cdrwa")
	})

	// The JAAS Client section's user and password, sent with ZooKeeper's
	// digest scheme on the plaintext port.
	t.Run("digest from the JAAS Client section", func(t *testing.T) {
		jaas := filepath.Join(t.TempDir(), "kafka_server_jaas.conf")
		if err := os.WriteFile(jaas, []byte(`Client {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    username="kafka"
    password="kafka-zk-secret";
};
`), 0o600); err != nil {
			t.Fatal(err)
		}
		chroot := zkserver.Chroot(t)
		c := testcluster.Start(t, testcluster.Options{Brokers: 2, ZKConnect: srv.Addr() + chroot,
			Overrides:     map[string]string{"zookeeper.set.acl": "true"},
			BrokerOptions: []broker.Option{broker.WithSystemProperties(map[string]string{"java.security.auth.login.config": jaas})}})
		checkSecuredCluster(t, c, srv, super, chroot, "digest:"+zkserver.DigestID("kafka:kafka-zk-secret")+":cdrwa")
	})
}

// zookeeper.set.acl=true without an identity, and a JAAS Client section
// with a login module Klassik cannot do, stop the broker at start-up.
func TestZooKeeperSecurityStartupErrors(t *testing.T) {
	jaas := filepath.Join(t.TempDir(), "jaas.conf")
	if err := os.WriteFile(jaas, []byte(`Client { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/k" principal="kafka"; };`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		props map[string]string
		sys   map[string]string
		want  string
	}{
		{"no identity", map[string]string{"zookeeper.set.acl": "true"}, nil, "zookeeper.set.acl is true, but ZooKeeper client TLS configuration"},
		{"Kerberos", nil, map[string]string{"java.security.auth.login.config": jaas}, "Krb5LoginModule is not supported"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			props := map[string]string{"broker.id": "1", "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": t.TempDir(),
				"zookeeper.connect": zkserver.ConnectString(t)}
			for k, v := range tc.props {
				props[k] = v
			}
			cfg, err := config.FromMap(props)
			if err != nil {
				t.Fatal(err)
			}
			b, err := broker.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), broker.WithSystemProperties(tc.sys))
			if err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				err = b.Startup(ctx)
				cancel()
				b.Shutdown()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("start-up error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// checkSecuredCluster: every node the brokers made carries Kafka's ACLs
// (owner = the brokers' identity, world read except on the sensitive
// paths, /consumers open), an anonymous zkCli session can neither change
// the tree nor read /config/users, and the cluster works through a topic,
// records and a controller failover.
func checkSecuredCluster(t *testing.T, c *testcluster.Cluster, srv *zkserver.Server, super *zk.Conn, chroot, owner string) {
	t.Helper()
	const topic = "secured"
	c.CreateTopic(topic, 2, 2, nil)
	c.WaitLeaders(30*time.Second, topic, 2)
	securedProduceConsume(t, c, topic, "before failover")

	// A user's config node (quotas here; SCRAM credentials live there too)
	// written by the cluster's own identity, as kafka-configs would.
	ctrl, _ := c.Controller()
	open := owner + ",world:anyone:r"
	want := map[string]string{
		"":                                   open,
		zkpaths.BrokersPath:                  open,
		zkpaths.BrokerIDsPath:                open,
		zkpaths.BrokerIDPath(ctrl):           open,
		zkpaths.TopicPath(topic):             open,
		zkpaths.PartitionStatePath(topic, 0): open,
		zkpaths.ControllerPath:               open,
		zkpaths.ControllerEpochPath:          open,
		zkpaths.ClusterIDPath:                open,
		zkpaths.ConfigChangesPath:            open,
		zkpaths.ConfigPath(zkpaths.ConfigTypeTopic, topic): open,
		zkpaths.AdminDeleteTopicsPath:                      open,
		zkpaths.IsrChangeNotificationPath:                  open,
		zkpaths.LatestProducerIDBlockPath:                  open,
		zkpaths.ConfigPath(zkpaths.ConfigTypeUser, ""):     owner,
		zkpaths.ConfigPath(zkpaths.ConfigTypeBroker, ""):   owner,
		zkpaths.ConsumersPath:                              "world:anyone:cdrwa",
	}
	for p, w := range want {
		if got := aclOf(t, super, chroot+p); got != w {
			t.Errorf("ACL of %q = %s, want %s", p, got, w)
		}
	}

	// An unauthenticated zkCli session on the plaintext port.
	before, _, err := super.Get(chroot + zkpaths.ControllerPath)
	if err != nil {
		t.Fatal(err)
	}
	ids, _, err := super.Children(chroot + zkpaths.BrokerIDsPath)
	if err != nil {
		t.Fatal(err)
	}
	script := []string{
		"create " + chroot + "/brokers/ids/99 x",
		"create " + chroot + "/brokers/topics/intruder x",
		"set " + chroot + "/controller x",
		"delete " + chroot + "/controller",
		"create " + chroot + "/config/topics/intruder x",
		"set " + chroot + "/config/topics/" + topic + " x",
		"delete " + chroot + "/config/topics/" + topic,
		"get " + chroot + "/config/users",
		"ls " + chroot + "/config/users",
		"get " + chroot + "/cluster/id",
	}
	stdout, stderr, err := zkserver.ZkCliScriptStderr(srv.Addr(), 60*time.Second, script...)
	if err != nil {
		t.Fatalf("zkCli: %v", err)
	}
	if n := strings.Count(stderr, "Insufficient permission") + strings.Count(stderr, "Authentication is not valid"); n != len(script)-1 {
		t.Errorf("zkCli was refused %d times, want %d:\nstdout:\n%s\nstderr:\n%s", n, len(script)-1, stdout, stderr)
	}
	if !strings.Contains(stdout, `"id":`) {
		t.Errorf("zkCli could not read the world-readable /cluster/id:\n%s", stdout)
	}
	after, _, err := super.Get(chroot + zkpaths.ControllerPath)
	if err != nil || string(after) != string(before) {
		t.Errorf("/controller changed: %s -> %s (%v)", before, after, err)
	}
	ids2, _, _ := super.Children(chroot + zkpaths.BrokerIDsPath)
	if len(ids2) != len(ids) {
		t.Errorf("/brokers/ids changed: %v -> %v", ids, ids2)
	}
	for _, p := range []string{"/brokers/topics/intruder", "/config/topics/intruder"} {
		if ok, _, _ := super.Exists(chroot + p); ok {
			t.Errorf("anonymous zkCli created %s", p)
		}
	}

	// Controller failover: the new controller's node has the same ACL.
	c.KillBroker(c.Index(ctrl))
	c.WaitFor(30*time.Second, "a new controller", func() bool {
		id, ok := c.Controller()
		return ok && id != ctrl
	})
	if got := aclOf(t, super, chroot+zkpaths.ControllerPath); got != open {
		t.Errorf("ACL of the new /controller = %s, want %s", got, open)
	}
	c.WaitFor(30*time.Second, "leaders on the surviving broker", func() bool {
		for p := int32(0); p < 2; p++ {
			st, ok := c.PartitionState(topic, p)
			if !ok || st.Leader == ctrl || st.Leader < 0 {
				return false
			}
		}
		return true
	})
	securedProduceConsume(t, c, topic, "after failover")
}

func aclOf(t *testing.T, conn *zk.Conn, p string) string {
	t.Helper()
	if p != "/" {
		p = strings.TrimSuffix(p, "/")
	}
	acls, _, err := conn.GetACL(p)
	if err != nil {
		t.Fatalf("getACL %s: %v", p, err)
	}
	var parts []string
	for _, a := range acls {
		perms := ""
		for _, x := range []struct {
			bit int32
			c   string
		}{{zk.PermCreate, "c"}, {zk.PermDelete, "d"}, {zk.PermRead, "r"}, {zk.PermWrite, "w"}, {zk.PermAdmin, "a"}} {
			if a.Perms&x.bit != 0 {
				perms += x.c
			}
		}
		parts = append(parts, a.Scheme+":"+a.ID+":"+perms)
	}
	return strings.Join(parts, ",")
}

// securedProduceConsume writes ten records with acks=all and reads them back.
func securedProduceConsume(t *testing.T, c *testcluster.Cluster, topic, what string) {
	t.Helper()
	ctx := ctxT(t, 60*time.Second)
	p := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic(topic))
	for i := 0; i < 10; i++ {
		if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("%s %d", what, i))}).FirstErr(); err != nil {
			t.Fatalf("%s: produce: %v", what, err)
		}
	}
	cl := c.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := 0
	consumeN(ctx, t, cl, 10, what, func(r *kgo.Record) {
		if strings.HasPrefix(string(r.Value), what) {
			seen++
		}
	})
	if seen < 10 {
		t.Fatalf("%s: read %d of our records", what, seen)
	}
}
