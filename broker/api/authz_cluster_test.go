package api_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/klassik/klassik/broker/api"
	"github.com/klassik/klassik/broker/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

const anonymous = "User:ANONYMOUS"

// aclTestCluster starts two brokers with Kafka's AclAuthorizer and gives
// them the ACLs the test checks the request path against.
//
// Principals: without SASL every PLAINTEXT connection is User:ANONYMOUS —
// the test's clients and the brokers' own inter-broker connections alike
// (principals belong to connections, and PLAINTEXT has no way to tell a
// broker from a client). Making ANONYMOUS a super user would switch the
// authorizer off for the clients too, so instead the cluster runs with
// allow.everyone.if.no.acl.found=true and ACLs only on the resources under
// test:
//   - topics and groups prefixed "secret" have an Allow for User:alice
//     only, so ANONYMOUS is denied everything on them, while "open"
//     resources, which have no ACL, stay allowed;
//   - the Cluster has Allows for ANONYMOUS of ClusterAction (which the
//     brokers' LeaderAndIsr, UpdateMetadata, StopReplica, ControlledShutdown
//     and replica fetches need — replication of the RF=2 topic below shows
//     they pass on ACLs, not on a super user), Describe and IdempotentWrite
//     (the idempotent producer's InitProducerId), and nothing else, so
//     Create, Alter, DescribeConfigs and AlterConfigs on the Cluster are
//     denied to everybody: topics are created on the topic's own Create,
//     which only the "open" ones grant (no ACL).
//
// The ClusterAction denials themselves are checked at unit level
// (TestAuthorizeInterBrokerRequests), since a cluster denied them cannot
// run.
func aclTestCluster(t *testing.T) (*testcluster.Cluster, *kadm.Client) {
	t.Helper()
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Overrides: map[string]string{
		"authorizer.class.name":          "kafka.security.authorizer.AclAuthorizer",
		"allow.everyone.if.no.acl.found": "true",
	}})
	adm := c.Admin()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c.CreateTopic("open", 1, 2, nil)
	c.CreateTopic("secret", 1, 2, nil)
	// The Cluster ACLs come last: once the Cluster has any, CreateAcls
	// (Alter on the Cluster) is denied.
	for _, b := range []*kadm.ACLBuilder{
		kadm.NewACLs().Topics("secret").Groups("secret").ResourcePatternType(kadm.ACLPatternPrefixed).
			Allow("User:alice").AllowHosts("*").Operations(kadm.OpAll),
		kadm.NewACLs().Clusters().ResourcePatternType(kadm.ACLPatternLiteral).Allow(anonymous).AllowHosts("*").
			Operations(kadm.OpClusterAction, kadm.OpDescribe, kadm.OpIdempotentWrite),
	} {
		res, err := adm.CreateACLs(ctx, b)
		if err != nil {
			t.Fatalf("creating ACLs: %v", err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("creating ACL %+v: %v", r, r.Err)
			}
		}
	}
	// Every broker has the literal ACLs once Alter on the Cluster is
	// refused everywhere (ElectLeaders is answered by the broker it is sent
	// to; literal changes are applied in order).
	c.WaitFor(20*time.Second, "every broker applying the cluster ACLs", func() bool {
		for i := 0; i < c.N(); i++ {
			req := kmsg.NewPtrElectLeadersRequest()
			req.Version = 2
			resp, err := req.RequestWith(ctx, c.Direct(i))
			if err != nil || resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
				return false
			}
			// The prefixed ACLs come through the other change folder,
			// so their arrival is checked on its own.
			for _, act := range []api.Action{
				{Principal: "User:alice", Host: "127.0.0.1", Operation: kmsg.ACLOperationRead, ResourceType: kmsg.ACLResourceTypeTopic, Name: "secret"},
				{Principal: "User:alice", Host: "127.0.0.1", Operation: kmsg.ACLOperationRead, ResourceType: kmsg.ACLResourceTypeGroup, Name: "secret-group"},
			} {
				if !c.Broker(i).Authorizer().Authorize(ctx, act) {
					return false
				}
			}
		}
		return true
	})
	return c, adm
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v", what, err, want)
	}
}

