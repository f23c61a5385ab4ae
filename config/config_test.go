package config

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func base() map[string]string {
	return map[string]string{"zookeeper.connect": "localhost:2181"}
}

func with(kv ...string) map[string]string {
	m := base()
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func mustFromMap(t *testing.T, m map[string]string) *Config {
	t.Helper()
	c, err := FromMap(m)
	if err != nil {
		t.Fatalf("FromMap(%v): %v", m, err)
	}
	return c
}

// TestDefaultsMatchKafka compares Defaults with the values of Kafka 2.8's
// KafkaConfig Defaults object.
func TestDefaultsMatchKafka(t *testing.T) {
	c := Defaults()
	want := map[string]any{
		"BrokerID": int32(-1), "BrokerIDGenerationEnable": true, "ReservedBrokerMaxID": int32(1000),
		"ZookeeperSessionTimeoutMs": int32(18000), "ZookeeperMaxInFlightRequests": int32(10),
		"MessageMaxBytes": int32(1048588), "NumNetworkThreads": int32(3), "NumIOThreads": int32(8),
		"Listeners": "PLAINTEXT://:9092", "SecurityInterBrokerProtocol": "PLAINTEXT",
		"SocketSendBufferBytes": int32(102400), "SocketReceiveBufferBytes": int32(102400),
		"SocketRequestMaxBytes": int32(104857600), "RequestTimeoutMs": int32(30000),
		"NumPartitions": int32(1), "LogDir": "/tmp/kafka-logs", "LogSegmentBytes": int32(1 << 30),
		"LogRollHours": int32(168), "LogRollJitterHours": int32(0), "LogRetentionHours": int32(168),
		"LogRetentionBytes": int64(-1), "LogRetentionCheckIntervalMs": int64(300000),
		"LogCleanupPolicy": []string{"delete"}, "LogCleanerThreads": int32(1),
		"LogCleanerDedupeBufferSize": int64(128 << 20), "LogCleanerIOBufferSize": int32(512 << 10),
		"LogCleanerIOBufferLoadFactor": 0.9, "LogCleanerBackoffMs": int64(15000),
		"LogCleanerMinCleanableRatio": 0.5, "LogCleanerEnable": true,
		"LogCleanerDeleteRetentionMs": int64(86400000), "LogCleanerMinCompactionLagMs": int64(0),
		"LogCleanerMaxCompactionLagMs": int64(math.MaxInt64), "LogIndexSizeMaxBytes": int32(10 << 20),
		"LogIndexIntervalBytes": int32(4096), "LogFlushIntervalMessages": int64(math.MaxInt64),
		"LogSegmentDeleteDelayMs": int64(60000), "LogFlushSchedulerIntervalMs": int64(math.MaxInt64),
		"LogFlushOffsetCheckpointIntervalMs": int32(60000), "LogFlushStartOffsetCheckpointIntervalMs": int32(60000),
		"LogPreallocate": false, "NumRecoveryThreadsPerDataDir": int32(1), "AutoCreateTopicsEnable": true,
		"MinInsyncReplicas": int32(1), "LogMessageTimestampType": "CreateTime",
		"LogMessageTimestampDifferenceMaxMs": int64(math.MaxInt64), "CompressionType": "producer",
		"DeleteTopicEnable": true, "ControllerSocketTimeoutMs": int32(30000), "DefaultReplicationFactor": int32(1),
		"ReplicaLagTimeMaxMs": int64(30000), "ReplicaSocketTimeoutMs": int32(30000),
		"ReplicaSocketReceiveBufferBytes": int32(65536), "ReplicaFetchMaxBytes": int32(1 << 20),
		"ReplicaFetchWaitMaxMs": int32(500), "ReplicaFetchMinBytes": int32(1), "ReplicaFetchBackoffMs": int32(1000),
		"ReplicaFetchResponseMaxBytes": int32(10 << 20), "NumReplicaFetchers": int32(1),
		"ReplicaHighWatermarkCheckpointIntervalMs": int64(5000), "AutoLeaderRebalanceEnable": true,
		"LeaderImbalancePerBrokerPercentage": int32(10), "LeaderImbalanceCheckIntervalSeconds": int64(300),
		"UncleanLeaderElectionEnable": false, "ControlledShutdownEnable": true,
		"ControlledShutdownMaxRetries": int32(3), "ControlledShutdownRetryBackoffMs": int64(5000),
		"GroupMinSessionTimeoutMs": int32(6000), "GroupMaxSessionTimeoutMs": int32(1800000),
		"GroupInitialRebalanceDelayMs": int32(3000), "GroupMaxSize": int32(math.MaxInt32),
		"OffsetsTopicReplicationFactor": int16(3), "OffsetsTopicNumPartitions": int32(50),
		"OffsetsTopicSegmentBytes": int32(100 << 20), "OffsetsRetentionMinutes": int32(10080),
		"OffsetsRetentionCheckIntervalMs": int64(600000), "OffsetsCommitTimeoutMs": int32(5000),
		"OffsetsCommitRequiredAcks": int16(-1), "OffsetMetadataMaxBytes": int32(4096),
		"TransactionStateLogMinISR": int32(2), "TransactionStateLogReplicationFactor": int16(3),
		"TransactionStateLogNumPartitions": int32(50), "TransactionMaxTimeoutMs": int32(900000),
		"TransactionalIDExpirationMs": int32(604800000), "FetchMaxBytes": int32(55 << 20),
		"MaxIncrementalFetchSessionCacheSlots": int32(1000),
	}
	v := reflect.ValueOf(c).Elem()
	for field, w := range want {
		f := v.FieldByName(field)
		if !f.IsValid() {
			t.Errorf("Config has no field %s", field)
			continue
		}
		if got := f.Interface(); !reflect.DeepEqual(got, w) {
			t.Errorf("Defaults().%s = %#v, want Kafka's %#v", field, got, w)
		}
	}
	for _, p := range []any{c.LogRollMs, c.LogRetentionMs, c.LogRetentionMinutes, c.LogFlushIntervalMs, c.ZookeeperConnectionTimeoutMs, c.LogRollJitterMs} {
		if !reflect.ValueOf(p).IsNil() {
			t.Errorf("nullable key has a default: %v", p)
		}
	}
	if c.ZookeeperConnect != "" || c.AdvertisedListeners != "" || c.BrokerRack != "" {
		t.Errorf("keys without Kafka default are set: %+v", c)
	}
	if got := c.EffectiveLogRetentionMs(); got != 7*24*3600*1000 {
		t.Errorf("default retention %d", got)
	}
	if got := c.EffectiveZookeeperConnectionTimeoutMs(); got != 18000 {
		t.Errorf("connection timeout default %d, want session timeout", got)
	}
	if got := c.LogDirList(); !slices.Equal(got, []string{"/tmp/kafka-logs"}) {
		t.Errorf("LogDirList %v", got)
	}
}

// TestEveryKeyRoundTrips sets each implemented key to its own default text
// and checks Value renders it back, so the table and the fields agree.
func TestEveryKeyRoundTrips(t *testing.T) {
	c := Defaults()
	for _, k := range BrokerKeys() {
		got, ok := c.Value(k.Name)
		if !ok {
			t.Fatalf("Value(%s) unknown", k.Name)
		}
		if got != k.Default {
			t.Errorf("%s: Value %q, table default %q", k.Name, got, k.Default)
		}
		if k.Doc == "" || k.Group == "" {
			t.Errorf("%s: missing doc or group", k.Name)
		}
		if kafkaOnlyKeys[k.Name] {
			t.Errorf("%s is both implemented and in the Kafka-only list", k.Name)
		}
	}
}

func TestPrecedence(t *testing.T) {
	cases := []struct {
		name        string
		props       map[string]string
		retention   int64
		roll, jit   int64
		flush       int64
		dirs        []string
		zkConnTimeo int32
	}{
		{"defaults", base(), 168 * 3600000, 168 * 3600000, 0, math.MaxInt64, []string{"/tmp/kafka-logs"}, 18000},
		{"hours only", with("log.retention.hours", "1", "log.roll.hours", "2", "log.roll.jitter.hours", "1"), 3600000, 7200000, 3600000, math.MaxInt64, []string{"/tmp/kafka-logs"}, 18000},
		{"minutes over hours", with("log.retention.minutes", "5", "log.retention.hours", "1"), 300000, 168 * 3600000, 0, math.MaxInt64, []string{"/tmp/kafka-logs"}, 18000},
		{"ms over minutes and hours", with("log.retention.ms", "1234", "log.retention.minutes", "5", "log.retention.hours", "1"), 1234, 168 * 3600000, 0, math.MaxInt64, []string{"/tmp/kafka-logs"}, 18000},
		{"-1 unlimited", with("log.retention.ms", "-1"), -1, 168 * 3600000, 0, math.MaxInt64, []string{"/tmp/kafka-logs"}, 18000},
		{"any negative unlimited", with("log.retention.hours", "-5"), -1, 168 * 3600000, 0, math.MaxInt64, []string{"/tmp/kafka-logs"}, 18000},
		{"roll ms over hours", with("log.roll.ms", "60000", "log.roll.hours", "1", "log.roll.jitter.ms", "5", "log.roll.jitter.hours", "1"), 168 * 3600000, 60000, 5, math.MaxInt64, []string{"/tmp/kafka-logs"}, 18000},
		{"log.dirs over log.dir", with("log.dirs", "/a, /b,", "log.dir", "/c"), 168 * 3600000, 168 * 3600000, 0, math.MaxInt64, []string{"/a", "/b"}, 18000},
		{"log.dir alone", with("log.dir", "/c"), 168 * 3600000, 168 * 3600000, 0, math.MaxInt64, []string{"/c"}, 18000},
		{"flush ms", with("log.flush.interval.ms", "1000", "log.flush.scheduler.interval.ms", "50"), 168 * 3600000, 168 * 3600000, 0, 1000, []string{"/tmp/kafka-logs"}, 18000},
		{"flush falls back to scheduler", with("log.flush.scheduler.interval.ms", "50"), 168 * 3600000, 168 * 3600000, 0, 50, []string{"/tmp/kafka-logs"}, 18000},
		{"zk timeouts", with("zookeeper.session.timeout.ms", "6000"), 168 * 3600000, 168 * 3600000, 0, math.MaxInt64, []string{"/tmp/kafka-logs"}, 6000},
		{"zk connection timeout set", with("zookeeper.connection.timeout.ms", "100"), 168 * 3600000, 168 * 3600000, 0, math.MaxInt64, []string{"/tmp/kafka-logs"}, 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustFromMap(t, tc.props)
			if got := c.EffectiveLogRetentionMs(); got != tc.retention {
				t.Errorf("retention %d, want %d", got, tc.retention)
			}
			if got := c.EffectiveLogRollMs(); got != tc.roll {
				t.Errorf("roll %d, want %d", got, tc.roll)
			}
			if got := c.EffectiveLogRollJitterMs(); got != tc.jit {
				t.Errorf("jitter %d, want %d", got, tc.jit)
			}
			if got := c.EffectiveLogFlushIntervalMs(); got != tc.flush {
				t.Errorf("flush %d, want %d", got, tc.flush)
			}
			if got := c.LogDirList(); !slices.Equal(got, tc.dirs) {
				t.Errorf("dirs %v, want %v", got, tc.dirs)
			}
			if got := c.EffectiveZookeeperConnectionTimeoutMs(); got != tc.zkConnTimeo {
				t.Errorf("zk connection timeout %d, want %d", got, tc.zkConnTimeo)
			}
		})
	}
}

