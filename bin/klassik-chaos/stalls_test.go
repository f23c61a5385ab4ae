package main

import (
	"strings"
	"testing"
	"time"
)

func TestStallTracker(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	s := NewStallTracker(t0)
	// Partition 0: acknowledged every 50 ms but for a 3 s gap from 1000 ms.
	for ms := 50; ms <= 1000; ms += 50 {
		s.Ack(0, at(ms))
	}
	s.Ack(0, at(4000))
	s.Ack(0, at(4050))
	// Partition 1: first acknowledged after 700 ms, then records fail
	// after its last acknowledgement (at 2000 ms).
	s.Ack(1, at(700))
	s.Ack(1, at(2000))
	s.Fail(1, at(2500))
	// Partition 2: never acknowledged. Partition 3 (beyond 3 partitions)
	// counts because it was acknowledged. A record without a partition is
	// ignored.
	s.Ack(3, at(100))
	s.Fail(-1, at(9000))
	got := s.Longest(3, at(5000))
	want := []Stall{
		{Partition: 0, From: at(1000), To: at(4000), Seconds: 3},
		{Partition: 1, From: at(2000), To: at(5000), Seconds: 3, Unended: true},
		{Partition: 2, From: t0, To: at(5000), Seconds: 5, Unended: true},
		{Partition: 3, From: t0, To: at(100), Seconds: 0.1},
	}
	if len(got) != len(want) {
		t.Fatalf("stalls %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Partition != w.Partition || !g.From.Equal(w.From) || !g.To.Equal(w.To) || g.Unended != w.Unended || g.Seconds < w.Seconds-1e-9 || g.Seconds > w.Seconds+1e-9 {
			t.Errorf("stall %d: %+v, want %+v", i, g, w)
		}
	}
	if d := got[0].describe(t0); d != "partition 0: 3.000 s without an acknowledged write, from 00:00:01.000 (+1.000s) until an acknowledgement at 00:00:04.000 (+4.000s)" {
		t.Errorf("describe: %s", d)
	}
	if d := got[1].describe(t0); !strings.Contains(d, "not ended by an acknowledgement") {
		t.Errorf("describe of an unended stall: %s", d)
	}
}
