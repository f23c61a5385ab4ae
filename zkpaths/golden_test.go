package zkpaths

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
)

const goldenDir = "../testdata/znodes"

func golden(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatalf("golden %s: %v", name, err)
	}
	return b
}

func checkBytes(t *testing.T, name string, got []byte) {
	t.Helper()
	want := golden(t, name)
	if !bytes.Equal(got, want) {
		t.Errorf("%s:\n got %s\nwant %s", name, got, want)
	}
}

// TestGoldenEncodings: every encoder must reproduce the spec's example bytes
// exactly ("a zkCli dump of our tree should be indistinguishable").
func TestGoldenEncodings(t *testing.T) {
	tid := "ztFyzQr5QwmEYeGhG6khTg"
	ts := time.UnixMilli(1700000000456)
	cases := []struct {
		file string
		enc  []byte
	}{
		{"cluster_id.json", EncodeClusterID("Q_GMoIqHRKSIGmdv25xi7Q")},
		{"controller_v2.json", EncodeController(1, ts)},
		{"controller_v1.json", ControllerInfo{Version: 1, BrokerID: 1, Timestamp: 1700000000456}.Encode()},
		{"controller_epoch.txt", EncodeControllerEpoch(1)},
		{"broker_v5.json", BrokerInfo{ID: 1, Version: 5, JMXPort: -1, Timestamp: 1700000000123,
			Endpoints: []EndPoint{{"PLAINTEXT", "kafka-1.example.com", 9092, "PLAINTEXT"}}}.Encode()},
		{"broker_v5_two_listeners_rack.json", BrokerInfo{ID: 1, Version: 5, JMXPort: 9999, Timestamp: 1700000000123, Rack: "rack-a",
			Endpoints: []EndPoint{{"INTERNAL", "kafka-1.internal", 9092, "PLAINTEXT"}, {"EXTERNAL", "kafka-1.example.com", 9094, "SASL_SSL"}}}.Encode()},
		{"broker_v5_no_plaintext.json", BrokerInfo{ID: 1, JMXPort: -1, Timestamp: 1700000000123,
			Endpoints: []EndPoint{{"SSL", "kafka-1.example.com", 9093, "SSL"}}}.Encode()},
		{"broker_v4.json", BrokerInfo{ID: 1, Version: 4, JMXPort: -1, Timestamp: 1700000000123, Rack: "rack-a",
			Endpoints: []EndPoint{{"PLAINTEXT", "kafka-1", 9092, "PLAINTEXT"}}}.Encode()},
		{"topic_v3.json", TopicAssignment{Partitions: map[int32][]int32{0: {1, 2, 3}, 1: {2, 3, 1}, 2: {3, 1, 2}}, TopicID: tid}.Encode()},
		{"topic_v3_no_id.json", TopicAssignment{Partitions: map[int32][]int32{0: {1, 2, 3}}}.Encode()},
		{"topic_v3_reassigning.json", TopicAssignment{Partitions: map[int32][]int32{0: {4, 2, 5, 1, 3}, 1: {2, 3, 1}, 2: {3, 1, 2}},
			Adding: map[int32][]int32{0: {4, 5}, 1: {}}, Removing: map[int32][]int32{0: {1, 3}}, TopicID: tid}.Encode()},
		{"topic_v1.json", TopicAssignment{Version: 1, Partitions: map[int32][]int32{0: {1, 2, 3}}}.Encode()},
		{"state.json", LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2, 3}, ControllerEpoch: 1, ZkVersion: 7}.Encode()},
		{"state_recovering.json", LeaderAndIsr{Leader: 2, LeaderEpoch: 5, ISR: []int32{2}, ControllerEpoch: 3, LeaderRecoveryState: LeaderRecovering}.Encode()},
		{"state_offline.json", LeaderAndIsr{Leader: NoLeader, LeaderEpoch: 4, ISR: []int32{3}, ControllerEpoch: 2}.Encode()},
		{"reassign_partitions.json", EncodeReassignment([]PartitionReplicas{{"orders", 0, []int32{4, 5, 6}}})},
		{"preferred_replica_election.json", EncodePreferredReplicaElection([]common.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}})},
		{"isr_change_notification.json", EncodeIsrChangeNotification([]common.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 2}})},
		{"log_dir_event_notification.json", EncodeLogDirEventNotification(2)},
		{"config_empty.json", EncodeEntityConfig(nil)},
		{"config_topic.json", EncodeEntityConfig(map[string]string{"retention.ms": "604800000", "max.message.bytes": "2097152"})},
		{"config_consumer_offsets.json", EncodeEntityConfig(map[string]string{"segment.bytes": "104857600", "cleanup.policy": "compact", "compression.type": "producer"})},
		{"config_user_quota.json", EncodeEntityConfig(map[string]string{"consumer_byte_rate": "2097152", "producer_byte_rate": "1048576"})},
		{"config_change_v2.json", EncodeConfigChangeNotification(ConfigEntityPath(ConfigTypeTopic, "orders"))},
		{"config_user_scram.json", goldenUserConfig.Encode()},
		{"config_change_user.json", EncodeConfigChangeNotification(UserEntityPath("alice@example.com"))},
		{"producer_id_block.json", ProducerIDBlock{BrokerID: 2, BlockStart: 3000, BlockEnd: 3999}.Encode()},
		{"feature_v2.json", FeatureZNode{Version: 2, Status: FeatureStatusEnabled}.Encode()},
		{"feature_v1.json", FeatureZNode{Version: 1, Status: FeatureStatusEnabled}.Encode()},
		{"feature_v2_with_feature.json", FeatureZNode{Status: FeatureStatusEnabled, Features: map[string]int16{"example.feature": 2}}.Encode()},
		{"acls.json", EncodeACLs([]ACLEntry{{"User:alice", "Allow", "Read", "*"}, {"User:bob", "Deny", "Write", "10.0.0.5"}})},
		{"consumer_registration.json", ConsumerRegistration{Subscription: map[string]int{"orders": 2}, Pattern: "static", Timestamp: 1500000000000}.Encode()},
		{"consumer_offset.txt", EncodeConsumerOffset(42)},
		{"acl_literal_change.txt", EncodeLiteralACLChange("Topic", "orders")},
		{"acl_extended_change.json", ExtendedACLChange{"TOPIC", "orders-", "PREFIXED"}.Encode()},
		{"delegation_token_v3.json", DelegationToken{TokenID: "DC2ExMXGSnmk8xyeQwNO4Q", Owner: Sanitize("User:alice"), TokenRequester: "User%3Aalice",
			Renewers: []string{"User%3Abob"}, IssueTimestamp: 1700000000000, ExpiryTimestamp: 1700086400000, MaxTimestamp: 1700604800000}.Encode()},
	}
	for _, c := range cases {
		checkBytes(t, c.file, c.enc)
	}
	// Every golden file is covered by a case above.
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*"))
	covered := map[string]bool{"README.md": true, "config_change_v1.json": true}
	for _, c := range cases {
		covered[c.file] = true
	}
	for _, f := range files {
		if !covered[filepath.Base(f)] {
			t.Errorf("golden file %s has no encoding case", filepath.Base(f))
		}
	}
}

