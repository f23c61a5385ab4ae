package broker_test

// Dynamic broker configs (KIP-226) on a real ZooKeeper and real brokers:
// values written through the admin API and written directly into
// ZooKeeper in Kafka's format are applied by every broker without a
// restart, with Kafka's precedence, refusals and DescribeConfigs answers.

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker"
	"github.com/klassik/klassik/broker/storage"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
)

func alterBrokerConfig(ctx context.Context, t *testing.T, adm *kadm.Client, op kadm.IncrementalOp, key, value string, brokers ...int32) {
	t.Helper()
	var v *string
	if op != kadm.DeleteConfig {
		v = &value
	}
	rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: op, Name: key, Value: v}}, brokers...)
	if err == nil {
		for _, r := range rs {
			if r.Err != nil {
				err = fmt.Errorf("%s: %w (%s)", r.Name, r.Err, r.ErrMessage)
			}
		}
	}
	if err != nil {
		t.Fatalf("alter broker config %s=%s on %v: %v", key, value, brokers, err)
	}
}

// everyBroker reports whether cond holds for the current config of every
// broker of c.
func everyBroker(c *testcluster.Cluster, cond func(*config.Config) bool) bool {
	for i := 0; i < c.N(); i++ {
		if !cond(c.Broker(i).Dynamic().Current()) {
			return false
		}
	}
	return true
}

// topicLogs returns the logs of topic hosted by broker b.
func topicLogs(b *broker.Broker, topic string) []*storage.Log {
	var out []*storage.Log
	for tp, l := range b.LogManager().AllLogs() {
		if tp.Topic == topic {
			out = append(out, l)
		}
	}
	return out
}

func bigRecordBatch(n int) []byte { return oneRecordBatch(strings.Repeat("x", n)) }

