package main

import (
	"testing"

	"github.com/klassik/klassik/bin/internal/clitest"
)

// TestScript runs bin/kafka-reassign-partitions.sh: kafka-run-class.sh builds this tool into a
// private build directory and runs it.
func TestScript(t *testing.T) { clitest.CheckScriptVersion(t, "kafka-reassign-partitions.sh") }
