package main

// Each scenario is replayed as an operator would: bin/klassik-scenario.sh
// <name> as a process, which starts its own ZooKeeper and broker
// processes. The tests share nothing but the built binaries.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
)

// TestMain builds the scenario tool and the tools it runs once, so that no
// replay's time includes a compile. The scenario tool runs several
// clients on goroutines of its own, so it is built with the race detector
// (a race exits 66 and fails the replay); the brokers it starts are not.
func TestMain(m *testing.M) {
	os.Setenv("KLASSIK_RACE_TOOLS", "klassik-scenario")
	for _, t := range append([]string{"klassik-scenario"}, tools...) {
		cmd := exec.Command(filepath.Join("..", "kafka-run-class.sh"), t)
		cmd.Env = append(os.Environ(), "KLASSIK_BUILD_ONLY=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building bin/%s: %v\n%s", t, err, out)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// replayScenario runs one scenario and checks that it ends with its OK line
// (which must contain held) and that its narration shows each piece of
// evidence.
func replayScenario(t *testing.T, name, held string, evidence ...string) string {
	t.Helper()
	start := time.Now()
	out, code := clitest.Command(t, nil, filepath.Join("..", "klassik-scenario.sh"), name)
	t.Logf("%s took %.1f s", name, time.Since(start).Seconds())
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	last := lines[len(lines)-1]
	if code != 0 || !strings.HasPrefix(last, "scenario "+name+": OK (") || !strings.HasSuffix(last, ")") {
		t.Fatalf("exit %d, last line %q; output:\n%s", code, last, out)
	}
	if !strings.Contains(last, held) {
		t.Errorf("OK line %q does not say %q", last, held)
	}
	for _, e := range evidence {
		if !strings.Contains(out, e) {
			t.Errorf("the narration does not show %q; output:\n%s", e, out)
		}
	}
	if n := strings.Count(out, "scenario "+name+": "); n != 1 {
		t.Errorf("%d verdict lines, want exactly one", n)
	}
	return out
}

func TestControllerFailover(t *testing.T) {
	replayScenario(t, "controller-failover", "refused with STALE_CONTROLLER_EPOCH",
		"$ bin/zookeeper-shell.sh ",
		" get /controller_epoch\n      1\n",
		" get /controller_epoch\n      2\n",
		`"controller_epoch":2,`,
		"Answer: error code 11 (STALE_CONTROLLER_EPOCH).",
		"$ bin/kafka-topics.sh --bootstrap-server ",
		"a restarted broker does not take the controller")
}

func TestListNamesEveryScenario(t *testing.T) {
	out, code := clitest.Command(t, nil, filepath.Join("..", "klassik-scenario.sh"), "list")
	if code != 0 {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(scenarios) {
		t.Fatalf("list printed %d lines for %d scenarios:\n%s", len(lines), len(scenarios), out)
	}
	for i, sc := range scenarios {
		if f := strings.Fields(lines[i]); len(f) < 2 || f[0] != sc.name {
			t.Errorf("line %d %q does not name %s with a description", i, lines[i], sc.name)
		}
	}
	if out, code := clitest.Command(t, nil, filepath.Join("..", "klassik-scenario.sh"), "no-such-scenario"); code != 2 || !strings.Contains(out, `unknown scenario "no-such-scenario"`) {
		t.Errorf("unknown scenario: exit %d\n%s", code, out)
	}
}

func TestISRShrinkExpand(t *testing.T) {
	replayScenario(t, "isr-shrink-expand", "high watermark held at 1",
		"Leader's log end offset: 2; high watermark: 1",
		`"isr":[1,2]}`,
		"Replicas: 1,2,3\tIsr: 1,2\n",
		`"isr":[1,2,3]}`,
		"| offset: 1 CreateTime: ",
		"\"two\" acknowledged at offset 1; the high watermark is now 2.")
}

func TestIdempotence(t *testing.T) {
	replayScenario(t, "idempotence", "kept its offset 0 and was stored once",
		"Answer: error NONE, base offset 0.",
		"The log still ends at 3.",
		"Answer: error OUT_OF_ORDER_SEQUENCE_NUMBER.",
		"baseOffset: 0 lastOffset: 2 count: 3 baseSequence: 0 lastSequence: 2 producerId: ",
		"baseOffset: 3 lastOffset: 3 count: 1 baseSequence: 3 lastSequence: 3 producerId: ")
}

func TestSegmentLookup(t *testing.T) {
	replayScenario(t, "segment-lookup", "offset 217 found in segment 180",
		"=> segment 00000000000000000180 (offsets 180 and up).",
		"      offset: 216 position: 6516\n",
		"=> start scanning the .log at byte 6516 (offset 216).",
		"batch of offsets 217..217, 181 bytes: holds 217. Found.",
		"baseOffset: 217 lastOffset: 217 count: 1 ",
		"      record-217 ...")
}

func TestRebalance(t *testing.T) {
	replayScenario(t, "rebalance", "went through CompletingRebalance, Stable, PreparingRebalance, Empty, Dead;",
		"A's plan (range): A: reb-0,reb-1  B: reb-2,reb-3",
		"A's plan (roundrobin): A: reb-0,reb-3  B: reb-1  C: reb-2",
		"A's plan (sticky): A: reb-0,reb-3  B: reb-1,reb-2",
		"PreparingRebalance 2\n",
		"CompletingRebalance 2\n",
		" sticky               Stable          2\n",
		" Empty           0\n",
		"DescribeGroups answers state Dead.",
		"Error: Consumer group 'classroom' does not exist.")
}

func TestLegacyConsumer(t *testing.T) {
	replayScenario(t, "legacy-consumer", "offsets in ZooKeeper grew 5,5 -> 10,10",
		` ls /consumers/classic/ids`,
		`{"version":1,"subscription":{"legacy":1},"pattern":"static","timestamp":"`,
		" get /consumers/classic/offsets/legacy/0\n      5\n",
		" get /consumers/classic/offsets/legacy/0\n      10\n",
		"legacy                         1          10              10              0          classic_",
		"(and 5 for partition 1 too)",
		"The first consumer printed 20 records before it stopped.")
}

// TestInterruptCleansUp interrupts a replay (SIGINT, as Ctrl-C) in the
// middle: it must say so in its verdict line, exit non-zero, and leave no
// broker process and no directory behind.
func TestInterruptCleansUp(t *testing.T) {
	cmd := exec.Command(filepath.Join("..", "klassik-scenario.sh"), "controller-failover")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var out strings.Builder
	var dir string
	var pids []int
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		l := sc.Text()
		out.WriteString(l + "\n")
		if _, rest, ok := strings.Cut(l, "everything lives in "); ok {
			dir, _, _ = strings.Cut(rest, " ")
		}
		var id, pid int
		if n, _ := fmt.Sscanf(strings.TrimSpace(l), "broker %d: pid %d,", &id, &pid); n == 2 {
			pids = append(pids, pid)
		}
		if strings.HasPrefix(l, " 2. ") {
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	rest, _ := io.ReadAll(stdout)
	out.Write(rest)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("interrupted replay: %v, want exit status 1\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "\nscenario controller-failover: FAILED (interrupted") {
		t.Errorf("no interrupted verdict:\n%s", out.String())
	}
	if dir == "" || len(pids) != 3 {
		t.Fatalf("directory %q and broker pids %v not found in the narration:\n%s", dir, pids, out.String())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s left behind (%v)", dir, err)
	}
	for _, pid := range pids {
		if !testcluster.Poll(10*time.Second, func() bool { return !alive(pid) }) {
			t.Errorf("broker pid %d still runs after the interrupted replay", pid)
		}
	}
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, ok := strings.Cut(string(data), ") ")
	return ok && !strings.HasPrefix(after, "Z")
}

// TestSweepRemovesKilledReplaysDirectories: a replay killed with SIGKILL
// cannot clean up; the next replay removes its directory, and only when
// its owner is gone.
func TestSweepRemovesKilledReplaysDirectories(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(pid int) string {
		d, err := os.MkdirTemp("", dirPrefix+"sweep-test-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		if err := os.WriteFile(filepath.Join(d, ownerFile), []byte(fmt.Sprintln(pid)), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	stale, live := mk(dead.Process.Pid), mk(os.Getpid())
	var out strings.Builder
	(&Stage{out: &out}).sweepStale()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the directory of a dead replay was kept (%v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the directory of a live replay was removed: %v", err)
	}
	if !strings.Contains(out.String(), "(removed "+stale+", left by a replay that was killed)") {
		t.Errorf("sweep did not say what it removed: %q", out.String())
	}
}
