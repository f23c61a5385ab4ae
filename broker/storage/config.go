package storage

import (
	gometrics "github.com/rcrowley/go-metrics"

	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"
)

// LogConfig holds the topic-level log settings. Each field is named after the
// Kafka topic config it carries (broker default in parentheses).
type LogConfig struct {
	SegmentBytes      int64 // segment.bytes (log.segment.bytes)
	SegmentMs         int64 // segment.ms (log.roll.ms / log.roll.hours)
	SegmentJitterMs   int64 // segment.jitter.ms (log.roll.jitter.ms)
	SegmentIndexBytes int32 // segment.index.bytes (log.index.size.max.bytes)

	IndexIntervalBytes int32 // index.interval.bytes (log.index.interval.bytes)
	MaxMessageBytes    int32 // max.message.bytes (message.max.bytes)
	RetentionMs        int64 // retention.ms (log.retention.ms/minutes/hours)
	RetentionBytes     int64 // retention.bytes (log.retention.bytes)

	CleanupPolicyCompact bool // cleanup.policy contains "compact"
	CleanupPolicyDelete  bool // cleanup.policy contains "delete"

	DeleteRetentionMs      int64   // delete.retention.ms (log.cleaner.delete.retention.ms)
	MinCompactionLagMs     int64   // min.compaction.lag.ms
	MaxCompactionLagMs     int64   // max.compaction.lag.ms
	MinCleanableDirtyRatio float64 // min.cleanable.dirty.ratio (log.cleaner.min.cleanable.ratio)

	FileDeleteDelayMs int64 // file.delete.delay.ms (log.segment.delete.delay.ms)
	FlushMessages     int64 // flush.messages (log.flush.interval.messages)
	FlushMs           int64 // flush.ms (log.flush.interval.ms)

	MessageTimestampType            string // message.timestamp.type: "CreateTime" | "LogAppendTime"
	MessageTimestampDifferenceMaxMs int64  // message.timestamp.difference.max.ms
	CompressionType                 string // compression.type ("producer", "gzip", ...)
	Preallocate                     bool   // preallocate (log.preallocate)
}

// DefaultLogConfig returns Kafka 3.4's broker defaults.
func DefaultLogConfig() LogConfig {
	return LogConfig{
		SegmentBytes:                    1 << 30,
		SegmentMs:                       168 * 3600 * 1000,
		SegmentJitterMs:                 0,
		SegmentIndexBytes:               10 * 1024 * 1024,
		IndexIntervalBytes:              4096,
		MaxMessageBytes:                 1048588,
		RetentionMs:                     168 * 3600 * 1000,
		RetentionBytes:                  -1,
		CleanupPolicyDelete:             true,
		DeleteRetentionMs:               86400000,
		MinCompactionLagMs:              0,
		MaxCompactionLagMs:              math.MaxInt64,
		MinCleanableDirtyRatio:          0.5,
		FileDeleteDelayMs:               60000,
		FlushMessages:                   math.MaxInt64,
		FlushMs:                         math.MaxInt64,
		MessageTimestampType:            "CreateTime",
		MessageTimestampDifferenceMaxMs: math.MaxInt64,
		CompressionType:                 "producer",
	}
}

// LogConfigFromProps builds a LogConfig from topic config properties
// (Kafka's names: segment.bytes, cleanup.policy, ...), as Kafka's
// LogConfig.fromProps does. A property missing from props keeps its
// DefaultLogConfig value; a number that does not parse is an error. A
// negative retention.ms means unlimited and becomes -1.
func LogConfigFromProps(props map[string]string) (LogConfig, error) {
	lc := DefaultLogConfig()
	var firstErr error
	setInts(props, &firstErr, []intProp[int64]{
		{"segment.bytes", &lc.SegmentBytes},
		{"segment.ms", &lc.SegmentMs},
		{"segment.jitter.ms", &lc.SegmentJitterMs},
		{"retention.ms", &lc.RetentionMs},
		{"retention.bytes", &lc.RetentionBytes},
		{"delete.retention.ms", &lc.DeleteRetentionMs},
		{"min.compaction.lag.ms", &lc.MinCompactionLagMs},
		{"max.compaction.lag.ms", &lc.MaxCompactionLagMs},
		{"file.delete.delay.ms", &lc.FileDeleteDelayMs},
		{"flush.messages", &lc.FlushMessages},
		{"flush.ms", &lc.FlushMs},
		{"message.timestamp.difference.max.ms", &lc.MessageTimestampDifferenceMaxMs},
	})
	setInts(props, &firstErr, []intProp[int32]{
		{"segment.index.bytes", &lc.SegmentIndexBytes},
		{"index.interval.bytes", &lc.IndexIntervalBytes},
		{"max.message.bytes", &lc.MaxMessageBytes},
	})
	if v, ok := props["cleanup.policy"]; ok {
		lc.CleanupPolicyCompact, lc.CleanupPolicyDelete = false, false
		for _, p := range strings.Split(v, ",") {
			switch strings.TrimSpace(p) {
			case "compact":
				lc.CleanupPolicyCompact = true
			case "delete":
				lc.CleanupPolicyDelete = true
			}
		}
	}
	if v, ok := props["min.cleanable.dirty.ratio"]; ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("storage: min.cleanable.dirty.ratio: %w", err)
		}
		lc.MinCleanableDirtyRatio = f
	}
	if v, ok := props["message.timestamp.type"]; ok {
		lc.MessageTimestampType = strings.TrimSpace(v)
	}
	if v, ok := props["compression.type"]; ok {
		lc.CompressionType = strings.TrimSpace(v)
	}
	if v, ok := props["preallocate"]; ok {
		lc.Preallocate = strings.EqualFold(strings.TrimSpace(v), "true")
	}
	if firstErr != nil {
		return LogConfig{}, firstErr
	}
	if lc.RetentionMs < 0 {
		lc.RetentionMs = -1
	}
	return lc, nil
}

