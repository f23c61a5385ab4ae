package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
)

// snapshotDir returns every file's bytes, to prove a rejected append left
// the log untouched.
func snapshotDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out[e.Name()] = b
	}
	return out
}

func TestRejectedAppendsLeaveLogUntouched(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	cfg := testConfig()
	cfg.MaxMessageBytes = 2000
	l := openTestLog(t, dir, cfg, clock)
	defer l.Close()
	good := makeBatch(2, 10, clock.Now().UnixMilli(), "g")
	if _, err := l.AppendAsLeader(append([]byte(nil), good...), 0); err != nil {
		t.Fatal(err)
	}
	corrupt := makeBatch(2, 10, 0, "c")
	corrupt[len(corrupt)-1] ^= 1
	tooBig := makeBatch(3, 900, 0, "b")
	badMagic := makeBatch(1, 10, 0, "m")
	badMagic[offMagic] = 1
	countMismatch := makeBatch(2, 10, 0, "n")
	countMismatch[offRecordsCount+3] = 3
	setCRCFor := func(b []byte) []byte { copy(b[offCRC:], u32(batchCRC(b))); return b }
	setCRCFor(countMismatch)
	nonZeroBase := makeBatch(1, 10, 0, "z")
	record.SetBaseOffset(nonZeroBase, 7)
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"corrupt crc", corrupt, kerr.CorruptMessage},
		{"too large", tooBig, kerr.MessageTooLarge},
		{"magic 1", badMagic, nil},
		{"count mismatch", countMismatch, kerr.InvalidRecord},
		{"non-zero base offset", nonZeroBase, kerr.InvalidRecord},
		// The second batch is bad: the first must not be written either.
		{"good then corrupt", append(append([]byte(nil), good...), corrupt...), kerr.CorruptMessage},
	}
	// The good append's epoch and partition.metadata are written by the
	// flusher; a flush waits for them, so the snapshot is of settled files.
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	before := snapshotDir(t, dir)
	leo := l.LogEndOffset()
	for _, c := range cases {
		_, err := l.AppendAsLeader(c.data, 0)
		if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	if l.LogEndOffset() != leo {
		t.Fatalf("LEO moved from %d to %d", leo, l.LogEndOffset())
	}
	after := snapshotDir(t, dir)
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Fatalf("%s changed by a rejected append", name)
		}
	}
	// Follower data that goes backwards is refused.
	f := append([]byte(nil), good...)
	record.SetBaseOffset(f, 0)
	if _, err := l.AppendAsFollower(f); !errors.Is(err, ErrNonMonotonicOffsets) {
		t.Fatalf("follower append below LEO: %v", err)
	}
}

func u32(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }

// Followers keep the leader's offsets and epochs; a leader->follower copy
// is byte-identical and the follower's epoch cache matches.
func TestFollowerReplicatesLeader(t *testing.T) {
	clock := newFakeClock()
	leader := openTestLog(t, t.TempDir(), testConfig(), clock)
	defer leader.Close()
	follower := openTestLog(t, t.TempDir(), testConfig(), clock)
	defer follower.Close()
	for i := 0; i < 30; i++ {
		if _, err := leader.AppendAsLeader(makeBatch(1+i%3, 60, clock.Now().UnixMilli(), "r"), int32(i/10)); err != nil {
			t.Fatal(err)
		}
	}
	for follower.LogEndOffset() < leader.LogEndOffset() {
		fd, err := leader.Read(follower.LogEndOffset(), 700, leader.LogEndOffset(), true)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := fd.Records.ReadAll()
		if _, err := follower.AppendAsFollower(b); err != nil {
			t.Fatal(err)
		}
	}
	lb, fb := readAllBatches(t, leader, 0), readAllBatches(t, follower, 0)
	if len(lb) != len(fb) {
		t.Fatalf("%d vs %d batches", len(lb), len(fb))
	}
	for i := range lb {
		if !bytes.Equal(lb[i], fb[i]) {
			t.Fatalf("batch %d differs", i)
		}
	}
	le, fe := leader.LeaderEpochs().Entries(), follower.LeaderEpochs().Entries()
	if len(le) != 3 || len(fe) != 3 || le[2] != fe[2] {
		t.Fatalf("epochs leader %v follower %v", le, fe)
	}
	// Divergence: the follower truncates to the end of epoch 1.
	ep, end := leader.LeaderEpochs().EndOffsetFor(1)
	if ep != 1 || end != le[2].StartOffset {
		t.Fatalf("EndOffsetFor(1) = %d,%d", ep, end)
	}
	if err := follower.TruncateTo(end); err != nil {
		t.Fatal(err)
	}
	if follower.LeaderEpochs().LatestEpoch() != 1 || follower.LogEndOffset() != end {
		t.Fatalf("after truncation: epoch %d leo %d", follower.LeaderEpochs().LatestEpoch(), follower.LogEndOffset())
	}
}

