package main

// iptables cuts. Each run owns one chain in the filter table,
// KLASSIK-CHAOS-<pid of the tool>, jumped to from OUTPUT for loopback
// traffic (every packet between two local addresses passes OUTPUT once);
// the pid keeps two runs on one machine apart. A cut of broker B drops
// every TCP packet to or from B's listener port on lo, so no client and no
// other broker reaches B while B keeps its ZooKeeper session (the zombie
// leader of the ZooKeeper design). At start the chains of runs that are no
// longer alive are swept (a run killed with -9 leaves its chain behind);
// the run's own chain is emptied after each cut and removed at the end,
// also on SIGINT/SIGTERM.

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// chainPrefix starts the name of every chain the tool owns.
const chainPrefix = "KLASSIK-CHAOS-"

// Chain is this run's chain.
var Chain = chainPrefix + strconv.Itoa(os.Getpid())

func jumpRule(chain string) []string { return []string{"OUTPUT", "-o", "lo", "-j", chain} }

func iptables(args ...string) error {
	out, err := exec.Command("iptables", append([]string{"-w", "5"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("iptables %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// removeChain removes chain and every jump to it, if present.
func removeChain(chain string) {
	for i := 0; i < 100 && iptables(append([]string{"-D"}, jumpRule(chain)...)...) == nil; i++ {
	}
	_ = iptables("-F", chain)
	_ = iptables("-X", chain)
}

// sweepChains removes this run's chain and those of runs no longer alive.
func sweepChains() {
	out, err := exec.Command("iptables", "-w", "5", "-S").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		name, ok := strings.CutPrefix(line, "-N "+chainPrefix)
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(name))
		if err == nil && pid != os.Getpid() && alive(pid) {
			continue
		}
		removeChain(chainPrefix + strings.TrimSpace(name))
	}
}

// setupChain sweeps stale chains and creates this run's, empty, with its
// jump.
func setupChain() error {
	if _, err := exec.LookPath("iptables"); err != nil {
		return fmt.Errorf("iptables-cut needs iptables: %w", err)
	}
	sweepChains()
	if err := iptables("-N", Chain); err != nil {
		return err
	}
	if err := iptables(append([]string{"-I"}, jumpRule(Chain)...)...); err != nil {
		removeChain(Chain)
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
