package main

// Views the replication scenarios (hw-truncation, unclean-election, acks)
// check their steps against: what a replica's segment files hold, read
// from disk, and producers with a chosen acks.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

// storedRecord is one record of a replica's log as the files hold it.
type storedRecord struct {
	Offset      int64
	LeaderEpoch int32 // the batch's partition leader epoch
	Position    int   // byte position of its batch in the segment
	Value       string
}

// partitionDir is broker b's directory of tp.
func partitionDir(b *Broker, tp common.TopicPartition) string {
	return filepath.Join(b.LogDir, fmt.Sprintf("%s-%d", tp.Topic, tp.Partition))
}

// storedRecords reads broker b's log of tp from its segment files (so it
// works on a stopped broker too), in offset order.
func (s *Stage) storedRecords(b *Broker, tp common.TopicPartition) []storedRecord {
	segs, _ := filepath.Glob(filepath.Join(partitionDir(b, tp), "*.log"))
	slices.Sort(segs)
	var out []storedRecord
	for _, seg := range segs {
		data, err := os.ReadFile(seg)
		if err != nil {
			s.Failf("reading %s: %v", seg, err)
		}
		pos := 0
		err = record.ForEachBatch(data, func(batch []byte, h record.BatchHeader) error {
			recs, err := record.Records(batch)
			if err != nil {
				return err
			}
			for i := range recs {
				out = append(out, storedRecord{Offset: recs[i].Offset(h), LeaderEpoch: h.PartitionLeaderEpoch, Position: pos, Value: string(recs[i].Value)})
			}
			pos += len(batch)
			return nil
		})
		var pe *record.PositionError
		if err != nil && !(errors.As(err, &pe) && errors.Is(pe.Err, record.ErrTruncated)) {
			s.Failf("decoding %s: %v", seg, err)
		}
	}
	return out
}

// storedValues is "offset:value" of each record, for messages and
// comparisons.
func storedValues(recs []storedRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%d:%s", r.Offset, r.Value)
	}
	return out
}

// producer is a client producing to topic with the given acks (-1, 1 or
// 0), without idempotence, one record per batch.
func (s *Stage) producer(topic string, acks int16, opts ...kgo.Opt) *kgo.Client {
	a := kgo.AllISRAcks()
	switch acks {
	case 1:
		a = kgo.LeaderAck()
	case 0:
		a = kgo.NoAck()
	}
	base := []kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(a), kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.MetadataMinAge(100 * time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond })}
	// Without idempotence: no InitProducerID to a broker a step may have
	// paused, and acks other than all need it off anyway.
	base = append(base, kgo.DisableIdempotentWrite())
	return s.Client(append(base, opts...)...)
}

// produceTo writes one record to partition 0 and returns its offset and
// the error the producer reported.
func (s *Stage) produceTo(cl *kgo.Client, value string, timeout time.Duration) (int64, error) {
	ctx, cancel := s.Context(timeout)
	defer cancel()
	r, err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(value), Partition: 0}).First()
	if err != nil {
		return -1, err
	}
	return r.Offset, nil
}

// mustProduce is produceTo for a write the step needs.
func (s *Stage) mustProduce(cl *kgo.Client, value string) int64 {
	off, err := s.produceTo(cl, value, 30*time.Second)
	if err != nil {
		s.Failf("producing %q: %v", value, err)
	}
	return off
}

// waitGone waits until the znodes of the killed brokers' sessions
// (/brokers/ids/<id>, and /controller when one of them held it) are gone:
// ZooKeeper expired their sessions.
func (s *Stage) waitGone(ids ...int32) {
	s.WaitFor(30*time.Second, fmt.Sprintf("the sessions of brokers %v to expire", ids), func() bool {
		for _, id := range ids {
			if ok, _, err := s.zkc.Exists("/brokers/ids/" + strconv.Itoa(int(id))); err != nil || ok {
				return false
			}
			if c, ok, err := s.zkc.GetController(); err != nil || ok && c == id {
				return false
			}
		}
		return true
	})
}

// dumpLog shows broker b's segment of tp with bin/kafka-dump-log.sh
// --print-data-log.
func (s *Stage) dumpLog(b *Broker, tp common.TopicPartition) {
	seg := filepath.Join(partitionDir(b, tp), fmt.Sprintf("%020d.log", 0))
	s.Tool("kafka-dump-log.sh", "--files", seg, "--print-data-log")
}

// showEpochCheckpoint prints broker b's leader-epoch-checkpoint of tp
// (version, count, then "epoch startOffset" lines).
// The broker writes the file shortly after an epoch's first batch or
// leadership (and before its recovery point passes it), so this waits
// until the file has the epoch of the log's last batch.
func (s *Stage) showEpochCheckpoint(b *Broker, tp common.TopicPartition) {
	p := filepath.Join(partitionDir(b, tp), "leader-epoch-checkpoint")
	if recs := s.storedRecords(b, tp); len(recs) > 0 {
		want := recs[len(recs)-1].LeaderEpoch
		s.WaitFor(defaultWait, fmt.Sprintf("broker %d's leader-epoch-checkpoint to hold epoch %d", b.ID, want), func() bool {
			data, err := os.ReadFile(p)
			if err != nil {
				return false
			}
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			last := strings.Fields(lines[len(lines)-1])
			return len(last) == 2 && last[0] == strconv.Itoa(int(want))
		})
	}
	s.showFile(p)
}

// defaultWait bounds a replication step's wait.
const defaultWait = 30 * time.Second

// writeHighWatermarkCheckpoint writes broker b's (stopped)
// replication-offset-checkpoint with tp's high watermark hw, in the file's
// format (version 0, the number of lines, "topic partition offset"), and
// shows it.
func (s *Stage) writeHighWatermarkCheckpoint(b *Broker, tp common.TopicPartition, hw int64) {
	p := filepath.Join(b.LogDir, "replication-offset-checkpoint")
	if err := os.WriteFile(p, []byte(fmt.Sprintf("0\n1\n%s %d %d\n", tp.Topic, tp.Partition, hw)), 0o644); err != nil {
		s.Failf("writing %s: %v", p, err)
	}
	s.showFile(p)
}

// showFile prints a small text file as cat would.
func (s *Stage) showFile(p string) {
	data, err := os.ReadFile(p)
	if err != nil {
		s.Failf("reading %s: %v", p, err)
	}
	fmt.Fprintf(s.out, "    $ cat %s\n", p)
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		fmt.Fprintf(s.out, "      %s\n", l)
	}
}