func TestLeaderEpochCacheRules(t *testing.T) {
	leo := int64(100)
	c, err := loadLeaderEpochCache(filepath.Join(t.TempDir(), "lec"), func() int64 { return leo })
	if err != nil {
		t.Fatal(err)
	}
	if ep, off := c.EndOffsetFor(0); ep != -1 || off != -1 {
		t.Fatalf("empty cache: %d %d", ep, off)
	}
	c.Assign(1, 10)
	c.Assign(1, 15) // same epoch, later offset: ignored
	c.Assign(3, 20)
	c.Assign(5, 50)
	if got := c.Entries(); len(got) != 3 || got[0] != (EpochEntry{1, 10}) {
		t.Fatalf("entries %v", got)
	}
	for _, tc := range []struct {
		req     int32
		ep      int32
		endOffs int64
	}{{0, 0, 10}, {1, 1, 20}, {2, 1, 20}, {3, 3, 50}, {4, 3, 50}, {5, 5, 100}, {6, -1, -1}, {-1, -1, -1}} {
		if ep, off := c.EndOffsetFor(tc.req); ep != tc.ep || off != tc.endOffs {
			t.Errorf("EndOffsetFor(%d) = %d,%d want %d,%d", tc.req, ep, off, tc.ep, tc.endOffs)
		}
	}
	// A lower start offset for a new epoch drops conflicting tail entries.
	c.Assign(6, 40)
	if got := c.Entries(); len(got) != 3 || got[2] != (EpochEntry{6, 40}) {
		t.Fatalf("after assign(6,40): %v", got)
	}
	c.TruncateFromEnd(30)
	if got := c.Entries(); len(got) != 2 {
		t.Fatalf("after truncateFromEnd(30): %v", got)
	}
	c.TruncateFromStart(25)
	if got := c.Entries(); len(got) != 1 || got[0] != (EpochEntry{3, 25}) {
		t.Fatalf("after truncateFromStart(25): %v", got)
	}
	// Persisted: a reload sees the same entries.
	c2, err := loadLeaderEpochCache(c.path, func() int64 { return leo })
	if err != nil || len(c2.Entries()) != 1 || c2.LatestEpoch() != 3 {
		t.Fatalf("reload %v %v", c2.Entries(), err)
	}
}

