package storage

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
)

const crashManyEnv = "KLASSIK_STORAGE_CRASH_MANY_DIR"

// crashManyPartitions is how many logs the writer of
// TestKill9RecoversOnlyPastRecoveryPoint keeps.
const crashManyPartitions = 6

// TestCrashWriterManyChild is the writer process of
// TestKill9RecoversOnlyPastRecoveryPoint: it appends to several logs
// round robin, fsyncs one now and then (reporting "FLUSHED <partition>
// <offset>" only after the fsync) and writes the recovery-point
// checkpoint every few dozen appends. It does nothing unless started by
// that test.
func TestCrashWriterManyChild(t *testing.T) {
	dir := os.Getenv(crashManyEnv)
	if dir == "" {
		return
	}
	cfg := crashManagerConfig(dir)
	m, err := NewLogManager(cfg)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	logs := make([]*Log, crashManyPartitions)
	for p := range logs {
		if logs[p], err = m.GetOrCreateLog(common.TopicPartition{Topic: "crash", Partition: int32(p)}, cfg.Defaults); err != nil {
			fmt.Println("ERR", err)
			os.Exit(2)
		}
	}
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		p := i % len(logs)
		l := logs[p]
		if _, err := l.AppendAsLeader(deterministicBatch(l.LogEndOffset(), false), 1); err != nil {
			fmt.Fprintln(out, "ERR", err)
			out.Flush()
			os.Exit(2)
		}
		if i%11 == 0 {
			if err := l.Flush(); err != nil {
				fmt.Fprintln(out, "ERR", err)
				out.Flush()
				os.Exit(2)
			}
			fmt.Fprintln(out, "FLUSHED", p, l.LogEndOffset())
			out.Flush()
		}
		if i%97 == 0 {
			_ = m.CheckpointRecoveryPoints()
		}
	}
}

// recoveryLines records the "recovering unflushed segment" lines of a
// load: partition directory → segment base offsets.
type recoveryLines struct {
	mu   sync.Mutex
	segs map[string][]int64
}

func (r *recoveryLines) Enabled(context.Context, slog.Level) bool { return true }
func (r *recoveryLines) WithAttrs(as []slog.Attr) slog.Handler {
	return &recoveryAttrs{r: r, attrs: as}
}
func (r *recoveryLines) WithGroup(string) slog.Handler { return r }
func (r *recoveryLines) Handle(ctx context.Context, rec slog.Record) error {
	return (&recoveryAttrs{r: r}).Handle(ctx, rec)
}

type recoveryAttrs struct {
	r     *recoveryLines
	attrs []slog.Attr
}

