package broker

import (
	"testing"

	"github.com/klassik/klassik/broker/storage"
	"github.com/klassik/klassik/config"
)

// with is a minimal server.properties with the given keys on top.
func with(kv ...string) map[string]string {
	m := map[string]string{"zookeeper.connect": "localhost:2181"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func mustFromMap(t *testing.T, m map[string]string) *config.Config {
	t.Helper()
	if m == nil {
		m = with()
	}
	c, err := config.FromMap(m)
	if err != nil {
		t.Fatalf("FromMap(%v): %v", m, err)
	}
	return c
}

// TestLogConfigDefaults: Kafka's broker defaults give storage's defaults.
func TestLogConfigDefaults(t *testing.T) {
	c := mustFromMap(t, nil)
	got, err := logConfig(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := storage.DefaultLogConfig(); got != want {
		t.Fatalf("LogConfig(nil)\n got %+v\nwant %+v", got, want)
	}
}

func TestLogConfigOverrides(t *testing.T) {
	c := mustFromMap(t, with("log.retention.minutes", "10", "log.roll.hours", "1", "log.cleanup.policy", "compact",
		"log.flush.interval.ms", "1000", "message.max.bytes", "2000", "log.preallocate", "true"))
	got, err := logConfig(c, map[string]string{"segment.bytes": "1024", "cleanup.policy": "compact,delete", "retention.ms": "-1", "compression.type": "lz4"})
	if err != nil {
		t.Fatal(err)
	}
	if got.SegmentBytes != 1024 || !got.CleanupPolicyCompact || !got.CleanupPolicyDelete || got.RetentionMs != -1 ||
		got.CompressionType != "lz4" || got.SegmentMs != 3600000 || got.FlushMs != 1000 || got.MaxMessageBytes != 2000 || !got.Preallocate {
		t.Errorf("overrides/broker defaults not applied: %+v", got)
	}
	noOverride, err := logConfig(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if noOverride.RetentionMs != 600000 || !noOverride.CleanupPolicyCompact || noOverride.CleanupPolicyDelete {
		t.Errorf("broker retention/cleanup not inherited: %+v", noOverride)
	}
	if _, err := logConfig(c, map[string]string{"segment.bytes": "1"}); err == nil {
		t.Errorf("invalid override accepted")
	}
	mc, err := logManagerConfig(c)
	if err != nil || mc.Defaults != noOverride || len(mc.Dirs) != 1 {
		t.Errorf("LogManager %+v %v", mc, err)
	}
}

// FuzzValidateTopicConfig: validation never panics, and a map it accepts
// always converts to a storage.LogConfig.
func FuzzValidateTopicConfig(f *testing.F) {
	f.Add("segment.bytes", "1024")
	f.Add("cleanup.policy", "compact,delete")
	f.Add("min.cleanable.dirty.ratio", "NaN")
	f.Add("retention.ms", "-1")
	f.Add("leader.replication.throttled.replicas", "0:1, 2:3")
	c := config.Defaults()
	c.ZookeeperConnect = "localhost:2181"
	f.Fuzz(func(t *testing.T, k, v string) {
		m := map[string]string{k: v}
		if config.ValidateTopicConfig(m) != nil {
			return
		}
		if _, err := logConfig(c, m); err != nil {
			t.Fatalf("accepted %q=%q but LogConfig failed: %v", k, v, err)
		}
	})
}