// TestACLsOnTheRequestPath checks each API family against a real 2-broker
// cluster with Kafka's AclAuthorizer, through franz-go's clients: what is
// allowed works, what is denied answers Kafka's error code, and Metadata
// does not disclose the denied topic.
func TestACLsOnTheRequestPath(t *testing.T) {
	c, adm := aclTestCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// Produce and consume: the RF=2 topic is replicated by follower
	// fetches that pass on the ClusterAction ACL; acks=all waits for them.
	cl := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ConsumeTopics("open"), kgo.ConsumerGroup("open-group"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "open", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce to the open topic: %v", err)
	}
	fs := cl.PollRecords(ctx, 1)
	if errs := fs.Errors(); len(errs) > 0 || fs.NumRecords() != 1 {
		t.Fatalf("consume the open topic in a group: %v, %d records", errs, fs.NumRecords())
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit in the open group: %v", err)
	}
	denied := c.Client(kgo.RecordRetries(1), kgo.UnknownTopicRetries(1))
	wantErr(t, "produce to the secret topic", denied.ProduceSync(ctx, &kgo.Record{Topic: "secret", Value: []byte("v")}).FirstErr(),
		kerr.TopicAuthorizationFailed)

	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version, fetch.ReplicaID, fetch.MaxBytes = 12, -1, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "secret"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = []kmsg.FetchRequestTopicPartition{fp}
	fetch.Topics = []kmsg.FetchRequestTopic{ft}
	for i := 0; i < c.N(); i++ {
		// A v13 fetch names topics by id, which Metadata did not disclose:
		// a client of Kafka 2.8's versions asks by name.
		broker := c.Client(kgo.SeedBrokers(c.Addr(i)), kgo.MaxVersions(kversion.V2_8_0())).SeedBrokers()[0]
		resp, err := fetch.RequestWith(ctx, broker)
		if err != nil || len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
			t.Errorf("fetch of the secret topic from broker %d: %+v %v", c.BrokerID(i), resp, err)
		}
	}
	// kadm asks Metadata first, which already refuses the topic.
	offs, err := adm.ListEndOffsets(ctx, "secret")
	if err == nil {
		err = offs.Error()
	}
	wantErr(t, "ListOffsets of the secret topic", err, kerr.TopicAuthorizationFailed)
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "secret", Partitions: []kmsg.ListOffsetsRequestTopicPartition{kmsg.NewListOffsetsRequestTopicPartition()}}}
	if resp, err := lo.RequestWith(ctx, c.Direct(0)); err != nil || resp.Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("ListOffsets of the secret topic, sent directly: %+v %v", resp, err)
	}

	// Metadata: the secret topic is hidden from the listing and refused by
	// name; the open one carries every topic operation (no ACL on it);
	// DescribeCluster reports the three cluster operations granted.
	md := kmsg.NewPtrMetadataRequest()
	md.IncludeTopicAuthorizedOperations = true
	all, err := md.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range all.Topics {
		if *tp.Topic == "secret" {
			t.Error("the secret topic is listed")
		}
		if *tp.Topic == "open" && tp.AuthorizedOperations != 0xdf8 {
			t.Errorf("open topic operations %#x, want every topic operation 0xdf8", tp.AuthorizedOperations)
		}
	}
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.IncludeClusterAuthorizedOperations = true
	want := int32(1<<kmsg.ACLOperationClusterAction | 1<<kmsg.ACLOperationDescribe | 1<<kmsg.ACLOperationIdempotentWrite)
	if resp, err := dc.RequestWith(ctx, cl); err != nil || resp.ClusterAuthorizedOperations != want {
		t.Errorf("cluster operations %+v %v, want %#x", resp, err, want)
	}
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("secret")}}
	named, err := md.RequestWith(ctx, cl)
	if err != nil || len(named.Topics) != 1 || named.Topics[0].ErrorCode != kerr.TopicAuthorizationFailed.Code ||
		len(named.Topics[0].Partitions) != 0 || named.Topics[0].TopicID != [16]byte{} {
		t.Errorf("metadata of the secret topic by name: %+v %v", named, err)
	}

	// Groups: the secret group is refused at FindCoordinator and by the
	// coordinator's APIs.
	dg, err := adm.DescribeGroups(ctx, "secret-group")
	if err == nil {
		err = dg["secret-group"].Err
	}
	wantErr(t, "describe the secret group", err, kerr.GroupAuthorizationFailed)
	if dg, err := adm.DescribeGroups(ctx, "open-group"); err != nil || dg["open-group"].Err != nil || dg["open-group"].State != "Stable" {
		t.Errorf("describe the open group: %+v %v", dg, err)
	}
	_, err = adm.CommitOffsets(ctx, "secret-group", kadm.OffsetsFromRecords(kgo.Record{Topic: "open", Partition: 0, Offset: 0}))
	wantErr(t, "commit in the secret group", err, kerr.GroupAuthorizationFailed)
	ocr := kmsg.NewPtrOffsetCommitRequest()
	ocr.Group, ocr.Generation = "open-group-2", -1
	ocr.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "secret", Partitions: []kmsg.OffsetCommitRequestTopicPartition{kmsg.NewOffsetCommitRequestTopicPartition()}}}
	if resp, err := ocr.RequestWith(ctx, cl); err != nil || resp.Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("commit an offset of the secret topic: %+v %v", resp, err)
	}

	// Topic administration.
	ct, err := adm.CreateTopic(ctx, 1, 1, nil, "secret-new")
	if err == nil {
		err = ct.Err
	}
	wantErr(t, "create a secret topic", err, kerr.TopicAuthorizationFailed)
	if ct, err := adm.CreateTopic(ctx, 1, 1, nil, "open-new"); err != nil || ct.Err != nil {
		t.Errorf("create an open topic (no ACL on it): %v %v", err, ct.Err)
	}
	cpr := kmsg.NewPtrCreatePartitionsRequest()
	cpr.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "secret", Count: 2}}
	if resp, err := cpr.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("add partitions to the secret topic: %+v %v", resp, err)
	}
	dtr := kmsg.NewPtrDeleteTopicsRequest()
	dtr.Version, dtr.TopicNames = 5, []string{"secret"}
	dtr.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: kmsg.StringPtr("secret")}}
	if resp, err := dtr.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("delete the secret topic: %+v %v", resp, err)
	}
	dcr := kmsg.NewPtrDescribeConfigsRequest()
	for _, name := range []string{"secret", "open"} {
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, name
		dcr.Resources = append(dcr.Resources, rr)
	}
	if resp, err := dcr.RequestWith(ctx, c.Direct(0)); err != nil || len(resp.Resources) != 2 ||
		resp.Resources[0].ErrorCode != kerr.TopicAuthorizationFailed.Code || resp.Resources[1].ErrorCode != 0 {
		t.Errorf("describe the configs of the secret and the open topic: %+v %v", resp, err)
	}
	bc, err := adm.DescribeBrokerConfigs(ctx, c.BrokerID(0))
	if err == nil && len(bc) == 1 {
		err = bc[0].Err
	}
	wantErr(t, "describe a broker's configs without DescribeConfigs on the cluster", err, kerr.ClusterAuthorizationFailed)

	// Cluster operations: Alter is not granted.
	apa := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	apa.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: "open",
		Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{{Partition: 0, Replicas: []int32{c.BrokerID(0)}}}}}
	if resp, err := apa.RequestWith(ctx, cl); err != nil || resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("reassign without Alter on the cluster: %+v %v", resp, err)
	}
}

