package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
)

func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

const zkWarning = "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.\n" +
	"Use --bootstrap-server instead to specify a broker to connect to.\n"

// kc runs bin/kafka-configs.sh as a process and checks its exit status and
// exact output.
func kc(t *testing.T, wantCode int, wantOut, wantErr string, args ...string) {
	t.Helper()
	out, errOut, code := clitest.Script(t, nil, "kafka-configs.sh", args...)
	if code != wantCode || out != wantOut || errOut != wantErr {
		t.Fatalf("kafka-configs.sh %s\nexit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s",
			strings.Join(args, " "), code, wantCode, out, wantOut, errOut, wantErr)
	}
}

// userCredential reads user's stored credential for mech from ZooKeeper.
func userCredential(t *testing.T, c *testcluster.Cluster, user, mech string) (security.ScramCredential, bool) {
	t.Helper()
	u, err := c.ZK().GetUserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := u.Scram[mech]
	if !ok {
		return security.ScramCredential{}, false
	}
	cred, err := security.ParseScramCredential(s)
	if err != nil {
		t.Fatalf("%s's %s credential %q: %v", user, mech, s, err)
	}
	return cred, true
}

// waitCached waits until the broker's cache verifies password for user
// (or, with password "", holds no credential).
func waitCached(t *testing.T, c *testcluster.Cluster, mech, user, password string) {
	t.Helper()
	c.WaitFor(15*time.Second, fmt.Sprintf("%s's %s credential in the broker's cache", user, mech), func() bool {
		cred, ok := c.Broker(0).Credentials().Get(mech, user)
		if password == "" {
			return !ok
		}
		return ok && security.VerifyScramPassword(mech, password, cred)
	})
}

// TestUsersBothModes: kafka-configs.sh creates, describes and deletes
// SCRAM credentials with --zookeeper and --bootstrap-server, with Kafka's
// output lines and errors; what it writes reaches the broker's credential
// cache.
func TestUsersBothModes(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	zkc := c.ZKConnect()
	bs := strings.Join(c.Bootstrap(), ",")
	const s256, s512 = security.MechanismScramSHA256, security.MechanismScramSHA512

	// --zookeeper: the tool writes the node and the notification itself.
	kc(t, 0, zkWarning+"Completed updating config for entity: user-principal 'alice'.\n", "",
		"--zookeeper", zkc, "--entity-type", "users", "--entity-name", "alice", "--alter",
		"--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]")
	c256, ok1 := userCredential(t, c, "alice", s256)
	c512, ok2 := userCredential(t, c, "alice", s512)
	if !ok1 || !ok2 || c256.Iterations != 8192 || c512.Iterations != 4096 ||
		!security.VerifyScramPassword(s256, "alice-secret", c256) || !security.VerifyScramPassword(s512, "alice-secret", c512) {
		t.Fatalf("alice's credentials in ZooKeeper: %v %v %+v %+v", ok1, ok2, c256, c512)
	}
	waitCached(t, c, s512, "alice", "alice-secret")
	u, _ := c.ZK().GetUserConfig("alice")
	kc(t, 0, zkWarning+"Configs for user-principal 'alice' are SCRAM-SHA-512="+u.Scram[s512]+",SCRAM-SHA-256="+u.Scram[s256]+"\n", "",
		"--zookeeper", zkc, "--describe", "--entity-type", "users", "--entity-name", "alice")
	kc(t, 0, "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n", "",
		"--bootstrap-server", bs, "--describe", "--entity-type", "users", "--entity-name", "alice")

	kc(t, 0, zkWarning+"Completed updating config for entity: user-principal 'alice'.\n", "",
		"--zookeeper", zkc, "--entity-type", "users", "--entity-name", "alice", "--alter", "--delete-config", "SCRAM-SHA-512")
	waitCached(t, c, s512, "alice", "")
	kc(t, 1, zkWarning, "Invalid config(s): SCRAM-SHA-512\n",
		"--zookeeper", zkc, "--entity-type", "users", "--entity-name", "alice", "--alter", "--delete-config", "SCRAM-SHA-512")
	kc(t, 1, zkWarning, "Iterations 1000 is less than the minimum 4096 required for SCRAM_SHA_256\n",
		"--zookeeper", zkc, "--user", "carl", "--alter", "--add-config", "SCRAM-SHA-256=[iterations=1000,password=x]")

	// --bootstrap-server: AlterUserScramCredentials and
	// DescribeUserScramCredentials through the controller.
	kc(t, 0, "Completed updating config for user bob.\n", "",
		"--bootstrap-server", bs, "--entity-type", "users", "--entity-name", "bob", "--alter",
		"--add-config", "SCRAM-SHA-512=[iterations=8192,password=bob-secret]")
	waitCached(t, c, s512, "bob", "bob-secret")
	kc(t, 0, "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192\n"+
		"SCRAM credential configs for user-principal 'bob' are SCRAM-SHA-512=iterations=8192\n", "",
		"--bootstrap-server", bs, "--describe", "--entity-type", "users")
	kc(t, 0, "Error retrieving SCRAM credential configs for user-principal 'nobody': ResourceNotFoundException: Attempt to describe a user credential that does not exist: nobody\n", "",
		"--bootstrap-server", bs, "--describe", "--entity-type", "users", "--entity-name", "nobody")
	tooMany := []string{"--bootstrap-server", bs, "--alter", "--entity-type", "users", "--entity-name", "bob", "--add-config", "SCRAM-SHA-256=[iterations=20000,password=x]"}
	kc(t, 1, "", "Error while executing config command with args '"+strings.Join(tooMany, " ")+"'\n"+
		"java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.UnacceptableCredentialException: Too many iterations\n", tooMany...)
	kc(t, 1, "", "Iterations 100 is less than the minimum 4096 required for SCRAM-SHA-256\n",
		"--bootstrap-server", bs, "--alter", "--entity-type", "users", "--entity-name", "bob", "--add-config", "SCRAM-SHA-256=[iterations=100,password=x]")
	kc(t, 0, "Completed updating config for user bob.\n", "",
		"--bootstrap-server", bs, "--alter", "--entity-type", "users", "--entity-name", "bob", "--delete-config", "SCRAM-SHA-512")
	waitCached(t, c, s512, "bob", "")
	if _, _, err := c.ZK().Get(zkpaths.UserConfigPath("bob")); err == nil {
		t.Error("bob's node survived the deletion of his last credential")
	}

}

