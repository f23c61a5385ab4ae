package broker_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/klassik/klassik/broker/testcluster"
)

// TestCorruptSegmentNeverServed: issue 14, "a segment corrupted in the
// middle is detected by its CRC on read and never served as data". Two
// brokers, a topic of two partitions on both, min.insync.replicas 1.
// Broker 2 is down while broker 1 takes the records; then broker 1 stops
// cleanly and a byte inside the records of a batch in the middle of
// partition 0's second segment (closed, below the recovery point, so no
// recovery re-reads it) is flipped on disk. Both brokers start again.
//
// Invariants: no consumer ever receives a byte of the corrupt batch or any
// record whose value differs from the one acknowledged at its offset;
// franz-go (keeping retryable fetch errors) and kcat both see
// CORRUPT_MESSAGE for partition 0 at that batch, while partition 1 is read
// whole; the follower copies partition 0 up to the corrupt batch and never
// appends it (its log ends at the batch's base offset, byte-identical to
// the leader's below it, and it stays out of the ISR) while it catches up
// on partition 1 and rejoins that ISR; the leader keeps taking writes on
// partition 0, and a consumer that seeks past the damage reads the rest.
func TestCorruptSegmentNeverServed(t *testing.T) {
	const topic = "corrupt-segment"
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatal("kcat is required: apt-get install -y kcat (or bin/klassik-install-deps.sh)")
	}
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Overrides: replicationOverrides})
	ctx := ctxT(t, 120*time.Second)
	cfg := map[string]string{"segment.bytes": "16384", "min.insync.replicas": "1"}
	ct := request[*kmsg.CreateTopicsResponse](ctx, t, c.Client(), assignedTopicRequest(topic, 10000, [][]int32{{1, 2}, {1, 2}}, cfg))
	if err := kerr.ErrorForCode(ct.Topics[0].ErrorCode); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	isrIs := func(p int32, want ...int32) func() bool {
		return func() bool {
			st, ok := c.PartitionState(topic, p)
			return ok && st.Leader == 1 && slices.Equal(st.ISR, want)
		}
	}
	for p := int32(0); p < 2; p++ {
		c.WaitFor(30*time.Second, fmt.Sprintf("partition %d led by broker 1 with a full ISR", p), isrIs(p, 1, 2))
	}
	c.StopBroker(1)
	for p := int32(0); p < 2; p++ {
		c.WaitFor(30*time.Second, fmt.Sprintf("partition %d with broker 2 out of its ISR", p), isrIs(p, 1))
	}

	// acked[p][offset] is the value acknowledged there.
	acked := [2]map[int64]string{{}, {}}
	var mu sync.Mutex
	cl := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(4000))
	produce := func(from, n int, parts ...int32) {
		var wg sync.WaitGroup
		for seq := from; seq < from+n; seq++ {
			for _, p := range parts {
				v := fmt.Sprintf("v-%d-%d-", p, seq) + strings.Repeat("x", 200)
				wg.Add(1)
				cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)}, func(r *kgo.Record, err error) {
					defer wg.Done()
					if err != nil {
						t.Errorf("produce %s: %v", v[:12], err)
						return
					}
					mu.Lock()
					acked[r.Partition][r.Offset] = v
					mu.Unlock()
				})
			}
		}
		wg.Wait()
	}
	produce(0, 300, 0, 1)
	if t.Failed() {
		t.FailNow()
	}
	c.StopBroker(0)

	// Damage the second of partition 0's segments: a byte inside the
	// records of its third batch.
	dir := filepath.Join(c.LogDirs(0)[0], topic+"-0")
	segs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	slices.Sort(segs)
	if len(segs) < 3 {
		t.Fatalf("partition 0 has %d segments, want at least 3 so the damage is in a closed one", len(segs))
	}
	bad := corruptThirdBatch(t, segs[1])
	t.Logf("flipped a byte in the batch of offsets %d-%d at position %d of %s", bad.BaseOffset, bad.LastOffset(), bad.pos, filepath.Base(segs[1]))

	c.RestartBroker(0)
	c.WaitFor(30*time.Second, "partition 0 led by broker 1 again", isrIs(0, 1))
	c.RestartBroker(1)
	c.WaitFor(30*time.Second, "broker 2 back in partition 1's ISR", isrIs(1, 1, 2))

	// The follower copies partition 0 up to the damage, not past it.
	tp0 := common.TopicPartition{Topic: topic, Partition: 0}
	c.WaitFor(30*time.Second, "the follower's copy of partition 0 up to the corrupt batch", func() bool {
		l, ok := c.Broker(1).LogManager().GetLog(tp0)
		return ok && l.LogEndOffset() >= bad.BaseOffset
	})

	// franz-go: every record it hands out is the acknowledged one, none
	// comes from the corrupt batch or beyond, and it reports the error.
	consumer := c.Client(kgo.KeepRetryableFetchErrors(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {0: kgo.NewOffset().AtStart(), 1: kgo.NewOffset().AtStart()},
	}))
	got := [2]int{}
	var sawCorrupt bool
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for got[0] < int(bad.BaseOffset) || got[1] < len(acked[1]) || !sawCorrupt {
		fs := consumer.PollFetches(cctx)
		if cctx.Err() != nil {
			t.Fatalf("consumed %v of %d/%d records, CORRUPT_MESSAGE seen: %v", got, bad.BaseOffset, len(acked[1]), sawCorrupt)
		}
		fs.EachError(func(tpc string, p int32, err error) {
			if p == 0 && errors.Is(err, kerr.CorruptMessage) {
				sawCorrupt = true
				return
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("fetch error %s-%d: %v", tpc, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Partition == 0 && r.Offset >= bad.BaseOffset {
				t.Fatalf("partition 0 served offset %d, at or past the corrupt batch at %d", r.Offset, bad.BaseOffset)
			}
			if want := acked[r.Partition][r.Offset]; string(r.Value) != want {
				t.Fatalf("partition %d offset %d: value %.20q, acknowledged %.20q", r.Partition, r.Offset, r.Value, want)
			}
			got[r.Partition]++
		})
	}
	consumer.Close()

	// kcat (librdkafka) reports the error for partition 0 and prints only
	// good records; librdkafka names error code 2 (CORRUPT_MESSAGE)
	// "Invalid message".
	out, errText := kcatUntil(t, kcat, c.Addr(0), topic, "Broker: Invalid message")
	// kcat is killed, so the last line it printed may be cut short.
	lines := strings.Split(out, "\n")
	for _, line := range lines[:len(lines)-1] {
		var off int64
		var v string
		if _, err := fmt.Sscanf(line, "%d %s", &off, &v); err != nil {
			continue
		}
		if off >= bad.BaseOffset || v != acked[0][off] {
			t.Fatalf("kcat printed offset %d %.20q (corrupt batch at %d, acknowledged %.20q)", off, v, bad.BaseOffset, acked[0][off])
		}
	}
	t.Logf("kcat: %s", strings.TrimSpace(errText))

	// The follower never appended the corrupt batch: its log still ends
	// there, it agrees byte for byte below it, and it is not in the ISR.
	leader, _ := c.Broker(0).LogManager().GetLog(tp0)
	follower, _ := c.Broker(1).LogManager().GetLog(tp0)
	if follower.LogEndOffset() != bad.BaseOffset {
		t.Fatalf("follower's partition 0 ends at %d, want %d (the corrupt batch's base offset)", follower.LogEndOffset(), bad.BaseOffset)
	}
	if lb, fb := logBytes(t, leader, bad.BaseOffset), logBytes(t, follower, bad.BaseOffset); !bytes.Equal(lb, fb) {
		t.Fatalf("below the corrupt batch the follower's %d bytes differ from the leader's %d", len(fb), len(lb))
	}
	if st, _ := c.PartitionState(topic, 0); !slices.Equal(st.ISR, []int32{1}) {
		t.Fatalf("partition 0 ISR %v: the follower cannot have caught up", st.ISR)
	}

	// The leader still takes writes there, and a consumer that seeks past
	// the damage reads the rest.
	produce(300, 5, 0)
	past := c.Client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(bad.LastOffset() + 1)}}))
	want := 0 // every acknowledged offset past the batch
	for off := range acked[0] {
		if off > bad.LastOffset() {
			want++
		}
	}
	n := consumeN(ctxT(t, 30*time.Second), t, past, want, "partition 0 past the corrupt batch", func(r *kgo.Record) {
		if string(r.Value) != acked[0][r.Offset] {
			t.Fatalf("offset %d: value %.20q, acknowledged %.20q", r.Offset, r.Value, acked[0][r.Offset])
		}
	})
	t.Logf("read %d records past the corrupt batch", n)
}

