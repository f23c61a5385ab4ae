// Command kafka-consumer-perf-test is Kafka 2.8's
// kafka.tools.ConsumerPerformance: one consumer in a group reads
// --messages records of a topic (or stops when no record came for
// --timeout ms) and prints Kafka's CSV: a header, then one summary row
// (start.time, end.time, data.consumed.in.MB, MB.sec,
// data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms,
// fetch.MB.sec, fetch.nMsg.sec), or with --show-detailed-stats a row per
// --reporting-interval instead. Run it through
// bin/kafka-consumer-perf-test.sh.
//
// As in Kafka 2.8, --threads and --num-fetch-threads are accepted,
// warned about and ignored (one consumer, one polling thread), and
// --socket-buffer-size sets receive.buffer.bytes, which franz-go leaves
// to the kernel's autotuning.
//
// Kafka classes and their Go files (apache/kafka 2.8, core):
//
//	ConsumerPerformance (main, consume,   main.go (the poll loop, the join time
//	  printHeader, print*Progress)          measured by the rebalance callbacks)
//	ConsumerPerformance.ConsumerPerfConfig options.go (flags and the consumer
//	  and PerfConfig                        properties onto franz-go)
//	java.text.SimpleDateFormat            dateformat.go (--date-format)
//	ToolsUtils.printMetrics               clitools.PrintMetrics (--print-metrics)
//
// Goroutines: main polls; franz-go calls the assignment and revocation
// callbacks on its group goroutine, which share the join times with main
// under joinMu.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/common/jvm"
)

