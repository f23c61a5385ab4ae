package scaletest

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// shutdownTimes are one SIGTERM's durations, from the signal.
type shutdownTimes struct {
	Broker     int32
	Led        int           // partitions it led when SIGTERM was sent
	Controlled time.Duration // its "controlled shutdown succeeded" line
	Exit       time.Duration // process exit
	Steps      []string      // its timed shutdown lines, each with its time from SIGTERM
	Handled    string        // the controller's "controlled shutdown handled" line (its phases)
}

// shutdownLines picks a broker's output lines that time its shutdown: the
// controlled shutdown's end, every step logged with its duration, the end.
var shutdownLines = []string{"controlled shutdown succeeded", "elapsed_ms=", "shutdown phases", "shut down completed"}

// shutdownCycle sends SIGTERM to a broker that is not the controller (the
// cycle's number picks which of the two), checks that it exits 0 after a
// successful controlled shutdown, restarts it and waits until it is back in
// every ISR, so every cycle stops a broker that follows two thirds of the
// partitions with full ISRs.
func (s *scenario) shutdownCycle(cycle int) shutdownTimes {
	s.t.Helper()
	ctrl, ok := s.c.Controller()
	if !ok {
		s.t.Fatal("no controller")
	}
	var others []int32
	for _, id := range []int32{1, 2, 3} {
		if id != ctrl {
			others = append(others, id)
		}
	}
	var r shutdownTimes
	r.Broker = others[cycle%len(others)]
	resp, _, _, err := s.conns[r.Broker].fetch([]string{topic})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if t.Topic != nil && *t.Topic == topic && p.Leader == r.Broker {
				r.Led++
			}
		}
	}
	vi := s.c.Index(r.Broker)
	n := s.c.Node(vi)
	offset := fileSize(n.Output)
	cn := s.c.Node(s.c.Index(ctrl))
	ctrlOffset := fileSize(cn.Output)
	start := time.Now()
	s.c.Stop(vi)
	r.Exit = time.Since(start)
	if code := n.Process().ExitCode(); code != 0 {
		s.t.Fatalf("broker %d exited %d after SIGTERM, want 0:\n%s", r.Broker, code, s.c.DumpState())
	}
	ts, ok := logLineTime(n.Output, offset, "controlled shutdown succeeded")
	if !ok {
		s.t.Fatalf("broker %d: no \"controlled shutdown succeeded\" in its output after SIGTERM:\n%s", r.Broker, s.c.DumpState())
	}
	r.Controlled = ts.Sub(start)
	r.Steps = timedLines(n.Output, offset, start)
	r.Handled = lineAfter(cn.Output, ctrlOffset, "controlled shutdown handled")
	s.t.Logf("cycle %d: broker %d (leading %d) SIGTERM: controlled shutdown succeeded after %v, exited 0 after %v; the controller (broker %d): %s; its shutdown lines:\n\t%s",
		cycle, r.Broker, r.Led, r.Controlled.Round(time.Millisecond), r.Exit.Round(time.Millisecond), ctrl, r.Handled, strings.Join(r.Steps, "\n\t"))
	offset = fileSize(n.Output)
	s.restart(vi, "a clean shutdown", true)
	s.checkCleanLoad(vi, offset)
	return r
}

// checkCleanLoad checks that broker index i, restarted after a clean
// shutdown, loaded its log directory as cleanly shut down and recovered no
// segment (its "loaded log directory" line after offset in its output).
func (s *scenario) checkCleanLoad(i int, offset int64) {
	s.t.Helper()
	n := s.c.Node(i)
	data, err := os.ReadFile(n.Output)
	if err != nil || int64(len(data)) < offset {
		s.t.Fatalf("broker %d: reading its output: %v", n.ID, err)
	}
	for _, line := range strings.Split(string(data[offset:]), "\n") {
		if !strings.Contains(line, "loaded log directory") {
			continue
		}
		if !strings.Contains(line, "clean_shutdown=true") || !strings.Contains(line, "recovered_segments=0 ") {
			s.t.Fatalf("broker %d after a clean shutdown loaded with recovery: %s", n.ID, line)
		}
		s.t.Logf("broker %d: %s", n.ID, line[strings.Index(line, "msg="):])
		return
	}
	s.t.Fatalf("broker %d: no \"loaded log directory\" line after its restart", n.ID)
}

// timedLines returns the lines of a broker's output after offset that
// contain one of shutdownLines, each prefixed with its time from start.
func timedLines(output string, offset int64, start time.Time) []string {
	data, err := os.ReadFile(output)
	if err != nil || int64(len(data)) < offset {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data[offset:]), "\n") {
		match := false
		for _, m := range shutdownLines {
			match = match || strings.Contains(line, m)
		}
		v, ok := strings.CutPrefix(line, "time=")
		if !match || !ok {
			continue
		}
		v, rest, _ := strings.Cut(v, " ")
		ts, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			continue
		}
		out = append(out, fmt.Sprintf("%7.3fs %s", ts.Sub(start).Seconds(), rest))
	}
	return out
}

func minOf(xs []float64) float64 {
	m := 0.0
	for i, x := range xs {
		if i == 0 || x < m {
			m = x
		}
	}
	return m
}