// TestValidationErrors checks one case per validation rule: the error is a
// *ValidationError naming the key, with a message containing want.
func TestValidationErrors(t *testing.T) {
	cases := []struct {
		name  string
		props map[string]string
		key   string
		want  string
	}{
		{"missing zookeeper.connect", map[string]string{}, "zookeeper.connect", "missing required"},
		{"bad zookeeper port", with("zookeeper.connect", "localhost:abc"), "zookeeper.connect", "invalid port"},
		{"bad chroot", with("zookeeper.connect", "localhost:2181/a/"), "zookeeper.connect", "chroot"},
		{"unknown key", with("brokers.id", "1"), "brokers.id", "unknown configuration"},
		{"not an int", with("broker.id", "one"), "broker.id", "not a valid int"},
		{"int out of range", with("broker.id", "4294967296"), "broker.id", "out of range"},
		{"not a bool", with("delete.topic.enable", "yes"), "delete.topic.enable", "not a boolean"},
		{"not a double", with("log.cleaner.min.cleanable.ratio", "half"), "log.cleaner.min.cleanable.ratio", "not a number"},
		{"double out of range", with("log.cleaner.min.cleanable.ratio", "1.5"), "log.cleaner.min.cleanable.ratio", "between 0 and 1"},
		{"short out of range", with("offsets.topic.replication.factor", "40000"), "offsets.topic.replication.factor", "out of range"},
		{"broker.id below -1", with("broker.id", "-2"), "broker.id", "greater than or equal to -1"},
		{"broker.id above reserved", with("broker.id", "1001"), "broker.id", "reserved.broker.max.id"},
		{"negative broker.id without generation", with("broker.id", "-1", "broker.id.generation.enable", "false"), "broker.id", "greater than or equal to 0"},
		{"at least one", with("num.partitions", "0"), "num.partitions", "at least 1"},
		{"segment too small", with("log.segment.bytes", "13"), "log.segment.bytes", "at least 14"},
		{"enum", with("log.message.timestamp.type", "createtime"), "log.message.timestamp.type", "not one of"},
		{"compression", with("compression.type", "brotli"), "compression.type", "not one of"},
		{"cleanup list", with("log.cleanup.policy", "delete,shrink"), "log.cleanup.policy", "not one of"},
		{"roll ms zero", with("log.roll.ms", "0"), "log.roll.ms", "at least 1"},
		{"retention zero", with("log.retention.ms", "0"), "log.retention.ms", "unlimited (-1)"},
		{"retention minutes zero", with("log.retention.minutes", "0"), "log.retention.minutes", "unlimited (-1)"},
		{"no log dir", with("log.dir", " , "), "log.dir", "at least one log directory"},
		{"duplicate log dir", with("log.dirs", "/a,/b,/a/"), "log.dirs", "duplicate log directory"},
		{"dedupe buffer", with("log.cleaner.dedupe.buffer.size", "1048576"), "log.cleaner.dedupe.buffer.size", "1MB per cleaner thread"},
		{"fetch wait above socket timeout", with("replica.fetch.wait.max.ms", "40000", "replica.lag.time.max.ms", "50000"), "replica.socket.timeout.ms", "at least replica.fetch.wait.max.ms"},
		{"fetch wait above lag time", with("replica.fetch.wait.max.ms", "20000", "replica.lag.time.max.ms", "10000"), "replica.fetch.wait.max.ms", "replica.lag.time.max.ms"},
		{"commit acks", with("offsets.commit.required.acks", "5"), "offsets.commit.required.acks", "offsets.topic.replication.factor"},
		{"group session bounds", with("group.min.session.timeout.ms", "9000", "group.max.session.timeout.ms", "8000"), "group.min.session.timeout.ms", "group.max.session.timeout.ms"},
		{"bad listener syntax", with("listeners", "PLAINTEXT:9092"), "listeners", "unable to parse"},
		{"listener port range", with("listeners", "PLAINTEXT://:70000"), "listeners", "invalid port"},
		{"duplicate listener name", with("listeners", "PLAINTEXT://:9092,plaintext://:9093"), "listeners", "different name"},
		{"duplicate listener port", with("listeners", "PLAINTEXT://:9092,SSL://:9092"), "listeners", "different port"},
		{"listener without protocol", with("listeners", "INTERNAL://:9092"), "listeners", "no security protocol defined for listener INTERNAL"},
		{"unknown security protocol", with("listener.security.protocol.map", "INTERNAL:TLS"), "listener.security.protocol.map", "unknown security protocol"},
		{"bad protocol map entry", with("listener.security.protocol.map", "INTERNAL"), "listener.security.protocol.map", "expected LISTENER_NAME:SECURITY_PROTOCOL"},
		{"unknown inter-broker protocol", with("security.inter.broker.protocol", "TLS"), "security.inter.broker.protocol", "not one of"},
		{"advertised 0.0.0.0", with("advertised.listeners", "PLAINTEXT://0.0.0.0:9092"), "advertised.listeners", "0.0.0.0"},
		{"advertised name not in listeners", with("advertised.listeners", "PLAINTEXT://h:9092,SSL://h:9093"), "advertised.listeners", "not defined in listeners"},
		{"inter-broker listener not advertised", with("inter.broker.listener.name", "INTERNAL"), "inter.broker.listener.name", "must be a listener name defined in advertised.listeners"},
		{"inter-broker protocol not advertised", with("security.inter.broker.protocol", "SSL"), "security.inter.broker.protocol", "must be a listener name"},
		{"both inter-broker keys", with("inter.broker.listener.name", "PLAINTEXT", "security.inter.broker.protocol", "PLAINTEXT"), "inter.broker.listener.name", "only one of"},
		{"bad version", with("inter.broker.protocol.version", "banana"), "inter.broker.protocol.version", "not a valid Kafka version"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromMap(tc.props)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("FromMap: error %v, want *ValidationError", err)
			}
			for _, p := range ve.Problems {
				if p.Key == tc.key && strings.Contains(p.Msg, tc.want) {
					return
				}
			}
			t.Fatalf("no problem for %s containing %q in:\n%v", tc.key, tc.want, err)
		})
	}
}

