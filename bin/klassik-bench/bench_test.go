package main

// The driver's smoke tests: the suite in --quick mode against real
// processes (its own ZooKeeper and three kafka-server processes), and
// against an external cluster with --broker-pids. They check that the
// table has every row with numbers and ratios, never what the numbers
// are (the machine is shared; the suite measures, CI does not judge).

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// smokeArgs shrink --quick further: the test only needs every phase to
// run once (the produce run stays at --quick's 16 MB, so that the metered
// second consume fetches after its first poll). Kafka's perf tool is left
// out (its own tests check it; the phase's parsing is
// TestParsePerfSummary), to keep within the time budget.
var smokeArgs = []string{"--quick", "--replication-mb", "1", "--latency-duration", "200ms", "--loopback-mb", "16", "--storage-mb", "4", "--perf-tool=false"}

// tableRows parses the Markdown table into its cells, by row.
func tableRows(t *testing.T, table string) [][]string {
	t.Helper()
	var rows [][]string
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| Figure ") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 5 {
			t.Fatalf("row %q has %d cells, want 5", line, len(cells))
		}
		rows = append(rows, cells)
	}
	return rows
}

var (
	numberCell = regexp.MustCompile(`^-?[0-9][0-9,]*(\.[0-9]+)? (MB/s|rec/s|ms|s/GB|allocs/op)( \(.+\))?$`)
	ratioCell  = regexp.MustCompile(`^[0-9]+\.[0-9]{2}×$`)
)

// checkTable checks that every expected figure is there once per label
// with a Klassik number, a baseline number and (where the baseline is not
// zero) a ratio.
func checkTable(t *testing.T, table string, want map[string]int, na []string) {
	t.Helper()
	rows := tableRows(t, table)
	got := map[string]int{}
	for _, r := range rows {
		fig := r[0]
		for prefix := range want {
			if strings.HasPrefix(fig, prefix) {
				got[prefix]++
			}
		}
		isNA := false
		for _, p := range na {
			if strings.HasPrefix(fig, p) {
				isNA = true
			}
		}
		if isNA {
			if !strings.HasPrefix(r[1], "n/a") {
				t.Errorf("%s: Klassik %q, want n/a", fig, r[1])
			}
			continue
		}
		if !numberCell.MatchString(r[1]) {
			t.Errorf("%s: Klassik cell %q is not a number with its unit", fig, r[1])
		}
		noBase := r[2] == "n/a (no baseline)"
		if !numberCell.MatchString(r[2]) && !noBase {
			t.Errorf("%s: baseline cell %q is not a number with its unit and what it is", fig, r[2])
		}
		zeroBase := strings.HasPrefix(r[2], "0 ")
		if !ratioCell.MatchString(r[3]) && !((zeroBase || noBase) && r[3] == "—") {
			t.Errorf("%s: ratio %q (baseline %q)", fig, r[3], r[2])
		}
		if r[4] == "" {
			t.Errorf("%s: no target", fig)
		}
	}
	for prefix, n := range want {
		if got[prefix] != n {
			t.Errorf("%d rows %q, want %d; table:\n%s", got[prefix], prefix, n, table)
		}
	}
	if t.Failed() {
		t.Logf("table:\n%s", table)
	}
}

