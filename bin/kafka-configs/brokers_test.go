package main

import (
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
)

// TestBrokersZooKeeper: the ZooKeeper mode writes a running broker's
// replication throttles only; other dynamic configs need the broker (or,
// for the cluster default, every broker) down; password configs are
// stored encoded with the password.encoder.* options, which are not
// stored; Kafka's validation texts.
func TestBrokersZooKeeper(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	zkc := c.ZKConnect()
	const info = " Broker configuration updates using ZooKeeper are supported for bootstrapping before brokers are started to enable encrypted password configs to be stored in ZooKeeper.\n"
	kc(t, 1, zkWarning, "requirement failed: --bootstrap-server option must be specified to update broker configs Set(log.retention.ms). when broker 1 is running."+info,
		"--zookeeper", zkc, "--alter", "--entity-type", "brokers", "--entity-name", "1", "--add-config", "log.retention.ms=1000")
	kc(t, 1, zkWarning, "requirement failed: --bootstrap-server option must be specified to update broker configs Set(log.cleaner.threads). for default cluster if any broker is running."+info,
		"--zookeeper", zkc, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "log.cleaner.threads=2")

	kc(t, 0, zkWarning+"Completed updating config for entity: brokers '1'.\n", "",
		"--zookeeper", zkc, "--alter", "--broker", "1", "--add-config", "leader.replication.throttled.rate=1048576")
	wantNode(t, c, "/config/brokers/1", `{"version":1,"config":{"leader.replication.throttled.rate":"1048576"}}`)
	if got := lastChange(t, c); got != `{"version":2,"entity_path":"brokers/1"}` {
		t.Fatalf("notification %s", got)
	}
	kc(t, 0, zkWarning+"Configs for brokers '1' are leader.replication.throttled.rate=1048576\n", "",
		"--zookeeper", zkc, "--describe", "--broker", "1")

	// Broker 5 is not running: anything dynamic may be bootstrapped.
	kc(t, 0, zkWarning+"Completed updating config for entity: brokers '5'.\n", "",
		"--zookeeper", zkc, "--alter", "--broker", "5", "--add-config",
		"log.retention.ms=1000,listener.name.internal.ssl.key.password=key-secret,password.encoder.secret=enc-secret,password.encoder.iterations=2048")
	stored, err := c.ZK().GetEntityConfigs(zkpaths.ConfigTypeBroker, "5")
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 2 || stored["log.retention.ms"] != "1000" {
		t.Fatalf("/config/brokers/5: %v", stored)
	}
	enc, err := config.FromMap(map[string]string{"zookeeper.connect": "x:1", "password.encoder.secret": "enc-secret"})
	if err != nil {
		t.Fatal(err)
	}
	encoded := stored["listener.name.internal.ssl.key.password"]
	if pw, err := enc.NewPasswordEncoder(false).Decode(encoded); err != nil || pw != "key-secret" || !strings.Contains(encoded, "iterations:2048") {
		t.Fatalf("stored password %q decodes to %q, %v", encoded, pw, err)
	}
	kc(t, 1, zkWarning, "requirement failed: password.encoder.secret must be specified to update Set(listener.name.internal.ssl.key.password)."+
		" Other password encoder configs like cipher algorithm and iterations may also be specified to override the default encoding parameters."+
		" Password encoder configs will not be persisted in ZooKeeper.\n",
		"--zookeeper", zkc, "--alter", "--broker", "5", "--add-config", "listener.name.internal.ssl.key.password=x")
	nonDynamic := []string{"--zookeeper", zkc, "--alter", "--broker", "5", "--add-config", "broker.id=7"}
	kc(t, 1, zkWarning, "Error while executing config command with args '"+strings.Join(nonDynamic, " ")+"'\n"+
		"org.apache.kafka.common.config.ConfigException: Cannot update these configs dynamically: Set(broker.id)\n", nonDynamic...)
	badRate := []string{"--zookeeper", zkc, "--alter", "--broker", "1", "--add-config", "follower.replication.throttled.rate=fast"}
	kc(t, 1, zkWarning, "Error while executing config command with args '"+strings.Join(badRate, " ")+"'\n"+
		"org.apache.kafka.common.config.ConfigException: Invalid value fast for configuration follower.replication.throttled.rate: Not a number of type LONG\n", badRate...)
	kc(t, 1, zkWarning, "Invalid config(s): log.retention.ms\n",
		"--zookeeper", zkc, "--alter", "--broker", "1", "--delete-config", "log.retention.ms")
}

