package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
)

// lastChange reads the newest /config/changes notification.
func lastChange(t *testing.T, c *testcluster.Cluster) string {
	t.Helper()
	kids, err := c.ZK().Children(zkpaths.ConfigChangesPath)
	if err != nil || len(kids) == 0 {
		t.Fatalf("/config/changes: %v %v", kids, err)
	}
	data, _, err := c.ZK().Get(zkpaths.ConfigChangesPath + "/" + slices.Max(kids))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// wantNode checks a znode's exact data.
func wantNode(t *testing.T, c *testcluster.Cluster, path, want string) {
	t.Helper()
	data, _, err := c.ZK().Get(path)
	if err != nil || string(data) != want {
		t.Fatalf("%s: %q %v, want %q", path, data, err, want)
	}
}

// TestQuotasZooKeeper: --zookeeper writes user, client, <user, client>,
// default and IP quotas into /config in Kafka's JSON with a change
// notification each, describes them as Kafka's Entity.toString names
// them, and refuses what DynamicConfig's validation refuses.
func TestQuotasZooKeeper(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	zkc := c.ZKConnect()
	zk := []string{"--zookeeper", zkc}
	alter := func(wantEntity string, args ...string) {
		t.Helper()
		kc(t, 0, zkWarning+"Completed updating config for entity: "+wantEntity+".\n", "", append(append(slices.Clone(zk), "--alter"), args...)...)
	}

	alter("user-principal 'alice'", "--entity-type", "users", "--entity-name", "alice", "--add-config", "producer_byte_rate=1024")
	wantNode(t, c, "/config/users/alice", `{"version":1,"config":{"producer_byte_rate":"1024"}}`)
	if got := lastChange(t, c); got != `{"version":2,"entity_path":"users/alice"}` {
		t.Fatalf("notification %s", got)
	}
	alter("user-principal 'alice', client-id 'app-1'", "--entity-type", "users", "--entity-name", "alice",
		"--entity-type", "clients", "--entity-name", "app-1", "--add-config", "consumer_byte_rate=2048")
	wantNode(t, c, "/config/users/alice/clients/app-1", `{"version":1,"config":{"consumer_byte_rate":"2048"}}`)
	if got := lastChange(t, c); got != `{"version":2,"entity_path":"users/alice/clients/app-1"}` {
		t.Fatalf("notification %s", got)
	}
	// --client before --user on the command line still nests the client
	// below the user.
	alter("user-principal 'alice', client-id 'app-2'", "--client", "app-2", "--user", "alice", "--add-config", "request_percentage=50")
	wantNode(t, c, "/config/users/alice/clients/app-2", `{"version":1,"config":{"request_percentage":"50"}}`)
	alter("default client-id", "--client-defaults", "--add-config", "producer_byte_rate=10485760")
	wantNode(t, c, "/config/clients/<default>", `{"version":1,"config":{"producer_byte_rate":"10485760"}}`)
	if got := lastChange(t, c); got != `{"version":2,"entity_path":"clients/<default>"}` {
		t.Fatalf("notification %s", got)
	}
	alter("default user-principal, default client-id", "--entity-type", "users", "--entity-default", "--entity-type", "clients",
		"--entity-default", "--add-config", "controller_mutation_rate=10")
	wantNode(t, c, "/config/users/<default>/clients/<default>", `{"version":1,"config":{"controller_mutation_rate":"10"}}`)
	alter("user-principal 'CN=bob,O=x'", "--user", "CN=bob,O=x", "--add-config", "consumer_byte_rate=100")
	wantNode(t, c, "/config/users/CN%3Dbob%2CO%3Dx", `{"version":1,"config":{"consumer_byte_rate":"100"}}`)
	alter("ips '127.0.0.1'", "--ip", "127.0.0.1", "--add-config", "connection_creation_rate=10")
	wantNode(t, c, "/config/ips/127.0.0.1", `{"version":1,"config":{"connection_creation_rate":"10"}}`)
	if got := lastChange(t, c); got != `{"version":2,"entity_path":"ips/127.0.0.1"}` {
		t.Fatalf("notification %s", got)
	}
	alter("default ips", "--ip-defaults", "--add-config", "connection_creation_rate=5")
	wantNode(t, c, "/config/ips/<default>", `{"version":1,"config":{"connection_creation_rate":"5"}}`)

	describe := func(want string, args ...string) {
		t.Helper()
		kc(t, 0, zkWarning+want, "", append(append(slices.Clone(zk), "--describe"), args...)...)
	}
	// All users: the default user, which holds only <user, client>
	// quotas, is left out.
	describe("Configs for user-principal 'CN=bob,O=x' are consumer_byte_rate=100\n"+
		"Configs for user-principal 'alice' are producer_byte_rate=1024\n", "--entity-type", "users")
	describe("Configs for default user-principal, default client-id are controller_mutation_rate=10\n"+
		"Configs for user-principal 'alice', client-id 'app-1' are consumer_byte_rate=2048\n"+
		"Configs for user-principal 'alice', client-id 'app-2' are request_percentage=50\n",
		"--entity-type", "users", "--entity-type", "clients")
	describe("Configs for user-principal 'alice', client-id 'app-1' are consumer_byte_rate=2048\n"+
		"Configs for user-principal 'alice', client-id 'app-2' are request_percentage=50\n",
		"--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients")
	describe("Configs for user-principal 'alice', client-id 'app-2' are request_percentage=50\n", "--user", "alice", "--client", "app-2")
	describe("Configs for default client-id are producer_byte_rate=10485760\n", "--client-defaults")
	describe("Configs for ips '127.0.0.1' are connection_creation_rate=10\nConfigs for default ips are connection_creation_rate=5\n",
		"--entity-type", "ips")
	describe("Configs for user-principal 'nobody' are \n", "--user", "nobody")

	alter("user-principal 'alice'", "--user", "alice", "--delete-config", "producer_byte_rate")
	wantNode(t, c, "/config/users/alice", `{"version":1,"config":{}}`)

	// DynamicConfig's validation.
	kc(t, 1, zkWarning, "requirement failed: Unknown Dynamic Configuration: HashSet(foo).\n",
		"--zookeeper", zkc, "--alter", "--client", "app-1", "--add-config", "foo=1")
	kc(t, 1, zkWarning, "requirement failed: Unknown Dynamic Configuration: HashSet(SCRAM-SHA-256).\n",
		"--zookeeper", zkc, "--alter", "--user", "alice", "--client", "app-1", "--add-config", "SCRAM-SHA-256=[password=x]")
	bad := []string{"--zookeeper", zkc, "--alter", "--client", "app-1", "--add-config", "producer_byte_rate=fast"}
	kc(t, 1, zkWarning, "Error while executing config command with args '"+strings.Join(bad, " ")+"'\n"+
		"org.apache.kafka.common.config.ConfigException: Invalid value fast for configuration producer_byte_rate: Not a number of type LONG\n", bad...)
	neg := []string{"--zookeeper", zkc, "--alter", "--ip", "127.0.0.1", "--add-config", "connection_creation_rate=-1"}
	kc(t, 1, zkWarning, "Error while executing config command with args '"+strings.Join(neg, " ")+"'\n"+
		"org.apache.kafka.common.config.ConfigException: Invalid value -1 for configuration connection_creation_rate: Value must be at least 0\n", neg...)
	kc(t, 1, zkWarning, "--entity-name or --entity-default must be specified with each --entity-type for --alter\n",
		"--zookeeper", zkc, "--alter", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--add-config", "producer_byte_rate=1")
	kc(t, 1, "", "The entity name for ips must be a valid IP or resolvable host, but it is: not-an-ip.invalid\n",
		"--zookeeper", zkc, "--alter", "--ip", "not-an-ip.invalid", "--add-config", "connection_creation_rate=1")
	// Never written: the pair's quotas live below the user.
	if _, _, err := c.ZK().Get("/config/clients/app-1"); !isNoNode(err) {
		t.Fatalf("/config/clients/app-1: %v", err)
	}
}

// TestQuotasBootstrap: --bootstrap-server sets and describes user, client,
// <user, client>, default and IP quotas through AlterClientQuotas and
// DescribeClientQuotas, with Kafka's lines (Double values, the admin
// client's entity order) and refusals; what the brokers store is Kafka's
// znode.
func TestQuotasBootstrap(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	bs := strings.Join(c.Bootstrap(), ",")
	if !clitest.Supports(t, c, 48) || !clitest.Supports(t, c, 49) {
		t.Fatal("the broker does not serve DescribeClientQuotas (48) and AlterClientQuotas (49)")
	}
	b := []string{"--bootstrap-server", bs}
	run := func(wantCode int, wantOut, wantErr string, args ...string) {
		t.Helper()
		kc(t, wantCode, wantOut, wantErr, append(slices.Clone(b), args...)...)
	}
	run(0, "Completed updating config for user alice.\n", "", "--alter", "--user", "alice", "--add-config", "producer_byte_rate=1024,consumer_byte_rate=10485760")
	wantNode(t, c, "/config/users/alice", `{"version":1,"config":{"producer_byte_rate":"1024","consumer_byte_rate":"10485760"}}`)
	run(0, "Quota configs for user-principal 'alice' are consumer_byte_rate=1.048576E7, producer_byte_rate=1024.0\n"+
		"Error retrieving SCRAM credential configs for user-principal 'alice': ResourceNotFoundException: Attempt to describe a user credential that does not exist: alice\n", "",
		"--describe", "--user", "alice")
	run(0, "Completed updating default config for users in the cluster.\n", "", "--alter", "--user-defaults", "--add-config", "request_percentage=12.5")
	run(0, "Quota configs for the default user-principal are request_percentage=12.5\n", "", "--describe", "--user-defaults")
	// --user and --client: the types are (clients, users) in Kafka's flag
	// order, so the client's name heads the message.
	run(0, "Completed updating config for client app-1.\n", "", "--alter", "--user", "alice", "--client", "app-1", "--add-config", "producer_byte_rate=2048")
	wantNode(t, c, "/config/users/alice/clients/app-1", `{"version":1,"config":{"producer_byte_rate":"2048"}}`)
	run(0, "Quota configs for user-principal 'alice', client-id 'app-1' are producer_byte_rate=2048.0\n", "",
		"--describe", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-name", "app-1")
	run(0, "Completed updating default config for clients in the cluster.\n", "", "--alter", "--client-defaults", "--add-config", "controller_mutation_rate=5")
	run(0, "Quota configs for the default client-id are controller_mutation_rate=5.0\n", "", "--describe", "--entity-type", "clients")
	run(0, "Completed updating config for ip 127.0.0.1.\n", "", "--alter", "--ip", "127.0.0.1", "--add-config", "connection_creation_rate=10")
	run(0, "Quota configs for ip '127.0.0.1' are connection_creation_rate=10.0\n", "", "--describe", "--ip", "127.0.0.1")
	run(0, "Completed updating config for user alice.\n", "", "--alter", "--user", "alice", "--delete-config", "consumer_byte_rate")
	// Every user entity: alice and the default user, in the admin
	// client's HashMap order, without SCRAM lines for the default.
	// ({user=alice} hashes to bucket 0 of the 4-slot table, {user=null}
	// to bucket 1.)
	run(0, "Quota configs for user-principal 'alice' are producer_byte_rate=1024.0\n"+
		"Quota configs for the default user-principal are request_percentage=12.5\n", "", "--describe", "--entity-type", "users")

	run(1, "", "Invalid config(s): consumer_byte_rate\n", "--alter", "--user", "alice", "--delete-config", "consumer_byte_rate")
	run(1, "", "Cannot parse quota configuration value for producer_byte_rate: fast\n", "--alter", "--user", "alice", "--add-config", "producer_byte_rate=fast")
	run(1, "", "Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server.\n",
		"--alter", "--user", "alice", "--add-config", "producer_byte_rate=1,SCRAM-SHA-256=[password=x]")
	run(1, "", "The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using --bootstrap-server.\n",
		"--alter", "--user-defaults", "--add-config", "SCRAM-SHA-256=[password=x]")
	run(1, "", "Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: Set(SCRAM-SHA-256)\n",
		"--alter", "--client", "app-1", "--add-config", "SCRAM-SHA-256=[password=x]")
	run(1, "", "Only connection quota configs can be added for 'ips' using --bootstrap-server. Unexpected config names: producer_byte_rate\n",
		"--alter", "--ip", "127.0.0.1", "--add-config", "producer_byte_rate=1")
}