func TestDynamicBrokerConfigsApplyLive(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3,
		Overrides: map[string]string{"log.retention.hours": "100"}})
	ctx := ctxT(t, 120*time.Second)
	adm := c.Admin()
	c.CreateTopic("dyn", 1, 3, nil)
	over := "4096"
	c.CreateTopic("dyn-override", 1, 3, map[string]*string{"segment.bytes": &over})

	md, err := adm.Metadata(ctx, "dyn")
	if err != nil {
		t.Fatal(err)
	}
	leader := md.Topics["dyn"].Partitions[0].Leader
	li := c.Index(leader)
	direct := c.Direct(li)
	waitFor(t, "a produce to dyn", 20*time.Second, func() bool { return produceAcks(ctx, t, direct, "dyn", -1) == 0 })

	// message.max.bytes: a lowered cluster default refuses a larger batch
	// at once; a per-broker value beats the default; removing it falls
	// back to the default; removing that restores the static value.
	alterBrokerConfig(ctx, t, adm, kadm.SetConfig, "message.max.bytes", "1000")
	waitFor(t, "MESSAGE_TOO_LARGE under the 1000-byte default", 10*time.Second, func() bool {
		return produceCode(ctx, t, direct, "dyn", 1, bigRecordBatch(2000)) == kerr.MessageTooLarge.Code
	})
	alterBrokerConfig(ctx, t, adm, kadm.SetConfig, "message.max.bytes", "100000", leader)
	waitFor(t, "the per-broker 100000 over the default", 10*time.Second, func() bool {
		return produceCode(ctx, t, direct, "dyn", 1, bigRecordBatch(2000)) == 0
	})
	if got := c.Broker(li).Dynamic().Current().Source("message.max.bytes"); got != config.SourceDynamicBroker {
		t.Errorf("leader's message.max.bytes source %d, want DYNAMIC_BROKER_CONFIG", got)
	}
	alterBrokerConfig(ctx, t, adm, kadm.DeleteConfig, "message.max.bytes", "", leader)
	waitFor(t, "the default again after deleting the per-broker value", 10*time.Second, func() bool {
		return produceCode(ctx, t, direct, "dyn", 1, bigRecordBatch(2000)) == kerr.MessageTooLarge.Code
	})
	alterBrokerConfig(ctx, t, adm, kadm.DeleteConfig, "message.max.bytes", "")
	waitFor(t, "the static value after deleting the default", 10*time.Second, func() bool {
		return produceCode(ctx, t, direct, "dyn", 1, bigRecordBatch(2000)) == 0
	})

	// min.insync.replicas as cluster default: 4 > the 3 replicas.
	alterBrokerConfig(ctx, t, adm, kadm.SetConfig, "min.insync.replicas", "4")
	waitFor(t, "NOT_ENOUGH_REPLICAS with min.insync.replicas=4", 10*time.Second, func() bool {
		return produceAcks(ctx, t, direct, "dyn", -1) == kerr.NotEnoughReplicas.Code
	})
	alterBrokerConfig(ctx, t, adm, kadm.DeleteConfig, "min.insync.replicas", "")
	waitFor(t, "acks=all produce after removing min.insync.replicas", 10*time.Second, func() bool {
		return produceAcks(ctx, t, direct, "dyn", -1) == 0
	})

	// Log defaults re-derive every log without a topic override of the key.
	alterBrokerConfig(ctx, t, adm, kadm.SetConfig, "log.segment.bytes", "2048")
	alterBrokerConfig(ctx, t, adm, kadm.SetConfig, "log.retention.ms", "3600000")
	alterBrokerConfig(ctx, t, adm, kadm.SetConfig, "log.cleanup.policy", "compact,delete")
	for i := 0; i < c.N(); i++ {
		b := c.Broker(i)
		waitFor(t, "the new log defaults on every log of dyn", 10*time.Second, func() bool {
			for _, l := range topicLogs(b, "dyn") {
				lc := l.Config()
				if lc.SegmentBytes != 2048 || lc.RetentionMs != 3600000 || !lc.CleanupPolicyCompact || !lc.CleanupPolicyDelete {
					return false
				}
			}
			return len(topicLogs(b, "dyn")) == 1
		})
		for _, l := range topicLogs(b, "dyn-override") {
			if lc := l.Config(); lc.SegmentBytes != 4096 || lc.RetentionMs != 3600000 {
				t.Errorf("broker %d: dyn-override segment.bytes %d retention %d, want its own 4096 and the new 3600000",
					c.BrokerID(i), lc.SegmentBytes, lc.RetentionMs)
			}
		}
	}
	// Back to delete only (a compacted topic refuses records without keys).
	alterBrokerConfig(ctx, t, adm, kadm.DeleteConfig, "log.cleanup.policy", "")
	waitFor(t, "cleanup.policy=delete again", 10*time.Second, func() bool {
		lc := topicLogs(c.Broker(li), "dyn")[0].Config()
		return !lc.CleanupPolicyCompact && lc.CleanupPolicyDelete
	})
	// The smaller segments roll: a few 1 KiB batches make several segments.
	for range 6 {
		if code := produceCode(ctx, t, direct, "dyn", 1, bigRecordBatch(1000)); code != 0 {
			t.Fatalf("produce: code %d", code)
		}
	}
	if n := topicLogs(c.Broker(li), "dyn")[0].NumSegments(); n < 3 {
		t.Errorf("dyn has %d segments after 6 KB with log.segment.bytes=2048, want several", n)
	}

	// DescribeConfigs: sources and synonyms as Kafka's ConfigHelper.
	alterBrokerConfig(ctx, t, adm, kadm.SetConfig, "message.max.bytes", "500000")
	alterBrokerConfig(ctx, t, adm, kadm.SetConfig, "message.max.bytes", "600000", leader)
	// Brokers apply a stored change when its notification reaches them.
	waitFor(t, "the leader applying both message.max.bytes layers", 10*time.Second, func() bool {
		def, per := c.Broker(li).Dynamic().Layers()
		return def["message.max.bytes"] == "500000" && per["message.max.bytes"] == "600000"
	})
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version, req.IncludeSynonyms, req.IncludeDocumentation = 4, true, true
	for _, name := range []string{fmt.Sprint(leader), ""} {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, name
		req.Resources = append(req.Resources, r)
	}
	tr := kmsg.NewDescribeConfigsRequestResource()
	tr.ResourceType, tr.ResourceName = kmsg.ConfigResourceTypeTopic, "dyn"
	req.Resources = append(req.Resources, tr)
	resp := request[*kmsg.DescribeConfigsResponse](ctx, t, direct, req)
	entries := func(i int) map[string]kmsg.DescribeConfigsResponseResourceConfig {
		if resp.Resources[i].ErrorCode != 0 {
			t.Fatalf("describe %q: code %d", resp.Resources[i].ResourceName, resp.Resources[i].ErrorCode)
		}
		m := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
		for _, e := range resp.Resources[i].Configs {
			m[e.Name] = e
		}
		return m
	}
	syn := func(e kmsg.DescribeConfigsResponseResourceConfig) string {
		var s []string
		for _, y := range e.ConfigSynonyms {
			v := "null"
			if y.Value != nil {
				v = *y.Value
			}
			s = append(s, fmt.Sprintf("%s=%s/%d", y.Name, v, y.Source))
		}
		return strings.Join(s, " ")
	}
	perBroker, defaults, topic := entries(0), entries(1), entries(2)
	checks := []struct {
		m           map[string]kmsg.DescribeConfigsResponseResourceConfig
		name, value string
		src         kmsg.ConfigSource
		readOnly    bool
		synonyms    string
	}{
		{perBroker, "message.max.bytes", "600000", kmsg.ConfigSourceDynamicBrokerConfig, false,
			"message.max.bytes=600000/2 message.max.bytes=500000/3 message.max.bytes=1048588/5"},
		{perBroker, "log.retention.ms", "3600000", kmsg.ConfigSourceDynamicDefaultBrokerConfig, false,
			"log.retention.ms=3600000/3 log.retention.hours=100/4 log.retention.hours=168/5"},
		{perBroker, "log.retention.hours", "100", kmsg.ConfigSourceStaticBrokerConfig, true,
			"log.retention.hours=100/4 log.retention.hours=168/5"},
		{perBroker, "broker.id", fmt.Sprint(leader), kmsg.ConfigSourceStaticBrokerConfig, true, ""},
		{defaults, "message.max.bytes", "500000", kmsg.ConfigSourceDynamicDefaultBrokerConfig, false, "message.max.bytes=500000/3"},
		{topic, "max.message.bytes", "600000", kmsg.ConfigSourceDynamicBrokerConfig, false,
			"message.max.bytes=600000/2 message.max.bytes=500000/3 message.max.bytes=1048588/5"},
		{topic, "segment.bytes", "2048", kmsg.ConfigSourceDynamicDefaultBrokerConfig, false,
			"log.segment.bytes=2048/3 log.segment.bytes=1073741824/5"},
	}
	for _, ck := range checks {
		e, ok := ck.m[ck.name]
		if !ok {
			t.Errorf("%s missing", ck.name)
			continue
		}
		if e.Value == nil || *e.Value != ck.value || e.Source != ck.src || e.ReadOnly != ck.readOnly {
			t.Errorf("%s: value %v source %d read_only %v, want %s %d %v", ck.name, deref(e.Value), e.Source, e.ReadOnly, ck.value, ck.src, ck.readOnly)
		}
		if got := syn(e); ck.synonyms != "" && got != ck.synonyms {
			t.Errorf("%s synonyms\n got %s\nwant %s", ck.name, got, ck.synonyms)
		}
		if e.Documentation == nil || *e.Documentation == "" {
			t.Errorf("%s: no documentation with include_documentation", ck.name)
		}
	}
	if len(defaults) != 3 { // message.max.bytes, log.segment.bytes, log.retention.ms
		t.Errorf("cluster default entries %d, want only the 3 dynamic defaults: %v", len(defaults), defaults)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

// TestDynamicBrokerConfigWrittenInZooKeeper writes a cluster default and a
// per-broker config the way Kafka's tools do (the /config/brokers znode,
// then a sequential change notification), with a plain ZooKeeper
// connection, and checks every broker applies it.
func TestDynamicBrokerConfigWrittenInZooKeeper(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	hosts, chroot, _ := strings.Cut(c.ZKConnect(), "/")
	chroot = "/" + chroot
	conn, _, err := zk.Connect([]string{hosts}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	write := func(entity, json string) {
		t.Helper()
		p := chroot + "/config/brokers/" + entity
		if _, err := conn.Create(p, []byte(json), 0, zk.WorldACL(zk.PermAll)); errors.Is(err, zk.ErrNodeExists) {
			_, err = conn.Set(p, []byte(json), -1)
		} else if err != nil {
			t.Fatal(err)
		}
		note := fmt.Sprintf(`{"version":2,"entity_path":"brokers/%s"}`, entity)
		if _, err := conn.Create(chroot+"/config/changes/config_change_", []byte(note), zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	write("<default>", `{"version":1,"config":{"message.max.bytes":"5000","log.retention.ms":"7200000"}}`)
	waitFor(t, "every broker applying the cluster default", 15*time.Second, func() bool {
		return everyBroker(c, func(cur *config.Config) bool {
			return cur.MessageMaxBytes == 5000 && cur.EffectiveLogRetentionMs() == 7200000
		})
	})
	second := c.BrokerID(1)
	write(fmt.Sprint(second), `{"version":1,"config":{"message.max.bytes":"7000","log.dirs":"/elsewhere"}}`)
	waitFor(t, "the per-broker value on its broker only", 15*time.Second, func() bool {
		return c.Broker(1).Dynamic().Current().MessageMaxBytes == 7000
	})
	if got := c.Broker(1).Dynamic().Current().LogDirs; got == "/elsewhere" {
		t.Error("a non-dynamic key stored in ZooKeeper was applied")
	}
	for _, i := range []int{0, 2} {
		if got := c.Broker(i).Dynamic().Current().MessageMaxBytes; got != 5000 {
			t.Errorf("broker %d: message.max.bytes %d, want the default 5000", c.BrokerID(i), got)
		}
	}
	// An invalid stored set is logged and not applied; the valid layer stays.
	write("<default>", `{"version":1,"config":{"message.max.bytes":"-7"}}`)
	write("<default>", `{"version":1,"config":{"message.max.bytes":"6000"}}`)
	waitFor(t, "the next valid default", 15*time.Second, func() bool {
		return everyBroker(c, func(cur *config.Config) bool { return cur.MessageMaxBytes == 6000 || cur.BrokerID == second })
	})
	// A restarted broker reads both layers at start-up.
	c.RestartBroker(1)
	if got := c.Broker(1).Dynamic().Current().MessageMaxBytes; got != 7000 {
		t.Errorf("after restart: message.max.bytes %d, want the stored per-broker 7000", got)
	}
}

// TestDynamicBrokerConfigRefusals checks Kafka's refusals and messages.
func TestDynamicBrokerConfigRefusals(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1,
		Overrides: map[string]string{"password.encoder.secret": "encoder-secret"}})
	ctx := ctxT(t, 60*time.Second)
	id := c.BrokerID(0)
	res := func(name string) string {
		return fmt.Sprintf("Invalid config value for resource ConfigResource(type=BROKER, name='%s'): ", name)
	}
	cases := []struct {
		name, key, value string
		code             int16
		msg              string
	}{
		{fmt.Sprint(id), "log.dirs", "/x", kerr.InvalidRequest.Code, res(fmt.Sprint(id)) + "Cannot update these configs dynamically: Set(log.dirs)"},
		{fmt.Sprint(id), "ssl.keystore.location", "/x.jks", kerr.InvalidRequest.Code,
			res(fmt.Sprint(id)) + "These security configs can be dynamically updated only per-listener using the listener prefix: Set(ssl.keystore.location)"},
		{"", "listener.name.plaintext.ssl.keystore.location", "/x.jks", kerr.InvalidRequest.Code,
			res("") + "Cannot update these configs at default cluster level, broker id must be specified: Set(listener.name.plaintext.ssl.keystore.location)"},
		{"", "message.max.bytes", "abc", kerr.InvalidRequest.Code, res("") + "Invalid value abc for configuration message.max.bytes: Not a number of type INT"},
		{fmt.Sprint(id + 1), "message.max.bytes", "1000", kerr.InvalidRequest.Code, fmt.Sprintf("Unexpected broker id, expected %d, but received %d", id, id+1)},
	}
	set := func(name, key, value string) kmsg.IncrementalAlterConfigsResponseResource {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, name
		rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		rc.Name, rc.Value = key, kmsg.StringPtr(value)
		r.Configs = append(r.Configs, rc)
		req.Resources = append(req.Resources, r)
		return request[*kmsg.IncrementalAlterConfigsResponse](ctx, t, c.Direct(0), req).Resources[0]
	}
	for _, tc := range cases {
		got := set(tc.name, tc.key, tc.value)
		if got.ErrorCode != tc.code || deref(got.ErrorMessage) != tc.msg {
			t.Errorf("%s on %q: code %d %q\nwant %d %q", tc.key, tc.name, got.ErrorCode, deref(got.ErrorMessage), tc.code, tc.msg)
		}
	}
	// validate_only stores nothing.
	adm := c.Admin()
	v := "1234"
	if _, err := adm.ValidateAlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "message.max.bytes", Value: &v}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.ZK().GetEntityConfigs(zkpaths.ConfigTypeBroker, zkpaths.ConfigEntityDefault); len(got) != 0 {
		t.Errorf("validate_only stored %v", got)
	}

	// A password config is stored encoded, applied decoded and described as null.
	const key = "listener.name.plaintext.plain.sasl.jaas.config"
	const jaas = `org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";`
	if r := set(fmt.Sprint(id), key, jaas); r.ErrorCode != 0 {
		t.Fatalf("setting %s: %d %s", key, r.ErrorCode, deref(r.ErrorMessage))
	}
	stored, err := c.ZK().GetEntityConfigs(zkpaths.ConfigTypeBroker, fmt.Sprint(id))
	if err != nil {
		t.Fatal(err)
	}
	if s := stored[key]; !strings.Contains(s, "encryptedPassword:") || strings.Contains(s, "password=") {
		t.Fatalf("stored %q, want Kafka's encoded form", s)
	}
	waitFor(t, "the decoded password config in the broker's layer", 10*time.Second, func() bool {
		_, per := c.Broker(0).Dynamic().Layers()
		return per[key] == jaas
	})
	dreq := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName, dr.ConfigNames = kmsg.ConfigResourceTypeBroker, fmt.Sprint(id), []string{key}
	dreq.Resources = append(dreq.Resources, dr)
	found := false
	for _, e := range request[*kmsg.DescribeConfigsResponse](ctx, t, c.Direct(0), dreq).Resources[0].Configs {
		if e.Name == key {
			found = true
			if e.Value != nil || !e.IsSensitive || e.Source != kmsg.ConfigSourceDynamicBrokerConfig {
				t.Errorf("%s described as %v sensitive=%v source %d", key, deref(e.Value), e.IsSensitive, e.Source)
			}
		}
	}
	if !found {
		t.Errorf("%s not described", key)
	}
}

// TestConfigChangeListenerRetries: a failing pass of the /config/changes
// listener is retried with backoff, so a change made while ZooKeeper reads
// fail is applied without another change.
func TestConfigChangeListenerRetries(t *testing.T) {
	var failing atomic.Bool
	var calls atomic.Int64
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, BrokerOptions: []broker.Option{
		broker.WithConfigChangeFault(func() error {
			calls.Add(1)
			if failing.Load() {
				return errors.New("injected ZooKeeper failure")
			}
			return nil
		})}})
	ctx := ctxT(t, 60*time.Second)
	failing.Store(true)
	before := calls.Load()
	alterBrokerConfig(ctx, t, c.Admin(), kadm.SetConfig, "message.max.bytes", "4321")
	waitFor(t, "two failed passes", 10*time.Second, func() bool { return calls.Load() >= before+2 })
	if got := c.Broker(0).Dynamic().Current().MessageMaxBytes; got == 4321 {
		t.Fatal("applied while every pass fails")
	}
	failing.Store(false)
	waitFor(t, "the change applied by a retry", 15*time.Second, func() bool {
		return c.Broker(0).Dynamic().Current().MessageMaxBytes == 4321
	})
}

