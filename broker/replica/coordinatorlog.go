package replica

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/broker/common"
)

// defaultCoordinatorAppendTimeout bounds AppendToLocalLogAndWait when ctx has
// no deadline.
const defaultCoordinatorAppendTimeout = 5 * time.Second

// AppendToLocalLogAndWait is a coordinator's acks=all write: it appends
// records to a partition this broker leads (AppendToLocalLog with acks=-1,
// so min.insync.replicas is checked first) and returns once every ISR
// member has them, so the write survives a coordinator failover. ctx bounds
// the wait (the group coordinator sets offsets.commit.timeout.ms); without
// a deadline it is 5 s. Failures are kerr errors (NOT_LEADER_OR_FOLLOWER,
// NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT)
// or the append's error.
func (m *Manager) AppendToLocalLogAndWait(ctx context.Context, tp common.TopicPartition, records []byte) error {
	res, err := m.AppendToLocalLog(tp, records, -1)
	if err != nil {
		return err
	}
	timeout := defaultCoordinatorAppendTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	if code := m.WaitForReplication(ctx, tp, res.LastOffset, timeout); code != 0 {
		return kerr.ErrorForCode(code)
	}
	return nil
}

// TopicLog is the local log of one internal topic as its coordinator sees
// it: partitions by number, written with acks=all and read back from this
// broker's replica (the group coordinator's OffsetStore over
// __consumer_offsets).
type TopicLog struct {
	m     *Manager
	topic string
}

// TopicLog returns topic's coordinator view.
func (m *Manager) TopicLog(topic string) TopicLog { return TopicLog{m: m, topic: topic} }

// Append writes one batch to the partition and waits for the ISR
// (AppendToLocalLogAndWait).
func (l TopicLog) Append(ctx context.Context, partition int32, batch []byte) error {
	return l.m.AppendToLocalLogAndWait(ctx, common.TopicPartition{Topic: l.topic, Partition: partition}, batch)
}

// Read calls fn for every batch of the partition from its log start
// (ReadLocalLog).
func (l TopicLog) Read(ctx context.Context, partition int32, fn func(batch []byte) error) error {
	return l.m.ReadLocalLog(ctx, common.TopicPartition{Topic: l.topic, Partition: partition}, 0, fn)
}
