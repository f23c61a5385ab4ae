package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Kafka's format strings for the progress and the summary line
// (ProducerPerformance.Stats.printWindow and printTotal), and a regular
// expression built from each, which every line the tool prints must match.
const (
	windowFormat  = "%d records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, %.1f ms max latency.%n"
	summaryFormat = "%d records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.%n"
)

// formatRegexp turns a Java format string into an anchored regular
// expression: %d is an integer, %.Nf a number with N decimals (%f six),
// %n the end of the line; the rest is literal.
func formatRegexp(format string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteString(regexp.QuoteMeta(format[i : i+1]))
			continue
		}
		j := i + 1
		for format[j] != 'd' && format[j] != 'f' && format[j] != 'n' {
			j++
		}
		spec := format[i+1 : j+1]
		switch {
		case spec == "d":
			b.WriteString(`(-?\d+)`)
		case spec == "n":
		case spec == "f":
			b.WriteString(`(-?\d+\.\d{6}|NaN|-?Infinity)`)
		default: // .Nf
			b.WriteString(`(-?\d+\.\d{` + spec[1:len(spec)-1] + `}|NaN|-?Infinity)`)
		}
		i = j
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

var (
	windowRE  = formatRegexp(windowFormat)
	summaryRE = formatRegexp(summaryFormat)
)

// The sample Kafka keeps: numRecords / min(numRecords, 500000) is the
// sampling step, numRecords/sampling + 1 the sample's size.
func TestStatsSampling(t *testing.T) {
	for _, c := range []struct{ n, sampling, size int64 }{
		{1, 1, 2}, {10, 1, 11}, {500000, 1, 500001}, {500001, 1, 500002},
		{1000000, 2, 500001}, {1499999, 2, 750000}, {1500000, 3, 500001},
	} {
		s, err := newStats(c.n, 5000, func() int64 { return 0 }, nil)
		if err != nil || s.sampling != c.sampling || int64(len(s.latencies)) != c.size {
			t.Errorf("n=%d: sampling %d size %d (%v), want %d %d", c.n, s.sampling, len(s.latencies), err, c.sampling, c.size)
		}
	}
	if _, err := newStats(0, 5000, func() int64 { return 0 }, nil); err == nil || err.Error() != `Exception in thread "main" java.lang.ArithmeticException: / by zero` {
		t.Errorf("0 records: %v", err)
	}
}

// Percentiles as Kafka takes them: sort the sample, take index
// (int)(p * size). Worked by hand: the samples 1..10 give 50th = sample
// [5] = 6, 95th = [9] = 10, 99th = [9], 99.9th = [9]; 1..1000 give
// [500]=501, [950]=951, [990]=991, [999]=1000.
func TestPercentiles(t *testing.T) {
	ten := []int32{10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}
	got, err := percentiles(ten, 10, 0.5, 0.95, 0.99, 0.999)
	if err != nil || [4]int32(got) != [4]int32{6, 10, 10, 10} {
		t.Errorf("1..10: %v %v", got, err)
	}
	thousand := make([]int32, 1001)
	for i := range 1000 {
		thousand[i] = int32(1000 - i)
	}
	got, _ = percentiles(thousand, 1000, 0.5, 0.95, 0.99, 0.999)
	if [4]int32(got) != [4]int32{501, 951, 991, 1000} {
		t.Errorf("1..1000: %v", got)
	}
	// One sample: every percentile is it.
	got, _ = percentiles([]int32{7, 0}, 1, 0.5, 0.95, 0.99, 0.999)
	if [4]int32(got) != [4]int32{7, 7, 7, 7} {
		t.Errorf("one sample: %v", got)
	}
}