// intProp is an integer topic property and the LogConfig field it sets.
type intProp[T int32 | int64] struct {
	key string
	dst *T
}

// setInts sets each field whose property props holds. A value that does
// not parse as a 64-bit integer leaves its field alone and, if it is the
// first problem, goes to *firstErr.
func setInts[T int32 | int64](props map[string]string, firstErr *error, fields []intProp[T]) {
	for _, f := range fields {
		v, ok := props[f.key]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			if *firstErr == nil {
				*firstErr = fmt.Errorf("storage: %s: %w", f.key, err)
			}
			continue
		}
		*f.dst = T(n)
	}
}

// maxIndexEntries returns how many entries of size entrySize fit in
// segment.index.bytes (rounded down to whole entries).
func (c *LogConfig) maxIndexBytes(entrySize int) int {
	n := int(c.SegmentIndexBytes)
	if n < entrySize {
		n = entrySize
	}
	return n / entrySize * entrySize
}

// rollMs is segment.ms, shortened to max.compaction.lag.ms for compacted
// topics.
func (c *LogConfig) rollMs() int64 {
	ms := c.SegmentMs
	if c.CleanupPolicyCompact && c.MaxCompactionLagMs > 0 && c.MaxCompactionLagMs < ms {
		ms = c.MaxCompactionLagMs
	}
	if ms <= 0 {
		ms = math.MaxInt64
	}
	return ms
}

func (c *LogConfig) validate() error {
	switch {
	case c.SegmentBytes < 14:
		return fmt.Errorf("storage: segment.bytes %d too small", c.SegmentBytes)
	case c.SegmentIndexBytes < 12:
		return fmt.Errorf("storage: segment.index.bytes %d too small", c.SegmentIndexBytes)
	case c.IndexIntervalBytes < 0:
		return fmt.Errorf("storage: index.interval.bytes %d negative", c.IndexIntervalBytes)
	case c.MaxMessageBytes < 0:
		return fmt.Errorf("storage: max.message.bytes %d negative", c.MaxMessageBytes)
	case c.MessageTimestampType != "CreateTime" && c.MessageTimestampType != "LogAppendTime":
		return fmt.Errorf("storage: message.timestamp.type %q is neither CreateTime nor LogAppendTime", c.MessageTimestampType)
	}
	return nil
}

// ManagerConfig is the broker-level configuration of the LogManager. Zero
// intervals take Kafka's defaults; a negative interval disables the task.
type ManagerConfig struct {
	Dirs     []string  // log.dirs
	Defaults LogConfig // topic defaults derived from the broker's log.* properties

	RecoveryThreadsPerDataDir int // num.recovery.threads.per.data.dir (1)

	RetentionCheckIntervalMs             int64 // log.retention.check.interval.ms (300000)
	FlushCheckpointIntervalMs            int64 // log.flush.offset.checkpoint.interval.ms (60000)
	FlushStartOffsetCheckpointIntervalMs int64 // log.flush.start.offset.checkpoint.interval.ms (60000)
	HighWatermarkCheckpointIntervalMs    int64 // replica.high.watermark.checkpoint.interval.ms (5000)
	FlushSchedulerIntervalMs             int64 // log.flush.scheduler.interval.ms (Long.MAX: flush.ms checks)
	InitialTaskDelayMs                   int64 // delay before the first scheduled run (Kafka: 30000)
	ProducerIDExpirationCheckIntervalMs  int64 // producer.id.expiration.check.interval.ms (600000)

	CleanerEnable           bool  // log.cleaner.enable
	CleanerDedupeBufferSize int64 // log.cleaner.dedupe.buffer.size
	// CleanerSettings are the other log.cleaner.* keys
	// (cleanerreconfigure.go); its DedupeBufferSize is ignored in favour of
	// CleanerDedupeBufferSize.
	CleanerSettings CleanerSettings

	Clock  func() time.Time // injectable clock; time.Now when nil
	Logger *slog.Logger     // slog.Default when nil
	// Metrics receives the per-log gauges (kafka.log.Log.*); nil: none.
	Metrics gometrics.Registry
}

// DefaultManagerConfig returns Kafka's broker defaults for dirs.
func DefaultManagerConfig(dirs ...string) ManagerConfig {
	return ManagerConfig{
		Dirs:                                 dirs,
		Defaults:                             DefaultLogConfig(),
		RecoveryThreadsPerDataDir:            1,
		RetentionCheckIntervalMs:             300000,
		FlushCheckpointIntervalMs:            60000,
		FlushStartOffsetCheckpointIntervalMs: 60000,
		HighWatermarkCheckpointIntervalMs:    5000,
		FlushSchedulerIntervalMs:             math.MaxInt64,
		InitialTaskDelayMs:                   30000,
		ProducerIDExpirationCheckIntervalMs:  600000,
		CleanerEnable:                        true,
		CleanerDedupeBufferSize:              134217728,
	}
}
