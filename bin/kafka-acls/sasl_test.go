package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
)

// The operator's path with authenticated principals: a broker with a
// SASL_PLAINTEXT listener (PLAIN users alice and bob) and the
// AclAuthorizer; kafka-acls.sh --producer / --consumer for alice, after
// which alice produces and consumes in her group while bob is refused with
// TOPIC_AUTHORIZATION_FAILED; --remove takes alice's access away again.
func TestProducerConsumerACLsForSASLUsers(t *testing.T) {
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" ` +
		`user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";`
	c := clitest.StartWithTopic(t, testcluster.Options{Brokers: 1, Overrides: map[string]string{
		"listeners":               "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms": "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas,
		"authorizer.class.name":                               "kafka.security.authorizer.AclAuthorizer",
		"super.users":                                         "User:ANONYMOUS;User:admin", // the PLAINTEXT side (inter-broker, this test's admin) and admin
		"group.initial.rebalance.delay.ms":                    "0",
	}}, "orders", 1, 1)
	saslAddr := c.Broker(0).BoundAddr("SASL_PLAINTEXT").String()
	as := func(user string, opts ...kgo.Opt) *kgo.Client {
		return (&testcluster.Clients{}).New(t, "sasl-"+user, []string{saslAddr}, append([]kgo.Opt{
			kgo.SASL(plain.Auth{User: user, Pass: user + "-secret"}.AsMechanism()), kgo.RequestRetries(2), kgo.RecordRetries(2)}, opts...)...)
	}
	produce := func(user string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return as(user).ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("from " + user)}).FirstErr()
	}
	if err := produce("alice"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice before any ACL: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	zk := []string{"--authorizer-properties", "zookeeper.connect=" + c.ZKConnect()}
	if out, _, code := clitest.Script(t, nil, "kafka-acls.sh", append(zk, "--add", "--producer", "--allow-principal", "User:alice", "--topic", "orders")...); code != 0 ||
		!strings.Contains(out, "(principal=User:alice, host=*, operation=CREATE, permissionType=ALLOW)") {
		t.Fatalf("add producer: exit %d\n%s", code, out)
	}
	testcluster.Poll(10*time.Second, func() bool { return produce("alice") == nil })
	if err := produce("alice"); err != nil {
		t.Fatalf("alice with the producer ACLs: %v", err)
	}
	if err := produce("bob"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("bob: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	// The admin mode over the SASL listener with a --command-config, as
	// the operator's own super user; bob may not even list.
	clientConfig := func(user string) string {
		return clitest.WriteFile(t, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"+
			`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="`+user+`" password="`+user+`-secret";`+"\n")
	}
	if out, _, code := clitest.Script(t, nil, "kafka-acls.sh", "--bootstrap-server", saslAddr, "--command-config", clientConfig("admin"),
		"--add", "--consumer", "--allow-principal", "User:alice", "--topic", "orders", "--group", "billing"); code != 0 {
		t.Fatalf("add consumer: exit %d\n%s", code, out)
	}
	out, _, code := clitest.Script(t, nil, "kafka-acls.sh", "--bootstrap-server", saslAddr, "--command-config", clientConfig("bob"), "--list")
	if code != 1 || !strings.HasPrefix(out, "Error while executing ACL command: org.apache.kafka.common.errors.ClusterAuthorizationException") {
		t.Fatalf("bob listing: exit %d %q", code, out)
	}
	consume := as("alice", kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("billing"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []string
	var lastErrs []kgo.FetchError
	for len(got) == 0 && ctx.Err() == nil {
		fs := consume.PollFetches(ctx)
		if errs := fs.Errors(); len(errs) > 0 {
			lastErrs = errs // the coordinator may still be starting: keep polling
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if len(got) == 0 || got[0] != "from alice" {
		t.Fatalf("alice consumed %v (last errors %v)", got, lastErrs)
	}
	consume.Close()

	if _, _, code := clitest.Script(t, nil, "kafka-acls.sh", append(zk, "--remove", "--force", "--topic", "orders")...); code != 0 {
		t.Fatalf("remove: exit %d", code)
	}
	if !testcluster.Poll(10*time.Second, func() bool { return errors.Is(produce("alice"), kerr.TopicAuthorizationFailed) }) {
		t.Fatal("alice still produces after the topic's ACLs were removed")
	}
}
