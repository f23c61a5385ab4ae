package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The partition counts of the figures: the single-broker produce and
// consume topics have 6 partitions on one broker (as the e2e throughput
// benchmark), the replication topics 3, each led by a different broker.
const (
	oneBrokerPartitions = 6
	rfPartitions        = 3
)

// suite holds the rows being filled; each phase appends samples.
type suite struct {
	o     options
	log   io.Writer
	c     *cluster
	value []byte

	produceMB, produceRPS, consumeMB, consumeRPS *row
	produceVsLoop, consumeVsLoop                 *row
	storageRow, rfRow                            *row
	lat1, lat3                                   [3]*row // p50, p99, p99.9
	cpuIn, cpuOut, cpuRF                         map[string]*row
	cpuLabels                                    []string
	allocAppend, allocRead                       *row
	brokerAllocProduce, brokerAllocFetch         *row
	perf                                         bool // bin/kafka-producer-perf-test.sh is in the checkout
	perfMB, perfP99                              *row
	loopCPU                                      []float64
	rf3RPS                                       []float64 // records/s of the RF=3 runs, for the latency rate
	rate1, rate3                                 float64   // the open-loop rates
}

func measure(ctx context.Context, o options, log io.Writer) (string, error) {
	s := &suite{o: o, log: log}
	var err error
	if len(o.bootstrap) > 0 {
		s.c, err = externalCluster(o.bootstrap, o.brokerPIDs)
	} else {
		s.c, err = startCluster(ctx, o.repo, log)
	}
	if err != nil {
		return "", err
	}
	defer s.c.close()
	rng := rand.New(rand.NewPCG(13, 4))
	s.value = make([]byte, o.recordSize)
	for i := range s.value {
		s.value[i] = byte(rng.Uint32()) // incompressible
	}
	s.rows()
	s.perf = o.perfTool && havePerfTool(ctx, o.repo)
	for r := 0; r < o.runs; r++ {
		if err := s.throughputRun(ctx, r); err != nil {
			return "", err
		}
	}
	if s.o.runsPhase("latency") {
		if err := s.latencyRuns(ctx); err != nil {
			return "", err
		}
	}
	table := s.table()
	if o.cpuProfile {
		// The table stands without the profiles: a failed profile is
		// reported, not fatal.
		prof, err := s.profiles(ctx)
		if err != nil {
			prof += fmt.Sprintf("\nprofiles failed: %v\n", err)
		}
		table += prof
	}
	return table, nil
}