func (h *recoveryAttrs) Enabled(context.Context, slog.Level) bool { return true }
func (h *recoveryAttrs) WithAttrs(as []slog.Attr) slog.Handler {
	return &recoveryAttrs{r: h.r, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}
func (h *recoveryAttrs) WithGroup(string) slog.Handler { return h }
func (h *recoveryAttrs) Handle(_ context.Context, rec slog.Record) error {
	if rec.Message != "recovering unflushed segment" {
		return nil
	}
	var topic, part string
	var seg int64 = -1
	collect := func(a slog.Attr) bool {
		switch a.Key {
		case "topic":
			topic = a.Value.String()
		case "partition":
			part = a.Value.String()
		case "segment":
			seg = a.Value.Int64()
		}
		return true
	}
	for _, a := range h.attrs {
		collect(a)
	}
	rec.Attrs(collect)
	h.r.mu.Lock()
	k := topic + "-" + part
	h.r.segs[k] = append(h.r.segs[k], seg)
	h.r.mu.Unlock()
	return nil
}

// "after kill -9: recovery only of the segments past the recovery point,
// in parallel per num.recovery.threads.per.data.dir" (issue 13). A writer
// process appending to six logs is killed with SIGKILL; before the
// restart the test reads the recovery-point checkpoint the writer left
// and lists each log's segments. The restart (4 recovery threads) must
// recover, per log, the segment holding the checkpointed recovery point
// and only later ones, consecutively (stopping early only at a torn
// segment, whose successors are deleted), counted by the loader's
// "recovering unflushed segment" lines; every offset the writer reported
// flushed must read back with its bytes. Two rounds.
func TestKill9RecoversOnlyPastRecoveryPoint(t *testing.T) {
	dir := t.TempDir()
	for round := 0; round < 2; round++ {
		flushed := runCrashManyWriter(t, dir, time.Duration(300+200*round)*time.Millisecond)
		rps, err := ReadOffsetCheckpoint(filepath.Join(dir, recoveryPointCheckpointFile))
		if err != nil {
			t.Fatal(err)
		}
		bases := map[string][]int64{}
		total := 0
		for p := 0; p < crashManyPartitions; p++ {
			name := fmt.Sprintf("crash-%d", p)
			ents, err := os.ReadDir(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), logFileSuffix) {
					b, _ := offsetFromFileName(e.Name())
					bases[name] = append(bases[name], b)
				}
			}
			sort.Slice(bases[name], func(i, j int) bool { return bases[name][i] < bases[name][j] })
			total += len(bases[name])
		}
		lines := &recoveryLines{segs: map[string][]int64{}}
		cfg := crashManagerConfig(dir)
		cfg.RecoveryThreadsPerDataDir = 4
		cfg.Logger = slog.New(lines)
		start := time.Now()
		m, err := NewLogManager(cfg)
		if err != nil {
			t.Fatalf("round %d: recovery: %v", round, err)
		}
		took := time.Since(start)
		recovered := 0
		for p := 0; p < crashManyPartitions; p++ {
			tp := common.TopicPartition{Topic: "crash", Partition: int32(p)}
			name := tp.String()
			bs := bases[name]
			rp := rps[tp]
			floor := 0 // the segment holding the recovery point
			for i, b := range bs {
				if b <= rp {
					floor = i
				}
			}
			got := lines.segs[name]
			recovered += len(got)
			if len(got) == 0 || got[0] != bs[floor] {
				t.Fatalf("round %d %s: recovered segments %v, want them to start at %d (recovery point %d, segments %v)", round, name, got, bs[floor], rp, bs)
			}
			for i, b := range got {
				if floor+i >= len(bs) || bs[floor+i] != b {
					t.Fatalf("round %d %s: recovered segments %v are not the consecutive segments from %d of %v", round, name, got, bs[floor], bs)
				}
			}
			l, ok := m.GetLog(tp)
			if !ok {
				t.Fatalf("round %d: %s missing after the crash", round, name)
			}
			if end := verifyDeterministicLog(t, l); end < flushed[p] {
				t.Fatalf("round %d %s: flushed offset %d lost, log ends at %d", round, name, flushed[p], end)
			}
		}
		t.Logf("round %d: %d of %d segments past the recovery points recovered, with 4 threads, in %v", round, recovered, total, took.Round(time.Millisecond))
		if err := m.Shutdown(); err != nil {
			t.Fatal(err)
		}
	}
}

// runCrashManyWriter starts TestCrashWriterManyChild on dir, kills it with
// SIGKILL after about d (once every log reported a flush) and returns the
// highest flushed offset per partition.
func runCrashManyWriter(t *testing.T, dir string, d time.Duration) []int64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWriterManyChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashManyEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() { // reader of the child's stdout; ends at EOF after the kill
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		for range lines {
		}
	})
	flushed := make([]int64, crashManyPartitions)
	for i := range flushed {
		flushed[i] = -1
	}
	note := func(ln string) {
		if strings.HasPrefix(ln, "ERR") {
			t.Fatalf("writer: %s", ln)
		}
		if v, ok := strings.CutPrefix(ln, "FLUSHED "); ok {
			f := strings.Fields(v)
			p, _ := strconv.Atoi(f[0])
			flushed[p], _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	killAt := time.After(d)
	deadline := time.After(30 * time.Second)
	for killed := false; !killed; {
		select {
		case ln, ok := <-lines:
			if !ok {
				t.Fatal("writer exited early")
			}
			note(ln)
		case <-killAt:
			if slices.Contains(flushed, -1) { // wait for a flush of every log
				killAt = time.After(20 * time.Millisecond)
				continue
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		case <-deadline:
			t.Fatal("writer made no progress")
		}
	}
	for ln := range lines {
		note(ln)
	}
	cmd.Wait()
	return flushed
}