// TestDynamicUncleanLeaderElectionDefault: turning the cluster default of
// unclean.leader.election.enable on elects an out-of-sync replica of a
// partition already offline (Kafka's DynamicLogConfig calls the
// controller's enableDefaultUncleanLeaderElection), and a topic override of
// false still keeps its partition offline.
func TestDynamicUncleanLeaderElectionDefault(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	xi, yi := otherTwo(c)
	x, y := c.BrokerID(xi), c.BrokerID(yi)
	as := [][]int32{{x, y}}
	createAssigned(t, c, "by-default", as, nil)
	createAssigned(t, c, "kept-clean", as, map[string]string{"unclean.leader.election.enable": "false"})
	strandOutOfSync(c, []string{"by-default", "kept-clean"}, xi, yi)
	if s, _ := c.PartitionState("by-default", 0); s.Leader != -1 {
		t.Fatalf("by-default-0 with the default off: %s, want Leader: none", s)
	}
	alterBrokerConfig(ctxT(t, 20*time.Second), t, c.Admin(), kadm.SetConfig, "unclean.leader.election.enable", "true")
	c.WaitFor(20*time.Second, "by-default-0 elected uncleanly after the dynamic default", func() bool {
		s, ok := c.PartitionState("by-default", 0)
		return ok && s.Leader == y
	})
	if s, _ := c.PartitionState("kept-clean", 0); s.Leader != -1 {
		t.Errorf("kept-clean-0 (topic override false): %s, want Leader: none", s)
	}
}

