package storage

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

// deterministicBatch is the batch stored at firstOffset by the crash
// writer: its content depends only on the offset, so a verifier can
// rebuild the exact bytes (after the leader rewrote offset and epoch).
func deterministicBatch(firstOffset int64, stored bool) []byte {
	n := 1 + int(firstOffset%4)
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = 1700000000000 + firstOffset
	recs := make([]record.Record, n)
	for i := range recs {
		off := firstOffset + int64(i)
		recs[i] = record.Record{OffsetDelta: int32(i), TimestampDelta: int64(i),
			Key: []byte(strconv.FormatInt(off, 10)), Value: bytes.Repeat([]byte{byte(off)}, 20+int(off%97))}
	}
	b := record.Build(opts, recs)
	if stored {
		record.SetBaseOffset(b, firstOffset)
		record.SetPartitionLeaderEpoch(b, 1)
	}
	return b
}

// verifyDeterministicLog checks that every batch from the log start to the
// log end is exactly deterministicBatch(base) and returns the log end.
func verifyDeterministicLog(t *testing.T, l *Log) int64 {
	t.Helper()
	off := l.LogStartOffset()
	for _, b := range readAllBatches(t, l, off) {
		h, err := parseBatchHeader(b)
		if err != nil {
			t.Fatalf("batch at %d: %v", off, err)
		}
		if h.BaseOffset != off {
			t.Fatalf("gap: batch base %d, expected %d", h.BaseOffset, off)
		}
		if want := deterministicBatch(off, true); !bytes.Equal(b, want) {
			t.Fatalf("batch at %d differs from what was written", off)
		}
		off = h.NextOffset()
	}
	if off != l.LogEndOffset() {
		t.Fatalf("batches end at %d but log end offset is %d", off, l.LogEndOffset())
	}
	return off
}

const crashEnv = "KLASSIK_STORAGE_CRASH_DIR"

// TestCrashWriterChild is the writer process of TestCrashKill9; it does
// nothing unless started by it.
func TestCrashWriterChild(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		return // only meaningful as the child of TestCrashKill9
	}
	cfg := crashManagerConfig(dir)
	m, err := NewLogManager(cfg)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	l, err := m.GetOrCreateLog(common.TopicPartition{Topic: "crash", Partition: 0}, cfg.Defaults)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		if _, err := l.AppendAsLeader(deterministicBatch(l.LogEndOffset(), false), 1); err != nil {
			fmt.Fprintln(out, "ERR", err)
			out.Flush()
			os.Exit(2)
		}
		if i%7 == 0 {
			if err := l.Flush(); err != nil {
				fmt.Fprintln(out, "ERR", err)
				out.Flush()
				os.Exit(2)
			}
			// Reported only after fsync: this offset must survive.
			fmt.Fprintln(out, "FLUSHED", l.LogEndOffset())
			out.Flush()
		}
		if i%50 == 0 {
			_ = m.CheckpointRecoveryPoints()
		}
	}
}