// TestTopicsBothModes: topic configs through ZooKeeper and through the
// brokers, with Kafka's output.
func TestTopicsBothModes(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	zkc := c.ZKConnect()
	bs := strings.Join(c.Bootstrap(), ",")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clitest.CreateTopic(t, ctx, c, "orders", 1, 1)

	kc(t, 0, zkWarning+"Completed updating config for entity: topic 'orders'.\n", "",
		"--zookeeper", zkc, "--alter", "--entity-type", "topics", "--entity-name", "orders", "--add-config", "retention.ms=1000,cleanup.policy=[compact,delete]")
	kc(t, 0, zkWarning+"Configs for topic 'orders' are cleanup.policy=compact,delete,retention.ms=1000\n", "",
		"--zookeeper", zkc, "--describe", "--entity-type", "topics", "--entity-name", "orders")
	c.WaitFor(15*time.Second, "the broker to apply retention.ms=1000", func() bool {
		v, _ := testcluster.TopicConfig(t, c.Admin(), "orders", "retention.ms")
		return v == "1000"
	})
	// retention.ms lists no broker synonym: Kafka's ConfigHelper drops the
	// synonyms before the first one named log.retention.ms, and only
	// log.retention.hours has a default.
	kc(t, 0, "Dynamic configs for topic orders are:\n"+
		"  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete, DEFAULT_CONFIG:log.cleanup.policy=delete}\n"+
		"  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000}\n", "",
		"--bootstrap-server", bs, "--describe", "--entity-type", "topics", "--entity-name", "orders")

	kc(t, 0, "Completed updating config for topic orders.\n", "",
		"--bootstrap-server", bs, "--alter", "--topic", "orders", "--add-config", "max.message.bytes=2048", "--delete-config", "retention.ms,cleanup.policy")
	kc(t, 0, zkWarning+"Configs for topic 'orders' are max.message.bytes=2048\n", "",
		"--zookeeper", zkc, "--describe", "--topic", "orders")
	kc(t, 1, "", "Invalid config(s): retention.ms\n",
		"--bootstrap-server", bs, "--alter", "--topic", "orders", "--delete-config", "retention.ms")
	kc(t, 1, zkWarning, "Unknown topic config name: no.such.key\n",
		"--zookeeper", zkc, "--alter", "--topic", "orders", "--add-config", "no.such.key=1")
	missing := []string{"--zookeeper", zkc, "--alter", "--topic", "ghost", "--add-config", "retention.ms=1"}
	kc(t, 1, zkWarning, "Error while executing config command with args '"+strings.Join(missing, " ")+"'\n"+
		"org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic 'ghost' does not exist.\n", missing...)
}
