package txn

import (
	"errors"
	"fmt"
	"time"
)

// Config is the transaction coordinator's slice of the broker
// configuration, with Kafka's property names beside each field.
type Config struct {
	BrokerID int32
	// transaction.state.log.num.partitions: fixes the id-to-partition
	// mapping, so it must not change once the topic exists.
	NumPartitions int32
	// transaction.max.timeout.ms: the largest transaction.timeout.ms a
	// producer may ask for.
	MaxTimeout time.Duration
	// transactional.id.expiration.ms: an id whose last transaction ended
	// this long ago (and that is not in a transaction) is removed.
	IDExpiration time.Duration
	// transaction.abort.timed.out.transaction.cleanup.interval.ms.
	AbortTimedOutInterval time.Duration
	// transaction.remove.expired.transaction.cleanup.interval.ms.
	RemoveExpiredInterval time.Duration
	// offsets.topic.num.partitions: AddOffsetsToTxn adds the group's
	// __consumer_offsets partition to the transaction.
	OffsetsTopicPartitions int32
	// request.timeout.ms: bound of one WriteTxnMarkers round trip and of
	// a tombstone append.
	MarkerTimeout time.Duration
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		NumPartitions:          50,
		MaxTimeout:             15 * time.Minute,
		IDExpiration:           7 * 24 * time.Hour,
		AbortTimedOutInterval:  10 * time.Second,
		RemoveExpiredInterval:  time.Hour,
		OffsetsTopicPartitions: 50,
		MarkerTimeout:          30 * time.Second,
	}
}

// Validate reports every invalid setting.
func (c Config) Validate() error {
	var errs []error
	if c.NumPartitions < 1 {
		errs = append(errs, fmt.Errorf("transaction.state.log.num.partitions must be >= 1, got %d", c.NumPartitions))
	}
	if c.MaxTimeout < time.Millisecond {
		errs = append(errs, fmt.Errorf("transaction.max.timeout.ms must be >= 1, got %v", c.MaxTimeout))
	}
	if c.IDExpiration < time.Millisecond {
		errs = append(errs, fmt.Errorf("transactional.id.expiration.ms must be >= 1, got %v", c.IDExpiration))
	}
	if c.AbortTimedOutInterval < time.Millisecond {
		errs = append(errs, fmt.Errorf("transaction.abort.timed.out.transaction.cleanup.interval.ms must be >= 1, got %v", c.AbortTimedOutInterval))
	}
	if c.RemoveExpiredInterval < time.Millisecond {
		errs = append(errs, fmt.Errorf("transaction.remove.expired.transaction.cleanup.interval.ms must be >= 1, got %v", c.RemoveExpiredInterval))
	}
	if c.OffsetsTopicPartitions < 1 {
		errs = append(errs, fmt.Errorf("offsets.topic.num.partitions must be >= 1, got %d", c.OffsetsTopicPartitions))
	}
	if c.MarkerTimeout <= 0 {
		errs = append(errs, fmt.Errorf("request.timeout.ms must be > 0, got %v", c.MarkerTimeout))
	}
	return errors.Join(errs...)
}
