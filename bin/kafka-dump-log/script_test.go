package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage"
	"github.com/klassik/klassik/broker/storage/record"
)

// realPartition writes a partition directory through the storage engine
// (appends, rolls on log.segment.bytes, clean shutdown trimming the
// indexes) and returns its directory, segment base offsets and log end
// offset.
func realPartition(t *testing.T) (string, []int64, int64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo-0")
	cfg := storage.DefaultLogConfig()
	cfg.SegmentBytes = 4096
	cfg.IndexIntervalBytes = 256
	cfg.SegmentIndexBytes = 1024
	now := time.UnixMilli(ts0)
	l, err := storage.OpenLog(dir, common.TopicPartition{Topic: "demo", Partition: 0}, cfg, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		o := record.DefaultBuildOptions()
		o.BaseTimestamp = ts0 + int64(i)*10
		recs := make([]record.Record, 3)
		for j := range recs {
			recs[j] = record.Record{OffsetDelta: int32(j), TimestampDelta: int64(j),
				Key: []byte(fmt.Sprintf("key-%d", j)), Value: bytes.Repeat([]byte{'a' + byte(i%26)}, 90)}
		}
		if _, err := l.AppendAsLeader(record.Build(o, recs), 3); err != nil {
			t.Fatal(err)
		}
	}
	bases := l.SegmentBaseOffsets()
	leo := l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if len(bases) < 3 {
		t.Fatalf("want several segments, got %v", bases)
	}
	return dir, bases, leo
}

// runScript runs bin/kafka-dump-log.sh as an operator would (the wrapper
// builds the tool into a private build directory first).
func runScript(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return clitest.Script(t, nil, "kafka-dump-log.sh", args...)
}

// TestMain stops the shared ZooKeeper the cluster tests start, and removes
// the shared build directory.
func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

func segName(dir string, base int64, suffix string) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", base, suffix))
}

// The script on segments the engine wrote: --deep-iteration lists every
// record with consecutive offsets and no invalid bytes, --index-sanity-check
// passes on every .index and .timeindex, and a plain index dump agrees with
// its segment (no mismatch report).
func TestScriptOnRealSegments(t *testing.T) {
	dir, bases, leo := realPartition(t)
	recordLine := regexp.MustCompile(`(?m)^\| offset: (\d+) CreateTime: \d+ keySize: 5 valueSize: 90 `)
	next := int64(0)
	for i, base := range bases {
		end := leo
		if i+1 < len(bases) {
			end = bases[i+1]
		}
		out, errOut, code := runScript(t, "--deep-iteration", "--files", segName(dir, base, ".log"))
		if code != 0 || errOut != "" {
			t.Fatalf("deep iteration of segment %d: exit %d stderr %q", base, code, errOut)
		}
		if !strings.Contains(out, fmt.Sprintf("Starting offset: %d\n", base)) || strings.Contains(out, "invalid bytes") {
			t.Fatalf("segment %d:\n%s", base, out)
		}
		if !strings.Contains(out, fmt.Sprintf("baseOffset: %d lastOffset: %d count: 3 ", base, base+2)) ||
			!strings.Contains(out, "partitionLeaderEpoch: 3 ") || !strings.Contains(out, "isvalid: true") {
			t.Fatalf("segment %d: batch line missing:\n%s", base, out)
		}
		for _, m := range recordLine.FindAllStringSubmatch(out, -1) {
			off, _ := strconv.ParseInt(m[1], 10, 64)
			if off != next {
				t.Fatalf("segment %d: record offset %d, want %d", base, off, next)
			}
			next++
		}
		if next != end {
			t.Fatalf("segment %d: records up to %d, segment ends at %d", base, next, end)
		}
	}

	var idxFiles []string
	for _, base := range bases {
		idxFiles = append(idxFiles, segName(dir, base, ".index"), segName(dir, base, ".timeindex"))
	}
	out, errOut, code := runScript(t, "--index-sanity-check", "--files", strings.Join(idxFiles, ","))
	if code != 0 || errOut != "" {
		t.Fatalf("sanity check: exit %d stderr %q", code, errOut)
	}
	for _, f := range idxFiles {
		if !strings.Contains(out, f+" passed sanity check.\n") && !strings.Contains(out, f+" is empty.\n") {
			t.Fatalf("%s not checked:\n%s", f, out)
		}
	}
	// The first segment is full, so its sparse index has entries.
	out, errOut, code = runScript(t, "--files", segName(dir, bases[0], ".index"))
	if code != 0 || errOut != "" || !regexp.MustCompile(`(?m)^offset: \d+ position: \d+$`).MatchString(out) {
		t.Fatalf("index dump: exit %d stderr %q\n%s", code, errOut, out)
	}
	out, errOut, code = runScript(t, "--files", segName(dir, bases[0], ".timeindex"))
	if code != 0 || errOut != "" || !regexp.MustCompile(`(?m)^timestamp: \d+ offset: \d+$`).MatchString(out) {
		t.Fatalf("time index dump: exit %d stderr %q\n%s", code, errOut, out)
	}

	// A torn index fails the sanity check with Kafka's message and exit 1.
	p := segName(dir, bases[0], ".index")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b[:len(b)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runScript(t, "--index-sanity-check", "--files", p)
	if code != 1 || !strings.Contains(errOut, "is corrupt, found "+strconv.Itoa(len(b)-3)+" bytes which is neither positive nor a multiple of 8.") {
		t.Fatalf("torn index: exit %d stderr %q", code, errOut)
	}
}

// Files that are not segments or indexes are refused with a clear message
// and exit code 1: a checkpoint, meta.properties, a log4j server.log, random
// bytes under a segment's name, indexes of the wrong size.
func TestScriptRefusesNonSegmentFiles(t *testing.T) {
	dir, _, _ := realPartition(t)
	other := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(other, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbage := bytes.Repeat([]byte("not a kafka segment\n"), 20)
	cases := []struct {
		file, want string
	}{
		{filepath.Join(dir, "leader-epoch-checkpoint"), "Ignoring unknown file " + filepath.Join(dir, "leader-epoch-checkpoint")},
		{write("meta.properties", []byte("version=0\nbroker.id=1\n")), "Ignoring unknown file"},
		{write("server.log", []byte("[2024-01-01 00:00:00,000] INFO started (kafka.server.KafkaServer)\n")), "file name server.log does not start with a base offset"},
		{write("00000000000000000000.log", garbage), "is not a log segment: its 400 bytes do not start with a valid record batch"},
		{write("00000000000000000000.index", garbage[:100]), "is not an offset index: 100 bytes is not a multiple of the 8-byte entry size"},
		{write("00000000000000000000.timeindex", garbage[:100]), "is not a time index: 100 bytes is not a multiple of the 12-byte entry size"},
	}
	for _, c := range cases {
		_, errOut, code := runScript(t, "--deep-iteration", "--files", c.file)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d stderr %q, want exit 1 and %q", filepath.Base(c.file), code, errOut, c.want)
		}
	}
}
