package authorizer_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/api"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

// aclCluster starts two brokers with Kafka's AclAuthorizer. The test's
// clients connect over PLAINTEXT as User:ANONYMOUS, which super.users
// makes a super user (it is also the brokers' own inter-broker identity);
// the questions under test are asked for other principals through each
// broker's authorizer.
func aclCluster(t *testing.T) *testcluster.Cluster {
	return testcluster.Start(t, testcluster.Options{Brokers: 2, Overrides: map[string]string{
		"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
		"super.users":           "User:ANONYMOUS",
	}})
}

// everyBroker waits until every broker of c answers the action with want.
func everyBroker(t *testing.T, c *testcluster.Cluster, act api.Action, want bool, what string) {
	t.Helper()
	c.WaitFor(10*time.Second, what, func() bool {
		for i := 0; i < c.N(); i++ {
			if c.Broker(i).Authorizer().Authorize(context.Background(), act) != want {
				return false
			}
		}
		return true
	})
}

// everyBrokerLists waits until every broker's cache holds n bindings.
func everyBrokerLists(t *testing.T, c *testcluster.Cluster, n int) {
	t.Helper()
	c.WaitFor(10*time.Second, "every broker listing the ACLs", func() bool {
		for i := 0; i < c.N(); i++ {
			if len(c.Broker(i).Authorizer().ACLs(security.AnyACL)) != n {
				return false
			}
		}
		return true
	})
}

func topicAction(principal string, op kmsg.ACLOperation, name string) api.Action {
	return api.Action{Principal: principal, Host: "127.0.0.1", Operation: op, ResourceType: kmsg.ACLResourceTypeTopic, Name: name}
}

