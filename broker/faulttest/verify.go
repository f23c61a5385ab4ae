package faulttest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/klassik/klassik/broker/testcluster"
)

// HighWatermarks returns each partition's high watermark as its leader
// reports it (ListOffsets latest, read_uncommitted).
func (c *Cluster) HighWatermarks(topic string) (map[int32]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	offs, err := c.Admin().ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	hw := map[int32]int64{}
	var firstErr error
	offs.Each(func(o kadm.ListedOffset) {
		if o.Err != nil && firstErr == nil {
			firstErr = fmt.Errorf("partition %d: %w", o.Partition, o.Err)
		}
		hw[o.Partition] = o.Offset
	})
	return hw, firstErr
}

// ConsumeAll reads every partition of topic from the start up to its high
// watermark with a kgo consumer and feeds each record to chk. It fails the
// test if the end is not reached within timeout.
func (c *Cluster) ConsumeAll(topic string, chk *testcluster.Checker, timeout time.Duration) int {
	c.t.Helper()
	var hw map[int32]int64
	c.WaitFor(20*time.Second, topic+": high watermarks", func() bool {
		var err error
		hw, err = c.HighWatermarks(topic)
		return err == nil
	})
	parts := map[int32]kgo.Offset{}
	for p := range hw {
		parts[p] = kgo.NewOffset().AtStart()
	}
	cl := c.Client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}), kgo.FetchMaxWait(500*time.Millisecond))
	defer cl.Close()
	next := map[int32]int64{}
	done := func() bool {
		for p, h := range hw {
			if next[p] < h {
				return false
			}
		}
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	n := 0
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			c.t.Fatalf("faulttest: consumed %d records of %s, positions %v, high watermarks %v, before the deadline", n, topic, next, hw)
		}
		fs.EachError(func(_ string, p int32, err error) { c.t.Logf("faulttest: fetch error on partition %d: %v", p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			chk.Consumed(ValueID(r.Value), r.Partition, r.Offset)
			next[r.Partition] = r.Offset + 1
			n++
		})
	}
	return n
}

// SegmentFiles lists the .log files of a partition in a log dir, in offset
// order (their names are 20-digit base offsets).
func SegmentFiles(logDir, topic string, partition int32) ([]string, error) {
	dir := filepath.Join(logDir, topic+"-"+strconv.Itoa(int(partition)))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".log") {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(files)
	return files, nil
}

// DiskLog is a replica's log as read from its segment files: the batches
// wholly below an end offset, their concatenated bytes, and the records by
// offset.
type DiskLog struct {
	Bytes   []byte             // concatenation of the batches below End
	End     int64              // the next offset after the last batch read
	Records []DiskRecord       // in offset order
	ByID    map[string][]int64 // record id -> offsets holding it
}

// DiskRecord is one record read from a segment.
type DiskRecord struct {
	Offset int64
	ID     string
}

// ReadReplicaLog reads a partition's segment files in logDir and keeps the
// batches whose last offset is below end (a high watermark). A torn batch
// past end (one being written) is tolerated; one below end is an error.
func ReadReplicaLog(logDir, topic string, partition int32, end int64) (*DiskLog, error) {
	files, err := SegmentFiles(logDir, topic, partition)
	if err != nil {
		return nil, err
	}
	dl := &DiskLog{ByID: map[string][]int64{}}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if err := decodeSegment(data, end, dl); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	return dl, nil
}

// errStop ends a segment walk once the end offset is reached.
var errStop = fmt.Errorf("faulttest: end reached")

// decodeSegment appends to dl the batches of one segment's bytes that lie
// wholly below end. Invariants (checked by FuzzDecodeSegment): it never
// panics; dl.Bytes grows only by whole batches; dl.End only increases.
func decodeSegment(data []byte, end int64, dl *DiskLog) error {
	err := record.ForEachBatch(data, func(batch []byte, h record.BatchHeader) error {
		if h.BaseOffset >= end {
			return errStop
		}
		if h.LastOffset() >= end {
			// A batch straddling the end: a high watermark always falls
			// on a batch boundary of the leader's log, so this replica
			// differs from the leader here; keep it so the comparison
			// shows the difference.
			return fmt.Errorf("batch %d..%d straddles the end offset %d", h.BaseOffset, h.LastOffset(), end)
		}
		if h.BaseOffset < dl.End {
			return fmt.Errorf("batch at offset %d after offset %d (out of order)", h.BaseOffset, dl.End-1)
		}
		if err := record.CheckCRC(batch); err != nil {
			return fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
		}
		dl.Bytes = append(dl.Bytes, batch...)
		dl.End = h.NextOffset()
		if h.IsControl() {
			return nil
		}
		recs, err := record.Records(batch)
		if err != nil {
			return fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
		}
		for i := range recs {
			off := recs[i].Offset(h)
			id := ValueID(recs[i].Value)
			dl.Records = append(dl.Records, DiskRecord{Offset: off, ID: id})
			dl.ByID[id] = append(dl.ByID[id], off)
		}
		return nil
	})
	if err == errStop {
		return nil
	}
	if pe, ok := err.(*record.PositionError); ok && len(dl.Bytes) > 0 && pe.Err == record.ErrTruncated {
		// A torn tail: only acceptable if the batches below end are
		// complete, which the caller checks against the end offset.
		return nil
	}
	return err
}

// ReplicaFinding is a difference between replicas or a record problem on
// one replica's disk.
type ReplicaFinding struct {
	Partition int32
	Broker    int32
	Detail    string
}

func (f ReplicaFinding) String() string {
	return fmt.Sprintf("partition %d broker %d: %s", f.Partition, f.Broker, f.Detail)
}