func (s *suite) rows() {
	s.produceMB = &row{figure: "Produce, 1 broker, acks=1", unit: "MB/s", baseline: "kfake, 1 broker", target: "≥ 1.2× kfake"}
	s.produceRPS = &row{figure: "Produce, 1 broker, acks=1", unit: "rec/s", baseline: "kfake", target: "≥ 1.2× kfake"}
	s.consumeMB = &row{figure: "Consume from the start, 1 broker", unit: "MB/s", baseline: "kfake", target: "≥ 1.5× kfake"}
	s.consumeRPS = &row{figure: "Consume from the start, 1 broker", unit: "rec/s", baseline: "kfake", target: "≥ 1.5× kfake"}
	s.produceVsLoop = &row{figure: "Produce vs the physical limit", unit: "MB/s", baseline: "loopback TCP into a Go sink", target: "— (the ceiling)"}
	s.consumeVsLoop = &row{figure: "Consume vs the physical limit", unit: "MB/s", baseline: "loopback TCP into a Go sink", target: "— (the ceiling)"}
	s.storageRow = &row{figure: "Storage append (storage.Log, 16 KiB batches)", unit: "MB/s", baseline: "raw file writes", target: "— (0.92× when filed)"}
	s.rfRow = &row{figure: "RF=3 acks=all min.insync.replicas=2, 3 brokers", unit: "MB/s", baseline: "RF=1 acks=1, same brokers", target: "≥ 0.75×"}
	qs := []string{"p50", "p99", "p99.9"}
	t1 := []string{"—", "≤ 5 ms", "—"}
	t3 := []string{"—", "≤ 10 ms", "—"}
	for i, q := range qs {
		s.lat1[i] = &row{figure: "Produce latency " + q + ", acks=1, open loop at ⅓ of peak", unit: "ms", baseline: "kfake, same rate", target: t1[i]}
		s.lat3[i] = &row{figure: "Produce latency " + q + ", acks=all RF=3, open loop at ⅓ of peak", unit: "ms", baseline: "kfake acks=all, same rate", target: t3[i]}
	}
	s.cpuIn, s.cpuOut, s.cpuRF = map[string]*row{}, map[string]*row{}, map[string]*row{}
	cpuBase := "loopback TCP, both ends"
	for i, b := range s.c.pids {
		s.cpuLabels = append(s.cpuLabels, b.label)
		if len(s.o.bootstrap) == 0 && i > 0 {
			continue // our own cluster: only broker 1 leads the single-broker topics
		}
		s.cpuIn[b.label] = &row{figure: "CPU-s per GB in (produce), " + b.label, unit: "s/GB", baseline: cpuBase, target: "stated"}
		s.cpuOut[b.label] = &row{figure: "CPU-s per GB out (consume), " + b.label, unit: "s/GB", baseline: cpuBase, target: "stated"}
	}
	for _, b := range s.c.pids {
		s.cpuRF[b.label] = &row{figure: "CPU-s per GB produced, RF=3 acks=all, " + b.label, unit: "s/GB", baseline: cpuBase, target: "stated"}
	}
	s.perfMB = &row{figure: "kafka-producer-perf-test.sh, acks=1, 1 broker", unit: "MB/s", baseline: "kfake, same tool", target: "≥ 1.2× kfake"}
	s.perfP99 = &row{figure: "kafka-producer-perf-test.sh p99 at full speed, acks=1", unit: "ms", baseline: "kfake, same tool", target: "—"}
	s.allocAppend = &row{figure: "Allocations per appended batch (AppendAsLeader)", unit: "allocs/op", baseline: "raw file write", target: "0"}
	s.brokerAllocProduce = &row{figure: "Broker allocations per produced batch, broker 1 (whole request path, client set up)", unit: "allocs/op", baseline: "no baseline", target: "0 (hot path)"}
	s.brokerAllocFetch = &row{figure: "Broker allocations per fetched batch, broker 1 (whole request path, client set up)", unit: "allocs/op", baseline: "no baseline", target: "0 (hot path)"}
	if len(s.c.httpAddrs) == 0 {
		s.brokerAllocProduce.note, s.brokerAllocFetch.note = "n/a (own cluster only)", "n/a (own cluster only)"
	}
	s.allocRead = &row{figure: "Allocations per fetched partition (Log.Read + pread, ≤ 1 MiB)", unit: "allocs/op", baseline: "raw pread", target: "0"}
	if len(s.c.brokers) < 3 {
		s.rfRow.note = fmt.Sprintf("n/a (%d brokers)", len(s.c.brokers))
		for _, r := range s.lat3 {
			r.note = s.rfRow.note
		}
	}
}

func (s *suite) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "klassik-bench: "+format+"\n", args...)
}

// records is how many records make mb MB.
func (s *suite) records(mb int) int { return max(1, mb*1_000_000/s.o.recordSize) }

// cpuPerGB turns a phase's CPU-seconds per process into rows' samples.
func cpuPerGB(rows map[string]*row, cpu map[string]float64, bytes int64) {
	gb := float64(bytes) / 1e9
	for label, secs := range cpu {
		if r := rows[label]; r != nil && gb > 0 {
			r.k = append(r.k, secs/gb)
		}
	}
}

// throughputRun is run r of every throughput figure: Klassik, then its
// baseline, figure after figure.
func (s *suite) throughputRun(ctx context.Context, r int) error {
	suffix := strconv.Itoa(r) + "-" + strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
	n := s.records(s.o.produceMB)
	if s.o.runsPhase("produce") {
		if err := s.produceRun(ctx, r, suffix, n); err != nil {
			return err
		}
	}
	if s.o.runsPhase("replication") && len(s.c.brokers) >= 3 {
		if err := s.replicationRun(ctx, r, suffix); err != nil {
			return err
		}
	}
	if s.perf && s.o.runsPhase("perftool") {
		// The tool is another helper's; a failure of it is reported in
		// its rows, not fatal to the suite.
		if err := s.perfToolRun(ctx, r, suffix, n); err != nil {
			s.logf("run %d: %s: %v", r+1, perfTool, err)
			s.perfMB.note, s.perfP99.note = "n/a (the tool failed)", "n/a (the tool failed)"
		}
	}
	if s.o.runsPhase("storage") {
		if err := s.storageRun(r); err != nil {
			return err
		}
	}
	if s.o.runsPhase("loopback") {
		if err := s.loopbackRun(r); err != nil {
			return err
		}
	}
	return nil
}

