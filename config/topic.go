package config

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// TopicConfig describes one topic-level config (Kafka's LogConfig): its type,
// validator and the broker keys it defaults from, most specific first (the
// synonyms DescribeConfigs reports).
type TopicConfig struct {
	Name           string
	Type           Type
	BrokerSynonyms []string // e.g. retention.ms: log.retention.ms, log.retention.minutes, log.retention.hours
	Doc            string

	check func(v any) string
	// brokerDefault renders the value the topic inherits from c.
	brokerDefault func(c *Config) string
}

var throttledReplicasRE = regexp.MustCompile(`^(\*|([0-9]+:[0-9]+)(\s*,\s*[0-9]+:[0-9]+)*)?$`)

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

// topicConfigs is Kafka 2.8's LogConfig key set.
var topicConfigs = []TopicConfig{
	{Name: "cleanup.policy", Type: TypeList, BrokerSynonyms: []string{"log.cleanup.policy"},
		Doc: "delete, compact, or both", check: oneOf("compact", "delete"),
		brokerDefault: func(c *Config) string { return strings.Join(c.LogCleanupPolicy, ",") }},
	{Name: "compression.type", Type: TypeString, BrokerSynonyms: []string{"compression.type"},
		Doc: "codec of stored batches", check: oneOf(compressionTypes...),
		brokerDefault: func(c *Config) string { return c.CompressionType }},
	{Name: "delete.retention.ms", Type: TypeLong, BrokerSynonyms: []string{"log.cleaner.delete.retention.ms"},
		Doc: "how long tombstones are kept in compacted topics", check: atLeast(0),
		brokerDefault: func(c *Config) string { return itoa64(c.LogCleanerDeleteRetentionMs) }},
	{Name: "file.delete.delay.ms", Type: TypeLong, BrokerSynonyms: []string{"log.segment.delete.delay.ms"},
		Doc: "delay before deleted segment files are removed", check: atLeast(0),
		brokerDefault: func(c *Config) string { return itoa64(c.LogSegmentDeleteDelayMs) }},
	{Name: "flush.messages", Type: TypeLong, BrokerSynonyms: []string{"log.flush.interval.messages"},
		Doc: "fsync after this many messages", check: atLeast(0),
		brokerDefault: func(c *Config) string { return itoa64(c.LogFlushIntervalMessages) }},
	{Name: "flush.ms", Type: TypeLong, BrokerSynonyms: []string{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"},
		Doc: "fsync when unflushed data is this old", check: atLeast(0),
		brokerDefault: func(c *Config) string { return itoa64(c.EffectiveLogFlushIntervalMs()) }},
	{Name: "follower.replication.throttled.replicas", Type: TypeList,
		Doc:           "partition:broker pairs (or *) throttled on the follower side",
		brokerDefault: func(c *Config) string { return "" }},
	{Name: "index.interval.bytes", Type: TypeInt, BrokerSynonyms: []string{"log.index.interval.bytes"},
		Doc: "bytes between index entries", check: atLeast(0),
		brokerDefault: func(c *Config) string { return itoa64(int64(c.LogIndexIntervalBytes)) }},
	{Name: "leader.replication.throttled.replicas", Type: TypeList,
		Doc:           "partition:broker pairs (or *) throttled on the leader side",
		brokerDefault: func(c *Config) string { return "" }},
	{Name: "max.compaction.lag.ms", Type: TypeLong, BrokerSynonyms: []string{"log.cleaner.max.compaction.lag.ms"},
		Doc: "longest a record may stay uncompacted", check: atLeast(1),
		brokerDefault: func(c *Config) string { return itoa64(c.LogCleanerMaxCompactionLagMs) }},
	{Name: "max.message.bytes", Type: TypeInt, BrokerSynonyms: []string{"message.max.bytes"},
		Doc: "largest record batch accepted", check: atLeast(0),
		brokerDefault: func(c *Config) string { return itoa64(int64(c.MessageMaxBytes)) }},
	{Name: "message.downconversion.enable", Type: TypeBoolean, BrokerSynonyms: []string{"log.message.downconversion.enable"},
		Doc:           "allow down-conversion for old consumers",
		brokerDefault: func(c *Config) string { return strconv.FormatBool(c.LogMessageDownconversionEnable) }},
	{Name: "message.format.version", Type: TypeString, BrokerSynonyms: []string{"log.message.format.version"},
		Doc:           "on-disk record format (Klassik always writes v2)",
		brokerDefault: func(c *Config) string { return c.LogMessageFormatVersion }},
	{Name: "message.timestamp.difference.max.ms", Type: TypeLong, BrokerSynonyms: []string{"log.message.timestamp.difference.max.ms"},
		Doc: "allowed distance of CreateTime timestamps from the broker clock", check: atLeast(0),
		brokerDefault: func(c *Config) string { return itoa64(c.LogMessageTimestampDifferenceMaxMs) }},
	{Name: "message.timestamp.type", Type: TypeString, BrokerSynonyms: []string{"log.message.timestamp.type"},
		Doc: "CreateTime or LogAppendTime", check: oneOf("CreateTime", "LogAppendTime"),
		brokerDefault: func(c *Config) string { return c.LogMessageTimestampType }},
	{Name: "min.cleanable.dirty.ratio", Type: TypeDouble, BrokerSynonyms: []string{"log.cleaner.min.cleanable.ratio"},
		Doc: "dirty ratio that makes a log eligible for cleaning", check: between(0, 1),
		brokerDefault: func(c *Config) string { return strconv.FormatFloat(c.LogCleanerMinCleanableRatio, 'g', -1, 64) }},
	{Name: "min.compaction.lag.ms", Type: TypeLong, BrokerSynonyms: []string{"log.cleaner.min.compaction.lag.ms"},
		Doc: "records younger than this are not compacted", check: atLeast(0),
		brokerDefault: func(c *Config) string { return itoa64(c.LogCleanerMinCompactionLagMs) }},
	{Name: "min.insync.replicas", Type: TypeInt, BrokerSynonyms: []string{"min.insync.replicas"},
		Doc: "in-sync replicas required for acks=all", check: atLeast(1),
		brokerDefault: func(c *Config) string { return itoa64(int64(c.MinInsyncReplicas)) }},
	{Name: "preallocate", Type: TypeBoolean, BrokerSynonyms: []string{"log.preallocate"},
		Doc:           "preallocate segment files",
		brokerDefault: func(c *Config) string { return strconv.FormatBool(c.LogPreallocate) }},
	{Name: "retention.bytes", Type: TypeLong, BrokerSynonyms: []string{"log.retention.bytes"},
		Doc:           "size limit per partition; -1 = none",
		brokerDefault: func(c *Config) string { return itoa64(c.LogRetentionBytes) }},
	{Name: "retention.ms", Type: TypeLong, BrokerSynonyms: []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"},
		Doc: "age limit of segments; -1 = none", check: atLeast(-1),
		brokerDefault: func(c *Config) string { return itoa64(c.EffectiveLogRetentionMs()) }},
	{Name: "segment.bytes", Type: TypeInt, BrokerSynonyms: []string{"log.segment.bytes"},
		Doc: "segment size that triggers a roll", check: atLeast(14),
		brokerDefault: func(c *Config) string { return itoa64(int64(c.LogSegmentBytes)) }},
	{Name: "segment.index.bytes", Type: TypeInt, BrokerSynonyms: []string{"log.index.size.max.bytes"},
		Doc: "maximum index file size", check: atLeast(0),
		brokerDefault: func(c *Config) string { return itoa64(int64(c.LogIndexSizeMaxBytes)) }},
	{Name: "segment.jitter.ms", Type: TypeLong, BrokerSynonyms: []string{"log.roll.jitter.ms", "log.roll.jitter.hours"},
		Doc: "random jitter subtracted from segment.ms", check: atLeast(0),
		brokerDefault: func(c *Config) string { return itoa64(c.EffectiveLogRollJitterMs()) }},
	{Name: "segment.ms", Type: TypeLong, BrokerSynonyms: []string{"log.roll.ms", "log.roll.hours"},
		Doc: "segment age that triggers a roll", check: atLeast(1),
		brokerDefault: func(c *Config) string { return itoa64(c.EffectiveLogRollMs()) }},
	{Name: "unclean.leader.election.enable", Type: TypeBoolean, BrokerSynonyms: []string{"unclean.leader.election.enable"},
		Doc:           "allow out-of-sync leaders for this topic",
		brokerDefault: func(c *Config) string { return strconv.FormatBool(c.UncleanLeaderElectionEnable) }},
}

var topicConfigIndex = func() map[string]int {
	m := make(map[string]int, len(topicConfigs))
	for i, t := range topicConfigs {
		m[t.Name] = i
	}
	return m
}()

// TopicConfigs returns the topic-level configs, sorted by name. Callers must
// not modify it.
func TopicConfigs() []TopicConfig { return topicConfigs }

// LookupTopicConfig returns the definition of a topic config, or false.
func LookupTopicConfig(name string) (TopicConfig, bool) {
	i, ok := topicConfigIndex[name]
	if !ok {
		return TopicConfig{}, false
	}
	return topicConfigs[i], true
}

// TopicDefault returns the value a topic without an override gets for name
// from this broker configuration (Kafka's default when c is Defaults()).
func (c *Config) TopicDefault(name string) (string, bool) {
	t, ok := LookupTopicConfig(name)
	if !ok {
		return "", false
	}
	return t.brokerDefault(c), true
}

// parseTopicValue parses and range-checks one topic config value. The error
// text follows Kafka's ConfigException ("Invalid value X for configuration
// Y: reason").
func (t *TopicConfig) parse(value string) (any, error) {
	s := strings.TrimSpace(value)
	bad := func(reason string) error {
		return fmt.Errorf("Invalid value %s for configuration %s: %s", value, t.Name, reason)
	}
	var v any
	switch t.Type {
	case TypeBoolean:
		b, err := parseBool(s)
		if err != nil {
			return nil, bad("Expected value to be either true or false")
		}
		v = b
	case TypeInt:
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, bad("Not a number of type INT")
		}
		v = n
	case TypeLong:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, bad("Not a number of type LONG")
		}
		v = n
	case TypeDouble:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) {
			return nil, bad("Not a number of type DOUBLE")
		}
		v = f
	case TypeList:
		v = SplitList(s)
	default:
		v = s
	}
	if t.check != nil {
		if msg := t.check(v); msg != "" {
			return nil, bad("Value " + msg)
		}
	}
	switch t.Name {
	case "leader.replication.throttled.replicas", "follower.replication.throttled.replicas":
		if !throttledReplicasRE.MatchString(s) {
			return nil, bad("must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")
		}
	case "message.format.version":
		if !validAPIVersion(s) {
			return nil, bad("Version `" + s + "` is not a valid version")
		}
	}
	return v, nil
}

