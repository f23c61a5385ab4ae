package storage

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestAppendReadRollReopen(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	cfg := testConfig()
	l := openTestLog(t, dir, cfg, clock)
	var want [][]byte
	for i := 0; i < 40; i++ {
		b := makeBatch(3, 50, clock.Now().UnixMilli(), "v")
		info, err := l.AppendAsLeader(b, 5)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if info.FirstOffset != int64(i*3) || info.LastOffset != int64(i*3+2) || info.NumMessages != 3 {
			t.Fatalf("append %d: info %+v", i, info)
		}
		want = append(want, b)
	}
	if l.NumSegments() < 2 {
		t.Fatalf("expected rolls, have %d segments", l.NumSegments())
	}
	check := func(l *Log) {
		got := readAllBatches(t, l, 0)
		if len(got) != len(want) {
			t.Fatalf("read %d batches, want %d", len(got), len(want))
		}
		for i := range got {
			if string(got[i]) != string(want[i]) {
				t.Fatalf("batch %d differs", i)
			}
		}
	}
	check(l)
	if _, err := l.Read(1000, 100, 1000, true); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Fatalf("read past end: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openTestLog(t, dir, cfg, clock)
	defer l2.Close()
	if l2.LogEndOffset() != 120 {
		t.Fatalf("LEO after reopen = %d", l2.LogEndOffset())
	}
	check(l2)
	if ep := l2.LeaderEpochs().LatestEpoch(); ep != 5 {
		t.Fatalf("latest epoch %d", ep)
	}
}
