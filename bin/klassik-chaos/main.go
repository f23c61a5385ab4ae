// Command klassik-chaos runs a verifiable workload against a running
// cluster (Klassik's or any Kafka on this machine) while it injects faults
// on the local machine on a schedule, and ends with a Jepsen-style verdict
// and a timeline. Run it through bin/klassik-chaos.sh; doc.go describes
// what it does and how it restarts what it kills.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

func main() {
	admintool.Main(func(ctx context.Context) int { return run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// options are the parsed flags.
type options struct {
	bootstrap      []string
	zookeeper      string
	topic          string
	partitions     int
	replication    int
	faults         []string
	duration       time.Duration
	interval       time.Duration
	hold           time.Duration
	warmup         time.Duration
	seed           int64
	throughput     int
	recordSize     int
	consumers      int
	brokerCmds     map[int32]string
	zkCmds         map[int32]string
	logDir         string
	timelineJSON   string
	verdictJSON    string
	drainTimeout   time.Duration
	printSchedule  bool
	maxViolations  int
	noTimeline     bool
	live           bool
	deliveryTimout time.Duration
}

const usageText = `Usage: klassik-chaos --bootstrap-server HOST:PORT[,...] [options]

Drives an idempotent acks=all producer and a consumer group against the
cluster while it injects faults on this machine on a schedule, then prints
a verdict (acknowledged records lost, duplicated, reordered; offsets
inconsistent between consumers) and a timeline. Exit status 0 only when the
verdict is clean; 1 with violations; 2 when the run could not be made.

Options:
`

func parseArgs(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("klassik-chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
	}
	bootstrap := fs.String("bootstrap-server", "", "REQUIRED: the brokers to bootstrap from, HOST1:PORT1[,HOST2:PORT2...]")
	fs.StringVar(&o.zookeeper, "zookeeper", "", "HOST:PORT[,HOST:PORT...][/chroot] of the cluster's ZooKeeper: the timeline reads the controller, its epoch and every partition's leader and ISR from it, a killed broker is restarted once its old registration is gone, and zk-kill targets its nodes (numbered 1.. in this order)")
	fs.StringVar(&o.topic, "topic", "klassik-chaos", "the topic to produce to and consume from (created if missing)")
	fs.IntVar(&o.partitions, "partitions", 6, "partitions of the topic when it is created")
	fs.IntVar(&o.replication, "replication-factor", 3, "replication factor of the topic when it is created (min.insync.replicas is min(2, it))")
	faults := fs.String("faults", defaultFault, "faults to inject, comma-separated: kill9 (SIGKILL a broker, restart it), sigstop (SIGSTOP, then SIGCONT), iptables-cut (drop a broker's listener traffic on lo), zk-kill (SIGKILL a ZooKeeper node, restart it)")
	fs.DurationVar(&o.duration, "duration", 5*time.Minute, "how long the workload runs")
	fs.DurationVar(&o.interval, "interval", 20*time.Second, "quiet time between one fault's heal and the next fault")
	fs.DurationVar(&o.hold, "fault-duration", 10*time.Second, "how long a fault lasts at most (each lasts between half of it and it)")
	fs.DurationVar(&o.warmup, "warmup", 5*time.Second, "time before the first fault")
	fs.Int64Var(&o.seed, "seed", 0, "seed of the fault schedule (0: the current time); the same seed, faults, brokers and durations give the same schedule")
	fs.IntVar(&o.throughput, "throughput", 200, "records per second the producer sends")
	fs.IntVar(&o.recordSize, "record-size", 100, "bytes per record value (at least the producer id and sequence number)")
	fs.IntVar(&o.consumers, "consumers", 2, "members of the consumer group (at least 2)")
	var brokerCmds, zkCmds listFlag
	fs.Var(&brokerCmds, "broker-cmd", "'ID=COMMAND': how to start broker ID again after a kill (run with /bin/sh -c); repeatable. Default: the command line, directory and environment of the process listening on the broker's port, read from /proc before the kill")
	fs.Var(&zkCmds, "zk-cmd", "'N=COMMAND': how to start ZooKeeper node N (its place in --zookeeper) again; repeatable. Default: as for brokers, from /proc")
	fs.StringVar(&o.logDir, "log-dir", "", "directory for the output of restarted processes (default: a new temporary directory)")
	fs.StringVar(&o.timelineJSON, "timeline-json", "", "also write the timeline as JSON to this file")
	fs.StringVar(&o.verdictJSON, "verdict-json", "", "also write the verdict and fault counts as JSON to this file")
	fs.DurationVar(&o.drainTimeout, "drain-timeout", 60*time.Second, "how long, after the workload, the consumers get to read up to the end")
	fs.DurationVar(&o.deliveryTimout, "delivery-timeout", 2*time.Minute, "how long the producer retries a record before it counts as not acknowledged")
	fs.BoolVar(&o.printSchedule, "print-schedule", false, "print the fault schedule and exit")
	fs.IntVar(&o.maxViolations, "max-violations", 100, "print at most this many violations of each kind")
	fs.BoolVar(&o.noTimeline, "no-timeline", false, "do not print the timeline (--timeline-json still writes it)")
	fs.BoolVar(&o.live, "live", false, "also print each timeline event on stderr as it happens")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, b := range strings.Split(*bootstrap, ",") {
		if b = strings.TrimSpace(b); b != "" {
			o.bootstrap = append(o.bootstrap, b)
		}
	}
	if len(o.bootstrap) == 0 {
		return o, errors.New("--bootstrap-server is required")
	}
	var err error
	if o.faults, err = parseFaults(*faults); err != nil {
		return o, err
	}
	if o.brokerCmds, err = parseCmds(brokerCmds); err != nil {
		return o, fmt.Errorf("--broker-cmd %w", err)
	}
	if o.zkCmds, err = parseCmds(zkCmds); err != nil {
		return o, fmt.Errorf("--zk-cmd %w", err)
	}
	switch {
	case o.consumers < 2:
		return o, errors.New("--consumers must be at least 2")
	case o.throughput <= 0:
		return o, errors.New("--throughput must be positive")
	case o.duration <= 0 || o.hold <= 0 || o.interval < 0:
		return o, errors.New("--duration and --fault-duration must be positive, --interval not negative")
	case o.partitions <= 0 || o.replication <= 0:
		return o, errors.New("--partitions and --replication-factor must be positive")
	}
	for _, f := range o.faults {
		if f == FaultZKKill && o.zookeeper == "" {
			return o, errors.New("zk-kill needs --zookeeper")
		}
	}
	if o.seed == 0 {
		o.seed = time.Now().UnixNano()
	}
	return o, nil
}

// target is a process the tool may fault: a broker or a ZooKeeper node.
type target struct {
	name   string // "broker 1", "zookeeper 2"
	id     int32
	addr   string
	port   int
	launch Launch

	mu  sync.Mutex
	pid int
}

func (t *target) currentPid() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !alive(t.pid) {
		t.pid = PidListening(t.port)
	}
	return t.pid
}

// chaos is one run.
type chaos struct {
	o        options
	out      io.Writer
	tl       *Timeline
	adm      *kadm.Client
	admCl    *kgo.Client
	zk       *zkclient.Client
	brokers  map[int32]*target
	zkNodes  map[int32]*target
	checker  *Checker
	counts   map[string]int
	countsMu sync.Mutex
	cutOn    bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "klassik-chaos: %v\n", err)
		return 2
	}
	c := &chaos{o: o, out: stdout, tl: &Timeline{start: time.Now()}, counts: map[string]int{}}
	if o.live {
		c.tl.live = stderr
	}
	code, err := c.run(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "klassik-chaos: %v\n", err)
		return 2
	}
	return code
}