// TestQuickSuiteOnOwnCluster runs bin/klassik-bench --quick as the
// script does, against the ZooKeeper and the three kafka-server processes
// it starts itself, and checks the table (and --out).
func TestQuickSuiteOnOwnCluster(t *testing.T) {
	start := time.Now()
	out := filepath.Join(t.TempDir(), "bench.md")
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code := run(ctx, append(smokeArgs, "--out", out), &stdout, &stderr)
	t.Logf("quick suite took %.1f s", time.Since(start).Seconds())
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	table := stdout.String()
	if data, err := os.ReadFile(out); err != nil || string(data) != table {
		t.Errorf("--out file differs from stdout (err %v)", err)
	}
	if !regexp.MustCompile(`^klassik-bench, \d{4}-\d\d-\d\d \d\d:\d\d UTC, \d+ CPUs \(nproc\), .+, go`).MatchString(table) {
		t.Errorf("first line %q does not give the date and the machine", strings.SplitN(table, "\n", 2)[0])
	}
	checkTable(t, table, map[string]int{
		"Produce, 1 broker, acks=1":                       2,
		"Consume from the start, 1 broker":                2,
		"Produce vs the physical limit":                   1,
		"Consume vs the physical limit":                   1,
		"Storage append":                                  1,
		"RF=3 acks=all min.insync.replicas=2, 3 brokers":  1,
		"Produce latency p50, acks=1, open loop":          1,
		"Produce latency p99, acks=1, open loop":          1,
		"Produce latency p99.9, acks=1, open loop":        1,
		"Produce latency p50, acks=all RF=3, open loop":   1,
		"Produce latency p99, acks=all RF=3, open loop":   1,
		"Produce latency p99.9, acks=all RF=3, open loop": 1,
		"CPU-s per GB in (produce), broker 1":             1,
		"CPU-s per GB out (consume), broker 1":            1,
		"CPU-s per GB produced, RF=3 acks=all, broker ":   3,
		"Allocations per appended batch":                  1,
		"Allocations per fetched partition":               1,
		"Broker allocations per produced batch":           1,
		"Broker allocations per fetched batch":            1,
	}, nil)
}

// TestQuickSuiteOnExternalClusterWithBrokerPIDs measures a cluster the
// driver did not start (--bootstrap-server) and reads the CPU of the
// processes --broker-pids names: here a one-broker kfake in the test's
// own process, so the RF=3 figures are n/a and the CPU rows are the test
// process's.
func TestQuickSuiteOnExternalClusterWithBrokerPIDs(t *testing.T) {
	ext, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	pid := strconv.Itoa(os.Getpid())
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(smokeArgs, "--bootstrap-server", strings.Join(ext.ListenAddrs(), ","), "--broker-pids", pid)
	if code := run(ctx, args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	checkTable(t, stdout.String(), map[string]int{
		"Produce, 1 broker, acks=1":                        2,
		"CPU-s per GB in (produce), pid " + pid:            1,
		"CPU-s per GB out (consume), pid " + pid:           1,
		"CPU-s per GB produced, RF=3":                      0,
		"RF=3 acks=all min.insync.replicas=2, 3 brokers":   1,
		"Produce latency p99, acks=all RF=3, open loop at": 1,
		"Broker allocations per produced batch":            1,
	}, []string{"Broker allocations", "RF=3 acks=all", "Produce latency p50, acks=all", "Produce latency p99, acks=all", "Produce latency p99.9, acks=all"})
}

func TestBrokerPIDsNeedABootstrapServer(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"--broker-pids", "1"}, &bytes.Buffer{}, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "--broker-pids needs --bootstrap-server") {
		t.Errorf("stderr %q", stderr.String())
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"--bootstrap-server", "127.0.0.1:1", "--broker-pids", "x"}, &bytes.Buffer{}, &stderr); code != 2 || !strings.Contains(stderr.String(), `"x" is not a process id`) {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestParseStatCPU(t *testing.T) {
	// A command name with spaces and parentheses, as /proc allows.
	stat := "4242 (kafka (server) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 0 0"
	got, err := parseStatCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := 300 / clockTicks(); got != want {
		t.Errorf("cpu %v, want %v", got, want)
	}
	if _, err := parseStatCPU("4242 (x) S 1 2"); err == nil {
		t.Error("a short line parsed")
	}
	own, err := readCPU(os.Getpid())
	if err != nil || own <= 0 {
		t.Errorf("own CPU %v, %v", own, err)
	}
}

func TestFormat(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.5963: "0.596", 2.264: "2.26", 12.93: "12.9", 367.2: "367", 94718.4: "94,718", 1234567: "1,234,567"} {
		if got := format(v); got != want {
			t.Errorf("format(%v) = %q, want %q", v, got, want)
		}
	}
}