// produceRun is run r of the single-broker produce and consume figures:
// Klassik, then kfake.
func (s *suite) produceRun(ctx context.Context, r int, suffix string, n int) error {
	topic := "bench-produce-" + suffix
	if err := s.c.createTopic(ctx, topic, s.c.onOneBroker(oneBrokerPartitions), nil); err != nil {
		return err
	}
	var batches batchCounter
	hooks := kgo.WithHooks(&batches)
	pm := s.allocMeter(ctx, s.brokerAllocProduce, &batches.produced)
	cpu := startCPU(s.c.pids)
	kp, err := produceClosed(ctx, s.c.seeds, topic, s.value, n, kgo.LeaderAck(), pm, hooks)
	if err != nil {
		return fmt.Errorf("klassik produce: %w", err)
	}
	cpuPerGB(s.cpuIn, cpu.stop(), kp.bytes)
	pm.log(s, r, "produce after the client's warm-up record")
	// The timed consume is metered whole, client setup included, for the
	// log; the row's figure comes from a second consume of the same
	// records whose meter starts once the client is set up.
	whole := s.allocMeter(ctx, nil, &batches.fetched)
	fetches := batches.fetches.Load()
	whole.begin()
	cpu = startCPU(s.c.pids)
	kc, err := consumeAll(ctx, s.c.seeds, topic, n+1, nil, hooks)
	if err != nil {
		return fmt.Errorf("klassik consume: %w", err)
	}
	cpuPerGB(s.cpuOut, cpu.stop(), kc.bytes)
	whole.end()
	whole.log(s, r, fmt.Sprintf("consume with the client's setup (%d Fetch requests)", batches.fetches.Load()-fetches))
	if fm := s.allocMeter(ctx, s.brokerAllocFetch, &batches.fetched); fm != nil {
		if _, err := consumeAll(ctx, s.c.seeds, topic, n+1, fm, hooks); err != nil {
			return fmt.Errorf("klassik metered consume: %w", err)
		}
		fm.log(s, r, "second consume after the client's first poll")
	}
	s.c.deleteTopics(ctx, topic)

	f, err := startFake()
	if err != nil {
		return err
	}
	if err := f.createTopic(ctx, topic, oneBrokerPartitions); err != nil {
		f.close()
		return err
	}
	bp, err := produceClosed(ctx, f.seeds(), topic, s.value, n, kgo.LeaderAck(), nil)
	if err != nil {
		f.close()
		return fmt.Errorf("kfake produce: %w", err)
	}
	bc, err := consumeAll(ctx, f.seeds(), topic, n+1, nil)
	f.close()
	if err != nil {
		return fmt.Errorf("kfake consume: %w", err)
	}
	s.produceMB.k, s.produceMB.b = append(s.produceMB.k, kp.mbps()), append(s.produceMB.b, bp.mbps())
	s.produceRPS.k, s.produceRPS.b = append(s.produceRPS.k, kp.rps()), append(s.produceRPS.b, bp.rps())
	s.consumeMB.k, s.consumeMB.b = append(s.consumeMB.k, kc.mbps()), append(s.consumeMB.b, bc.mbps())
	s.consumeRPS.k, s.consumeRPS.b = append(s.consumeRPS.k, kc.rps()), append(s.consumeRPS.b, bc.rps())
	s.produceVsLoop.k = append(s.produceVsLoop.k, kp.mbps())
	s.consumeVsLoop.k = append(s.consumeVsLoop.k, kc.mbps())
	s.logf("run %d: produce %.0f MB/s (kfake %.0f), consume %.0f MB/s (kfake %.0f)", r+1, kp.mbps(), bp.mbps(), kc.mbps(), bc.mbps())
	return nil
}

// replicationInflight is the produce requests a replication run's client
// keeps in flight per broker, both sides alike: the default of the Java
// producer's max.in.flight.requests.per.connection (franz-go's default
// without idempotence is 1).
const replicationInflight = 5