// TestGoldenRoundTrips decodes each golden file and re-encodes it.
func TestGoldenRoundTrips(t *testing.T) {
	rt := func(file string, f func([]byte) ([]byte, error)) {
		t.Helper()
		in := golden(t, file)
		out, err := f(in)
		if err != nil {
			t.Errorf("%s: decode: %v", file, err)
			return
		}
		if !bytes.Equal(in, out) {
			t.Errorf("%s round trip:\n got %s\nwant %s", file, out, in)
		}
	}
	rt("cluster_id.json", func(b []byte) ([]byte, error) { id, err := DecodeClusterID(b); return EncodeClusterID(id), err })
	for _, f := range []string{"controller_v1.json", "controller_v2.json"} {
		rt(f, func(b []byte) ([]byte, error) { c, err := DecodeController(b); return c.Encode(), err })
	}
	rt("controller_epoch.txt", func(b []byte) ([]byte, error) {
		e, err := DecodeControllerEpoch(b)
		return EncodeControllerEpoch(e), err
	})
	for _, f := range []string{"broker_v5.json", "broker_v5_two_listeners_rack.json", "broker_v5_no_plaintext.json", "broker_v4.json"} {
		rt(f, func(b []byte) ([]byte, error) { i, err := DecodeBrokerInfo(1, b); return i.Encode(), err })
	}
	for _, f := range []string{"topic_v3.json", "topic_v3_no_id.json", "topic_v3_reassigning.json", "topic_v1.json"} {
		rt(f, func(b []byte) ([]byte, error) { a, err := DecodeTopicAssignment(b); return a.Encode(), err })
	}
	for _, f := range []string{"state.json", "state_recovering.json", "state_offline.json"} {
		rt(f, func(b []byte) ([]byte, error) { s, err := DecodeLeaderAndIsr(b, 3); return s.Encode(), err })
	}
	rt("reassign_partitions.json", func(b []byte) ([]byte, error) { r, err := DecodeReassignment(b); return EncodeReassignment(r), err })
	rt("preferred_replica_election.json", func(b []byte) ([]byte, error) {
		r, err := DecodePreferredReplicaElection(b)
		return EncodePreferredReplicaElection(r), err
	})
	rt("isr_change_notification.json", func(b []byte) ([]byte, error) {
		r, err := DecodeIsrChangeNotification(b)
		return EncodeIsrChangeNotification(r), err
	})
	rt("log_dir_event_notification.json", func(b []byte) ([]byte, error) {
		id, err := DecodeLogDirEventNotification(b)
		return EncodeLogDirEventNotification(id), err
	})
	for _, f := range []string{"config_empty.json", "config_topic.json", "config_consumer_offsets.json", "config_user_quota.json"} {
		rt(f, func(b []byte) ([]byte, error) { c, err := DecodeEntityConfig(b); return EncodeEntityConfig(c), err })
	}
	rt("config_change_v2.json", func(b []byte) ([]byte, error) {
		c, err := DecodeConfigChangeNotification(b)
		return EncodeConfigChangeNotification(ConfigEntityPath(c.EntityType, c.EntityName)), err
	})
	rt("producer_id_block.json", func(b []byte) ([]byte, error) { p, err := DecodeProducerIDBlock(b); return p.Encode(), err })
	for _, f := range []string{"feature_v1.json", "feature_v2.json", "feature_v2_with_feature.json"} {
		rt(f, func(b []byte) ([]byte, error) { x, err := DecodeFeatureZNode(b); return x.Encode(), err })
	}
	rt("acls.json", func(b []byte) ([]byte, error) { a, err := DecodeACLs(b); return EncodeACLs(a), err })
	rt("consumer_registration.json", func(b []byte) ([]byte, error) {
		r, err := DecodeConsumerRegistration(b)
		return r.Encode(), err
	})
	rt("acl_extended_change.json", func(b []byte) ([]byte, error) { e, err := DecodeExtendedACLChange(b); return e.Encode(), err })
	rt("acl_literal_change.txt", func(b []byte) ([]byte, error) {
		typ, name, err := DecodeLiteralACLChange(b)
		return EncodeLiteralACLChange(typ, name), err
	})
	rt("delegation_token_v3.json", func(b []byte) ([]byte, error) { d, err := DecodeDelegationToken(b); return d.Encode(), err })
	rt("consumer_offset.txt", func(b []byte) ([]byte, error) { o, err := DecodeConsumerOffset(b); return EncodeConsumerOffset(o), err })
}

