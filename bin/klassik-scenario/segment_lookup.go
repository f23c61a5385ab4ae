package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/common"
)

// segmentLookup: a partition's log is cut into segments named by their
// base offset; each .log has a sparse .index with one (relative offset,
// file position) entry per index.interval.bytes of batches. To find an
// offset a broker picks the segment by the base offsets, binary-searches
// the .index for the last entry at or before the offset, and scans the
// .log forward from that position, batch header by batch header.
func segmentLookup(s *Stage) string {
	const (
		records       = 300
		segmentBytes  = 16384
		indexInterval = 1024
		target        = int64(217)
	)
	s.Step("Start a throwaway ZooKeeper and one broker, and create topic seg with segment.bytes=%d and index.interval.bytes=%d, so a few hundred small records fill several segments with sparse indexes.", segmentBytes, indexInterval)
	b := s.StartBrokers(1, nil)[0]
	s.Tool("kafka-topics.sh", "--bootstrap-server", b.Addr, "--create", "--topic", "seg", "--partitions", "1", "--replication-factor", "1",
		"--config", fmt.Sprintf("segment.bytes=%d", segmentBytes), "--config", fmt.Sprintf("index.interval.bytes=%d", indexInterval))
	tp := common.TopicPartition{Topic: "seg", Partition: 0}
	s.waitPartition(tp, "broker %d leading seg-0", func(st partState) bool { return st.Leader == 1 }, 1)

	s.Step("Produce %d records, one batch each (\"record-000\" ... with some padding), acks=1.", records)
	cl := s.Client(kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.DefaultProduceTopic("seg"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0), kgo.MaxBufferedRecords(1), kgo.ProducerBatchCompression(kgo.NoCompression()))
	pad := strings.Repeat(".", 100)
	for i := 0; i < records; i++ {
		s.produce(cl, fmt.Sprintf("record-%03d %s", i, pad))
	}
	dir := filepath.Join(b.LogDir, "seg-0")
	s.WaitFor(10*time.Second, "all records in the log", func() bool { return s.logEndOffset(b, tp) == records })

	s.Step("The partition's folder: one .log/.index/.timeindex triple per segment, each named by its base offset (the first offset it holds), in 20 digits.")
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	slices.Sort(logs)
	var bases []int64
	for _, l := range logs {
		st, err := os.Stat(l)
		if err != nil {
			s.Failf("%v", err)
		}
		base, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(l), ".log"), 10, 64)
		if err != nil {
			s.Failf("segment name %s: %v", l, err)
		}
		bases = append(bases, base)
		s.Say("%s  %6d bytes", filepath.Base(l), st.Size())
	}
	if len(bases) < 3 {
		s.Failf("only %d segments; want several", len(bases))
	}

	s.Step("Find offset %d. First the segment: binary search over the base offsets for the last one <= %d.", target, target)
	lo, hi := 0, len(bases)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if bases[mid] <= target {
			s.Say("look at [%d..%d]: middle %d has base %d <= %d, so the answer is at or right of it", lo, hi, mid, bases[mid], target)
			lo = mid
		} else {
			s.Say("look at [%d..%d]: middle %d has base %d > %d, so the answer is left of it", lo, hi, mid, bases[mid], target)
			hi = mid - 1
		}
	}
	seg := bases[lo]
	s.Say("=> segment %020d (offsets %d and up).", seg, seg)

	idxPath := filepath.Join(dir, fmt.Sprintf("%020d.index", seg))
	logPath := filepath.Join(dir, fmt.Sprintf("%020d.log", seg))
	s.Step("Its .index is sparse: an entry (offset, position in the .log) only after every %d bytes of batches. kafka-dump-log shows the entries (stored as 4-byte offset relative to %d and 4-byte position):", indexInterval, seg)
	s.Tool("kafka-dump-log.sh", "--files", idxPath)
	entries := readOffsetIndex(s, idxPath, seg)
	if len(entries) < 2 {
		s.Failf("the index of segment %d has %d entries; want several", seg, len(entries))
	}

	s.Step("Binary search the index for the last entry with offset <= %d.", target)
	lo, hi = -1, len(entries)-1 // -1: before the first entry, i.e. position 0
	for lo < hi {
		mid := (lo + hi + 1) / 2
		e := entries[mid]
		if e.offset <= target {
			s.Say("entries [%d..%d]: entry %d is (offset %d, position %d), offset <= %d: go right", lo+1, hi, mid, e.offset, e.position, target)
			lo = mid
		} else {
			s.Say("entries [%d..%d]: entry %d is (offset %d, position %d), offset > %d: go left", lo+1, hi, mid, e.offset, e.position, target)
			hi = mid - 1
		}
	}
	start := indexEntry{offset: seg, position: 0}
	if lo >= 0 {
		start = entries[lo]
	}
	s.Say("=> start scanning the .log at byte %d (offset %d).", start.position, start.offset)

	s.Step("Scan the .log from byte %d: read each batch header (base offset, length, last offset delta) and jump over the batch until one holds offset %d.", start.position, target)
	data, err := os.ReadFile(logPath)
	if err != nil {
		s.Failf("%v", err)
	}
	pos := int(start.position)
	found := -1
	hops := 0
	for pos+27 <= len(data) {
		base := int64(binary.BigEndian.Uint64(data[pos:]))
		length := int(binary.BigEndian.Uint32(data[pos+8:]))
		last := base + int64(binary.BigEndian.Uint32(data[pos+23:]))
		hops++
		if target <= last {
			s.Say("byte %5d: batch of offsets %d..%d, %d bytes: holds %d. Found.", pos, base, last, 12+length, target)
			found = pos
			break
		}
		s.Say("byte %5d: batch of offsets %d..%d, %d bytes: skip to byte %d", pos, base, last, 12+length, pos+12+length)
		pos += 12 + length
	}
	if found < 0 {
		s.Failf("offset %d not found in segment %d", target, seg)
	}

	s.Step("Check the answer against kafka-dump-log's reading of the whole segment (only the batch of offset %d is shown) and against a consumer fetching offset %d.", target, target)
	want := fmt.Sprintf("baseOffset: %d lastOffset: %d ", target, target)
	dump := s.ToolLines(func(l string) bool { return strings.HasPrefix(l, want) }, "kafka-dump-log.sh", "--files", logPath)
	if !strings.Contains(dump, fmt.Sprintf(" position: %d ", found)) {
		s.Failf("kafka-dump-log puts offset %d elsewhere than byte %d", target, found)
	}
	got := s.Tool("kafka-console-consumer.sh", "--bootstrap-server", b.Addr, "--topic", "seg", "--partition", "0", "--offset", fmt.Sprint(target), "--max-messages", "1")
	if !strings.Contains(got, fmt.Sprintf("record-%03d ", target)) {
		s.Failf("the consumer at offset %d did not read record-%03d", target, target)
	}
	return fmt.Sprintf("offset %d found in segment %d via index entry (offset %d, position %d) and %d batch headers, at byte %d as dump-log says",
		target, seg, start.offset, start.position, hops, found)
}

// indexEntry is one .index entry with its absolute offset.
type indexEntry struct {
	offset   int64
	position int32
}

// readOffsetIndex reads the entries of an .index file: 8 bytes each,
// the offset relative to the segment's base and the position, big-endian.
// The active segment's index is preallocated with zeros; the entries end
// at the first all-zero entry after the first.
func readOffsetIndex(s *Stage, path string, base int64) []indexEntry {
	data, err := os.ReadFile(path)
	if err != nil {
		s.Failf("%v", err)
	}
	var es []indexEntry
	for i := 0; i+8 <= len(data); i += 8 {
		rel := binary.BigEndian.Uint32(data[i:])
		pos := int32(binary.BigEndian.Uint32(data[i+4:]))
		if i > 0 && rel == 0 && pos == 0 {
			break
		}
		es = append(es, indexEntry{offset: base + int64(rel), position: pos})
	}
	return es
}