// "A credential or ACL written straight into ZooKeeper in Kafka's format
// (with its change node) takes effect on every broker within seconds;
// deleting it revokes access": the nodes below are byte for byte what
// Kafka 2.8's AclAuthorizer writes.
func TestACLsWrittenInZooKeeperReachEveryBroker(t *testing.T) {
	c := aclCluster(t)
	z := c.ZK()
	mustCreate := func(p, data string, flags int32) {
		t.Helper()
		if _, err := z.Create(p, []byte(data), flags); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	aliceRead := topicAction("User:alice", kmsg.ACLOperationRead, "orders")
	everyBroker(t, c, aliceRead, false, "alice denied before any ACL")

	mustCreate("/kafka-acl/Topic/orders", `{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}`, 0)
	mustCreate("/kafka-acl-changes/acl_changes_", "Topic:orders", zkclient.PersistentSequential)
	everyBroker(t, c, aliceRead, true, "alice's literal Read ACL on every broker")
	everyBroker(t, c, topicAction("User:alice", kmsg.ACLOperationDescribe, "orders"), true, "Read implying Describe")
	everyBroker(t, c, topicAction("User:alice", kmsg.ACLOperationWrite, "orders"), false, "no Write")

	mustCreate("/kafka-acl-extended/prefixed/Group/app-", `{"version":1,"acls":[{"principal":"User:*","permissionType":"Allow","operation":"Read","host":"*"}]}`, 0)
	mustCreate("/kafka-acl-extended-changes/acl_changes_", `{"version":1,"resourceType":"GROUP","name":"app-","patternType":"PREFIXED"}`, zkclient.PersistentSequential)
	groupRead := api.Action{Principal: "User:bob", Host: "10.1.2.3", Operation: kmsg.ACLOperationRead, ResourceType: kmsg.ACLResourceTypeGroup, Name: "app-billing"}
	everyBroker(t, c, groupRead, true, "the prefixed group ACL on every broker")

	// A Deny added beside the Allow wins.
	if _, err := z.Set("/kafka-acl/Topic/orders", []byte(`{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"},`+
		`{"principal":"User:alice","permissionType":"Deny","operation":"Read","host":"127.0.0.1"}]}`), -1); err != nil {
		t.Fatal(err)
	}
	mustCreate("/kafka-acl-changes/acl_changes_", "TOPIC:orders", zkclient.PersistentSequential)
	everyBroker(t, c, aliceRead, false, "the Deny from 127.0.0.1 on every broker")

	if err := z.Delete("/kafka-acl/Topic/orders", -1); err != nil {
		t.Fatal(err)
	}
	mustCreate("/kafka-acl-changes/acl_changes_", "Topic:orders", zkclient.PersistentSequential)
	everyBroker(t, c, topicAction("User:alice", kmsg.ACLOperationDescribe, "orders"), false, "revoked after the node's deletion")

	// A restarted broker loads what is stored.
	c.RestartBroker(1)
	everyBroker(t, c, groupRead, true, "the prefixed ACL after a restart")
}

// CreateAcls, DescribeAcls and DeleteAcls through franz-go's kadm: the
// ACLs land in ZooKeeper in Kafka's JSON with a change node, reach the
// other broker, and are removed again.
func TestACLAPIsWithKadm(t *testing.T) {
	c := aclCluster(t)
	adm := c.Admin()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	b := kadm.NewACLs().Topics("logs").Allow("User:bob").AllowHosts("*").Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral)
	res, err := adm.CreateACLs(ctx, b)
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("create: %+v %v", res, err)
	}
	data, _, err := c.ZK().Get("/kafka-acl/Topic/logs")
	if want := `{"version":1,"acls":[{"principal":"User:bob","permissionType":"Allow","operation":"Write","host":"*"}]}`; err != nil || string(data) != want {
		t.Fatalf("znode %q %v, want %s", data, err, want)
	}
	kids, err := c.ZK().Children("/kafka-acl-changes")
	if err != nil || len(kids) == 0 {
		t.Fatalf("no change node: %v %v", kids, err)
	}
	last, _, _ := c.ZK().Get("/kafka-acl-changes/" + kids[len(kids)-1])
	if string(last) != "TOPIC:logs" {
		t.Fatalf("change node %q", last)
	}
	everyBroker(t, c, topicAction("User:bob", kmsg.ACLOperationWrite, "logs"), true, "bob's Write on every broker")

	pre := kadm.NewACLs().Topics("logs-").Deny("User:bob").DenyHosts("*").Operations(kadm.OpAll).ResourcePatternType(kadm.ACLPatternPrefixed)
	if res, err := adm.CreateACLs(ctx, pre); err != nil || res[0].Err != nil {
		t.Fatalf("create prefixed: %+v %v", res, err)
	}
	if data, _, err := c.ZK().Get("/kafka-acl-extended/prefixed/Topic/logs-"); err != nil ||
		string(data) != `{"version":1,"acls":[{"principal":"User:bob","permissionType":"Deny","operation":"All","host":"*"}]}` {
		t.Fatalf("prefixed znode %q %v", data, err)
	}
	everyBrokerLists(t, c, 2)
	everyBroker(t, c, topicAction("User:bob", kmsg.ACLOperationWrite, "logs-eu"), false, "the prefixed Deny")

	match := kadm.NewACLs().Topics("logs-eu").ResourcePatternType(kadm.ACLPatternMatch).Operations().Allow().AllowHosts().Deny().DenyHosts()
	desc, err := adm.DescribeACLs(ctx, match)
	if err != nil || len(desc) != 1 || desc[0].Err != nil || len(desc[0].Described) != 1 || desc[0].Described[0].Name != "logs-" {
		t.Fatalf("describe match: %+v %v", desc, err)
	}
	all, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).Operations().Allow().AllowHosts().Deny().DenyHosts())
	if err != nil || len(all) != 1 || len(all[0].Described) != 2 {
		t.Fatalf("describe any: %+v %v", all, err)
	}

	del, err := adm.DeleteACLs(ctx, kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).Operations().Allow().AllowHosts().Deny().DenyHosts())
	if err != nil || len(del) != 1 || del[0].Err != nil || len(del[0].Deleted) != 2 {
		t.Fatalf("delete: %+v %v", del, err)
	}
	for _, p := range []string{"/kafka-acl/Topic/logs", "/kafka-acl-extended/prefixed/Topic/logs-"} {
		if _, _, err := c.ZK().Get(p); err == nil || !isNoNode(err) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
	everyBroker(t, c, topicAction("User:bob", kmsg.ACLOperationWrite, "logs"), false, "bob revoked on every broker")
}

func isNoNode(err error) bool { return err != nil && errorsIs(err, zk.ErrNoNode) }

var errorsIs = errors.Is