// replicationRun is run r of RF=3 acks=all against RF=1 acks=1 on the
// same brokers.
func (s *suite) replicationRun(ctx context.Context, r int, suffix string) error {
	{
		rf3, rf1 := "bench-rf3-"+suffix, "bench-rf1-"+suffix
		if err := s.c.createTopic(ctx, rf3, s.c.roundRobin(rfPartitions, 3), map[string]string{"min.insync.replicas": "2"}); err != nil {
			return err
		}
		if err := s.c.createTopic(ctx, rf1, s.c.roundRobin(rfPartitions, 1), nil); err != nil {
			return err
		}
		m := s.records(s.o.rfMB)
		cpu := startCPU(s.c.pids)
		inflight := kgo.MaxProduceRequestsInflightPerBroker(replicationInflight)
		k3, err := produceClosed(ctx, s.c.seeds, rf3, s.value, m, kgo.AllISRAcks(), nil, inflight)
		if err != nil {
			return fmt.Errorf("klassik RF=3 produce: %w", err)
		}
		cpuPerGB(s.cpuRF, cpu.stop(), k3.bytes)
		k1, err := produceClosed(ctx, s.c.seeds, rf1, s.value, m, kgo.LeaderAck(), nil, inflight)
		if err != nil {
			return fmt.Errorf("klassik RF=1 produce: %w", err)
		}
		s.c.deleteTopics(ctx, rf3, rf1)
		s.rfRow.k, s.rfRow.b = append(s.rfRow.k, k3.mbps()), append(s.rfRow.b, k1.mbps())
		s.rf3RPS = append(s.rf3RPS, k3.rps())
		s.logf("run %d: RF=3 acks=all %.0f MB/s, RF=1 acks=1 %.0f MB/s", r+1, k3.mbps(), k1.mbps())
	}
	return nil
}

// storageRun is run r of storage.Log against raw file writes.
func (s *suite) storageRun(r int) error {
	dir, err := os.MkdirTemp("", "klassik-bench-storage-")
	if err != nil {
		return err
	}
	st, err := storageRun(dir, s.o.storageMB)
	os.RemoveAll(dir)
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	s.storageRow.k, s.storageRow.b = append(s.storageRow.k, st.logMBps), append(s.storageRow.b, st.rawMBps)
	s.allocAppend.k, s.allocAppend.b = append(s.allocAppend.k, st.appendAllocs), append(s.allocAppend.b, st.rawAllocs)
	s.allocRead.k, s.allocRead.b = append(s.allocRead.k, st.readAllocs), append(s.allocRead.b, st.rawReadAllocs)
	s.logf("run %d: storage append %.0f MB/s (raw %.0f), %.1f allocs per append, %.1f per read", r+1, st.logMBps, st.rawMBps, st.appendAllocs, st.readAllocs)
	return nil
}

// loopbackRun is run r of loopback TCP into a Go sink.
func (s *suite) loopbackRun(r int) error {
	lb, err := loopbackRun(s.o.loopbackMB)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	s.produceVsLoop.b = append(s.produceVsLoop.b, lb.mbps)
	s.consumeVsLoop.b = append(s.consumeVsLoop.b, lb.mbps)
	s.loopCPU = append(s.loopCPU, lb.cpuPerGB)
	s.logf("run %d: loopback TCP %.0f MB/s, %.2f CPU-s/GB", r+1, lb.mbps, lb.cpuPerGB)
	return nil
}

// perfToolRun is run r of Kafka's producer perf tool: n records at full
// speed, acks=1, to a one-broker topic of Klassik, then to kfake.
func (s *suite) perfToolRun(ctx context.Context, r int, suffix string, n int) error {
	topic := "bench-perftool-" + suffix
	if err := s.c.createTopic(ctx, topic, s.c.onOneBroker(oneBrokerPartitions), nil); err != nil {
		return err
	}
	k, err := runPerfTool(ctx, s.o.repo, s.c.seeds, topic, n, s.o.recordSize, "1")
	s.c.deleteTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("klassik: %w", err)
	}
	f, err := startFake()
	if err != nil {
		return err
	}
	defer f.close()
	if err := f.createTopic(ctx, topic, oneBrokerPartitions); err != nil {
		return err
	}
	b, err := runPerfTool(ctx, s.o.repo, f.seeds(), topic, n, s.o.recordSize, "1")
	if err != nil {
		return fmt.Errorf("kfake: %w", err)
	}
	s.perfMB.k, s.perfMB.b = append(s.perfMB.k, k.mbps), append(s.perfMB.b, b.mbps)
	s.perfP99.k, s.perfP99.b = append(s.perfP99.k, k.p99), append(s.perfP99.b, b.p99)
	s.logf("run %d: %s %.1f MB/s, p99 %.0f ms (kfake %.1f MB/s, p99 %.0f ms)", r+1, perfTool, k.mbps, k.p99, b.mbps, b.p99)
	return nil
}