func (c *chaos) run(ctx context.Context) (int, error) {
	o := c.o
	cl, err := kgo.NewClient(kgo.SeedBrokers(o.bootstrap...))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	c.admCl, c.adm = cl, kadm.NewClient(cl)

	if o.zookeeper != "" {
		if err := c.discoverZooKeeper(); err != nil {
			return 0, err
		}
	}
	if !o.printSchedule {
		if err := c.ensureTopic(ctx); err != nil {
			return 0, err
		}
	}
	if err := c.discoverBrokers(ctx); err != nil {
		return 0, err
	}
	var ids []int32
	for id := range c.brokers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	sched := Schedule(ScheduleOptions{Seed: o.seed, Faults: o.faults, Brokers: ids, ZKNodes: len(c.zkNodes),
		Duration: o.duration, Interval: o.interval, Hold: o.hold, Warmup: o.warmup, Cooldown: o.hold})
	faultList := strings.Join(o.faults, ",")
	if faultList == "" {
		faultList = "none"
	}
	fmt.Fprintf(c.out, "klassik-chaos: seed %d, %d faults scheduled over %v (faults %s, brokers %v)\n", o.seed, len(sched), o.duration, faultList, ids)
	if o.printSchedule {
		for _, f := range sched {
			fmt.Fprintln(c.out, "  "+f.String())
		}
		return 0, nil
	}
	if err := c.checkTargets(sched); err != nil {
		return 0, err
	}
	if o.logDir == "" {
		if o.logDir, err = os.MkdirTemp("", "klassik-chaos-"); err != nil {
			return 0, err
		}
	} else if err := os.MkdirAll(o.logDir, 0o755); err != nil {
		return 0, err
	}
	for _, f := range o.faults {
		if f == FaultCut {
			if err := setupChain(); err != nil {
				return 0, err
			}
			c.cutOn = true
			defer removeChain(Chain)
		}
	}
	base, err := c.endOffsets(ctx, nil)
	if err != nil {
		return 0, err
	}
	producerID := "chaos" + strconv.FormatInt(time.Now().UnixNano()%1e12, 36)
	c.checker = NewChecker(producerID, base)
	group := "klassik-chaos-" + producerID
	if err := c.commitStart(ctx, group, base); err != nil {
		return 0, err
	}

	var watcher *clusterWatcher
	if c.zk != nil {
		if watcher, err = watchCluster(o.zookeeper, o.topic, int32(len(base)), c.tl); err != nil {
			return 0, fmt.Errorf("watching ZooKeeper %s: %w", o.zookeeper, err)
		}
	}

	c.tl.Add("chaos", "start: producer %s at %d records/s to %s (%d partitions), group %s of %d consumers", producerID, o.throughput, o.topic, len(base), group, o.consumers)
	consumers, err := c.startConsumers(group)
	if err != nil {
		return 0, err
	}
	prod, err := c.startProducer()
	if err != nil {
		return 0, err
	}

	runCtx, cancel := context.WithTimeout(ctx, o.duration)
	c.inject(runCtx, sched)
	<-runCtx.Done()
	cancel()
	interrupted := ctx.Err() != nil
	if interrupted {
		c.tl.Add("chaos", "interrupted: every fault healed, checking what was acknowledged so far")
	}
	sent := prod.stop(c.tl)
	stalls := prod.stalls.Longest(int32(len(base)), time.Now())
	for _, st := range stalls {
		st := st
		c.tl.add(Event{Time: st.From, Source: "producer", What: "longest stall of " + st.describe(c.tl.start), Stall: &st})
	}
	c.tl.Add("chaos", "producer stopped: %d sent, %d acknowledged, %d failed", sent, c.checker.Acked(), prod.failed.Load())

	drainCtx, cancelDrain := context.WithTimeout(context.Background(), o.drainTimeout)
	defer cancelDrain()
	end, err := c.waitEnd(drainCtx, prod)
	if err != nil {
		c.tl.Add("chaos", "reading the end offsets: %v", err)
	}
	finalDone := c.finalRead(drainCtx, base, end)
	groupDone := consumers.waitEnd(drainCtx, end)
	consumers.close()
	if watcher != nil {
		watcher.Stop()
	}
	if c.zk != nil {
		c.zk.Close()
	}
	if !finalDone {
		c.tl.Add("chaos", "final reader did not reach the end offsets within %v", o.drainTimeout)
	}
	if !groupDone {
		c.tl.Add("chaos", "consumer group did not reach the end offsets within %v", o.drainTimeout)
	}
	c.tl.Add("chaos", "end")

	v := c.checker.Verdict()
	c.report(v, stalls, sent, prod.failed.Load(), finalDone, groupDone, interrupted)
	if o.timelineJSON != "" {
		if err := c.tl.WriteJSON(o.timelineJSON); err != nil {
			return 0, err
		}
	}
	if !v.Clean() || !finalDone {
		return 1, nil
	}
	return 0, nil
}