func TestDecodedValues(t *testing.T) {
	b, err := DecodeBrokerInfo(1, golden(t, "broker_v5_two_listeners_rack.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []EndPoint{{"INTERNAL", "kafka-1.internal", 9092, "PLAINTEXT"}, {"EXTERNAL", "kafka-1.example.com", 9094, "SASL_SSL"}}
	if !reflect.DeepEqual(b.Endpoints, want) || b.Rack != "rack-a" || b.JMXPort != 9999 || b.Timestamp != 1700000000123 || b.Version != 5 {
		t.Fatalf("decoded %+v", b)
	}
	s, err := DecodeLeaderAndIsr(golden(t, "state_recovering.json"), 9)
	if err != nil {
		t.Fatal(err)
	}
	if s.Leader != 2 || s.LeaderEpoch != 5 || s.ControllerEpoch != 3 || s.LeaderRecoveryState != LeaderRecovering || s.ZkVersion != 9 || !reflect.DeepEqual(s.ISR, []int32{2}) {
		t.Fatalf("decoded %+v", s)
	}
	a, err := DecodeTopicAssignment(golden(t, "topic_v3_reassigning.json"))
	if err != nil {
		t.Fatal(err)
	}
	if a.TopicID != "ztFyzQr5QwmEYeGhG6khTg" || !reflect.DeepEqual(a.Adding[0], []int32{4, 5}) || len(a.Removing) != 1 || len(a.Partitions) != 3 {
		t.Fatalf("decoded %+v", a)
	}
	c, err := DecodeConfigChangeNotification(golden(t, "config_change_v1.json"))
	if err != nil || c != (ConfigChange{"topics", "orders"}) {
		t.Fatalf("v1 change = %+v, %v", c, err)
	}
	c, err = DecodeConfigChangeNotification([]byte(`{"version":2,"entity_path":"users/alice/clients/app-1"}`))
	if err != nil || c != (ConfigChange{"users", "alice/clients/app-1"}) {
		t.Fatalf("nested change = %+v, %v", c, err)
	}
	ctl, err := DecodeController(golden(t, "controller_v1.json"))
	if err != nil || ctl.BrokerID != 1 || ctl.KRaftControllerEpoch != -1 || ctl.Timestamp != 1700000000456 {
		t.Fatalf("controller v1 = %+v, %v", ctl, err)
	}
}

func TestBrokerInfoOlderVersions(t *testing.T) {
	v1, err := DecodeBrokerInfo(3, []byte(`{"jmx_port":-1,"timestamp":"1","host":"h","version":1,"port":9092}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(v1.Endpoints) != 1 || v1.Endpoints[0] != (EndPoint{"PLAINTEXT", "h", 9092, "PLAINTEXT"}) {
		t.Fatalf("v1 endpoints %+v", v1.Endpoints)
	}
	// Scala 2.12 key order and v2 listener-name-is-protocol form, plus an
	// unknown vendor field.
	v2, err := DecodeBrokerInfo(3, []byte(`{"jmx_port":-1,"host":"h","timestamp":"5","port":9092,"version":2,"endpoints":["PLAINTEXT://h:9092","SSL://[::1]:9093"],"tags":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if v2.Endpoints[1] != (EndPoint{"SSL", "::1", 9093, "SSL"}) {
		t.Fatalf("v2 endpoints %+v", v2.Endpoints)
	}
	if got := v2.Endpoints[1].ConnectionString(); got != "SSL://[::1]:9093" {
		t.Fatalf("IPv6 connection string %q", got)
	}
	if _, err := DecodeBrokerInfo(3, []byte(`{"version":2,"jmx_port":-1,"endpoints":["INTERNAL://h:1"]}`)); err == nil {
		t.Fatalf("listener name without protocol map must fail")
	}
	if _, err := DecodeBrokerInfo(3, []byte(`{"version":5,"endpoints":[]}`)); err == nil {
		t.Fatalf("missing jmx_port must fail")
	}
}

// TestPartitionKeyOrder: Kafka's topic znode lists partition keys in Scala
// 2.13 mutable.HashMap order; with 12 partitions zkCli shows "11" first.
func TestPartitionKeyOrder(t *testing.T) {
	m := map[int32][]int32{}
	for p := int32(0); p < 12; p++ {
		m[p] = []int32{1}
	}
	got := string(TopicAssignment{Partitions: m}.Encode())
	if !strings.HasPrefix(got, `{"partitions":{"11":[1],"0":[1],"1":[1],"2":[1],"3":[1],"4":[1],"5":[1],"6":[1],"7":[1],"8":[1],"9":[1],"10":[1]}`) {
		t.Fatalf("12-partition order: %s", got)
	}
	m = map[int32][]int32{}
	for p := int32(0); p < 11; p++ {
		m[p] = []int32{1}
	}
	got = string(TopicAssignment{Partitions: m}.Encode())
	if !strings.HasPrefix(got, `{"partitions":{"0":[1],"1":[1],"2":[1],"3":[1],"4":[1],"5":[1],"6":[1],"7":[1],"8":[1],"9":[1],"10":[1]}`) {
		t.Fatalf("11-partition order: %s", got)
	}
}

func TestReassignmentIsStrict(t *testing.T) {
	_, err := DecodeReassignment([]byte(`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["any"]}]}`))
	if err == nil {
		t.Fatalf("log_dirs must make the node invalid, as in Kafka")
	}
	if _, err := DecodeReassignment([]byte(`{"version":1,"partitions":[]}`)); err != nil {
		t.Fatalf("empty list: %v", err)
	}
}

func TestStringsAreNotHTMLEscaped(t *testing.T) {
	got := string(EncodeConfigChangeNotification("clients/<default>"))
	if got != `{"version":2,"entity_path":"clients/<default>"}` {
		t.Fatalf("got %s", got)
	}
	got = string(EncodeEntityConfig(map[string]string{"k": "a\"b\\c\n\u2028é"}))
	if got != `{"version":1,"config":{"k":"a\"b\\c\n`+"\u2028é"+`"}}` {
		t.Fatalf("got %s", got)
	}
}

func TestSanitize(t *testing.T) {
	cases := map[string]string{
		"alice":         "alice",
		"CN=app,O=Corp": "CN%3Dapp%2CO%3DCorp",
		"my client":     "my%20client",
		"a*b+c":         "a%2Ab%2Bc",
		"User:bob":      "User%3Abob",
		"ü":             "%C3%BC",
	}
	for in, want := range cases {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
		back, err := Desanitize(want)
		if err != nil || back != in {
			t.Errorf("Desanitize(%q) = %q, %v", want, back, err)
		}
	}
}

func TestPaths(t *testing.T) {
	cases := map[string]string{
		BrokerIDPath(3):                                   "/brokers/ids/3",
		TopicPath("orders"):                               "/brokers/topics/orders",
		TopicPartitionsPath("orders"):                     "/brokers/topics/orders/partitions",
		PartitionStatePath("orders", 2):                   "/brokers/topics/orders/partitions/2/state",
		DeleteTopicPath("orders"):                         "/admin/delete_topics/orders",
		ConfigPath(ConfigTypeTopic, "orders"):             "/config/topics/orders",
		ConfigPath(ConfigTypeBroker, ConfigEntityDefault): "/config/brokers/<default>",
		ConfigPath(ConfigTypeUser, "alice/clients/app-1"): "/config/users/alice/clients/app-1",
		ConsumerOffsetPath("billing", "orders", 0):        "/consumers/billing/offsets/orders/0",
		ConsumerOwnerPath("billing", "orders", 0):         "/consumers/billing/owners/orders/0",
		ConsumerIDPath("billing", "c1"):                   "/consumers/billing/ids/c1",
		IsrChangeNotificationSeqPath():                    "/isr_change_notification/isr_change_",
		LogDirEventNotificationSeqPath():                  "/log_dir_event_notification/log_dir_event_",
		ConfigChangeSeqPath():                             "/config/changes/config_change_",
		ACLResourcePath("literal", "Topic", "*"):          "/kafka-acl/Topic/*",
		ACLResourcePath("prefixed", "Topic", "orders-"):   "/kafka-acl-extended/prefixed/Topic/orders-",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("path %q, want %q", got, want)
		}
	}
	if n, err := ParseSequenceNumber("isr_change_0000000042", IsrChangeNotificationPrefix); err != nil || n != 42 {
		t.Fatalf("ParseSequenceNumber = %d, %v", n, err)
	}
	if _, err := ParseSequenceNumber("isr_change_x", IsrChangeNotificationPrefix); err == nil {
		t.Fatalf("bad sequence accepted")
	}
	if !IsSensitivePath("/config/users/alice") || !IsSensitivePath("/config/brokers") || IsSensitivePath("/config/topics/t") {
		t.Fatalf("IsSensitivePath wrong")
	}
	if len(PersistentZkPaths) != 14 {
		t.Fatalf("PersistentZkPaths has %d entries, Kafka has 14", len(PersistentZkPaths))
	}
}

func TestRandomUUID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		u := RandomUUID()
		if !ValidUUID(u) || u[0] == '-' || seen[u] {
			t.Fatalf("bad or repeated uuid %q", u)
		}
		seen[u] = true
	}
}

func TestProducerIDBlocks(t *testing.T) {
	b, err := NextProducerIDBlock(nil, 1)
	if err != nil || b.BlockStart != 0 || b.BlockEnd != 999 {
		t.Fatalf("first block %+v %v", b, err)
	}
	b, err = NextProducerIDBlock(&b, 2)
	if err != nil || b.BlockStart != 1000 || b.BlockEnd != 1999 || b.BrokerID != 2 {
		t.Fatalf("second block %+v %v", b, err)
	}
	if _, err := NextProducerIDBlock(&ProducerIDBlock{BlockEnd: 1<<63 - 1 - 999}, 1); err != ErrProducerIDsExhausted {
		t.Fatalf("exhaustion not detected: %v", err)
	}
}

func TestSecurityNodes(t *testing.T) {
	typ, name, err := DecodeLiteralACLChange([]byte("Group:my:group"))
	if err != nil || typ != "GROUP" || name != "my:group" {
		t.Fatalf("literal change: %q %q %v", typ, name, err)
	}
	if _, err := DecodeExtendedACLChange([]byte(`{"version":1,"resourceType":"TOPIC","name":"a","patternType":"PREFIXED","x":1}`)); err == nil {
		t.Fatal("unknown field accepted in extended acl change")
	}
	d, err := DecodeDelegationToken([]byte(`{"version":1,"tokenId":"t","owner":"User%3Aa","renewers":[],"issueTimestamp":1,"expiryTimestamp":2,"maxTimestamp":3}`))
	if err != nil || d.TokenRequester != "User%3Aa" {
		t.Fatalf("v1 token: %+v %v", d, err)
	}
	if !(ControllerInfo{KRaftControllerEpoch: 0}).IsKRaft() || (ControllerInfo{KRaftControllerEpoch: -1}).IsKRaft() {
		t.Fatal("IsKRaft")
	}
}
