package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/faulttest"
	"github.com/klassik/klassik/broker/replica"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

func TestMain(m *testing.M) {
	// The brokers the tool restarts are this process's children; they end
	// with it even if a test does not get to its cleanup.
	restartDeathSignal = syscall.SIGKILL
	os.Exit(faulttest.Main(m))
}

// runChaos runs the tool in this process and returns its exit code and
// output.
func runChaos(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	start := time.Now()
	code := run(context.Background(), args, &out, &errOut)
	t.Logf("klassik-chaos %s: exit %d in %v\n%s%s", strings.Join(args, " "), code, time.Since(start).Round(time.Millisecond), errOut.String(), out.String())
	return code, out.String()
}

// killListeners kills what listens on the cluster's ports at the end: the
// brokers the tool restarted are this process's children, not the
// harness's.
func killListeners(t *testing.T, c *faulttest.Cluster) {
	t.Cleanup(func() {
		for i := 0; i < c.N(); i++ {
			n := c.Node(i)
			if pid := PidListening(n.Port); pid > 0 && pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGCONT)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// TestCheckerCatchesMisbehavingBroker runs the tool without faults against
// a broker whose fetch responses drop, duplicate or reorder records on
// purpose (replica's test-only fetch fault): the checker reports each kind
// by partition, offset and key and the tool exits 1.
func TestCheckerCatchesMisbehavingBroker(t *testing.T) {
	for _, tc := range []struct{ mode, kind string }{
		{"drop", Lost},
		{"duplicate", Duplicated},
		{"reorder", Reordered},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Setenv(replica.TestFetchFaultEnv, tc.mode)
			t.Setenv(replica.TestFaultAllowEnv, "yes")
			c := faulttest.Start(t, faulttest.Options{Brokers: 1, Overrides: map[string]string{
				"min.insync.replicas": "1", "offsets.topic.replication.factor": "1"}})
			code, out := runChaos(t, "--bootstrap-server", strings.Join(c.Bootstrap(), ","), "--zookeeper", c.ZKConnect(),
				"--faults", "none", "--duration", "5s", "--throughput", "200", "--partitions", "2", "--replication-factor", "1",
				"--drain-timeout", "20s", "--no-timeline")
			if code != 1 {
				t.Fatalf("exit %d, want 1 (violations)", code)
			}
			re := regexp.MustCompile(`(?m)^  ` + tc.kind + ` +partition=\d+ offset=\d+ key=chaos\S+-\d+: `)
			if !re.MatchString(out) {
				t.Fatalf("no %s violation by partition/offset/key in the output", tc.kind)
			}
			if !strings.Contains(out, "verdict: VIOLATIONS") {
				t.Fatal("no VIOLATIONS verdict")
			}
		})
	}
}

// TestChaosRunIsClean is the suite's chaos run: three minutes of the tool
// against three kafka-server processes on a ZooKeeper of their own, with
// kill -9 (and restart), SIGSTOP and iptables cuts of brokers and kill -9
// (and restart) of ZooKeeper, each held 6-12 s, so a ZooKeeper kill with
// its restart lasts longer than the 6 s session timeout, at 200 records/s;
// the verdict must be clean.
func TestChaosRunIsClean(t *testing.T) {
	zs, err := zkserver.Start(zkserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The tool restarts ZooKeeper as its own child: stop whichever
		// process listens on the port now.
		if pid := PidListening(zs.Port()); pid > 0 && pid != os.Getpid() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		zs.Stop()
	})
	c := faulttest.Start(t, faulttest.Options{Brokers: 3, ZooKeeper: zs.Addr()})
	killListeners(t, c)
	timeline := t.TempDir() + "/timeline.json"
	code, out := runChaos(t, "--bootstrap-server", strings.Join(c.Bootstrap(), ","), "--zookeeper", c.ZKConnect(),
		"--faults", "kill9,sigstop,iptables-cut,zk-kill", "--seed", "1", "--duration", "180s", "--interval", "6s",
		"--fault-duration", "12s", "--warmup", "5s", "--throughput", "200", "--partitions", "3",
		"--log-dir", t.TempDir(), "--timeline-json", timeline)
	if code != 0 {
		t.Fatalf("exit %d, want 0 (clean)", code)
	}
	if !strings.Contains(out, "verdict: CLEAN") {
		t.Fatal("no CLEAN verdict")
	}
	for _, f := range []string{FaultKill9, FaultStop, FaultZKKill} {
		m := regexp.MustCompile(`(?m)^  ` + f + ` +(\d+)$`).FindStringSubmatch(out)
		if m == nil {
			t.Errorf("no %s fault was injected", f)
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n == 0 {
			t.Errorf("no %s fault was injected", f)
		}
	}
	if data, err := os.ReadFile(timeline); err != nil || !bytes.Contains(data, []byte(`"source": "cluster"`)) {
		t.Errorf("timeline JSON %s has no cluster event (err %v)", timeline, err)
	}
}

// TestInterruptHealsCut cancels a run (as SIGINT/SIGTERM do) while a
// broker is cut: the run heals the cut, removes its iptables chain and
// still gives its verdict; a chain left by a dead run is swept at start.
func TestInterruptHealsCut(t *testing.T) {
	stale := chainPrefix + "4194303" // above any pid this machine hands out
	if alive(4194303) {
		t.Fatal("pid 4194303 is alive")
	}
	if err := iptables("-N", stale); err != nil {
		t.Fatalf("iptables is needed for iptables-cut: %v", err)
	}
	t.Cleanup(func() { removeChain(stale) })
	c := faulttest.Start(t, faulttest.Options{Brokers: 1, Overrides: map[string]string{
		"min.insync.replicas": "1", "offsets.topic.replication.factor": "1"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once the cut is in place.
		for ctx.Err() == nil {
			out, _ := exec.Command("iptables", "-w", "5", "-S", Chain).Output()
			if bytes.Contains(out, []byte("DROP")) {
				cancel()
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"--bootstrap-server", strings.Join(c.Bootstrap(), ","), "--faults", "iptables-cut",
		"--duration", "3m", "--warmup", "2s", "--fault-duration", "1m", "--throughput", "100", "--partitions", "1",
		"--replication-factor", "1", "--drain-timeout", "30s"}, &out, &errOut)
	t.Logf("exit %d\n%s%s", code, errOut.String(), out.String())
	// Only this run's chain and the stale one: another run on the machine
	// keeps its own.
	if s, _ := exec.Command("iptables", "-w", "5", "-S").Output(); bytes.Contains(s, []byte(Chain+" ")) || bytes.Contains(s, []byte(Chain+"\n")) || bytes.Contains(s, []byte(stale)) {
		t.Fatalf("a chain is left:\n%s", s)
	}
	if code != 0 || !strings.Contains(out.String(), "interrupted before --duration") || !strings.Contains(out.String(), "verdict: CLEAN") {
		t.Fatalf("exit %d, want 0 with a clean verdict of an interrupted run", code)
	}
}