func TestFetchOffsetByTimestamp(t *testing.T) {
	cfg := testConfig()
	l, _ := openTempLog(t, cfg)
	base := int64(1700000000000)
	for i := 0; i < 40; i++ { // batch i: 2 records at base+100i, base+100i+1
		if _, err := l.AppendAsLeader(makeBatch(2, 100, base+int64(100*i), "t"), int32(i/20)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		ts, off, rts int64
		found        bool
	}{
		{base, 0, base, true},
		{base + 1, 1, base + 1, true},
		{base + 2, 2, base + 100, true},
		{base + 1501, 31, base + 1501, true},
		{base + 3901, 79, base + 3901, true},
		{base + 3902, -1, -1, false},
	} {
		off, rts, _, found, err := l.FetchOffsetByTimestamp(tc.ts)
		if err != nil || found != tc.found || (found && (off != tc.off || rts != tc.rts)) {
			t.Errorf("ts %d: got %d,%d,%v,%v want %d,%d,%v", tc.ts, off, rts, found, err, tc.off, tc.rts, tc.found)
		}
	}
	if off, _, ep, _, _ := l.FetchOffsetByTimestamp(EarliestTimestamp); off != 0 || ep != 0 {
		t.Errorf("earliest %d epoch %d", off, ep)
	}
	if off, _, ep, _, _ := l.FetchOffsetByTimestamp(LatestTimestamp); off != 80 || ep != 1 {
		t.Errorf("latest %d epoch %d", off, ep)
	}
	if off, ts, ep, found, _ := l.FetchOffsetByTimestamp(MaxTimestampQuery); !found || off != 79 || ts != base+3901 || ep != 1 {
		t.Errorf("max timestamp %d %d %d %v", off, ts, ep, found)
	}
	// Below the log start offset nothing is returned.
	l.SetHighWatermark(80)
	l.DeleteRecordsBefore(11)
	if off, _, _, _, _ := l.FetchOffsetByTimestamp(base); off != 11 {
		t.Errorf("ts lookup below log start returned %d", off)
	}
}

func TestLogAppendTime(t *testing.T) {
	cfg := testConfig()
	cfg.MessageTimestampType = "LogAppendTime"
	l, clock := openTempLog(t, cfg)
	info, err := l.AppendAsLeader(makeBatch(3, 10, 5, "a"), 2)
	if err != nil {
		t.Fatal(err)
	}
	now := clock.Now().UnixMilli()
	if info.LogAppendTime != now || info.MaxTimestamp != now {
		t.Fatalf("info %+v, now %d", info, now)
	}
	b := readAllBatches(t, l, 0)[0]
	h, _ := record.ParseBatchHeader(b)
	if err := record.CheckCRC(b); err != nil {
		t.Fatalf("CRC not recomputed: %v", err)
	}
	if h.TimestampType() != record.LogAppendTime || h.MaxTimestamp != now || h.PartitionLeaderEpoch != 2 {
		t.Fatalf("header %+v", h)
	}
}

func TestRollTriggersAndPreallocation(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig()
	cfg.SegmentBytes = 1 << 20
	cfg.SegmentMs = 1000
	dir := t.TempDir()
	l := openTestLog(t, dir, cfg, clock)
	defer l.Close()
	// A new segment's indexes stay empty until an entry needs room; then
	// they are extended to segment.index.bytes (checked below, after the
	// entries of the "index full" appends).
	fi, _ := os.Stat(filepath.Join(dir, "00000000000000000000.index"))
	if fi.Size() != 0 {
		t.Fatalf("new segment's index is %d bytes, want 0", fi.Size())
	}
	fi, _ = os.Stat(filepath.Join(dir, "00000000000000000000.timeindex"))
	if fi.Size() != 0 {
		t.Fatalf("new segment's time index is %d bytes, want 0", fi.Size())
	}
	ts := clock.Now().UnixMilli()
	l.AppendAsLeader(makeBatch(1, 10, ts, "a"), 0)
	l.AppendAsLeader(makeBatch(1, 10, ts+500, "a"), 0)
	if l.NumSegments() != 1 {
		t.Fatal("rolled too early")
	}
	// segment.ms is measured on record time: 1001 ms after the first batch.
	l.AppendAsLeader(makeBatch(1, 10, ts+1001, "a"), 0)
	if l.NumSegments() != 2 {
		t.Fatalf("no time-based roll: %d segments", l.NumSegments())
	}
	// The rolled segment's indexes were trimmed.
	fi, _ = os.Stat(filepath.Join(dir, "00000000000000000000.index"))
	if fi.Size() != 0 {
		t.Fatalf("rolled index not trimmed: %d", fi.Size())
	}
	fi, _ = os.Stat(filepath.Join(dir, "00000000000000000000.timeindex"))
	if fi.Size() != 12 {
		t.Fatalf("rolled time index holds %d bytes, want the final entry", fi.Size())
	}
	// Index full: 1024/8 = 128 entries, an entry per append above 256 bytes.
	cfg.SegmentMs = 1 << 40
	l.UpdateConfig(cfg)
	segs := l.NumSegments()
	for i := 0; i < 3; i++ {
		l.AppendAsLeader(makeBatch(1, 300, ts+1001, "f"), 0)
	}
	bases := l.SegmentBaseOffsets()
	active := filepath.Join(dir, fmt.Sprintf("%020d.index", bases[len(bases)-1]))
	if fi, _ = os.Stat(active); fi.Size() != 1024 {
		t.Fatalf("active index with entries is %d bytes, want 1024 (segment.index.bytes)", fi.Size())
	}
	for i := 3; i < 140; i++ {
		l.AppendAsLeader(makeBatch(1, 300, ts+1001, "f"), 0)
	}
	if l.NumSegments() <= segs {
		t.Fatal("full index did not roll")
	}
	// Relative offset overflow: follower data 2^31 offsets ahead.
	leo := l.LogEndOffset()
	far := makeBatch(1, 10, ts+1001, "o")
	record.SetBaseOffset(far, leo+1<<31+5)
	if _, err := l.AppendAsFollower(far); err != nil {
		t.Fatal(err)
	}
	if bs := l.SegmentBaseOffsets(); bs[len(bs)-1] != leo+1<<31+5 {
		t.Fatalf("no roll on offset overflow: bases %v", bs)
	}
}

func TestFlushMessagesAdvancesRecoveryPoint(t *testing.T) {
	cfg := testConfig()
	cfg.FlushMessages = 5
	l, _ := openTempLog(t, cfg)
	for i := 0; i < 4; i++ {
		l.AppendAsLeader(makeBatch(1, 10, 0, "x"), 0)
	}
	if l.RecoveryPoint() != 0 {
		t.Fatalf("flushed early: %d", l.RecoveryPoint())
	}
	l.AppendAsLeader(makeBatch(1, 10, 0, "x"), 0)
	if l.RecoveryPoint() != 5 {
		t.Fatalf("recovery point %d after flush.messages", l.RecoveryPoint())
	}
}

func TestReadBounds(t *testing.T) {
	clock := newFakeClock()
	l := openTestLog(t, t.TempDir(), testConfig(), clock)
	defer l.Close()
	var sizes []int
	for i := 0; i < 5; i++ {
		b := makeBatch(2, 50, 0, "x")
		sizes = append(sizes, len(b))
		l.AppendAsLeader(b, 0)
	}
	// maxBytes smaller than a batch: nothing unless minOneMessage.
	fd, err := l.Read(0, 10, 10, false)
	if err != nil || fd.Records.Len() != 10 {
		// Kafka returns a partial batch; clients drop it.
		t.Fatalf("partial read: %d %v", fd.Records.Len(), err)
	}
	fd, _ = l.Read(0, 10, 10, true)
	if fd.Records.Len() != sizes[0] {
		t.Fatalf("minOneMessage read %d bytes, want %d", fd.Records.Len(), sizes[0])
	}
	// High watermark at 4: only two batches visible.
	fd, _ = l.Read(0, 1<<20, 4, true)
	if fd.Records.Len() != sizes[0]+sizes[1] {
		t.Fatalf("bounded by hw: %d bytes", fd.Records.Len())
	}
	fd, _ = l.Read(4, 1<<20, 4, true)
	if fd.Records.Len() != 0 {
		t.Fatal("read at the high watermark returned data")
	}
	fd, _ = l.Read(10, 1<<20, 10, true)
	if fd.Records.Len() != 0 {
		t.Fatal("read at the log end returned data")
	}
}

// FileRecords.WriteTo uses sendfile with an explicit offset, so many
// concurrent senders of the same segment each get exactly their range.
func TestFileRecordsSendfileConcurrent(t *testing.T) {
	clock := newFakeClock()
	l := openTestLog(t, t.TempDir(), testConfig(), clock)
	defer l.Close()
	for i := 0; i < 20; i++ {
		l.AppendAsLeader(makeBatch(2, 100, 0, "s"), 0)
	}
	const senders = 8
	var wg sync.WaitGroup
	errs := make(chan error, senders*2)
	for i := 0; i < senders; i++ {
		wg.Add(2)
		off := int64(i * 4)
		fd, err := l.Read(off, 600, l.LogEndOffset(), true)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := fd.Records.ReadAll()
		ln, err := net.Listen("tcp", "127.0.0.1:0") // one per pair, so ranges cannot cross
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() { // client: reads what the server sends
			defer wg.Done()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			got, err := io.ReadAll(c)
			if err != nil {
				errs <- err
				return
			}
			if !bytes.Equal(got, want) {
				errs <- errors.New("sendfile delivered different bytes")
			}
		}()
		go func() { // server side of one connection
			defer wg.Done()
			c, err := ln.Accept()
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			if n, err := fd.Records.WriteTo(c.(*net.TCPConn)); err != nil || n != int64(len(want)) {
				errs <- errors.New("short sendfile")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// Reads of a partition run concurrently with its appends (run with -race).
func TestConcurrentReadsDuringAppends(t *testing.T) {
	cfg := testConfig()
	l, _ := openTempLog(t, cfg)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() { // reader; stops when the writer is done
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				leo := l.LogEndOffset()
				if leo == 0 {
					continue
				}
				fd, err := l.Read(leo/2, 500, leo, true)
				if err != nil {
					t.Error(err)
					return
				}
				b, err := fd.Records.ReadAll()
				if err != nil {
					t.Error(err)
					return
				}
				if len(b) >= batchHeaderSize {
					if _, h, err := nextBatch(b); err == nil && !checkBatchCRC(b[:h.Size()]) {
						t.Error("read a torn batch")
						return
					}
				}
			}
		}()
	}
	for i := 0; i < 300; i++ {
		if _, err := l.AppendAsLeader(makeBatch(2, 80, 0, "c"), 0); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}

// compression.type other than "producer" re-compresses client batches
// (new codec, new CRC); the records are unchanged.
func TestTopicCompressionTypeRecompresses(t *testing.T) {
	cfg := testConfig()
	cfg.CompressionType = "gzip"
	l, _ := openTempLog(t, cfg)
	in := makeBatch(4, 50, 1700000000000, "z")
	wantRecs, _ := record.Records(in)
	if _, err := l.AppendAsLeader(in, 0); err != nil {
		t.Fatal(err)
	}
	b := readAllBatches(t, l, 0)[0]
	h, _ := record.ParseBatchHeader(b)
	if h.Compression() != record.Gzip || record.CheckCRC(b) != nil || h.BaseOffset != 0 {
		t.Fatalf("stored batch: codec %v crc %v base %d", h.Compression(), record.CheckCRC(b), h.BaseOffset)
	}
	got, err := record.Records(b)
	if err != nil || len(got) != len(wantRecs) {
		t.Fatalf("records %v %v", len(got), err)
	}
	for i := range got {
		if !bytes.Equal(got[i].Value, wantRecs[i].Value) || !bytes.Equal(got[i].Key, wantRecs[i].Key) {
			t.Fatalf("record %d changed", i)
		}
	}
}

// log.preallocate: the active .log is reserved at segment.bytes, trimmed on
// roll and close, and the zero tail is cut by recovery after a crash.
func TestPreallocate(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig()
	cfg.Preallocate = true
	dir := t.TempDir()
	l := openTestLog(t, dir, cfg, clock)
	for l.NumSegments() < 2 {
		l.AppendAsLeader(deterministicBatch(l.LogEndOffset(), false), 1)
	}
	bases := l.SegmentBaseOffsets()
	fi, _ := os.Stat(filepath.Join(dir, filenamePrefixFromOffset(bases[1])+".log"))
	if fi.Size() != cfg.SegmentBytes {
		t.Fatalf("active segment is %d bytes, want preallocated %d", fi.Size(), cfg.SegmentBytes)
	}
	fi, _ = os.Stat(filepath.Join(dir, filenamePrefixFromOffset(bases[0])+".log"))
	if fi.Size() >= cfg.SegmentBytes || fi.Size() == 0 {
		t.Fatalf("rolled segment not trimmed: %d bytes", fi.Size())
	}
	leo := l.LogEndOffset()
	l.closeNoFlush() // crash with the preallocated tail in place
	l = openTestLog(t, dir, cfg, clock)
	if l.LogEndOffset() != leo {
		t.Fatalf("LEO after recovery %d want %d", l.LogEndOffset(), leo)
	}
	verifyDeterministicLog(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(filepath.Join(dir, filenamePrefixFromOffset(bases[1])+".log"))
	if fi.Size() >= cfg.SegmentBytes {
		t.Fatalf("closed segment not trimmed: %d", fi.Size())
	}
}

// segment.jitter.ms: each segment draws its jitter once, in
// [0, min(jitter, segment.ms)).
func TestRollJitterRange(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentMs = 1000
	cfg.SegmentJitterMs = 5000
	l := openTestLog(t, t.TempDir(), cfg, newFakeClock())
	defer l.Close()
	for i := 0; i < 200; i++ {
		if j := l.jitter(); j < 0 || j >= 1000 {
			t.Fatalf("jitter %d outside [0, 1000)", j)
		}
	}
	cfg.SegmentJitterMs = 0
	l.UpdateConfig(cfg)
	if j := l.jitter(); j != 0 {
		t.Fatalf("jitter %d with segment.jitter.ms=0", j)
	}
}

func TestFetchOffsetsBeforeV0(t *testing.T) {
	clock := newFakeClock()
	l := openTestLog(t, t.TempDir(), testConfig(), clock)
	defer l.Close()
	for l.NumSegments() < 3 {
		l.AppendAsLeader(makeBatch(2, 200, 0, "v0"), 0)
	}
	bases := l.SegmentBaseOffsets()
	leo := l.LogEndOffset()
	got := l.FetchOffsetsBefore(LatestTimestamp, 10)
	want := []int64{leo, bases[2], bases[1], bases[0]}
	if len(got) != len(want) {
		t.Fatalf("latest: %v want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("latest: %v want %v", got, want)
		}
	}
	if got := l.FetchOffsetsBefore(LatestTimestamp, 1); len(got) != 1 || got[0] != leo {
		t.Fatalf("latest, 1: %v", got)
	}
	if got := l.FetchOffsetsBefore(EarliestTimestamp, 5); len(got) != 1 || got[0] != 0 {
		t.Fatalf("earliest: %v", got)
	}
	if got := l.FetchOffsetsBefore(0, 5); len(got) != 0 {
		t.Fatalf("before every mtime: %v", got)
	}
}

// A broker that became leader assigns its epoch at the log end before any
// append; if it loses the leadership without writing, the new leader never
// has that epoch. The follower's truncation to the common end must drop the
// entry even though no record goes, or it keeps asking with the stale epoch
// and never catches up (Kafka's Log.truncateTo makes the same cut).
func TestTruncateToLogEndDropsEmptyLeaderEpoch(t *testing.T) {
	clock := newFakeClock()
	dir := t.TempDir()
	l := openTestLog(t, dir, testConfig(), clock)
	defer l.Close()
	for i := 0; i < 5; i++ {
		if _, err := l.AppendAsLeader(makeBatch(10, 20, clock.Now().UnixMilli(), "r"), 0); err != nil {
			t.Fatal(err)
		}
	}
	end := l.LogEndOffset()
	// Leader at epoch 1 from the log end, with no write in it.
	if err := l.LeaderEpochs().Assign(1, end); err != nil {
		t.Fatal(err)
	}
	// Follower again: the new leader (epoch 2) answers epoch 0 ends at end.
	if err := l.TruncateTo(end); err != nil {
		t.Fatal(err)
	}
	if got := l.LeaderEpochs().Entries(); len(got) != 1 || got[0] != (EpochEntry{0, 0}) {
		t.Fatalf("epoch cache after truncating to the log end %d: %v, want [{0 0}]", end, got)
	}
	if l.LogEndOffset() != end {
		t.Fatalf("log end moved to %d, want %d", l.LogEndOffset(), end)
	}
	// The checkpoint on disk says the same, so a restart does not bring the
	// stale epoch back.
	data, err := os.ReadFile(filepath.Join(l.Dir(), "leader-epoch-checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "0\n1\n0 0\n"; string(data) != want {
		t.Fatalf("leader-epoch-checkpoint = %q, want %q", data, want)
	}
}