// corruptBatch is a batch header and where the batch starts in its file.
type corruptBatch struct {
	record.BatchHeader
	pos int64
}

// corruptThirdBatch flips a byte inside the records of the third batch of
// the segment file path (past its header, so only the CRC can tell).
func corruptThirdBatch(t *testing.T, path string) corruptBatch {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pos int64
	for i := 0; ; i++ {
		h, err := record.ParseBatchHeader(data[pos:])
		if err != nil {
			t.Fatalf("batch %d of %s: %v", i, path, err)
		}
		if i == 2 {
			at := pos + record.BatchHeaderSize + 10
			data[at] ^= 0x20
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			return corruptBatch{BatchHeader: h, pos: pos}
		}
		pos += int64(h.Size())
	}
}

// logBytes reads l from its start to end, segment by segment, whole
// batches only.
func logBytes(t *testing.T, l *storage.Log, end int64) []byte {
	t.Helper()
	var out []byte
	for off := l.LogStartOffset(); off < end; {
		fd, err := l.Read(off, 1<<20, end, true)
		if err != nil {
			t.Fatalf("reading offset %d: %v", off, err)
		}
		b, err := fd.Records.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		p, next := 0, off
		for p < len(b) {
			h, err := record.ParseBatchHeader(b[p:])
			if err != nil || p+h.Size() > len(b) {
				break
			}
			next = h.LastOffset() + 1
			p += h.Size()
		}
		if p == 0 {
			break
		}
		out = append(out, b[:p]...)
		off = next
	}
	return out
}

// kcatUntil consumes partition 0 of topic from the beginning with kcat
// until kcat reports an error containing needle, and returns what it
// printed ("offset value" lines) and that error line.
func kcatUntil(t *testing.T, kcat, addr, topic, needle string) (stdout, errLine string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, "-C", "-b", addr, "-t", topic, "-p", "0", "-o", "beginning", "-f", "%o %s\n")
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.Contains(sc.Text(), needle) {
			errLine = sc.Text()
			break
		}
	}
	cancel() // kills kcat
	io.Copy(io.Discard, stderr)
	cmd.Wait()
	if errLine == "" {
		t.Fatalf("kcat did not report %q within 30 s; its stderr:\n%s", needle, strings.Join(seen, "\n"))
	}
	return out.String(), errLine
}