// ValidateTopicConfig checks topic config overrides as CreateTopics,
// AlterConfigs and kafka-topics.sh --config do. Every problem is reported,
// sorted by key, in Kafka's wording ("Unknown topic config name: x",
// "Invalid value ..."), ready for an INVALID_CONFIG error message.
func ValidateTopicConfig(overrides map[string]string) error {
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var errs []error
	parsed := map[string]any{}
	for _, k := range keys {
		t, ok := LookupTopicConfig(k)
		if !ok {
			errs = append(errs, fmt.Errorf("Unknown topic config name: %s", k))
			continue
		}
		v, err := t.parse(overrides[k])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		parsed[k] = v
	}
	minLag, okMin := parsed["min.compaction.lag.ms"].(int64)
	maxLag, okMax := parsed["max.compaction.lag.ms"].(int64)
	if okMin && okMax && minLag > maxLag {
		errs = append(errs, fmt.Errorf("conflict topic config setting min.compaction.lag.ms (%d) > max.compaction.lag.ms (%d)", minLag, maxLag))
	}
	return errors.Join(errs...)
}

// EffectiveTopicConfig merges overrides over the broker defaults and returns
// the value of every topic config (what DescribeConfigs shows for a topic).
func (c *Config) EffectiveTopicConfig(overrides map[string]string) map[string]string {
	out := make(map[string]string, len(topicConfigs))
	for _, t := range topicConfigs {
		if v, ok := overrides[t.Name]; ok {
			out[t.Name] = v
		} else {
			out[t.Name] = t.brokerDefault(c)
		}
	}
	return out
}