// TestACLsForSASLPrincipals: the same request path with principals that
// differ per connection. The brokers talk to each other on the PLAINTEXT
// listener as User:ANONYMOUS, a super user (so the inter-broker requests
// pass without ACLs — which also means any client of that listener would
// be one: the test's clients use only the SASL_PLAINTEXT listener, as a
// secured deployment would expose only that one). On SASL_PLAINTEXT, PLAIN
// authenticates User:alice, granted Write and Read on topic "orders" and
// Read on group "billing", and User:bob, granted nothing.
func TestACLsForSASLPrincipals(t *testing.T) {
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" ` +
		`user_alice="alice-secret" user_bob="bob-secret";`
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Overrides: map[string]string{
		"listeners":               "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms": "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas,
		"authorizer.class.name":                               "kafka.security.authorizer.AclAuthorizer",
		"super.users":                                         anonymous,
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c.CreateTopic("orders", 1, 2, nil)
	adm := c.Admin() // PLAINTEXT: the super user sets the ACLs up
	for _, b := range []*kadm.ACLBuilder{
		kadm.NewACLs().Topics("orders").Allow("User:alice").AllowHosts("*").Operations(kadm.OpWrite, kadm.OpRead).
			ResourcePatternType(kadm.ACLPatternLiteral),
		kadm.NewACLs().Groups("billing").Allow("User:alice").AllowHosts("*").Operations(kadm.OpRead).
			ResourcePatternType(kadm.ACLPatternLiteral),
	} {
		res, err := adm.CreateACLs(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("creating ACL %+v: %v", r, r.Err)
			}
		}
	}
	var saslAddrs []string
	for i := 0; i < c.N(); i++ {
		a := c.Broker(i).BoundAddr("SASL_PLAINTEXT")
		if a == nil {
			t.Fatalf("broker %d has no SASL_PLAINTEXT listener", c.BrokerID(i))
		}
		saslAddrs = append(saslAddrs, a.String())
	}
	as := func(user string, opts ...kgo.Opt) *kgo.Client {
		return c.Client(append([]kgo.Opt{kgo.SeedBrokers(saslAddrs...),
			kgo.SASL(plain.Auth{User: user, Pass: user + "-secret"}.AsMechanism())}, opts...)...)
	}
	// The ACLs reach both brokers through their change notifications, one
	// per resource: wait for the topic's and the group's on every broker.
	c.WaitFor(20*time.Second, "alice's Write on orders and Read on billing on every broker", func() bool {
		for i := 0; i < c.N(); i++ {
			for _, act := range []api.Action{
				{Principal: "User:alice", Host: "127.0.0.1", Operation: kmsg.ACLOperationWrite, ResourceType: kmsg.ACLResourceTypeTopic, Name: "orders"},
				{Principal: "User:alice", Host: "127.0.0.1", Operation: kmsg.ACLOperationRead, ResourceType: kmsg.ACLResourceTypeGroup, Name: "billing"},
			} {
				if !c.Broker(i).Authorizer().Authorize(ctx, act) {
					return false
				}
			}
		}
		return true
	})

	alice := as("alice", kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("billing"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("o-1")}).FirstErr(); err != nil {
		t.Fatalf("alice produces: %v", err)
	}
	if fs := alice.PollRecords(ctx, 1); len(fs.Errors()) > 0 || fs.NumRecords() != 1 {
		t.Fatalf("alice consumes in group billing: %v, %d records", fs.Errors(), fs.NumRecords())
	}
	if err := alice.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("alice commits: %v", err)
	}
	// Describe is implied by Read and Write: alice sees the topic.
	bob := as("bob", kgo.RecordRetries(1), kgo.UnknownTopicRetries(1))
	md := kmsg.NewPtrMetadataRequest()
	for _, who := range []struct {
		cl   *kgo.Client
		name string
		sees bool
	}{{alice, "alice", true}, {bob, "bob", false}} {
		resp, err := md.RequestWith(ctx, who.cl)
		if err != nil {
			t.Fatal(err)
		}
		sees := false
		for _, tp := range resp.Topics {
			sees = sees || *tp.Topic == "orders"
		}
		if sees != who.sees {
			t.Errorf("%s sees orders in the topic listing: %v, want %v", who.name, sees, who.sees)
		}
	}
	wantErr(t, "bob produces", bob.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("b")}).FirstErr(), kerr.TopicAuthorizationFailed)
	bobAdm := kadm.NewClient(bob)
	dg, err := bobAdm.DescribeGroups(ctx, "billing")
	if err == nil {
		err = dg["billing"].Err
	}
	wantErr(t, "bob describes group billing", err, kerr.GroupAuthorizationFailed)
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = "billing", "consumer", 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{}}}
	// kgo sends group requests to the coordinator after FindCoordinator,
	// which already refuses bob (Describe on the group).
	_, err = join.RequestWith(ctx, bob)
	wantErr(t, "bob joins group billing", err, kerr.GroupAuthorizationFailed)
	el := kmsg.NewPtrElectLeadersRequest()
	if resp, err := el.RequestWith(ctx, bob); err != nil || resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("bob elects leaders: %+v %v", resp, err)
	}

	// The inter-broker requests, sent by a client that is no broker, need
	// ClusterAction: refused on each broker, whose own traffic on
	// PLAINTEXT keeps replicating (alice's acks=all produce above).
	caf := kerr.ClusterAuthorizationFailed.Code
	for i := 0; i < c.N(); i++ {
		direct := as("bob", kgo.SeedBrokers(saslAddrs[i])).SeedBrokers()[0]
		um := kmsg.NewPtrUpdateMetadataRequest()
		um.ControllerID, um.BrokerEpoch = c.BrokerID(i), -1
		if resp, err := um.RequestWith(ctx, direct); err != nil || resp.ErrorCode != caf {
			t.Errorf("bob's UpdateMetadata to broker %d: %+v %v", c.BrokerID(i), resp, err)
		}
		lai := kmsg.NewPtrLeaderAndISRRequest()
		lai.BrokerEpoch = -1
		if resp, err := lai.RequestWith(ctx, direct); err != nil || resp.ErrorCode != caf {
			t.Errorf("bob's LeaderAndIsr to broker %d: %+v %v", c.BrokerID(i), resp, err)
		}
		sr := kmsg.NewPtrStopReplicaRequest()
		sr.BrokerEpoch = -1
		sr.Topics = []kmsg.StopReplicaRequestTopic{{Topic: "orders", Partition: 0, Partitions: []int32{0},
			PartitionStates: []kmsg.StopReplicaRequestTopicPartitionState{{Partition: 0, LeaderEpoch: -1, Delete: true}}}}
		if resp, err := sr.RequestWith(ctx, direct); err != nil || resp.ErrorCode != caf {
			t.Errorf("bob's StopReplica to broker %d: %+v %v", c.BrokerID(i), resp, err)
		}
		cs := kmsg.NewPtrControlledShutdownRequest()
		cs.BrokerID, cs.BrokerEpoch = c.BrokerID(i), -1
		if resp, err := cs.RequestWith(ctx, direct); err != nil || resp.ErrorCode != caf {
			t.Errorf("bob's ControlledShutdown at broker %d: %+v %v", c.BrokerID(i), resp, err)
		}
		f := kmsg.NewPtrFetchRequest()
		f.ReplicaID, f.MaxBytes = c.BrokerID(1-i), 1<<20
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.PartitionMaxBytes = 1 << 20
		f.Topics = []kmsg.FetchRequestTopic{{Topic: "orders", Partitions: []kmsg.FetchRequestTopicPartition{fp}}}
		direct28 := as("bob", kgo.SeedBrokers(saslAddrs[i]), kgo.MaxVersions(kversion.V2_8_0())).SeedBrokers()[0]
		if resp, err := f.RequestWith(ctx, direct28); err != nil || len(resp.Topics) != 1 ||
			resp.Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code || len(resp.Topics[0].Partitions[0].RecordBatches) != 0 {
			t.Errorf("bob's follower fetch from broker %d: %+v %v", c.BrokerID(i), resp, err)
		}
	}
	// Nothing of that reached a broker: orders still has both replicas in
	// sync and its record.
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("o-2")}).FirstErr(); err != nil {
		t.Fatalf("alice produces after bob's requests: %v", err)
	}
}