// TestValidateReportsEveryProblem: problems in several keys are all listed
// in one error.
func TestValidateReportsEveryProblem(t *testing.T) {
	_, err := FromMap(map[string]string{
		"broker.id": "x", "num.partitions": "0", "listeners": "nonsense", "typo.key": "1",
		"log.retention.ms": "0",
	})
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want *ValidationError, got %v", err)
	}
	keys := ve.Keys()
	for _, want := range []string{"zookeeper.connect", "broker.id", "num.partitions", "listeners", "typo.key", "log.retention.ms"} {
		if !slices.Contains(keys, want) {
			t.Errorf("missing problem for %s in %v", want, err)
		}
	}
	if !strings.Contains(err.Error(), "problems") || strings.Count(err.Error(), "\n") < 6 {
		t.Errorf("error text should list one problem per line:\n%v", err)
	}
}

func TestValidConfigs(t *testing.T) {
	for name, props := range map[string]map[string]string{
		"generated id":    with("broker.id", "-1"),
		"port zero twice": with("listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", "ssl.keystore.location", "/x", "ssl.keystore.password", "p"),
		"named listeners": with("listeners", "INTERNAL://:9092,EXTERNAL://:9093", "advertised.listeners", "INTERNAL://b1:9092,EXTERNAL://example.com:19093",
			"listener.security.protocol.map", "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT", "inter.broker.listener.name", "INTERNAL"),
		"ipv6":             with("listeners", "PLAINTEXT://[::1]:9092"),
		"chroot ensemble":  with("zookeeper.connect", "z1:2181,z2:2182/kafka/prod"),
		"versions":         with("inter.broker.protocol.version", "2.8", "log.message.format.version", "0.10.2-IV0"),
		"compact+delete":   with("log.cleanup.policy", "compact, delete"),
		"bool any case":    with("delete.topic.enable", "FALSE"),
		"metric reporters": with("metric.reporters", "com.example.Reporter"),
	} {
		t.Run(name, func(t *testing.T) { mustFromMap(t, props) })
	}
}