// latencyRuns finds the offered rates (a third of the median peak of the
// closed-loop runs: acks=1 on one broker, acks=all RF=3) and measures
// open-loop latency at them, Klassik then kfake at the same rate, run
// after run.
func (s *suite) latencyRuns(ctx context.Context) error {
	rate1 := median(s.produceRPS.k) / 3
	rate3 := median(s.rf3RPS) / 3
	if s.o.rate1 > 0 {
		rate1 = s.o.rate1
	}
	if s.o.rate3 > 0 {
		rate3 = s.o.rate3
	}
	s.rate1, s.rate3 = rate1, rate3
	lat1 := "bench-lat1-" + strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
	lat3 := strings.Replace(lat1, "lat1", "lat3", 1)
	if err := s.c.createTopic(ctx, lat1, s.c.onOneBroker(oneBrokerPartitions), nil); err != nil {
		return err
	}
	defer s.c.deleteTopics(ctx, lat1)
	rf3 := len(s.c.brokers) >= 3 && rate3 > 0
	if rf3 {
		if err := s.c.createTopic(ctx, lat3, s.c.roundRobin(rfPartitions, 3), map[string]string{"min.insync.replicas": "2"}); err != nil {
			return err
		}
		defer s.c.deleteTopics(ctx, lat3)
	}
	add := func(rows [3]*row, k bool, l latencies) {
		for i, d := range []time.Duration{l.p50, l.p99, l.p9} {
			ms := float64(d) / float64(time.Millisecond)
			if k {
				rows[i].k = append(rows[i].k, ms)
			} else {
				rows[i].b = append(rows[i].b, ms)
			}
		}
	}
	// Each kfake baseline is a fresh in-process cluster that lives only
	// for its own step: a kfake holds every record it was sent in the
	// driver's heap, and would otherwise carry gigabytes (and their
	// collection) into the Klassik steps after it.
	runStep := func(r int, st latencyStep) error {
		seeds := s.c.seeds
		if !st.k {
			f, err := startFake()
			if err != nil {
				return err
			}
			defer f.close()
			if err := f.createTopic(ctx, st.topic, st.partitions); err != nil {
				return err
			}
			seeds = f.seeds()
		}
		l, err := openLoop(ctx, seeds, st.topic, s.value, st.rate, s.o.latencyDur, st.acks)
		if err != nil {
			return fmt.Errorf("open-loop latency on %s: %w", st.topic, err)
		}
		add(st.rows, st.k, l)
		who := "klassik"
		if !st.k {
			who = "kfake"
		}
		s.logf("run %d: %s %s at %.0f rec/s: p50 %v, p99 %v, p99.9 %v", r+1, who, st.topic, st.rate, l.p50, l.p99, l.p9)
		return nil
	}
	for r := 0; r < s.o.runs; r++ {
		steps := []latencyStep{
			{s.lat1, true, lat1, oneBrokerPartitions, rate1, kgo.LeaderAck()},
			{s.lat1, false, lat1, oneBrokerPartitions, rate1, kgo.LeaderAck()},
		}
		if rf3 {
			steps = append(steps,
				latencyStep{s.lat3, true, lat3, rfPartitions, rate3, kgo.AllISRAcks()},
				latencyStep{s.lat3, false, lat3, rfPartitions, rate3, kgo.AllISRAcks()})
		}
		for _, st := range steps {
			if err := runStep(r, st); err != nil {
				return err
			}
		}
	}
	return nil
}

// allocMeter counts broker 1's heap allocations over a window of a
// client's run (see window): from when the client is set up to its last
// record, so that what a client costs once (connections, ApiVersions,
// Metadata, start offsets, the fetch session, buffers growing to size)
// is not divided by the batches as if every batch cost a share of it.
// Each reading (mallocs) is an HTTP request that allocates the same
// before and after the broker's count is taken, so begin reads twice and
// subtracts the difference, one reading's allocations (and the idle
// broker's), from the window's.
type allocMeter struct {
	ctx     context.Context
	addr    string
	r       *row          // nil: logged only
	batches *atomic.Int64 // the client's batches so far (batchCounter)

	start, idle float64
	from        int64 // batches at begin
	ok          bool
	allocs      float64 // the window's, after end
	n           int64   // the window's batches, after end
}

// allocMeter returns a meter of broker 1 whose per-batch figure goes to
// r; nil (which every method accepts) without the brokers' HTTP
// listeners.
func (s *suite) allocMeter(ctx context.Context, r *row, batches *atomic.Int64) *allocMeter {
	if len(s.c.httpAddrs) == 0 {
		return nil
	}
	return &allocMeter{ctx: ctx, addr: s.c.httpAddrs[0], r: r, batches: batches}
}