// CheckReplicas compares, for each partition of topic, the segment files of
// every replica in the ISR up to the leader's high watermark: they must be
// byte-identical, and each must hold every acknowledged record of the
// partition exactly once, at its acknowledged offset, in producer order
// (testcluster.Checker over the disk contents). It polls up to timeout for
// the replicas to converge (followers may still be fetching) and returns
// the findings of the last attempt (none if they converged).
//
// The summary names, per partition, the high watermark and the replicas
// compared.
func (c *Cluster) CheckReplicas(topic string, acks []Ack, timeout time.Duration) (summary string, findings []ReplicaFinding) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		summary, findings = c.checkReplicasOnce(topic, acks)
		if len(findings) == 0 || time.Now().After(deadline) {
			return summary, findings
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (c *Cluster) checkReplicasOnce(topic string, acks []Ack) (string, []ReplicaFinding) {
	var out []ReplicaFinding
	var summary strings.Builder
	hw, err := c.HighWatermarks(topic)
	if err != nil {
		return "", []ReplicaFinding{{Partition: -1, Broker: -1, Detail: "high watermarks: " + err.Error()}}
	}
	byPart := map[int32][]Ack{}
	for _, a := range acks {
		byPart[a.Partition] = append(byPart[a.Partition], a)
	}
	parts := make([]int32, 0, len(hw))
	for p := range hw {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	for _, p := range parts {
		st, ok := c.PartitionState(topic, p)
		if !ok {
			out = append(out, ReplicaFinding{Partition: p, Broker: -1, Detail: "no state znode"})
			continue
		}
		fmt.Fprintf(&summary, "partition %d: hw=%d isr=%v acked=%d ", p, hw[p], st.ISR, len(byPart[p]))
		out = append(out, ComparePartition(topic, p, hw[p], st.ISR, func(id int32) string {
			return c.nodes[c.Index(id)].LogDir
		}, byPart[p])...)
		n, f := c.compareDumpLog(topic, p, hw[p], st.ISR)
		out = append(out, f...)
		fmt.Fprintf(&summary, "kafka-dump-log batches=%d; ", n)
	}
	return strings.TrimSuffix(summary.String(), "; "), out
}

// ComparePartition checks one partition's replicas (isr, each read from
// logDirOf(id)) up to the high watermark hw: each must reach hw, all must be
// byte-identical below it, and each must hold every record of acks (the
// partition's acknowledgements) exactly once at its acknowledged offset, in
// producer order.
func ComparePartition(topic string, p int32, hw int64, isr []int32, logDirOf func(int32) string, acks []Ack) []ReplicaFinding {
	var out []ReplicaFinding
	var ref []byte
	var refID int32 = -1
	for _, id := range isr {
		dl, err := ReadReplicaLog(logDirOf(id), topic, p, hw)
		if err != nil {
			out = append(out, ReplicaFinding{Partition: p, Broker: id, Detail: err.Error()})
			continue
		}
		if dl.End < hw {
			out = append(out, ReplicaFinding{Partition: p, Broker: id, Detail: fmt.Sprintf("in the ISR %v but its log ends at %d below the high watermark %d", isr, dl.End, hw)})
			continue
		}
		if refID < 0 {
			ref, refID = dl.Bytes, id
		} else if !bytes.Equal(ref, dl.Bytes) {
			out = append(out, ReplicaFinding{Partition: p, Broker: id, Detail: fmt.Sprintf("bytes below the high watermark %d differ from broker %d's at byte %d (%d vs %d bytes)",
				hw, refID, firstDiff(ref, dl.Bytes), len(dl.Bytes), len(ref))})
		}
		chk := testcluster.NewChecker()
		for _, a := range acks {
			chk.Acked(a.ID, a.Seq, a.Partition, a.Offset)
		}
		for _, r := range dl.Records {
			chk.Consumed(r.ID, p, r.Offset)
		}
		if rep := chk.Report(); !rep.OK() {
			out = append(out, ReplicaFinding{Partition: p, Broker: id, Detail: "on disk below the high watermark: " + rep.String()})
		}
	}
	return out
}

func firstDiff(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) < len(b) {
		return len(a)
	}
	return len(b)
}

// compareDumpLog is the operator's view of the same check: kafka-dump-log
// over each ISR replica's segments must list the same batches (offsets,
// count, leader epoch, CRC) below the high watermark.
func (c *Cluster) compareDumpLog(topic string, p int32, hw int64, isr []int32) (int, []ReplicaFinding) {
	var out []ReplicaFinding
	var ref []string
	var refID int32 = -1
	for _, id := range isr {
		batches, err := DumpLogBatches(c.nodes[c.Index(id)].LogDir, topic, p, hw)
		if err != nil {
			out = append(out, ReplicaFinding{Partition: p, Broker: id, Detail: "kafka-dump-log: " + err.Error()})
			continue
		}
		if refID < 0 {
			ref, refID = batches, id
			if hw > 0 && len(batches) == 0 {
				out = append(out, ReplicaFinding{Partition: p, Broker: id, Detail: fmt.Sprintf("kafka-dump-log lists no batch below the high watermark %d", hw)})
			}
			continue
		}
		if !slices.Equal(ref, batches) {
			i := 0
			for i < len(ref) && i < len(batches) && ref[i] == batches[i] {
				i++
			}
			a, b := "(none)", "(none)"
			if i < len(ref) {
				a = ref[i]
			}
			if i < len(batches) {
				b = batches[i]
			}
			out = append(out, ReplicaFinding{Partition: p, Broker: id, Detail: fmt.Sprintf("kafka-dump-log differs from broker %d's at batch %d: %s vs %s", refID, i, b, a)})
		}
	}
	return len(ref), out
}
