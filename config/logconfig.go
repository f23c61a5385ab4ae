package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/klassik/klassik/broker/storage"
)

// LogConfig returns the storage settings of a topic: the broker's log.*
// defaults with the topic's overrides (from /config/topics/<t>) on top,
// as Kafka's LogConfig.fromProps does. Invalid overrides are reported with
// ValidateTopicConfig's messages. Topic configs that storage does not use
// (min.insync.replicas, unclean.leader.election.enable, throttled replicas,
// message.format.version, message.downconversion.enable) are validated but
// not carried.
func (c *Config) LogConfig(overrides map[string]string) (storage.LogConfig, error) {
	if err := ValidateTopicConfig(overrides); err != nil {
		return storage.LogConfig{}, err
	}
	eff := c.EffectiveTopicConfig(overrides)
	var firstErr error
	i64 := func(k string) int64 {
		n, err := strconv.ParseInt(strings.TrimSpace(eff[k]), 10, 64)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("config: %s: %w", k, err)
		}
		return n
	}
	f64 := func(k string) float64 {
		f, err := strconv.ParseFloat(strings.TrimSpace(eff[k]), 64)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("config: %s: %w", k, err)
		}
		return f
	}
	b := func(k string) bool { return strings.EqualFold(strings.TrimSpace(eff[k]), "true") }
	policy := splitList(eff["cleanup.policy"])
	lc := storage.LogConfig{
		SegmentBytes:                    i64("segment.bytes"),
		SegmentMs:                       i64("segment.ms"),
		SegmentJitterMs:                 i64("segment.jitter.ms"),
		SegmentIndexBytes:               int32(i64("segment.index.bytes")),
		IndexIntervalBytes:              int32(i64("index.interval.bytes")),
		MaxMessageBytes:                 int32(i64("max.message.bytes")),
		RetentionMs:                     i64("retention.ms"),
		RetentionBytes:                  i64("retention.bytes"),
		CleanupPolicyCompact:            slices.Contains(policy, "compact"),
		CleanupPolicyDelete:             slices.Contains(policy, "delete"),
		DeleteRetentionMs:               i64("delete.retention.ms"),
		MinCompactionLagMs:              i64("min.compaction.lag.ms"),
		MaxCompactionLagMs:              i64("max.compaction.lag.ms"),
		MinCleanableDirtyRatio:          f64("min.cleanable.dirty.ratio"),
		FileDeleteDelayMs:               i64("file.delete.delay.ms"),
		FlushMessages:                   i64("flush.messages"),
		FlushMs:                         i64("flush.ms"),
		MessageTimestampType:            strings.TrimSpace(eff["message.timestamp.type"]),
		MessageTimestampDifferenceMaxMs: i64("message.timestamp.difference.max.ms"),
		CompressionType:                 strings.TrimSpace(eff["compression.type"]),
		Preallocate:                     b("preallocate"),
	}
	if firstErr != nil {
		return storage.LogConfig{}, firstErr
	}
	// A negative retention.ms means unlimited; storage expects -1.
	if lc.RetentionMs < 0 {
		lc.RetentionMs = -1
	}
	return lc, nil
}

// LogManager returns the LogManager settings: data directories, topic
// defaults and the periodic task intervals.
func (c *Config) LogManager() (storage.ManagerConfig, error) {
	defaults, err := c.LogConfig(nil)
	if err != nil {
		return storage.ManagerConfig{}, err
	}
	mc := storage.DefaultManagerConfig(c.LogDirList()...)
	mc.Defaults = defaults
	mc.RecoveryThreadsPerDataDir = int(c.NumRecoveryThreadsPerDataDir)
	mc.RetentionCheckIntervalMs = c.LogRetentionCheckIntervalMs
	mc.FlushCheckpointIntervalMs = int64(c.LogFlushOffsetCheckpointIntervalMs)
	mc.FlushStartOffsetCheckpointIntervalMs = int64(c.LogFlushStartOffsetCheckpointIntervalMs)
	mc.HighWatermarkCheckpointIntervalMs = c.ReplicaHighWatermarkCheckpointIntervalMs
	mc.FlushSchedulerIntervalMs = c.LogFlushSchedulerIntervalMs
	mc.CleanerEnable = c.LogCleanerEnable
	mc.CleanerDedupeBufferSize = c.LogCleanerDedupeBufferSize
	return mc, nil
}