func main() {
	admintool.Main(func(ctx context.Context) int { return run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}

func nowMs() int64 { return time.Now().UnixMilli() }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, special, err := parseOptions(args)
	if o != nil && o.warning != "" {
		fmt.Fprintln(stdout, o.warning)
	}
	if code, done := admintool.CommandLine(special, err, admintool.UsageAndDie, toolHelp, specs, stdout, stderr); done {
		return code
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for _, w := range o.logWarnings {
		fmt.Fprintln(stderr, w)
	}
	if !o.hideHeader {
		printHeader(stdout, o.showDetailedStats)
	}
	p := &perf{o: o, out: stdout}
	opts := append(o.kgoOpts, kgo.OnPartitionsAssigned(p.assigned), kgo.OnPartitionsRevoked(p.revoked))
	var m *fetchMetrics
	if o.printMetrics {
		m = newFetchMetrics(o.clientID, o.topic)
		opts = append(opts, kgo.WithHooks(m))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		fmt.Fprintf(stderr, "Exception in thread \"main\" org.apache.kafka.common.KafkaException: Failed to construct kafka consumer: %v\n", err)
		return 1
	}
	startMs := nowMs()
	p.consume(ctx, cl)
	endMs := nowMs()
	var values map[string]float64
	if m != nil {
		values = m.values()
	}
	cl.Close() // commits the consumed offsets (auto-commit) and leaves the group
	if !o.showDetailedStats {
		fmt.Fprintln(stdout, summaryRow(o.dateFormat, startMs, endMs, p.bytesRead, p.messagesRead, p.joinTime()))
	}
	if values != nil {
		clitools.PrintMetrics(stdout, values)
	}
	return 0
}

func printHeader(w io.Writer, detailed bool) {
	const newFields = ", rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
	if !detailed {
		fmt.Fprintln(w, "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec"+newFields)
	} else {
		fmt.Fprintln(w, "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec"+newFields)
	}
}

// summaryRow is the one CSV row of a run without --show-detailed-stats,
// computed as Kafka computes it (a run of 0 ms divides by zero into
// Java's NaN or Infinity).
func summaryRow(df *dateFormat, startMs, endMs, bytes, messages, joinMs int64) string {
	elapsedSecs := float64(endMs-startMs) / 1000.0
	fetchTimeMs := (endMs - startMs) - joinMs
	totalMB := float64(bytes) * 1.0 / (1024 * 1024)
	f4 := func(v float64) string { return jvm.FormatFixed(v, 4) }
	return fmt.Sprintf("%s, %s, %s, %s, %d, %s, %d, %d, %s, %s", df.format(startMs), df.format(endMs),
		f4(totalMB), f4(totalMB/elapsedSecs), messages, f4(float64(messages)/elapsedSecs), joinMs, fetchTimeMs,
		f4(totalMB/(float64(fetchTimeMs)/1000.0)), f4(float64(messages)/(float64(fetchTimeMs)/1000.0)))
}

// progressRow is a --show-detailed-stats row for the interval from
// startMs to endMs (printConsumerProgress with thread id 0).
func progressRow(df *dateFormat, bytes, lastBytes, messages, lastMessages, startMs, endMs, joinMs int64) string {
	f4 := func(v float64) string { return jvm.FormatFixed(v, 4) }
	elapsedMs := float64(endMs - startMs)
	totalMB := float64(bytes) * 1.0 / (1024 * 1024)
	intervalMB := float64(bytes-lastBytes) * 1.0 / (1024 * 1024)
	basic := fmt.Sprintf("%s, %d, %s, %s, %d, %s", df.format(endMs), 0, f4(totalMB), f4(1000.0*intervalMB/elapsedMs),
		messages, f4(float64(messages-lastMessages)/elapsedMs*1000.0))
	fetchTimeMs := endMs - startMs - joinMs
	mbPerSec, msgPerSec := 0.0, 0.0
	if fetchTimeMs > 0 {
		mbPerSec = 1000.0 * intervalMB / float64(fetchTimeMs)
		msgPerSec = 1000.0 * float64(messages-lastMessages) / float64(fetchTimeMs)
	}
	return basic + fmt.Sprintf(", %d, %d, %s, %s", joinMs, fetchTimeMs, f4(mbPerSec), f4(msgPerSec))
}

// perf is one run's state.
type perf struct {
	o            *options
	out          io.Writer
	bytesRead    int64
	messagesRead int64

	// joinMu guards the following, which the rebalance callbacks update.
	joinMu        sync.Mutex
	joinStart     int64
	joinTotal     int64
	joinThisRound int64
}

func (p *perf) assigned(context.Context, *kgo.Client, map[string][]int32) {
	p.joinMu.Lock()
	defer p.joinMu.Unlock()
	d := nowMs() - p.joinStart
	p.joinTotal += d
	p.joinThisRound += d
}

func (p *perf) revoked(context.Context, *kgo.Client, map[string][]int32) {
	p.joinMu.Lock()
	defer p.joinMu.Unlock()
	p.joinStart = nowMs()
}

func (p *perf) joinTime() int64 {
	p.joinMu.Lock()
	defer p.joinMu.Unlock()
	return p.joinTotal
}

// takeRoundJoin returns the join time since the last report and resets it.
func (p *perf) takeRoundJoin() int64 {
	p.joinMu.Lock()
	defer p.joinMu.Unlock()
	d := p.joinThisRound
	p.joinThisRound = 0
	return d
}

// consume is ConsumerPerformance.consume: poll for 100 ms at a time
// until --messages records came or none came for --timeout ms.
func (p *perf) consume(ctx context.Context, cl *kgo.Client) {
	o := p.o
	p.joinMu.Lock()
	p.joinStart = nowMs()
	p.joinMu.Unlock()
	var lastBytes, lastMessages int64
	current := nowMs()
	lastReport, lastConsumed := current, current
	for p.messagesRead < o.numMessages && current-lastConsumed <= o.timeout && ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		fetches := cl.PollRecords(pctx, o.maxPollRecords)
		cancel()
		current = nowMs()
		recs := fetches.Records()
		if len(recs) > 0 {
			lastConsumed = current
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				fmt.Fprintf(os.Stderr, "WARN fetching %s-%d: %v\n", topic, partition, err)
			}
		})
		for _, r := range recs {
			p.messagesRead++
			p.bytesRead += int64(len(r.Key) + len(r.Value))
			if current-lastReport >= o.reportingInterval {
				join := p.takeRoundJoin()
				if o.showDetailedStats {
					fmt.Fprintln(p.out, progressRow(o.dateFormat, p.bytesRead, lastBytes, p.messagesRead, lastMessages, lastReport, current, join))
				}
				lastReport, lastMessages, lastBytes = current, p.messagesRead, p.bytesRead
			}
		}
	}
	if p.messagesRead < o.numMessages {
		fmt.Fprintf(p.out, "WARNING: Exiting before consuming the expected number of messages: timeout (%d ms) exceeded. You can use the --timeout option to increase the timeout.\n", o.timeout)
	}
}
