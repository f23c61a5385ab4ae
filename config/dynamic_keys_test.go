package config

import (
	"strings"
	"testing"
)

// TestValidateDynamicBrokerConfigs checks the order and the texts of Kafka
// 2.8's DynamicBrokerConfig.validateConfigs.
func TestValidateDynamicBrokerConfigs(t *testing.T) {
	cases := []struct {
		props     map[string]string
		perBroker bool
		want      string
	}{
		{map[string]string{"message.max.bytes": "1000", "log.retention.ms": "5"}, false, ""},
		{map[string]string{"log.dirs": "/x", "broker.id": "3", "message.max.bytes": "1"}, true, "Cannot update these configs dynamically: Set(broker.id, log.dirs)"},
		{map[string]string{"log.retention.hours": "5"}, true, "Cannot update these configs dynamically: Set(log.retention.hours)"},
		{map[string]string{"ssl.keystore.location": "/k"}, true, "These security configs can be dynamically updated only per-listener using the listener prefix: Set(ssl.keystore.location)"},
		{map[string]string{"listener.name.external.ssl.keystore.location": "/k"}, true, ""},
		{map[string]string{"listener.name.external.ssl.keystore.location": "/k"}, false, "Cannot update these configs at default cluster level, broker id must be specified: Set(listener.name.external.ssl.keystore.location)"},
		{map[string]string{"listener.name.external.max.connections": "5"}, false, ""},
		{map[string]string{"message.max.bytes": "abc"}, false, "Invalid value abc for configuration message.max.bytes: Not a number of type INT"},
		{map[string]string{"unclean.leader.election.enable": "yes"}, false, "Invalid value yes for configuration unclean.leader.election.enable: Expected value to be either true or false"},
		{map[string]string{"min.insync.replicas": "0"}, false, "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"},
		{map[string]string{"leader.replication.throttled.rate": "1000", "follower.replication.throttled.rate": "x"}, true, "Invalid value x for configuration follower.replication.throttled.rate: Not a number of type LONG"},
		{map[string]string{"my.custom.key": "anything"}, false, ""},
	}
	for _, tc := range cases {
		err := ValidateDynamicBrokerConfigs(tc.props, tc.perBroker)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%v (per-broker %v):\n got %q\nwant %q", tc.props, tc.perBroker, got, tc.want)
		}
	}
	for key, mode := range map[string]string{"message.max.bytes": UpdateModeClusterWide, "num.replica.fetchers": UpdateModeClusterWide,
		"listener.name.a.ssl.keystore.location": UpdateModePerBroker, "listener.name.a.max.connections": UpdateModeClusterWide,
		"log.dirs": UpdateModeReadOnly, "leader.replication.throttled.rate": UpdateModeClusterWide} {
		if got := DynamicUpdateMode(key); got != mode {
			t.Errorf("DynamicUpdateMode(%s) = %s, want %s", key, got, mode)
		}
	}
}

// TestDynamicOnlyKeys: the throttle rates default to Long.MaxValue, are
// readable from the current config, and stop start-up when set statically
// (Kafka would ignore them there).
func TestDynamicOnlyKeys(t *testing.T) {
	c, err := FromMap(map[string]string{"zookeeper.connect": "127.0.0.1:2181"})
	if err != nil {
		t.Fatal(err)
	}
	if c.LeaderReplicationThrottledRate != 1<<63-1 || c.FollowerReplicationThrottledRate != 1<<63-1 || c.ReplicaAlterLogDirsIOMaxBytesPerSecond != 1<<63-1 {
		t.Fatal("throttle defaults are not Long.MaxValue")
	}
	_, err = FromMap(map[string]string{"zookeeper.connect": "127.0.0.1:2181", "leader.replication.throttled.rate": "100"})
	if err == nil || !strings.Contains(err.Error(), "kafka-configs") {
		t.Fatalf("a static throttle rate: %v", err)
	}
	d := NewDynamic(c)
	if err := d.Update(map[string]string{"leader.replication.throttled.rate": "100", "my.custom": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := d.Current().LeaderReplicationThrottledRate; got != 100 {
		t.Fatalf("dynamic rate %d", got)
	}
	if v, ok := d.Current().Value("leader.replication.throttled.rate"); !ok || v != "100" {
		t.Fatalf("Value = %q %v", v, ok)
	}
}

func TestFromPersistentPropsDropsWhatKafkaIgnores(t *testing.T) {
	c, _ := FromMap(map[string]string{"zookeeper.connect": "127.0.0.1:2181"})
	var logged []string
	got := FromPersistentProps(map[string]string{"message.max.bytes": "5", "log.dirs": "/x", "ssl.keystore.location": "/k",
		"listener.name.l.ssl.keystore.location": "/k", "min.insync.replicas": "z"}, false, c,
		func(msg string, _ ...any) { logged = append(logged, msg) })
	if len(got) != 1 || got["message.max.bytes"] != "5" || len(logged) != 5 {
		t.Fatalf("kept %v, logged %q", got, logged)
	}
}