func TestListeners(t *testing.T) {
	c := mustFromMap(t, with(
		"listeners", "internal://:9092,EXTERNAL://[::1]:9093",
		"advertised.listeners", "INTERNAL://b1:9092,EXTERNAL://[::1]:9093",
		"listener.security.protocol.map", "INTERNAL:PLAINTEXT,EXTERNAL:SASL_SSL",
		"sasl.enabled.mechanisms", "PLAIN",
		"inter.broker.listener.name", "internal", "listener.name.external.ssl.keystore.location", "/x"))
	l := c.ListenerEndpoints()
	want := []Endpoint{{"INTERNAL", "", 9092, "PLAINTEXT"}, {"EXTERNAL", "::1", 9093, "SASL_SSL"}}
	if !reflect.DeepEqual(l, want) {
		t.Fatalf("listeners %+v, want %+v", l, want)
	}
	if l[0].String() != "INTERNAL://:9092" || l[1].String() != "EXTERNAL://[::1]:9093" || l[1].Address() != "[::1]:9093" {
		t.Errorf("rendering: %s %s %s", l[0], l[1], l[1].Address())
	}
	ib, ok := c.InterBrokerEndpoint()
	if !ok || ib.Host != "b1" || ib.Port != 9092 {
		t.Errorf("inter-broker endpoint %+v %v", ib, ok)
	}
	d := mustFromMap(t, base())
	if a := d.AdvertisedEndpoints(); len(a) != 1 || a[0].String() != "PLAINTEXT://:9092" {
		t.Errorf("advertised defaults to listeners: %v", a)
	}
	if d.SocketServer().InterBrokerListenerName != "PLAINTEXT" {
		t.Errorf("inter-broker listener default")
	}
}