// TestCrashKill9 runs a writer process, kills it with SIGKILL at random
// moments and restarts, checking after each crash that every offset the
// writer reported as flushed is readable with the same bytes, and that the
// recovered log is a gap-free prefix of what was written.
func TestCrashKill9(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	rounds := 5
	for round := 0; round < rounds; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWriterChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		flushed := int64(-1)
		lines := make(chan string)
		go func() { // reader of the child's stdout; ends at EOF after the kill
			defer close(lines)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		// On any failure below, the child is killed and its reader drained
		// so that neither outlives the test.
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			for range lines {
			}
		})
		killAt := time.After(time.Duration(80+rng.IntN(250)) * time.Millisecond)
		deadline := time.After(20 * time.Second)
		killed := false
		for !killed {
			select {
			case ln, ok := <-lines:
				if !ok {
					t.Fatalf("round %d: writer exited early", round)
				}
				if strings.HasPrefix(ln, "ERR") {
					t.Fatalf("round %d: writer: %s", round, ln)
				}
				if v, ok := strings.CutPrefix(ln, "FLUSHED "); ok {
					flushed, _ = strconv.ParseInt(v, 10, 64)
				}
			case <-killAt:
				if flushed < 0 {
					killAt = time.After(20 * time.Millisecond) // wait for a first flush
					continue
				}
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				killed = true
			case <-deadline:
				cmd.Process.Kill()
				t.Fatalf("round %d: writer made no progress", round)
			}
		}
		for ln := range lines {
			if v, ok := strings.CutPrefix(ln, "FLUSHED "); ok {
				flushed, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		cmd.Wait()

		cfg := crashManagerConfig(dir)
		m, err := NewLogManager(cfg)
		if err != nil {
			t.Fatalf("round %d: recovery: %v", round, err)
		}
		l, ok := m.GetLog(common.TopicPartition{Topic: "crash", Partition: 0})
		if !ok {
			t.Fatalf("round %d: log missing after crash", round)
		}
		end := verifyDeterministicLog(t, l)
		if end < flushed {
			t.Fatalf("round %d: flushed offset %d lost, log ends at %d", round, flushed, end)
		}
		t.Logf("round %d: flushed %d, recovered %d, segments %d", round, flushed, end, l.NumSegments())
		if err := m.Shutdown(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRandomCutRecovery writes a multi-segment log, then damages it at a
// random byte (truncating a file there, flipping a byte inside a batch's
// CRC range, or damaging an index) and reopens it with full recovery. The
// result must be exactly the batches before the damage point.
func TestRandomCutRecovery(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CUT_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (CUT_SEED to replay)", seed)
	rng := rand.New(rand.NewPCG(7, seed))
	cfg := testConfig()
	cfg.SegmentBytes = 4500
	for iter := 0; iter < 24; iter++ {
		dir := t.TempDir()
		clock := newFakeClock()
		l := openTestLog(t, dir, cfg, clock)
		for l.LogEndOffset() < 150 {
			if _, err := l.AppendAsLeader(deterministicBatch(l.LogEndOffset(), false), 1); err != nil {
				t.Fatal(err)
			}
		}
		total := l.LogEndOffset()
		l.closeNoFlush() // as after a crash: indexes untrimmed, no final entries

		entries, _ := os.ReadDir(dir)
		var files []string
		for _, e := range entries {
			if n := e.Name(); strings.HasSuffix(n, ".log") || strings.HasSuffix(n, ".index") || strings.HasSuffix(n, ".timeindex") {
				files = append(files, n)
			}
		}
		sort.Strings(files)
		victim := files[rng.IntN(len(files))]
		path := filepath.Join(dir, victim)
		data, _ := os.ReadFile(path)
		base, _ := offsetFromFileName(victim)
		expectEnd := total
		if len(data) > 0 {
			pos := rng.IntN(len(data))
			mode := rng.IntN(2)
			if strings.HasSuffix(victim, ".log") {
				// Which batch does pos fall in?
				var bstart int
				var bh batchHeader
				for p := 0; p < len(data); {
					h, _ := parseBatchHeader(data[p:])
					if p+h.Size() > pos {
						bstart, bh = p, h
						break
					}
					p += h.Size()
				}
				if mode == 0 {
					os.Truncate(path, int64(pos))
					if pos == bstart {
						expectEnd = bh.BaseOffset
					} else {
						expectEnd = bh.BaseOffset // partial batch is cut
					}
				} else {
					if pos < bstart+offAttributes {
						pos = bstart + offAttributes + rng.IntN(bh.Size()-offAttributes)
					}
					data[pos] ^= 0xff
					os.WriteFile(path, data, 0o644)
					expectEnd = bh.BaseOffset
				}
				_ = base
			} else {
				if mode == 0 {
					os.Truncate(path, int64(pos))
				} else {
					data[pos] ^= byte(1 + rng.IntN(255))
					os.WriteFile(path, data, 0o644)
				}
			}
		}
		t.Logf("iter %d: damage %s (expect end %d of %d)", iter, victim, expectEnd, total)
		l2 := openTestLog(t, dir, cfg, clock) // recovery point 0: full recovery
		end := verifyDeterministicLog(t, l2)
		if end != expectEnd {
			t.Fatalf("iter %d: damaged %s: recovered to %d, want %d", iter, victim, end, expectEnd)
		}
		// Appending continues where the valid prefix ends.
		if _, err := l2.AppendAsLeader(deterministicBatch(l2.LogEndOffset(), false), 1); err != nil {
			t.Fatal(err)
		}
		verifyDeterministicLog(t, l2)
		l2.Close()
		// A second, clean open agrees.
		l3 := openTestLog(t, dir, cfg, clock)
		verifyDeterministicLog(t, l3)
		l3.Close()
	}
}

// crashManagerConfig is the configuration the crash child writes with and
// the parent recovers with: small segments and indexes, so that a kill
// lands in every file kind.
func crashManagerConfig(dir string) ManagerConfig {
	cfg := DefaultManagerConfig(dir)
	cfg.Defaults.SegmentBytes = 8 << 10
	cfg.Defaults.SegmentIndexBytes = 4096
	cfg.Defaults.IndexIntervalBytes = 512
	return cfg
}
