package group

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Config is the coordinator's slice of the broker configuration, with
// Kafka's property names beside each field.
type Config struct {
	// group.initial.rebalance.delay.ms: extra wait before the first
	// rebalance of an Empty group completes, extended by each new joiner.
	InitialRebalanceDelay time.Duration
	// group.min.session.timeout.ms and group.max.session.timeout.ms.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// group.max.size: members per group (Kafka's default is Int.MaxValue).
	MaxSize int
	// offsets.retention.minutes.
	OffsetsRetention time.Duration
	// offsets.retention.check.interval.ms.
	OffsetsRetentionCheckInterval time.Duration
	// offsets.topic.num.partitions: fixes the group-to-partition mapping.
	OffsetsTopicPartitions int32
	// offsets.commit.timeout.ms: bound of one append to __consumer_offsets.
	OffsetCommitTimeout time.Duration
	// offset.metadata.max.bytes.
	OffsetMetadataMaxBytes int
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		InitialRebalanceDelay:         3000 * time.Millisecond,
		MinSessionTimeout:             6000 * time.Millisecond,
		MaxSessionTimeout:             1800000 * time.Millisecond,
		MaxSize:                       math.MaxInt32,
		OffsetsRetention:              10080 * time.Minute,
		OffsetsRetentionCheckInterval: 600000 * time.Millisecond,
		OffsetsTopicPartitions:        50,
		OffsetCommitTimeout:           5000 * time.Millisecond,
		OffsetMetadataMaxBytes:        4096,
	}
}

// Validate reports every invalid setting.
func (c Config) Validate() error {
	var errs []error
	if c.InitialRebalanceDelay < 0 {
		errs = append(errs, fmt.Errorf("group.initial.rebalance.delay.ms must be >= 0, got %v", c.InitialRebalanceDelay))
	}
	if c.MinSessionTimeout < 0 || c.MaxSessionTimeout < c.MinSessionTimeout {
		errs = append(errs, fmt.Errorf("group.max.session.timeout.ms (%v) must be >= group.min.session.timeout.ms (%v) >= 0",
			c.MaxSessionTimeout, c.MinSessionTimeout))
	}
	if c.MaxSize < 1 {
		errs = append(errs, fmt.Errorf("group.max.size must be >= 1, got %d", c.MaxSize))
	}
	if c.OffsetsRetention < time.Minute {
		errs = append(errs, fmt.Errorf("offsets.retention.minutes must be >= 1, got %v", c.OffsetsRetention))
	}
	if c.OffsetsRetentionCheckInterval <= 0 {
		errs = append(errs, fmt.Errorf("offsets.retention.check.interval.ms must be > 0, got %v", c.OffsetsRetentionCheckInterval))
	}
	if c.OffsetsTopicPartitions < 1 {
		errs = append(errs, fmt.Errorf("offsets.topic.num.partitions must be >= 1, got %d", c.OffsetsTopicPartitions))
	}
	if c.OffsetCommitTimeout <= 0 {
		errs = append(errs, fmt.Errorf("offsets.commit.timeout.ms must be > 0, got %v", c.OffsetCommitTimeout))
	}
	if c.OffsetMetadataMaxBytes < 0 {
		errs = append(errs, fmt.Errorf("offset.metadata.max.bytes must be >= 0, got %d", c.OffsetMetadataMaxBytes))
	}
	return errors.Join(errs...)
}