func TestIgnoredKafkaKeys(t *testing.T) {
	c := mustFromMap(t, with("ssl.keystore.location", "/x", "authorizer.class.name", "kafka.security.authorizer.AclAuthorizer",
		"listener.name.internal.ssl.keystore.location", "/y", "zookeeper.set.acl", "false", "zookeeper.sync.time.ms", "2000"))
	want := []string{"zookeeper.sync.time.ms"} // the ssl, authorizer and zookeeper.set.acl keys are implemented
	if got := c.IgnoredKeys(); !slices.Equal(got, want) {
		t.Fatalf("IgnoredKeys %v, want %v", got, want)
	}
	if _, err := FromMap(with("listener.name.", "x")); err == nil {
		t.Errorf("bare listener.name. prefix accepted")
	}
	if len(KafkaOnlyKeys()) < 50 { // shrinks as security keys are implemented
		t.Errorf("Kafka-only list looks truncated: %d", len(KafkaOnlyKeys()))
	}
}

func TestIsSetAndValue(t *testing.T) {
	c := mustFromMap(t, with("num.partitions", "3"))
	if !c.IsSet("num.partitions") || c.IsSet("log.dirs") || !c.IsSet("zookeeper.connect") {
		t.Errorf("IsSet wrong")
	}
	if v, ok := c.Value("num.partitions"); !ok || v != "3" {
		t.Errorf("Value = %q %v", v, ok)
	}
	if _, ok := c.Value("zookeeper.sync.time.ms"); ok {
		t.Errorf("Value of unimplemented key reported ok")
	}
}