// TestConfigReloadsRetried: a change notification whose reload fails (a
// ZooKeeper read error while the session moves to another server) is
// retried with backoff, for every entity type, so the broker does not keep
// an old min.insync.replicas, quota or credential while ZooKeeper holds
// the new one. Each entity's first two reloads fail here.
func TestConfigReloadsRetried(t *testing.T) {
	var mu sync.Mutex
	failed := map[string]int{}
	failures := func(k string) int {
		mu.Lock()
		defer mu.Unlock()
		return failed[k]
	}
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, BrokerOptions: []broker.Option{
		broker.WithConfigReloadFault(func(typ, entity string) error {
			mu.Lock()
			defer mu.Unlock()
			k := typ + "/" + entity
			if failed[k] < 2 {
				failed[k]++
				return errors.New("injected ZooKeeper read failure")
			}
			return nil
		})}})
	ctx := ctxT(t, 60*time.Second)
	b := c.Broker(0)

	// A topic's min.insync.replicas (a topic's reload).
	const topic = "retried"
	c.CreateTopic(topic, 1, 1, nil)
	c.WaitLeaders(20*time.Second, topic, 1)
	if got := produceAcks(ctx, t, c.Direct(0), topic, -1); got != 0 {
		t.Fatalf("acks=all produce before the change: %v", kerr.ErrorForCode(got))
	}
	res, err := c.Admin().AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "min.insync.replicas", Value: kadm.StringPtr("2")}}, topic)
	if err == nil {
		err = res[0].Err
	}
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "min.insync.replicas 2 applied after two failed reloads", 20*time.Second, func() bool {
		return produceAcks(ctx, t, c.Direct(0), topic, -1) == kerr.NotEnoughReplicas.Code
	})

	// A client quota (a clients reload).
	writeQuotaZK(t, c, "clients", "retried-client", `"producer_byte_rate":"4096"`, "ANONYMOUS", "retried-client", 4096, "producer")

	// An IP connection rate (an ips reload).
	lo := netip.MustParseAddr("127.0.0.1")
	if err := c.ZK().ChangeEntityConfigs(zkpaths.ConfigTypeIP, "127.0.0.1", map[string]string{config.IPConnectionRateKey: "7"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the IP quota applied after two failed reloads", 20*time.Second, func() bool { return b.ConnectionRateForIP(lo) == 7 })

	for _, k := range []string{"topics/" + topic, "clients/retried-client", "ips/127.0.0.1"} {
		if n := failures(k); n != 2 {
			t.Errorf("%s: %d failed reloads before the change was applied, want 2", k, n)
		}
	}
}

// TestConfigReloadGivenUpStaysPending: a notification whose reload keeps
// failing stops holding back the notifications after it, but its entity
// is not forgotten: it is reloaded on later passes until a reload
// succeeds, so the broker ends on ZooKeeper's value.
func TestConfigReloadGivenUpStaysPending(t *testing.T) {
	var blocked atomic.Bool
	var attempts atomic.Int64
	blocked.Store(true)
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, BrokerOptions: []broker.Option{
		broker.WithConfigChangeRetry(10*time.Millisecond, 50*time.Millisecond),
		broker.WithConfigReloadFault(func(typ, entity string) error {
			if typ == zkpaths.ConfigTypeTopic && entity == "stuck" && blocked.Load() {
				attempts.Add(1)
				return errors.New("injected ZooKeeper read failure")
			}
			return nil
		})}})
	ctx := ctxT(t, 90*time.Second)
	for _, topic := range []string{"stuck", "after"} {
		c.CreateTopic(topic, 1, 1, nil)
		c.WaitLeaders(20*time.Second, topic, 1)
	}
	setMinISR := func(topic string) {
		t.Helper()
		res, err := c.Admin().AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "min.insync.replicas", Value: kadm.StringPtr("2")}}, topic)
		if err == nil {
			err = res[0].Err
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	applied := func(topic string) bool {
		return produceAcks(ctx, t, c.Direct(0), topic, -1) == kerr.NotEnoughReplicas.Code
	}

	setMinISR("stuck")
	waitFor(t, "the stuck topic's reload attempted", 20*time.Second, func() bool { return attempts.Load() > 0 })
	setMinISR("after")
	waitFor(t, "the later notification applied while the earlier one's reload fails", 30*time.Second, func() bool { return applied("after") })
	if applied("stuck") {
		t.Fatal("min.insync.replicas of stuck applied although every reload of it failed")
	}
	n := attempts.Load()
	waitFor(t, "the stuck topic still retried after the later notifications", 20*time.Second, func() bool { return attempts.Load() >= n+3 })
	blocked.Store(false)
	waitFor(t, "the stuck topic's change applied once its reload succeeds", 20*time.Second, func() bool { return applied("stuck") })
}

// TestStartupSkipsUndecodableQuotaNodes: a client-quota or IP-quota node
// whose content cannot be decoded (written by hand with zkCli) is logged
// and skipped at start-up, as the change listener skips it, and the
// broker starts with the other nodes' quotas.
func TestStartupSkipsUndecodableQuotaNodes(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	z := c.ZK()
	if err := z.ChangeEntityConfigs(zkpaths.ConfigTypeIP, "127.0.0.1", map[string]string{config.IPConnectionRateKey: "7"}); err != nil {
		t.Fatal(err)
	}
	if err := z.ChangeEntityConfigs(zkpaths.ConfigTypeClient, "good", map[string]string{"producer_byte_rate": "4096"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/config/ips/10.0.0.9", "/config/clients/bad"} {
		if _, err := z.Create(p, []byte("not json"), 0); err != nil {
			t.Fatal(err)
		}
	}
	c.RestartBroker(0) // fails the test if the broker does not start
	if got := c.Broker(0).ConnectionRateForIP(netip.MustParseAddr("127.0.0.1")); got != 7 {
		t.Errorf("IP quota of 127.0.0.1 after the restart: %d, want 7", got)
	}
}