// A run on a fake clock: six sends, a window of 5000 ms that closes at
// the completion at t=5000, and the summary. The figures are worked by
// hand from Kafka's arithmetic.
func TestStatsLines(t *testing.T) {
	var now int64
	var out strings.Builder
	s, err := newStats(6, 5000, func() int64 { return now }, &out)
	if err != nil {
		t.Fatal(err)
	}
	// Completions: latencies 3, 1, 4, 1, 5 ms of 100 bytes at t=1000..4000,
	// then one of 9 ms at t=5000 (closes the window: 6 records in 5000 ms).
	for i, lat := range []int32{3, 1, 4, 1, 5} {
		now = int64(1000 + 750*i)
		s.record(int64(i), lat, 100, now)
	}
	now = 5000
	s.record(5, 9, 100, now)
	// 1000*6/5000 = 1.2 rec/s; 1000*600/5000/1048576 = 0.000114 MB/s;
	// avg (3+1+4+1+5+9)/6 = 3.8333; max 9.
	want := "6 records sent, 1.2 records/sec (0.00 MB/sec), 3.8 ms avg latency, 9.0 ms max latency.\n"
	if out.String() != want {
		t.Fatalf("window line %q, want %q", out.String(), want)
	}
	out.Reset()
	now = 8000
	if err := s.printTotal(); err != nil {
		t.Fatal(err)
	}
	// 6 records in 8000 ms: 0.75 rec/s; sorted sample 1 1 3 4 5 9:
	// [3]=4, [5]=9, [5]=9, [5]=9.
	want = "6 records sent, 0.750000 records/sec (0.00 MB/sec), 3.83 ms avg latency, 9.00 ms max latency, 4 ms 50th, 9 ms 95th, 9 ms 99th, 9 ms 99.9th.\n"
	if out.String() != want {
		t.Fatalf("summary %q, want %q", out.String(), want)
	}
	if !windowRE.MatchString(strings.TrimSpace(windowLine(6, 600, 5000, 23, 9))) || !summaryRE.MatchString(strings.TrimSuffix(want, "\n")) {
		t.Fatal("the lines do not match Kafka's format strings")
	}
	// No time elapsed: Java divides by zero into Infinity (and NaN for 0/0).
	if got := windowLine(0, 0, 0, 0, 0); got != "0 records sent, NaN records/sec (NaN MB/sec), NaN ms avg latency, 0.0 ms max latency." {
		t.Errorf("empty window: %q", got)
	}
}

// The throttler of Kafka: above the target rate, each call owes
// 1/target s and sleeps once 2 ms are owed.
func TestThrottler(t *testing.T) {
	th := newThrottler(1000, 0) // 1 ms per record
	var slept []time.Duration
	th.sleep = func(_ context.Context, d time.Duration) time.Duration { slept = append(slept, d); return d }
	if th.shouldThrottle(5, 0) {
		t.Error("no time elapsed: Kafka never throttles then")
	}
	if th.shouldThrottle(1, 1000) || !th.shouldThrottle(1001, 1000) || th.shouldThrottle(1000, 1000) {
		t.Error("rate compared wrongly with the target")
	}
	ctx := context.Background()
	th.throttle(ctx) // 1 ms owed: no sleep yet
	th.throttle(ctx) // 2 ms: sleep 2 ms
	th.throttle(ctx)
	th.throttle(ctx)
	if len(slept) != 2 || slept[0] != 2*time.Millisecond || slept[1] != 2*time.Millisecond {
		t.Errorf("slept %v, want [2ms 2ms]", slept)
	}
	if newThrottler(-1, 0).shouldThrottle(1<<40, 1) {
		t.Error("-1 throttles")
	}
	// 3 records/s: 333,333,333 ns each, a sleep every call.
	th = newThrottler(3, 0)
	slept = nil
	th.sleep = func(_ context.Context, d time.Duration) time.Duration { slept = append(slept, d); return d }
	th.throttle(ctx)
	if len(slept) != 1 || slept[0] != 333333333 {
		t.Errorf("3/s: %v", slept)
	}
	// Target 0 blocks until the context ends.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	newThrottler(0, 0).throttle(cctx)
}

// java.util.Random from seed 0, as OpenJDK 17 draws it: the first 40
// payload letters of Kafka's --record-size payload, and nextInt of
// bounds that are and are not powers of two.
func TestJavaRandom(t *testing.T) {
	r := newJavaRandom(0)
	var b strings.Builder
	for range 40 {
		b.WriteByte(byte(r.nextInt(26) + 65))
	}
	if b.String() != "SSXVNJHPDQDXVCRASTVYBCWVMGNYKRXVZXKGXTSP" {
		t.Errorf("payload %s", b.String())
	}
	r = newJavaRandom(0)
	var got []int32
	for range 20 {
		got = append(got, r.nextInt(3))
	}
	for range 10 {
		got = append(got, r.nextInt(1<<30))
	}
	for range 10 {
		got = append(got, r.nextInt(2147483647-5))
	}
	want := []int32{0, 1, 1, 2, 2, 2, 2, 0, 0, 2, 2, 2, 2, 1, 2, 2, 1, 0, 2, 2, 295229571, 336012444, 138402262, 395110973, 157412326,
		757175630, 24951751, 1488941, 587057346, 9905111, 2071219745, 1208925245, 224392037, 543062387, 1342491602, 613975862,
		882178125, 32055653, 1667117938, 2097442635}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("draw %d: %d, Java %d", i, got[i], want[i])
		}
	}
}
