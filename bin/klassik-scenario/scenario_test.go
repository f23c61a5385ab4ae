package main

// Each scenario is replayed as an operator would: bin/klassik-scenario.sh
// <name> as a process, which starts its own ZooKeeper and broker
// processes. The tests share nothing but the built binaries.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
)

// TestMain builds the scenario tool and the tools it runs once, so that no
// replay's time includes a compile.
func TestMain(m *testing.M) {
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
		"$ bin/kafka-topics.sh --bootstrap-server ")
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
