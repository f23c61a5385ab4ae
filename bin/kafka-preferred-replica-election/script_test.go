package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

// TestScript runs bin/kafka-preferred-replica-election.sh: kafka-run-class.sh builds this tool into a
// private build directory and runs it.
func TestScript(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "kafka-preferred-replica-election.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, "--version")
	cmd.Env = append(cmd.Environ(), "KLASSIK_BUILD_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(string(out), admintool.Version+"\n") {
		t.Fatalf("kafka-preferred-replica-election.sh --version: %v\n%s", err, out)
	}
}