// discoverBrokers reads the brokers from the cluster's metadata and finds
// the local process of each.
func (c *chaos) discoverBrokers(ctx context.Context) error {
	mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// A broker answers with the brokers it has heard of from the
	// controller: wait until that is every registered broker (or, without
	// ZooKeeper, anything).
	var md kadm.Metadata
	for {
		var err error
		md, err = c.adm.BrokerMetadata(mctx)
		if err != nil {
			return fmt.Errorf("reading the cluster's brokers: %w", err)
		}
		want := 1
		if c.zk != nil {
			if ids, err := c.zk.GetBrokerIDs(); err == nil {
				want = max(want, len(ids))
			}
		}
		if len(md.Brokers) >= want {
			break
		}
		select {
		case <-mctx.Done():
			return fmt.Errorf("reading the cluster's brokers: %d in the metadata, %d registered", len(md.Brokers), want)
		case <-time.After(200 * time.Millisecond):
		}
	}
	var err error
	c.brokers = map[int32]*target{}
	for _, b := range md.Brokers {
		t := &target{name: fmt.Sprintf("broker %d", b.NodeID), id: b.NodeID, addr: fmt.Sprintf("%s:%d", b.Host, b.Port), port: int(b.Port)}
		t.pid = PidListening(t.port)
		if cmd, ok := c.o.brokerCmds[b.NodeID]; ok {
			t.launch = Launch{Shell: cmd}
		} else if t.pid > 0 {
			if t.launch, err = LaunchOf(t.pid); err != nil {
				return fmt.Errorf("%s: reading how process %d was started: %w", t.name, t.pid, err)
			}
		}
		c.brokers[b.NodeID] = t
	}
	return nil
}