const sampleProps = `# sample
broker.id=2
listeners=PLAINTEXT://127.0.0.1:0
log.dirs=/data/a,/data/b
zookeeper.connect=localhost:2181/klassik
log.retention.hours=24
log.cleanup.policy=compact,delete
broker.rack=b
log.cleaner.min.cleanable.ratio=0.25
offsets.topic.replication.factor=1
`

const sampleYAML = `# the same, in YAML
broker.id: 2
listeners: PLAINTEXT://127.0.0.1:0
log:
  dirs: [/data/a, /data/b]
  retention.hours: 24
  cleanup.policy: compact,delete
zookeeper.connect: "localhost:2181/klassik"
broker.rack: b
log.cleaner.min.cleanable.ratio: 0.25
offsets.topic.replication.factor: 1
advertised.listeners: ~
`

func TestYAMLEquivalence(t *testing.T) {
	dir := t.TempDir()
	pp := filepath.Join(dir, "server.properties")
	yp := filepath.Join(dir, "server.yaml")
	if err := os.WriteFile(pp, []byte(sampleProps), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(yp, []byte(sampleYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	pc, err := Load(pp, nil)
	if err != nil {
		t.Fatal(err)
	}
	yc, err := Load(yp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pc, yc) {
		t.Fatalf("YAML and properties differ:\n%+v\n%+v", pc, yc)
	}
	if pc.BrokerID != 2 || pc.EffectiveLogRetentionMs() != 24*3600000 || !slices.Equal(pc.LogDirList(), []string{"/data/a", "/data/b"}) || *pc.Rack() != "b" {
		t.Errorf("unexpected values %+v", pc)
	}
}

func TestYAMLErrors(t *testing.T) {
	for name, in := range map[string]string{
		"duplicate via nesting": "log.dirs: /a\nlog:\n  dirs: /b\n",
		"not a mapping":         "- a\n- b\n",
		"nested list":           "log.dirs: [[a]]\n",
		"syntax":                "a: [\n",
	} {
		if _, err := ParseYAML(strings.NewReader(in)); err == nil {
			t.Errorf("%s: ParseYAML accepted %q", name, in)
		}
	}
	m, err := ParseYAML(strings.NewReader(""))
	if err != nil || len(m) != 0 {
		t.Errorf("empty YAML: %v %v", m, err)
	}
}

func TestLoadOverrides(t *testing.T) {
	p := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(p, []byte(sampleProps), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p, map[string]string{"broker.id": "7", "log.retention.ms": "1000"})
	if err != nil {
		t.Fatal(err)
	}
	if c.BrokerID != 7 || c.EffectiveLogRetentionMs() != 1000 {
		t.Errorf("overrides not applied: id %d retention %d", c.BrokerID, c.EffectiveLogRetentionMs())
	}
	_, err = Load(p, map[string]string{"broker.id": "x", "nope": "1"})
	if err == nil || !strings.Contains(err.Error(), "broker.id") || !strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), p) {
		t.Errorf("Load error should name the file and both keys: %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.properties"), nil); err == nil {
		t.Errorf("missing file accepted")
	}
}

// TestShippedConfigs loads the files in this directory as a user would.
func TestShippedConfigs(t *testing.T) {
	for _, f := range []string{"server.properties", "server-1.properties", "server-2.properties", "server-3.properties", "../server.properties.example"} {
		c, err := Load(f, nil)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(c.IgnoredKeys()) != 0 {
			t.Errorf("%s sets ignored keys %v", f, c.IgnoredKeys())
		}
	}
	for i, rack := range []string{"a", "b", "c"} {
		c, err := Load(filepath.Join(".", "server-"+string(rune('1'+i))+".properties"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.BrokerID != int32(i+1) || c.BrokerRack != rack || c.ListenerEndpoints()[0].Port != int32(9092+i) ||
			!slices.Equal(c.LogDirList(), []string{"/tmp/kafka-logs-" + string(rune('1'+i)), "/tmp/kafka-logs-" + string(rune('1'+i)) + "-b"}) {
			t.Errorf("server-%d.properties: id %d rack %q listeners %v dirs %v", i+1, c.BrokerID, c.BrokerRack, c.Listeners, c.LogDirList())
		}
	}
}

// TestExampleDocumentsEveryKey: server.properties.example mentions every
// implemented key.
func TestExampleDocumentsEveryKey(t *testing.T) {
	b, err := os.ReadFile("../server.properties.example")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, k := range BrokerKeys() {
		if !strings.Contains(text, k.Name+"=") {
			t.Errorf("server.properties.example does not document %s", k.Name)
		}
	}
}

func TestSubConfigs(t *testing.T) {
	c := mustFromMap(t, with("zookeeper.session.timeout.ms", "6000", "replica.lag.time.max.ms", "10000", "leader.imbalance.check.interval.seconds", "5", "offsets.retention.minutes", "2"))
	if z := c.ZooKeeper(); z.SessionTimeout.Milliseconds() != 6000 || z.ConnectionTimeout.Milliseconds() != 6000 || z.Connect != "localhost:2181" {
		t.Errorf("ZooKeeper %+v", z)
	}
	if r := c.Replica(); r.LagTimeMax.Milliseconds() != 10000 || r.NumFetchers != 1 {
		t.Errorf("Replica %+v", r)
	}
	if k := c.Controller(); k.LeaderImbalanceCheckInterval.Seconds() != 5 || !k.DeleteTopicEnable {
		t.Errorf("Controller %+v", k)
	}
	if g := c.GroupCoordinator(); g.OffsetsRetention.Minutes() != 2 || g.OffsetsTopicPartitions != 50 {
		t.Errorf("Group %+v", g)
	}
	if s := c.ControlledShutdown(); !s.Enable || s.MaxRetries != 3 {
		t.Errorf("ControlledShutdown %+v", s)
	}
	if tx := c.Transactions(); tx.StateLogMinISR != 2 {
		t.Errorf("Transactions %+v", tx)
	}
}

// FuzzParseYAML: the YAML reader never panics, and whatever it accepts
// loads through FromMap without panicking (errors are fine).
func FuzzParseYAML(f *testing.F) {
	f.Add(sampleYAML)
	f.Add("a: [1, 2]\nb: {c: d}\n")
	f.Add("x: &a 1\ny: *a\n")
	f.Add("- 1\n")
	f.Add("broker.id: ~\n")
	f.Fuzz(func(t *testing.T, in string) {
		m, err := ParseYAML(strings.NewReader(in))
		if err != nil {
			return
		}
		_, _ = FromMap(m)
	})
}

// FuzzListeners: listener parsing never panics; accepted endpoints have an
// upper-case name, a port in range and render back to a string that parses
// to the same endpoint.
func FuzzListeners(f *testing.F) {
	for _, s := range []string{"PLAINTEXT://:9092", "INTERNAL://[::1]:1,EXTERNAL://h:2", "a://b:c", "://:1", "X://h:-1"} {
		f.Add(s, "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,EXTERNAL:SSL,A:SSL,X:PLAINTEXT")
	}
	f.Fuzz(func(t *testing.T, listeners, protoMap string) {
		pm, err := ParseSecurityProtocolMap(protoMap)
		if err != nil {
			return
		}
		eps, err := ParseEndpoints(listeners, pm, true)
		if err != nil {
			return
		}
		for _, e := range eps {
			if e.ListenerName != strings.ToUpper(e.ListenerName) || e.Port < 0 || e.Port > 65535 {
				t.Fatalf("bad endpoint %+v from %q", e, listeners)
			}
			back, err := ParseEndpoints(e.String(), pm, true)
			if err != nil || len(back) != 1 || back[0] != e {
				t.Fatalf("%+v renders as %q which parses to %+v (%v)", e, e.String(), back, err)
			}
		}
	})
}

func TestDescribe(t *testing.T) {
	c := mustFromMap(t, with("broker.id", "3", "zookeeper.sync.time.ms", "2000"))
	d := c.Describe()
	for _, want := range []string{"KafkaConfig values: \n", "\tbroker.id = 3\n", "\tlog.dirs = null\n", "\tlog.cleanup.policy = delete\n", "\tzookeeper.connect = localhost:2181\n", "ignored (not implemented by Klassik): zookeeper.sync.time.ms\n"} {
		if !strings.Contains(d, want) {
			t.Errorf("Describe lacks %q:\n%s", want, d)
		}
	}
	if strings.Count(d, "\n\t") != len(BrokerKeys()) {
		t.Errorf("Describe lists %d keys, want %d", strings.Count(d, "\n\t"), len(BrokerKeys()))
	}
}

// TestDeprecatedListenerKeys: Kafka 2.8 still builds the listener from port
// and host.name (and the advertised one from advertised.host.name/port) when
// listeners/advertised.listeners are unset.
func TestDeprecatedListenerKeys(t *testing.T) {
	cases := []struct {
		props            map[string]string
		listener, advert string
	}{
		{base(), "PLAINTEXT://:9092", "PLAINTEXT://:9092"},
		{with("port", "9093"), "PLAINTEXT://:9093", "PLAINTEXT://:9093"},
		{with("port", "9093", "host.name", "10.0.0.1"), "PLAINTEXT://10.0.0.1:9093", "PLAINTEXT://10.0.0.1:9093"},
		{with("port", "9093", "advertised.host.name", "kafka.example.com"), "PLAINTEXT://:9093", "PLAINTEXT://kafka.example.com:9093"},
		{with("advertised.port", "19092"), "PLAINTEXT://:9092", "PLAINTEXT://:19092"},
		{with("port", "9093", "listeners", "PLAINTEXT://:9094"), "PLAINTEXT://:9094", "PLAINTEXT://:9094"},
		{with("host.name", "::1"), "PLAINTEXT://[::1]:9092", "PLAINTEXT://[::1]:9092"},
	}
	for _, tc := range cases {
		c := mustFromMap(t, tc.props)
		l, a := c.ListenerEndpoints(), c.AdvertisedEndpoints()
		if len(l) != 1 || l[0].String() != tc.listener || len(a) != 1 || a[0].String() != tc.advert {
			t.Errorf("%v: listeners %v advertised %v, want %s / %s", tc.props, l, a, tc.listener, tc.advert)
		}
	}
	if _, err := FromMap(with("port", "70000")); err == nil {
		t.Errorf("port out of range accepted")
	}
}

// A Kafka-only key whose being ignored would change what the cluster does
// stops start-up, naming it; a tuning key of a part Klassik lacks does not.
func TestRefusedKafkaKeys(t *testing.T) {
	for key := range refusedKafkaKeys {
		if !kafkaOnlyKeys[key] {
			t.Errorf("%s is refused but not in the Kafka-only list", key)
		}
		_, err := FromMap(with(key, "x"))
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "not supported by Klassik") {
			t.Errorf("%s=x: %v", key, err)
		}
	}
	if _, err := FromMap(with("quota.window.num", "11")); err != nil {
		t.Errorf("quota.window.num refused: %v", err)
	}
}
