package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	// A reader that goes away (klassik-bench.sh | head) must not kill the
	// driver before it has killed its brokers: SIGPIPE is caught, so a
	// write to the closed pipe fails instead.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command's flags.
type options struct {
	quick      bool
	runs       int
	out        string
	bootstrap  []string // an external cluster; empty: start our own
	brokerPIDs []int    // the external cluster's broker processes
	recordSize int
	produceMB  int           // per produce run
	rfMB       int           // per RF=1 / RF=3 run
	latencyDur time.Duration // per open-loop latency run
	loopbackMB int
	storageMB  int
	cpuProfile bool            // also record the brokers' CPU profiles (own cluster only)
	perfTool   bool            // run bin/kafka-producer-perf-test.sh when the checkout has it
	phases     map[string]bool // --only: the phases to run (all when empty)
	rate1      float64         // --rate-acks1: the acks=1 open-loop rate; 0 derives it
	rate3      float64         // --rate-acks-all: the acks=all RF=3 open-loop rate; 0 derives it
	repo       string
}

// The phases --only selects: each fills its own rows; the others stay n/a.
var phaseNames = []string{"produce", "replication", "perftool", "storage", "loopback", "latency"}

// runsPhase reports whether phase is selected.
func (o options) runsPhase(phase string) bool { return len(o.phases) == 0 || o.phases[phase] }

func parseOptions(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("klassik-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var bootstrap, pids, only string
	fs.BoolVar(&o.quick, "quick", false, "small sizes and one run unless given: a smoke test of the suite, not a measurement")
	fs.IntVar(&o.runs, "runs", 3, "alternating runs per figure (Klassik, baseline, Klassik, ...); the table shows medians")
	fs.StringVar(&o.out, "out", "", "also write the Markdown table to this file")
	fs.StringVar(&bootstrap, "bootstrap-server", "", "measure this running cluster (host:port,...) instead of starting one")
	fs.StringVar(&pids, "broker-pids", "", "with --bootstrap-server: the brokers' process ids (PID,...), for CPU-seconds per GB")
	fs.IntVar(&o.recordSize, "record-size", 1024, "record value size in bytes")
	fs.IntVar(&o.produceMB, "produce-mb", 256, "MB produced (and consumed) per produce run")
	fs.IntVar(&o.rfMB, "replication-mb", 128, "MB produced per RF=1 and per RF=3 run")
	fs.DurationVar(&o.latencyDur, "latency-duration", 5*time.Second, "length of each open-loop latency run")
	fs.IntVar(&o.loopbackMB, "loopback-mb", 2048, "MB sent through the loopback TCP sink per run")
	fs.IntVar(&o.storageMB, "storage-mb", 256, "MB appended per storage run (log and raw file each)")
	fs.BoolVar(&o.cpuProfile, "profile", false, "print the top entries of each broker's CPU profile during produce and RF=3 produce (own cluster only)")
	fs.BoolVar(&o.perfTool, "perf-tool", true, "also run bin/kafka-producer-perf-test.sh against Klassik and kfake when the checkout has it")
	fs.StringVar(&only, "only", "", "run only these phases (comma-separated: "+strings.Join(phaseNames, ",")+"); latency without produce and replication needs --rate-acks1 and --rate-acks-all")
	fs.Float64Var(&o.rate1, "rate-acks1", 0, "records/s of the acks=1 open-loop latency runs (default: a third of the median closed-loop peak)")
	fs.Float64Var(&o.rate3, "rate-acks-all", 0, "records/s of the acks=all RF=3 open-loop latency runs (default: a third of the median RF=3 peak)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if only != "" {
		o.phases = map[string]bool{}
		for _, ph := range strings.Split(only, ",") {
			ph = strings.TrimSpace(ph)
			if !slices.Contains(phaseNames, ph) {
				return o, fmt.Errorf("--only: unknown phase %q (phases: %s)", ph, strings.Join(phaseNames, ","))
			}
			o.phases[ph] = true
		}
	}
	if o.runsPhase("latency") && (!o.runsPhase("produce") && o.rate1 <= 0 || !o.runsPhase("replication") && o.rate3 <= 0) {
		return o, errors.New("--only latency needs the produce and replication phases, or --rate-acks1 and --rate-acks-all")
	}
	if o.rate1 < 0 || o.rate3 < 0 {
		return o, errors.New("--rate-acks1 and --rate-acks-all must not be negative")
	}
	if bootstrap != "" {
		o.bootstrap = strings.Split(bootstrap, ",")
	}
	if pids != "" {
		if len(o.bootstrap) == 0 {
			return o, errors.New("--broker-pids needs --bootstrap-server (the brokers it starts itself are measured anyway)")
		}
		for _, s := range strings.Split(pids, ",") {
			pid, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || pid <= 0 {
				return o, fmt.Errorf("--broker-pids: %q is not a process id", s)
			}
			if _, err := readCPU(pid); err != nil {
				return o, fmt.Errorf("--broker-pids: %v", err)
			}
			o.brokerPIDs = append(o.brokerPIDs, pid)
		}
	}
	if o.cpuProfile && len(o.bootstrap) > 0 {
		return o, errors.New("--profile needs the driver's own cluster (no --bootstrap-server)")
	}
	if o.quick {
		// Small sizes, except where a flag names its own.
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		quick := func(name string, v *int, small int) {
			if !set[name] {
				*v = small
			}
		}
		quick("runs", &o.runs, 1)
		// 16 MB: each of the 6 partitions needs three Fetches of kgo's
		// 1 MiB partition limit, so the metered consume's window (from
		// the first poll on) sees batches.
		quick("produce-mb", &o.produceMB, 16)
		quick("replication-mb", &o.rfMB, 4)
		quick("loopback-mb", &o.loopbackMB, 64)
		quick("storage-mb", &o.storageMB, 16)
		if !set["latency-duration"] {
			o.latencyDur = time.Second
		}
	}
	if o.runs < 1 || o.recordSize < 1 || o.produceMB < 1 || o.rfMB < 1 || o.loopbackMB < 1 || o.storageMB < 1 || o.latencyDur <= 0 {
		return o, errors.New("--runs, --record-size and the sizes must be positive")
	}
	return o, nil
}

const usage = "USAGE: klassik-bench.sh [--quick] [--runs N] [--out FILE] [--only PHASE,...] [--rate-acks1 R --rate-acks-all R] [--bootstrap-server HOST:PORT,... [--broker-pids PID,...]] [--profile]"

// run is the command: parse, measure, print the table.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "klassik-bench: %v\n%s\n", err, usage)
		return 2
	}
	if o.repo == "" {
		o.repo, err = findRepo()
		if err != nil && len(o.bootstrap) == 0 {
			fmt.Fprintf(stderr, "klassik-bench: %v\n", err)
			return 1
		}
	}
	table, err := measure(ctx, o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "klassik-bench: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, table)
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(table), 0o644); err != nil {
			fmt.Fprintf(stderr, "klassik-bench: %v\n", err)
			return 1
		}
	}
	return 0
}