// TestBrokersBootstrap: --bootstrap-server alters a broker's and the
// cluster default's dynamic configs through the brokers (AlterConfigs, as
// Kafka 2.8's tool) and describes them with DescribeConfigs' sources and
// synonyms.
func TestBrokersBootstrap(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	bs := strings.Join(c.Bootstrap(), ",")
	kc(t, 0, "Completed updating config for broker 1.\n", "",
		"--bootstrap-server", bs, "--alter", "--broker", "1", "--add-config", "log.retention.ms=1000,log.cleaner.threads=2")
	kc(t, 0, "Completed updating default config for brokers in the cluster.\n", "",
		"--bootstrap-server", bs, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "log.cleaner.threads=3,message.max.bytes=2000000")
	const perBroker = "Dynamic configs for broker 1 are:\n" +
		"  log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2, DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.threads=3, DEFAULT_CONFIG:log.cleaner.threads=1}\n" +
		"  log.retention.ms=1000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=1000, DEFAULT_CONFIG:log.retention.hours=168}\n"
	const defaults = "Default configs for brokers in the cluster are:\n" +
		"  log.cleaner.threads=3 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.threads=3}\n" +
		"  message.max.bytes=2000000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:message.max.bytes=2000000}\n"
	// The broker applies the change notifications asynchronously.
	deadline := time.Now().Add(15 * time.Second)
	for {
		out, _, _ := clitestScript(t, "--bootstrap-server", bs, "--describe", "--broker", "1")
		if out == perBroker || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	kc(t, 0, perBroker, "", "--bootstrap-server", bs, "--describe", "--broker", "1")
	kc(t, 0, defaults, "", "--bootstrap-server", bs, "--describe", "--broker-defaults")
	kc(t, 0, perBroker+defaults, "", "--bootstrap-server", bs, "--describe", "--entity-type", "brokers")
	out, _, code := clitestScript(t, "--bootstrap-server", bs, "--describe", "--broker", "1", "--all")
	if code != 0 || !strings.HasPrefix(out, "All configs for broker 1 are:\n") ||
		!strings.Contains(out, "\n  log.retention.ms=1000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=1000, DEFAULT_CONFIG:log.retention.hours=168}\n") ||
		!strings.Contains(out, "\n  broker.id=1 sensitive=false synonyms={STATIC_BROKER_CONFIG:broker.id=1") {
		t.Fatalf("--all: exit %d\n%s", code, out)
	}

	kc(t, 0, "Completed updating config for broker 1.\n", "",
		"--bootstrap-server", bs, "--alter", "--broker", "1", "--delete-config", "log.retention.ms")
	wantNode(t, c, "/config/brokers/1", `{"version":1,"config":{"log.cleaner.threads":"2"}}`)
	kc(t, 1, "", "Invalid config(s): log.retention.ms\n",
		"--bootstrap-server", bs, "--alter", "--broker", "1", "--delete-config", "log.retention.ms")
	nonDynamic := []string{"--bootstrap-server", bs, "--alter", "--broker", "1", "--add-config", "broker.id=7"}
	out, errOut, code := clitestScript(t, nonDynamic...)
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "Error while executing config command with args '"+strings.Join(nonDynamic, " ")+"'\n"+
		"java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.InvalidRequestException: ") ||
		!strings.Contains(errOut, "Cannot update these configs dynamically: Set(broker.id)") {
		t.Fatalf("non-dynamic key: exit %d\n%s%s", code, out, errOut)
	}
	kc(t, 1, "", "The entity name for brokers must be a valid integer broker id, but it is: one\n",
		"--bootstrap-server", bs, "--describe", "--broker", "one")
}

// clitestScript runs kafka-configs.sh and returns what it printed.
func clitestScript(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return clitest.Script(t, nil, "kafka-configs.sh", args...)
}
