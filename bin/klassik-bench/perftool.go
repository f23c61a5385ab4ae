package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Kafka's own load tool, when the checkout has it: bin/kafka-producer-perf-test.sh
// against Klassik and against kfake, the same tool and flags on both
// sides, its summary line parsed (Kafka's format:
// "50000 records sent, 49950.0 records/sec (48.78 MB/sec), 3.2 ms avg
// latency, 120.0 ms max latency, 2 ms 50th, 8 ms 95th, 12 ms 99th, 40 ms
// 99.9th.").

const perfTool = "kafka-producer-perf-test"

// perfSummary is the tool's summary line.
type perfSummary struct {
	records   int64
	rps, mbps float64
	avg, max  float64 // ms
	p50, p95  float64
	p99, p999 float64
}

var perfSummaryLine = regexp.MustCompile(`^(\d+) records sent, ([0-9.]+) records/sec \(([0-9.]+) MB/sec\), ([0-9.]+) ms avg latency, ([0-9.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th\.$`)

// parsePerfSummary finds the last summary line in the tool's output.
func parsePerfSummary(out string) (perfSummary, error) {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		m := perfSummaryLine.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		var f [9]float64
		for j := range f {
			v, err := strconv.ParseFloat(m[j+1], 64)
			if err != nil {
				return perfSummary{}, fmt.Errorf("summary line %q: %w", lines[i], err)
			}
			f[j] = v
		}
		return perfSummary{records: int64(f[0]), rps: f[1], mbps: f[2], avg: f[3], max: f[4], p50: f[5], p95: f[6], p99: f[7], p999: f[8]}, nil
	}
	return perfSummary{}, fmt.Errorf("no summary line in the output of %s:\n%s", perfTool, tailLines(out, 10))
}

func tailLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// havePerfTool reports whether the checkout has Kafka's producer perf
// tool (bin/<tool>/ with its script), and builds it so no run waits for a
// compile.
func havePerfTool(ctx context.Context, repo string) bool {
	if repo == "" {
		return false
	}
	if _, err := os.Stat(filepath.Join(repo, "bin", perfTool, "main.go")); err != nil {
		return false
	}
	if _, err := os.Stat(filepath.Join(repo, "bin", perfTool+".sh")); err != nil {
		return false
	}
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "bin", "kafka-run-class.sh"), perfTool)
	cmd.Env = append(withoutEnv(os.Environ(), "KLASSIK_RACE_TOOLS"), "KLASSIK_BUILD_ONLY=1")
	return cmd.Run() == nil
}

// runPerfTool produces n records of size bytes to topic at full speed
// with acks through the tool and returns its summary.
func runPerfTool(ctx context.Context, repo string, seeds []string, topic string, n, size int, acks string) (perfSummary, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "bin", perfTool+".sh"),
		"--topic", topic, "--num-records", strconv.Itoa(n), "--record-size", strconv.Itoa(size), "--throughput", "-1",
		"--producer-props", "bootstrap.servers="+strings.Join(seeds, ","), "acks="+acks, "compression.type=none")
	cmd.Env = withoutEnv(os.Environ(), "KLASSIK_RACE_TOOLS")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return perfSummary{}, fmt.Errorf("%s: %v\n%s", perfTool, err, tailLines(string(out), 10))
	}
	return parsePerfSummary(string(out))
}
