package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestTopicConfigNames checks the topic config set is Kafka 2.8's
// LogConfig set and every entry names its broker synonym.
func TestTopicConfigNames(t *testing.T) {
	want := []string{"cleanup.policy", "compression.type", "delete.retention.ms", "file.delete.delay.ms",
		"flush.messages", "flush.ms", "follower.replication.throttled.replicas", "index.interval.bytes",
		"leader.replication.throttled.replicas", "max.compaction.lag.ms", "max.message.bytes",
		"message.downconversion.enable", "message.format.version", "message.timestamp.difference.max.ms",
		"message.timestamp.type", "min.cleanable.dirty.ratio", "min.compaction.lag.ms", "min.insync.replicas",
		"preallocate", "retention.bytes", "retention.ms", "segment.bytes", "segment.index.bytes",
		"segment.jitter.ms", "segment.ms", "unclean.leader.election.enable"}
	var got []string
	for _, tc := range TopicConfigs() {
		got = append(got, tc.Name)
		for _, s := range tc.BrokerSynonyms {
			if lookupBrokerKey(s) == nil {
				t.Errorf("%s: synonym %s is not a broker key", tc.Name, s)
			}
		}
		if !strings.HasSuffix(tc.Name, "throttled.replicas") && len(tc.BrokerSynonyms) == 0 {
			t.Errorf("%s has no broker synonym", tc.Name)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("topic configs\n got %v\nwant %v", got, want)
	}
}

func TestValidateTopicConfig(t *testing.T) {
	ok := []map[string]string{
		nil,
		{"cleanup.policy": "compact,delete", "retention.ms": "-1", "segment.bytes": "14", "min.cleanable.dirty.ratio": "0.1"},
		{"leader.replication.throttled.replicas": "0:1,1:2", "follower.replication.throttled.replicas": "*"},
		{"message.format.version": "2.1", "compression.type": "zstd", "preallocate": "TRUE", "message.timestamp.type": "LogAppendTime"},
	}
	for _, m := range ok {
		if err := ValidateTopicConfig(m); err != nil {
			t.Errorf("ValidateTopicConfig(%v): %v", m, err)
		}
	}
	bad := []struct {
		m    map[string]string
		want string
	}{
		{map[string]string{"retention.msx": "1"}, "Unknown topic config name: retention.msx"},
		{map[string]string{"segment.bytes": "13"}, "Invalid value 13 for configuration segment.bytes: Value must be at least 14"},
		{map[string]string{"segment.bytes": "big"}, "Invalid value big for configuration segment.bytes: Not a number of type INT"},
		{map[string]string{"retention.ms": "-2"}, "retention.ms: Value must be at least -1"},
		{map[string]string{"segment.ms": "0"}, "segment.ms: Value must be at least 1"},
		{map[string]string{"cleanup.policy": "remove"}, "cleanup.policy: Value is not one of"},
		{map[string]string{"compression.type": "brotli"}, "compression.type"},
		{map[string]string{"min.cleanable.dirty.ratio": "2"}, "between 0 and 1"},
		{map[string]string{"preallocate": "yes"}, "either true or false"},
		{map[string]string{"min.insync.replicas": "0"}, "min.insync.replicas: Value must be at least 1"},
		{map[string]string{"leader.replication.throttled.replicas": "0-1"}, "[partitionId]:[brokerId]"},
		{map[string]string{"message.format.version": "9x"}, "not a valid version"},
		{map[string]string{"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}, "conflict topic config"},
	}
	for _, tc := range bad {
		err := ValidateTopicConfig(tc.m)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ValidateTopicConfig(%v) = %v, want %q", tc.m, err, tc.want)
		}
	}
	err := ValidateTopicConfig(map[string]string{"a": "1", "segment.bytes": "1"})
	if err == nil || !strings.Contains(err.Error(), "Unknown topic config name: a") || !strings.Contains(err.Error(), "segment.bytes") {
		t.Errorf("every problem should be reported: %v", err)
	}
}

func TestTopicDefaultSynonyms(t *testing.T) {
	c := mustFromMap(t, with("log.retention.hours", "2"))
	if v, _ := c.TopicDefault("retention.ms"); v != "7200000" {
		t.Errorf("retention.ms default %s", v)
	}
	if v, _ := c.TopicDefault("segment.ms"); v != "604800000" {
		t.Errorf("segment.ms default %s", v)
	}
	if _, ok := c.TopicDefault("nope"); ok {
		t.Errorf("unknown topic config has a default")
	}
	eff := c.EffectiveTopicConfig(map[string]string{"retention.ms": "5"})
	if eff["retention.ms"] != "5" || eff["cleanup.policy"] != "delete" || len(eff) != len(TopicConfigs()) {
		t.Errorf("EffectiveTopicConfig %v", eff)
	}
}

func TestTopicNames(t *testing.T) {
	long := strings.Repeat("a", 249)
	for _, ok := range []string{"a", "A-b_c.d", long, "__consumer_offsets", "0"} {
		if err := ValidateTopicName(ok); err != nil {
			t.Errorf("ValidateTopicName(%q): %v", ok, err)
		}
	}
	for name, want := range map[string]string{
		"":          "can't be empty",
		".":         `cannot be "." or ".."`,
		"..":        `cannot be "." or ".."`,
		long + "a":  "can't be longer than 249 characters",
		"a b":       "character other than ASCII alphanumerics",
		"caf\u00e9": "character other than ASCII alphanumerics",
		"a/b":       "character other than ASCII alphanumerics",
	} {
		err := ValidateTopicName(name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateTopicName(%q) = %v, want %q", name, err, want)
		}
	}
	if !TopicNamesCollide("a.b", "a_b") || !TopicNamesCollide("a_b", "a.b") || TopicNamesCollide("a.b", "a-b") || TopicNamesCollide("ab", "a_b") {
		t.Errorf("TopicNamesCollide wrong")
	}
	if !HasCollisionChars("a.b") || HasCollisionChars("ab") {
		t.Errorf("HasCollisionChars wrong")
	}
	if !IsInternalTopic("__consumer_offsets") || !IsInternalTopic("__transaction_state") || IsInternalTopic("x") {
		t.Errorf("IsInternalTopic wrong")
	}
}
