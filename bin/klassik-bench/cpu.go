package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// clockTicks is the kernel's USER_HZ (getconf CLK_TCK), the unit of
// /proc/<pid>/stat's utime and stime; 100 on every Linux this runs on,
// asked once in case it is not.
var clockTicks = sync.OnceValue(func() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && n > 0 {
			return float64(n)
		}
	}
	return 100
})

// readCPU returns the CPU-seconds (user + system) the process has used,
// from fields 14 and 15 of /proc/<pid>/stat. The second field, the
// command name in parentheses, may hold spaces, so fields are counted
// from the last ')'.
func readCPU(pid int) (float64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	return parseStatCPU(string(data))
}

func parseStatCPU(stat string) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc stat line %q", stat)
	}
	// After ") ": state(3) ppid(4) ... utime(14) stime(15).
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("malformed /proc stat line %q", stat)
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed /proc stat line %q", stat)
	}
	return float64(ut+st) / clockTicks(), nil
}

// cpuMeter samples the CPU-seconds of a set of processes before and
// after a phase.
type cpuMeter struct {
	pids   []broker
	before []float64
}

func startCPU(pids []broker) *cpuMeter {
	m := &cpuMeter{pids: pids, before: make([]float64, len(pids))}
	for i, b := range pids {
		m.before[i], _ = readCPU(b.pid)
	}
	return m
}

// stop returns each process's CPU-seconds since start (by label).
func (m *cpuMeter) stop() map[string]float64 {
	out := map[string]float64{}
	for i, b := range m.pids {
		now, err := readCPU(b.pid)
		if err != nil {
			continue // the process went away: no figure
		}
		out[b.label] = now - m.before[i]
	}
	return out
}
