package e2e_test

// The README's "Chaos" and "ZooKeeper trouble" walk-throughs, run as an
// operator runs them: bin/klassik-chaos-demo.sh (a three-node ensemble
// started with bin/zookeeper-server-start.sh, three brokers with
// bin/kafka-server-start.sh, a klassik-chaos run with kill9, sigstop and
// zk-kill, then the ensemble's leader killed, its quorum lost and the whole
// ensemble paused past the session timeout under a klassik-chaos workload).
// The script uses the README's fixed ports, so the test runs it in a
// network namespace of its own (unshare --net) and in a directory of its
// own; TestChaosDemoREADME keeps the README's commands and the script's the
// same.

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/testcluster/proc"
)

// killDemoProcesses SIGKILLs every process whose command line names dir:
// what the walk-through started (ZooKeeper nodes, brokers, and what the
// chaos tool restarted), left running by design.
func killDemoProcesses(t *testing.T, dir string) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Error(err)
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), dir) {
			continue
		}
		_ = syscall.Kill(pid, syscall.SIGCONT)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// TestChaosDemo runs bin/klassik-chaos-demo.sh and checks both verdicts and
// what the brokers did in each ZooKeeper fault.
func TestChaosDemo(t *testing.T) {
	repo := repoRoot(t)
	requireTool(t, "unshare", "apt-get install -y util-linux")
	requireTool(t, "lsof", "apt-get install -y lsof")
	build, dir := t.TempDir(), t.TempDir()
	buildTools(t, repo, build, "kafka-server", "kafka-topics", "klassik-chaos")
	t.Cleanup(func() { killDemoProcesses(t, dir) })
	env := []string{"KLASSIK_BUILD_DIR=" + build, "KLASSIK_DEMO_DIR=" + dir}
	began := time.Now()
	out, code, err := proc.Run(6*time.Minute, env, "unshare", "--net", "--", "bash", "-c",
		`ip link set lo up && exec "$0"`, filepath.Join(repo, "bin", "klassik-chaos-demo.sh"))
	if err != nil || code != 0 {
		t.Fatalf("klassik-chaos-demo.sh: exit %d, %v\n%s\nthe workload's output (tail):\n%s", code, err, out,
			proc.Tail(filepath.Join(dir, "zk-trouble.out"), 60))
	}
	t.Logf("the walk-throughs took %v\n%s", time.Since(began).Round(time.Millisecond), out)
	for _, want := range []*regexp.Regexp{
		// The ensemble serves, one leader and two followers.
		regexp.MustCompile(`(?m)^127\.0\.0\.1:218\d Mode: leader$`),
		// The chaos run: each kind of fault, per-partition stalls, a clean verdict.
		regexp.MustCompile(`(?m)^  kill9 +[1-9]\d*$`),
		regexp.MustCompile(`(?m)^  sigstop +[1-9]\d*$`),
		regexp.MustCompile(`(?m)^  zk-kill +[1-9]\d*$`),
		regexp.MustCompile(`(?m)^  partition 0: \d+\.\d{3} s without an acknowledged write, from `),
		regexp.MustCompile(`(?m)^verdict: CLEAN$`),
		// The leader kill: same registration.
		regexp.MustCompile(`(?m)^broker 1 kept its registration \(cZxid 0x[0-9a-f]+\): connection loss, not session expiry$`),
		// Quorum loss: the surviving node refuses; the topic made meanwhile is created.
		regexp.MustCompile(`This ZooKeeper instance is not currently serving requests`),
		regexp.MustCompile(`(?m)^Created topic made-during-the-outage\.$`),
		regexp.MustCompile(`(?m)^\tTopic: made-during-the-outage\tPartition: 2\tLeader: \d`),
		// The pause: sessions expired, counted, and the brokers registered again.
		regexp.MustCompile(`zookeeper session expired`),
		regexp.MustCompile(`(?m)^kafka_server_sessionexpirelistener_zookeeperexpires_total [1-9]`),
		regexp.MustCompile(`(?m)cluster +broker \d registered again with a new broker epoch \d+ \(was \d+\)`),
		// The workload across the three faults, stopped with SIGINT.
		regexp.MustCompile(`(?m)^  interrupted before --duration$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the walk-throughs' output lacks %v", want)
		}
	}
	if n := strings.Count(out, "verdict: CLEAN"); n != 2 {
		t.Errorf("%d CLEAN verdicts, want 2 (the chaos run and the workload)", n)
	}
}

// TestChaosDemoREADME: every command of the README's "Chaos" and
// "ZooKeeper trouble" walk-throughs is in bin/klassik-chaos-demo.sh.
func TestChaosDemoREADME(t *testing.T) {
	repo := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(repo, "bin", "klassik-chaos-demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	joined := func(s string) []string {
		s = regexp.MustCompile(`\\\n\s*`).ReplaceAllString(s, "")
		return strings.Split(s, "\n")
	}
	body := strings.Join(joined(string(script)), "\n")
	for _, section := range []string{"Chaos", "ZooKeeper trouble"} {
		_, text, ok := strings.Cut(string(readme), "\n## "+section+"\n")
		if !ok {
			t.Fatalf("README.md has no %q section", "## "+section)
		}
		text, _, _ = strings.Cut(text, "\n## ")
		const marker = "<!-- bin/klassik-chaos-demo.sh -->\n```sh\n"
		_, block, ok := strings.Cut(text, marker)
		if !ok {
			t.Fatalf("README's %q has no walk-through block (%q)", section, marker)
		}
		block, _, _ = strings.Cut(block, "\n```")
		lines := joined(block)
		if len(lines) < 5 {
			t.Fatalf("README's %q walk-through has %d lines", section, len(lines))
		}
		for i, line := range lines {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") || i == 0 && strings.HasPrefix(line, "dir=") {
				continue // the script sets dir from KLASSIK_DEMO_DIR
			}
			if !strings.Contains(body, line) {
				t.Errorf("README command (%s) not in bin/klassik-chaos-demo.sh: %s", section, line)
			}
		}
	}
}