// discoverZooKeeper connects to ZooKeeper and finds the local process of
// each node of the connect string.
func (c *chaos) discoverZooKeeper() error {
	servers, _, err := zkclient.ParseConnectString(c.o.zookeeper)
	if err != nil {
		return err
	}
	zk, err := zkclient.Connect(c.o.zookeeper, 10*time.Second)
	if err != nil {
		return fmt.Errorf("connecting to ZooKeeper %s: %w", c.o.zookeeper, err)
	}
	c.zk = zk
	c.zkNodes = map[int32]*target{}
	for i, s := range servers {
		n := int32(i + 1)
		port, err := portOf(s)
		if err != nil {
			return err
		}
		t := &target{name: fmt.Sprintf("zookeeper %d", n), id: n, addr: s, port: port}
		t.pid = PidListening(port)
		if cmd, ok := c.o.zkCmds[n]; ok {
			t.launch = Launch{Shell: cmd}
		} else if t.pid > 0 {
			if t.launch, err = LaunchOf(t.pid); err != nil {
				return fmt.Errorf("%s: reading how process %d was started: %w", t.name, t.pid, err)
			}
		}
		c.zkNodes[n] = t
	}
	return nil
}

// checkTargets fails before the run if a scheduled fault has no local
// process to act on or no way to restart it.
func (c *chaos) checkTargets(sched []Fault) error {
	for _, f := range sched {
		t := c.targetOf(f)
		if t == nil {
			return fmt.Errorf("%s: no such target", f)
		}
		if f.Kind != FaultCut && t.currentPid() == 0 {
			return fmt.Errorf("%s (%s): no local process listens on port %d, so %s cannot act on it", t.name, t.addr, t.port, f.Kind)
		}
		if (f.Kind == FaultKill9 || f.Kind == FaultZKKill) && t.launch.Shell == "" && len(t.launch.Argv) == 0 {
			return fmt.Errorf("%s: no way to restart it (give --broker-cmd / --zk-cmd)", t.name)
		}
	}
	return nil
}

func (c *chaos) targetOf(f Fault) *target {
	if f.Kind == FaultZKKill {
		return c.zkNodes[f.Target]
	}
	return c.brokers[f.Target]
}