func (m *allocMeter) begin() {
	if m == nil {
		return
	}
	m.from = m.batches.Load()
	a, err1 := mallocs(m.ctx, m.addr)
	b, err2 := mallocs(m.ctx, m.addr)
	m.start, m.idle, m.ok = b, b-a, err1 == nil && err2 == nil
}

// end closes the window and adds its allocations per batch to the row.
func (m *allocMeter) end() {
	if m == nil || !m.ok {
		return
	}
	m.n = m.batches.Load() - m.from
	end, err := mallocs(m.ctx, m.addr)
	if err != nil {
		m.ok = false
		return
	}
	m.allocs = max(0, end-m.start-m.idle)
	if m.r != nil && m.n > 0 {
		m.r.k = append(m.r.k, m.allocs/float64(m.n))
	}
}

// log reports the window's count, so that the per-client cost left out
// of a row stays visible.
func (m *allocMeter) log(s *suite, r int, what string) {
	if m == nil || !m.ok {
		return
	}
	s.logf("run %d: %s: broker 1 allocated %.0f objects, %d batches", r+1, what, m.allocs, m.n)
}

// latencyStep is one open-loop run: which rows it fills (Klassik's
// samples, on the driver's cluster, or the baseline's, on a kfake of its
// own), on which topic (and for kfake its partitions), at which rate and
// acks.
type latencyStep struct {
	rows       [3]*row
	k          bool
	topic      string
	partitions int
	rate       float64
	acks       kgo.Acks
}

func (s *suite) table() string {
	for _, m := range []map[string]*row{s.cpuIn, s.cpuOut, s.cpuRF} {
		for _, r := range m {
			if len(r.k) > 0 {
				r.b = s.loopCPU
			}
		}
	}
	for _, r := range s.lat1 {
		r.figure = strings.Replace(r.figure, "⅓ of peak", fmt.Sprintf("⅓ of peak (%s rec/s)", format(s.rate1)), 1)
	}
	for _, r := range s.lat3 {
		r.figure = strings.Replace(r.figure, "⅓ of peak", fmt.Sprintf("⅓ of peak (%s rec/s)", format(s.rate3)), 1)
	}
	rows := []*row{s.produceMB, s.produceRPS, s.consumeMB, s.consumeRPS, s.produceVsLoop, s.consumeVsLoop, s.storageRow, s.rfRow}
	if s.perf {
		rows = append(rows, s.perfMB, s.perfP99)
	}
	rows = append(rows, s.lat1[:]...)
	rows = append(rows, s.lat3[:]...)
	for _, l := range s.cpuLabels {
		if r := s.cpuIn[l]; r != nil {
			rows = append(rows, r)
		}
	}
	for _, l := range s.cpuLabels {
		if r := s.cpuOut[l]; r != nil {
			rows = append(rows, r)
		}
	}
	if len(s.c.brokers) >= 3 {
		for _, l := range s.cpuLabels {
			rows = append(rows, s.cpuRF[l])
		}
	}
	rows = append(rows, s.allocAppend, s.allocRead, s.brokerAllocProduce, s.brokerAllocFetch)
	nproc, cpu := machine()
	cl := fmt.Sprintf("Klassik: %d kafka-server processes (no race detector) and ZooKeeper on 127.0.0.1, started by the driver", len(s.c.brokers))
	if len(s.o.bootstrap) > 0 {
		cl = fmt.Sprintf("Klassik: the cluster at %s (%d brokers)", strings.Join(s.o.bootstrap, ","), len(s.c.brokers))
	}
	settings := fmt.Sprintf("franz-go %s for both sides, %d-byte incompressible records, no compression, no idempotence; %d MB per produce run, %d MB per replication run (%d produce requests in flight per broker), %v per latency run",
		franzVersion(), s.o.recordSize, s.o.produceMB, s.o.rfMB, replicationInflight, s.o.latencyDur)
	return markdown(header{date: time.Now(), nproc: nproc, cpu: cpu, goVer: runtime.Version(), cluster: cl, runs: s.o.runs, quick: s.o.quick, settings: settings}, rows)
}

// franzVersion is the franz-go module version the driver was built with.
func franzVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/twmb/franz-go" {
				return d.Version
			}
		}
	}
	return "(unknown version)"
}
