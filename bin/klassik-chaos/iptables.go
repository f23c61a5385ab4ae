package main

// iptables cuts. The tool owns one chain, KLASSIK-CHAOS in the filter
// table, jumped to from OUTPUT for loopback traffic (every packet between
// two local addresses passes OUTPUT once). A cut of broker B drops every
// TCP packet to or from B's listener port on lo, so no client and no other
// broker reaches B while B keeps its ZooKeeper session (the zombie leader
// of the ZooKeeper design). The chain is swept at start (a run killed with
// -9 leaves it behind), emptied after each cut, and removed at the end and
// on SIGINT/SIGTERM.

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// Chain is the iptables chain the tool owns.
const Chain = "KLASSIK-CHAOS"

var jumpRule = []string{"OUTPUT", "-o", "lo", "-j", Chain}

func iptables(args ...string) error {
	out, err := exec.Command("iptables", append([]string{"-w", "5"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("iptables %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// sweepChain removes the chain and every jump to it, if present.
func sweepChain() {
	for i := 0; i < 100 && iptables(append([]string{"-D"}, jumpRule...)...) == nil; i++ {
	}
	_ = iptables("-F", Chain)
	_ = iptables("-X", Chain)
}

// setupChain sweeps a stale chain and creates an empty one with its jump.
func setupChain() error {
	if _, err := exec.LookPath("iptables"); err != nil {
		return fmt.Errorf("iptables-cut needs iptables: %w", err)
	}
	sweepChain()
	if err := iptables("-N", Chain); err != nil {
		return err
	}
	if err := iptables(append([]string{"-I"}, jumpRule...)...); err != nil {
		sweepChain()
		return err
	}
	return nil
}

// cutPort drops TCP to and from port on lo.
func cutPort(port int) error {
	p := strconv.Itoa(port)
	if err := iptables("-A", Chain, "-p", "tcp", "--dport", p, "-j", "DROP"); err != nil {
		return err
	}
	return iptables("-A", Chain, "-p", "tcp", "--sport", p, "-j", "DROP")
}

// healCuts empties the chain.
func healCuts() error { return iptables("-F", Chain) }
