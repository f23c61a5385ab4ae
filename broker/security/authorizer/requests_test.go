package authorizer_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// metadataError asks broker i for the topic's metadata and returns the
// topic's error code.
func metadataError(t *testing.T, c *testcluster.Cluster, i int, topic string) int16 {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	req.Topics = []kmsg.MetadataRequestTopic{mt}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, c.Direct(i))
	if err != nil || len(resp.Topics) != 1 {
		return -100
	}
	return resp.Topics[0].ErrorCode
}

// An ACL written straight into ZooKeeper in Kafka's format, with its
// change node, changes what every broker answers a client within seconds,
// and deleting it gives the access back. The PLAINTEXT client (and the
// brokers between themselves) are User:ANONYMOUS; with
// allow.everyone.if.no.acl.found=true everything without ACLs is open, so
// an ACL for someone else on a topic closes that topic to ANONYMOUS.
func TestZooKeeperACLsGateRequestsOnEveryBroker(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Overrides: map[string]string{
		"authorizer.class.name":          "kafka.security.authorizer.AclAuthorizer",
		"allow.everyone.if.no.acl.found": "true",
	}})
	c.CreateTopic("orders", 2, 2, nil)
	c.WaitLeaders(20*time.Second, "orders", 2)
	produce := func() error {
		cl := c.Client(kgo.RecordRetries(1), kgo.RequestRetries(1))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("v")}).FirstErr()
	}
	if err := produce(); err != nil {
		t.Fatalf("produce before any ACL: %v", err)
	}
	z := c.ZK()
	if _, err := z.Create("/kafka-acl/Topic/orders", []byte(`{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"All","host":"*"}]}`), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := z.Create("/kafka-acl-changes/acl_changes_", []byte("Topic:orders"), zkclient.PersistentSequential); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < c.N(); i++ {
		c.WaitFor(10*time.Second, "TOPIC_AUTHORIZATION_FAILED from every broker", func() bool {
			return metadataError(t, c, i, "orders") == kerr.TopicAuthorizationFailed.Code
		})
	}
	if err := produce(); err == nil || !kerrIs(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce with alice's ACL: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	if err := z.Delete("/kafka-acl/Topic/orders", -1); err != nil {
		t.Fatal(err)
	}
	if _, err := z.Create("/kafka-acl-changes/acl_changes_", []byte("Topic:orders"), zkclient.PersistentSequential); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < c.N(); i++ {
		c.WaitFor(10*time.Second, "access back on every broker", func() bool { return metadataError(t, c, i, "orders") == 0 })
	}
	if err := produce(); err != nil {
		t.Fatalf("produce after the deletion: %v", err)
	}
}

func kerrIs(err, target error) bool { return errorsIs(err, target) }
