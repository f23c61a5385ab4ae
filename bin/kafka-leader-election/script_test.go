package main

import (
	"testing"

	"github.com/klassik/klassik/bin/internal/clitest"
)

// TestScript runs bin/kafka-leader-election.sh: kafka-run-class.sh builds this tool into a
// private build directory and runs it.
func TestScript(t *testing.T) { clitest.CheckScriptVersion(t, "kafka-leader-election.sh") }