// ensureTopic creates the topic if it does not exist and waits until every
// partition has a leader.
func (c *chaos) ensureTopic(ctx context.Context) error {
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	td, err := c.adm.ListTopics(tctx, c.o.topic)
	if err != nil {
		return err
	}
	if !td.Has(c.o.topic) {
		minISR := strconv.Itoa(min(2, c.o.replication))
		resp, err := c.adm.CreateTopic(tctx, int32(c.o.partitions), int16(c.o.replication), map[string]*string{"min.insync.replicas": &minISR}, c.o.topic)
		if err != nil {
			return fmt.Errorf("creating %s: %w", c.o.topic, err)
		}
		if resp.Err != nil {
			return fmt.Errorf("creating %s: %w", c.o.topic, resp.Err)
		}
		c.tl.Add("chaos", "created topic %s: %d partitions, replication factor %d, min.insync.replicas %s", c.o.topic, c.o.partitions, c.o.replication, minISR)
	}
	for {
		td, err := c.adm.ListTopics(tctx, c.o.topic)
		if err == nil && td.Has(c.o.topic) && td[c.o.topic].Err == nil {
			led := len(td[c.o.topic].Partitions) > 0
			for _, p := range td[c.o.topic].Partitions {
				led = led && p.Leader >= 0 && p.Err == nil
			}
			if led {
				return nil
			}
		}
		select {
		case <-tctx.Done():
			return fmt.Errorf("topic %s: not every partition has a leader: %v", c.o.topic, tctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// endOffsets lists the topic's end offsets (high watermarks), retrying
// until ctx ends; with at it waits until each partition's end is at least
// at[p].
func (c *chaos) endOffsets(ctx context.Context, at map[int32]int64) (map[int32]int64, error) {
	var last error
	for {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		lo, err := c.adm.ListEndOffsets(lctx, c.o.topic)
		cancel()
		if err == nil {
			err = lo.Error()
		}
		if err == nil {
			out := map[int32]int64{}
			ok := true
			lo.Each(func(l kadm.ListedOffset) {
				out[l.Partition] = l.Offset
				ok = ok && l.Offset >= at[l.Partition]
			})
			if ok && len(out) > 0 {
				return out, nil
			}
			err = fmt.Errorf("end offsets %v below the acknowledged %v", out, at)
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, last
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// commitStart commits the run's start offsets for the new group, so its
// members read from there.
func (c *chaos) commitStart(ctx context.Context, group string, base map[int32]int64) error {
	offs := kadm.Offsets{}
	for p, at := range base {
		offs.Add(kadm.Offset{Topic: c.o.topic, Partition: p, At: at, LeaderEpoch: -1})
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := c.adm.CommitOffsets(cctx, group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("committing the start offsets of group %s: %w", group, err)
	}
	return nil
}

func (c *chaos) count(kind string) {
	c.countsMu.Lock()
	defer c.countsMu.Unlock()
	c.counts[kind]++
}

// waitEnd waits until the end offsets cover every acknowledged record.
func (c *chaos) waitEnd(ctx context.Context, p *producer) (map[int32]int64, error) {
	return c.endOffsets(ctx, p.maxAcked())
}

// report prints the verdict.
func (c *chaos) report(v Verdict, stalls []Stall, sent, failed int64, finalDone, groupDone, interrupted bool) {
	w := c.out
	if !c.o.noTimeline {
		fmt.Fprintln(w, "timeline:")
		c.tl.Print(w)
	}
	fmt.Fprintln(w, "faults:")
	var kinds []string
	c.countsMu.Lock()
	for _, k := range allFaults {
		fmt.Fprintf(w, "  %-13s %d\n", k, c.counts[k])
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, c.counts[k]))
	}
	counts := map[string]int{}
	for k, n := range c.counts {
		counts[k] = n
	}
	c.countsMu.Unlock()
	printed := map[string]int{}
	if len(v.Violations) > 0 {
		fmt.Fprintln(w, "violations:")
		for _, x := range v.Violations {
			if printed[x.Kind]++; printed[x.Kind] <= c.o.maxViolations {
				fmt.Fprintln(w, "  "+x.String())
			}
		}
		for _, k := range Kinds {
			if n := printed[k] - c.o.maxViolations; n > 0 {
				fmt.Fprintf(w, "  ... and %d more %s\n", n, k)
			}
		}
	}
	fmt.Fprintln(w, "stalls (each partition's longest time without an acknowledged write):")
	for _, st := range stalls {
		fmt.Fprintln(w, "  "+st.describe(c.tl.start))
	}
	var readers []string
	for r := range v.Reads {
		readers = append(readers, r)
	}
	sort.Strings(readers)
	var reads []string
	for _, r := range readers {
		reads = append(reads, fmt.Sprintf("%s %d", r, v.Reads[r]))
	}
	fmt.Fprintln(w, "summary:")
	fmt.Fprintf(w, "  records sent %d, acknowledged %d, not acknowledged %d\n", sent, v.Acked, failed)
	fmt.Fprintf(w, "  records read: %s\n", strings.Join(reads, ", "))
	fmt.Fprintf(w, "  faults: %s\n", strings.Join(kinds, " "))
	fmt.Fprintf(w, "  lost %d, duplicated %d, reordered %d, inconsistent %d\n", v.Counts[Lost], v.Counts[Duplicated], v.Counts[Reordered], v.Counts[Inconsistent])
	if !finalDone {
		fmt.Fprintln(w, "  the final reader did not reach the end offsets: the verdict covers what it read")
	}
	if !groupDone {
		fmt.Fprintln(w, "  the consumer group did not reach the end offsets (a liveness problem, not counted as a violation)")
	}
	if interrupted {
		fmt.Fprintln(w, "  interrupted before --duration")
	}
	verdict := "CLEAN"
	if !v.Clean() {
		verdict = "VIOLATIONS"
	} else if !finalDone {
		verdict = "INCOMPLETE"
	}
	fmt.Fprintf(w, "verdict: %s\n", verdict)
	if c.o.verdictJSON != "" {
		data, _ := json.MarshalIndent(map[string]any{"verdict": verdict, "sent": sent, "not_acknowledged": failed,
			"faults": counts, "stalls": stalls, "seed": c.o.seed, "duration": c.o.duration.String(), "result": v}, "", "  ")
		_ = os.WriteFile(c.o.verdictJSON, append(data, '\n'), 0o644)
	}
}

// brokerGone waits until broker id's registration is gone from ZooKeeper
// (its session expired), so that the restarted broker can register.
func (c *chaos) brokerGone(id int32, timeout time.Duration) bool {
	if c.zk == nil {
		return true
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ok, _, err := c.zk.Exists(zkpaths.BrokerIDPath(id))
		if err == nil && !ok {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}

// restart starts t again and waits until something listens on its port,
// retrying while the process exits (a broker refuses to start while its old
// registration lives).
func (c *chaos) restart(t *target) {
	deadline := time.Now().Add(3 * time.Minute)
	logFile := filepath.Join(c.o.logDir, strings.ReplaceAll(t.name, " ", "-")+".out")
	for attempt := 1; ; attempt++ {
		pid, exited, err := t.launch.Start(logFile)
		if err != nil {
			c.tl.Add("chaos", "%s: restart failed: %v", t.name, err)
			return
		}
		c.tl.Add("chaos", "%s: restarted (pid %d, attempt %d), output in %s", t.name, pid, attempt, logFile)
		for {
			if lp := PidListening(t.port); lp > 0 {
				t.mu.Lock()
				t.pid = lp
				t.mu.Unlock()
				c.tl.Add("chaos", "%s: listening again on %s (pid %d)", t.name, t.addr, lp)
				return
			}
			select {
			case <-exited:
			case <-time.After(200 * time.Millisecond):
				if time.Now().Before(deadline) {
					continue
				}
				c.tl.Add("chaos", "%s: not listening on %s 3 minutes after the restart", t.name, t.addr)
				return
			}
			break
		}
		c.tl.Add("chaos", "%s: the restarted process exited (see %s)", t.name, logFile)
		if time.Now().After(deadline) {
			c.tl.Add("chaos", "%s: giving up restarting it", t.name)
			return
		}
		time.Sleep(2 * time.Second)
	}
}

// inject runs the schedule until ctx ends, one fault at a time, each at
// its time but never sooner than --interval after the previous one was
// healed (a restart can take longer than the fault's hold); every fault is
// healed before inject returns, also when ctx ends early.
func (c *chaos) inject(ctx context.Context, sched []Fault) {
	start := time.Now()
	var notBefore time.Time
	for _, f := range sched {
		at := start.Add(f.At)
		if at.Before(notBefore) {
			at = notBefore
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(at)):
		}
		c.injectOne(ctx, f)
		notBefore = time.Now().Add(c.o.interval)
	}
}

func (c *chaos) hold(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func (c *chaos) injectOne(ctx context.Context, f Fault) {
	t := c.targetOf(f)
	switch f.Kind {
	case FaultKill9, FaultZKKill:
		pid := t.currentPid()
		if pid == 0 {
			c.tl.Add("chaos", "%s: skipped, no process listens on %s", f.Kind, t.addr)
			return
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			c.tl.Add("chaos", "%s: kill -9 %d failed: %v", t.name, pid, err)
			return
		}
		c.count(f.Kind)
		c.tl.Add("chaos", "%s: kill -9 (pid %d)", t.name, pid)
		for i := 0; i < 100 && alive(pid); i++ {
			time.Sleep(50 * time.Millisecond)
		}
		c.hold(ctx, f.Hold)
		if f.Kind == FaultKill9 && !c.brokerGone(t.id, 2*time.Minute) {
			c.tl.Add("chaos", "%s: its registration /brokers/ids/%d is still there; restarting anyway", t.name, t.id)
		}
		c.restart(t)
	case FaultStop:
		pid := t.currentPid()
		if pid == 0 {
			c.tl.Add("chaos", "%s: skipped, no process listens on %s", f.Kind, t.addr)
			return
		}
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			c.tl.Add("chaos", "%s: SIGSTOP %d failed: %v", t.name, pid, err)
			return
		}
		c.count(f.Kind)
		c.tl.Add("chaos", "%s: SIGSTOP (pid %d)", t.name, pid)
		c.hold(ctx, f.Hold)
		_ = syscall.Kill(pid, syscall.SIGCONT)
		c.tl.Add("chaos", "%s: SIGCONT (pid %d)", t.name, pid)
	case FaultCut:
		if err := cutPort(t.port); err != nil {
			c.tl.Add("chaos", "%s: iptables cut failed: %v", t.name, err)
			_ = healCuts()
			return
		}
		c.count(f.Kind)
		c.tl.Add("chaos", "%s: cut (iptables drops TCP to and from port %d on lo)", t.name, t.port)
		c.hold(ctx, f.Hold)
		if err := healCuts(); err != nil {
			c.tl.Add("chaos", "healing the cut: %v", err)
		}
		c.tl.Add("chaos", "%s: cut healed", t.name)
	}
}

// producer is the verifiable producer: sequence numbers 0, 1, 2, ... in
// keys and values, idempotent, acks=all.
type producer struct {
	cl      *kgo.Client
	done    chan struct{}
	stopped chan struct{}
	sent    atomic.Int64
	failed  atomic.Int64
	lastAck atomic.Int64 // unix nanos
	stalls  *StallTracker

	mu       sync.Mutex
	maxAck   map[int32]int64 // per partition, acknowledged offset + 1
	errCount map[string]int  // failures since the last report
}

func (c *chaos) startProducer() (*producer, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.o.bootstrap...), kgo.DefaultProduceTopic(c.o.topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordDeliveryTimeout(c.o.deliveryTimout), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return nil, err
	}
	start := time.Now()
	p := &producer{cl: cl, done: make(chan struct{}), stopped: make(chan struct{}), maxAck: map[int32]int64{}, errCount: map[string]int{},
		stalls: NewStallTracker(start)}
	p.lastAck.Store(start.UnixNano())
	go func() {
		defer close(p.stopped)
		tick := time.NewTicker(time.Second / time.Duration(c.o.throughput))
		defer tick.Stop()
		report := time.NewTicker(time.Second)
		defer report.Stop()
		stalled := false
		for seq := int64(0); ; {
			select {
			case <-p.done:
				return
			case <-report.C:
				p.reportErrors(c.tl)
				since := time.Since(time.Unix(0, p.lastAck.Load()))
				if !stalled && since > 3*time.Second {
					stalled = true
					c.tl.Add("producer", "no acknowledgement for %v", since.Round(time.Second))
				} else if stalled && since < time.Second {
					stalled = false
					c.tl.Add("producer", "acknowledgements again")
				}
			case <-tick.C:
				s := seq
				seq++
				p.sent.Add(1)
				r := &kgo.Record{Key: []byte(c.checker.Key(s)), Value: []byte(c.checker.Value(s, c.o.recordSize))}
				cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
					if err != nil {
						p.stalls.Fail(r.Partition, time.Now())
						p.failed.Add(1)
						p.mu.Lock()
						p.errCount[err.Error()]++
						p.mu.Unlock()
						return
					}
					now := time.Now()
					p.lastAck.Store(now.UnixNano())
					p.stalls.Ack(r.Partition, now)
					c.checker.Ack(r.Partition, r.Offset, s)
					p.mu.Lock()
					if r.Offset+1 > p.maxAck[r.Partition] {
						p.maxAck[r.Partition] = r.Offset + 1
					}
					p.mu.Unlock()
				})
			}
		}
	}()
	return p, nil
}

func (p *producer) reportErrors(tl *Timeline) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for e, n := range p.errCount {
		tl.Add("producer", "%d sends failed: %s", n, e)
	}
	clear(p.errCount)
}

func (p *producer) maxAcked() map[int32]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[int32]int64{}
	for k, v := range p.maxAck {
		out[k] = v
	}
	return out
}

// stop stops sending, waits for the records in flight (up to the delivery
// timeout) and returns the number sent.
func (p *producer) stop(tl *Timeline) int64 {
	close(p.done)
	<-p.stopped
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := p.cl.Flush(ctx); err != nil {
		tl.Add("producer", "flush: %v", err)
	}
	p.cl.Close()
	p.reportErrors(tl)
	return p.sent.Load()
}

// group is the consumer group's members.
type group struct {
	members []*kgo.Client
	wg      sync.WaitGroup
	mu      sync.Mutex
	next    map[int32]int64 // per partition, the highest offset read + 1
}

func (c *chaos) startConsumers(name string) (*group, error) {
	g := &group{next: map[int32]int64{}}
	for i := 1; i <= c.o.consumers; i++ {
		member := fmt.Sprintf("consumer-%d", i)
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.o.bootstrap...), kgo.ConsumerGroup(name), kgo.ConsumeTopics(c.o.topic),
			kgo.ClientID("klassik-chaos-"+member), kgo.FetchMaxWait(500*time.Millisecond),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
				c.tl.Add("consumer", "%s assigned partitions %v", member, a[c.o.topic])
			}),
			kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, r map[string][]int32) {
				c.tl.Add("consumer", "%s revoked partitions %v", member, r[c.o.topic])
			}))
		if err != nil {
			g.close()
			return nil, err
		}
		g.members = append(g.members, cl)
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			for {
				fs := cl.PollFetches(context.Background())
				if fs.IsClientClosed() {
					return
				}
				fs.EachRecord(func(r *kgo.Record) {
					c.checker.Read("group", member, r.Partition, r.Offset, r.Key, r.Value)
					g.mu.Lock()
					if r.Offset+1 > g.next[r.Partition] {
						g.next[r.Partition] = r.Offset + 1
					}
					g.mu.Unlock()
				})
			}
		}()
	}
	return g, nil
}

