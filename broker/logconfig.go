package broker

import (
	"github.com/klassik/klassik/broker/storage"
	"github.com/klassik/klassik/config"
)

// logConfig returns a topic's storage settings: the broker's log.* defaults
// with the topic's overrides (from /config/topics/<t>) on top, as Kafka's
// LogConfig.fromProps does. Invalid overrides are reported with
// config.ValidateTopicConfig's messages. Topic configs that storage does not
// use (min.insync.replicas, unclean.leader.election.enable, throttled
// replicas, message.format.version, message.downconversion.enable) are
// validated but not carried.
func logConfig(c *config.Config, overrides map[string]string) (storage.LogConfig, error) {
	if err := config.ValidateTopicConfig(overrides); err != nil {
		return storage.LogConfig{}, err
	}
	return storage.LogConfigFromProps(c.EffectiveTopicConfig(overrides))
}

// logManagerConfig returns the LogManager settings: data directories, topic
// defaults and the periodic task intervals.
func logManagerConfig(c *config.Config) (storage.ManagerConfig, error) {
	defaults, err := logConfig(c, nil)
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
	mc.CleanerSettings = cleanerSettings(c) // dynamicapply.go
	return mc, nil
}