// FuzzParseStatCPU: any /proc/<pid>/stat text either parses to a
// non-negative CPU time or is an error; it never panics.
func FuzzParseStatCPU(f *testing.F) {
	f.Add("4242 (kafka-server) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 0 0")
	f.Add("1 (a) b) R 0 0 0 0 0 0 0 0 0 0 18446744073709551615 1")
	f.Add(")")
	f.Add("")
	f.Fuzz(func(t *testing.T, stat string) {
		if v, err := parseStatCPU(stat); err == nil && v < 0 {
			t.Fatalf("negative CPU %v from %q", v, stat)
		}
	})
}

func TestParsePerfSummary(t *testing.T) {
	out := "249950 records sent, 49990.0 records/sec (48.82 MB/sec), 5.1 ms avg latency, 200.0 ms max latency.\n" +
		"50000 records sent, 49950.0 records/sec (48.78 MB/sec), 3.2 ms avg latency, 120.0 ms max latency, 2 ms 50th, 8 ms 95th, 12 ms 99th, 40 ms 99.9th.\n"
	got, err := parsePerfSummary(out)
	if err != nil {
		t.Fatal(err)
	}
	want := perfSummary{records: 50000, rps: 49950, mbps: 48.78, avg: 3.2, max: 120, p50: 2, p95: 8, p99: 12, p999: 40}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := parsePerfSummary("249950 records sent, 49990.0 records/sec (48.82 MB/sec), 5.1 ms avg latency, 200.0 ms max latency.\n"); err == nil {
		t.Error("a progress line parsed as the summary")
	}
}

func TestOnlyPhasesAndFixedRates(t *testing.T) {
	o, err := parseOptions([]string{"--only", "replication,latency", "--rate-acks-all", "1000"}, io.Discard)
	if err == nil {
		t.Fatalf("--only replication,latency without the acks=1 rate accepted: %+v", o)
	}
	o, err = parseOptions([]string{"--only", "latency", "--rate-acks1", "1000", "--rate-acks-all", "500"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, ph := range phaseNames {
		if got := o.runsPhase(ph); got != (ph == "latency") {
			t.Errorf("--only latency: phase %s runs = %v", ph, got)
		}
	}
	if o.rate1 != 1000 || o.rate3 != 500 {
		t.Errorf("rates %v, %v; want 1000, 500", o.rate1, o.rate3)
	}
	if _, err := parseOptions([]string{"--only", "produce,nonsense"}, io.Discard); err == nil {
		t.Error("unknown phase accepted")
	}
	o, err = parseOptions(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, ph := range phaseNames {
		if !o.runsPhase(ph) {
			t.Errorf("default options skip phase %s", ph)
		}
	}
}

// --quick shrinks what the command line leaves unset; a size, run count
// or duration given beside it wins.
func TestQuickKeepsExplicitFlags(t *testing.T) {
	o, err := parseOptions([]string{"--quick"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.runs != 1 || o.produceMB != 16 || o.rfMB != 4 || o.loopbackMB != 64 || o.storageMB != 16 || o.latencyDur != time.Second {
		t.Errorf("--quick: %+v", o)
	}
	o, err = parseOptions([]string{"--quick", "--runs", "2", "--produce-mb", "3", "--replication-mb", "5", "--loopback-mb", "7", "--storage-mb", "9", "--latency-duration", "300ms"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.runs != 2 || o.produceMB != 3 || o.rfMB != 5 || o.loopbackMB != 7 || o.storageMB != 9 || o.latencyDur != 300*time.Millisecond {
		t.Errorf("--quick with explicit flags: %+v", o)
	}
}
