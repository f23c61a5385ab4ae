package main

import (
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/klassik/klassik/broker/common/jvm"
)

// maxLatencySamples bounds how many latencies stats keeps: every
// sampling-th record's, so that at most this many (plus one) are held
// whatever --num-records is.
const maxLatencySamples = 500000

// stats is ProducerPerformance's Stats: totals since the start, a window
// printed and reset every reportingInterval ms (checked when a send
// completes, so a stalled producer prints nothing), and a sample of the
// latencies for the percentiles of the summary. Times are wall-clock
// milliseconds from now, as System.currentTimeMillis gives them to Kafka.
type stats struct {
	now               func() int64
	out               io.Writer
	reportingInterval int64
	sampling          int64

	// mu guards the following: the acknowledgement callbacks of
	// different partitions may run at once in franz-go (Kafka runs them on
	// its one I/O thread).
	mu                 sync.Mutex
	start, windowStart int64
	latencies          []int32
	index              int
	count, bytes       int64
	maxLatency         int32
	totalLatency       int64
	windowCount        int64
	windowMaxLatency   int32
	windowTotalLatency int64
	windowBytes        int64
}

// javaException is an exception Kafka's main would die of, printed as
// the JVM prints an uncaught one (its first line).
type javaException struct{ class, msg string }

func (e *javaException) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("Exception in thread \"main\" %s", e.class)
	}
	return fmt.Sprintf("Exception in thread \"main\" %s: %s", e.class, e.msg)
}

// newStats sizes the sample as Kafka does: sampling is numRecords /
// min(numRecords, 500000) in integer arithmetic, and the sample holds
// numRecords/sampling + 1 latencies. numRecords 0 divides by zero and a
// negative count below -1 asks for a negative array size, as in Kafka.
func newStats(numRecords int64, reportingInterval int64, now func() int64, out io.Writer) (*stats, error) {
	s := &stats{now: now, out: out, reportingInterval: reportingInterval}
	s.start = now()
	s.windowStart = now()
	if numRecords == 0 {
		return nil, &javaException{"java.lang.ArithmeticException", "/ by zero"}
	}
	s.sampling = numRecords / min(numRecords, maxLatencySamples)
	size := numRecords/s.sampling + 1
	if size < 0 {
		return nil, &javaException{"java.lang.NegativeArraySizeException", fmt.Sprint(size)}
	}
	s.latencies = make([]int32, size)
	return s, nil
}

// record is Stats.record: the send numbered iter completed at time ms
// after latency ms carrying bytes of payload.
func (s *stats) record(iter int64, latency int32, bytes int, time int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	s.bytes += int64(bytes)
	s.totalLatency += int64(latency)
	s.maxLatency = max(s.maxLatency, latency)
	s.windowCount++
	s.windowBytes += int64(bytes)
	s.windowTotalLatency += int64(latency)
	s.windowMaxLatency = max(s.windowMaxLatency, latency)
	if iter%s.sampling == 0 && s.index < len(s.latencies) {
		s.latencies[s.index] = latency
		s.index++
	}
	if time-s.windowStart >= s.reportingInterval {
		s.printWindowLocked()
		s.newWindowLocked()
	}
}

// windowLine is the progress line of a window: count records over
// elapsed ms, bytes of payload, the latencies' sum and maximum.
func windowLine(count, bytes, elapsed, totalLatency int64, maxLatency int32) string {
	recsPerSec := 1000.0 * float64(count) / float64(elapsed)
	mbPerSec := 1000.0 * float64(bytes) / float64(elapsed) / (1024.0 * 1024.0)
	return fmt.Sprintf("%d records sent, %s records/sec (%s MB/sec), %s ms avg latency, %s ms max latency.",
		count, jvm.FormatFixed(recsPerSec, 1), jvm.FormatFixed(mbPerSec, 2),
		jvm.FormatFixed(float64(totalLatency)/float64(count), 1), jvm.FormatFixed(float64(maxLatency), 1))
}

func (s *stats) printWindowLocked() {
	elapsed := s.now() - s.windowStart
	fmt.Fprintln(s.out, windowLine(s.windowCount, s.windowBytes, elapsed, s.windowTotalLatency, s.windowMaxLatency))
}

func (s *stats) newWindowLocked() {
	s.windowStart = s.now()
	s.windowCount = 0
	s.windowMaxLatency = 0
	s.windowTotalLatency = 0
	s.windowBytes = 0
}

// summaryLine is the final line: the totals over elapsed ms and the 50th,
// 95th, 99th and 99.9th percentiles of the sampled latencies.
func summaryLine(count, bytes, elapsed, totalLatency int64, maxLatency int32, percs [4]int32) string {
	recsPerSec := 1000.0 * float64(count) / float64(elapsed)
	mbPerSec := 1000.0 * float64(bytes) / float64(elapsed) / (1024.0 * 1024.0)
	return fmt.Sprintf("%d records sent, %s records/sec (%s MB/sec), %s ms avg latency, %s ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.",
		count, jvm.FormatFixed(recsPerSec, 6), jvm.FormatFixed(mbPerSec, 2),
		jvm.FormatFixed(float64(totalLatency)/float64(count), 2), jvm.FormatFixed(float64(maxLatency), 2),
		percs[0], percs[1], percs[2], percs[3])
}

// printTotal is Stats.printTotal.
func (s *stats) printTotal() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	elapsed := s.now() - s.start
	percs, err := percentiles(s.latencies, s.index, 0.5, 0.95, 0.99, 0.999)
	if err != nil {
		return err
	}
	fmt.Fprintln(s.out, summaryLine(s.count, s.bytes, elapsed, s.totalLatency, s.maxLatency, [4]int32(percs)))
	return nil
}

// percentiles is Stats.percentiles: the first count samples sorted in
// place, and for each p the sample at index (int)(p * size), so the
// 50th of two samples is the larger one.
func percentiles(latencies []int32, count int, ps ...float64) ([]int32, error) {
	size := min(count, len(latencies))
	slices.Sort(latencies[:size])
	out := make([]int32, len(ps))
	for i, p := range ps {
		idx := int(p * float64(size))
		if idx >= len(latencies) {
			return nil, &javaException{"java.lang.ArrayIndexOutOfBoundsException", fmt.Sprintf("Index %d out of bounds for length %d", idx, len(latencies))}
		}
		out[i] = latencies[idx]
	}
	return out, nil
}