// waitEnd waits until the group has read up to end in every partition.
func (g *group) waitEnd(ctx context.Context, end map[int32]int64) bool {
	for {
		g.mu.Lock()
		ok := true
		for p, e := range end {
			ok = ok && (e == 0 || g.next[p] >= e)
		}
		g.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (g *group) close() {
	for _, m := range g.members {
		m.Close()
	}
	g.wg.Wait()
}

// finalRead reads every partition from base to end with a reader of its
// own (no group), the log as it stands after the run.
func (c *chaos) finalRead(ctx context.Context, base, end map[int32]int64) bool {
	offs := map[int32]kgo.Offset{}
	todo := 0
	for p, b := range base {
		if end[p] > b {
			offs[p] = kgo.NewOffset().At(b)
			todo++
		}
	}
	if todo == 0 {
		return true
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.o.bootstrap...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{c.o.topic: offs}),
		kgo.ClientID("klassik-chaos-final"), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		c.tl.Add("chaos", "final reader: %v", err)
		return false
	}
	defer cl.Close()
	next := map[int32]int64{}
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return false
		}
		fs.EachRecord(func(r *kgo.Record) {
			c.checker.Read("final", "final-reader", r.Partition, r.Offset, r.Key, r.Value)
			next[r.Partition] = max(next[r.Partition], r.Offset+1)
		})
		done := true
		for p := range offs {
			done = done && next[p] >= end[p]
		}
		if done {
			return true
		}
	}
}
