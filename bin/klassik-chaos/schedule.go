package main

// The fault schedule: a pure function of the seed, so a run is
// reproducible (--seed) and can be printed before it starts.

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"time"
)

// Fault kinds (--faults).
const (
	FaultKill9   = "kill9"
	FaultStop    = "sigstop"
	FaultCut     = "iptables-cut"
	FaultZKKill  = "zk-kill"
	defaultFault = FaultKill9 + "," + FaultStop
)

var allFaults = []string{FaultKill9, FaultStop, FaultCut, FaultZKKill}

// parseFaults parses --faults: a comma-separated subset of allFaults, or
// "none" (the workload and the checks only).
func parseFaults(s string) ([]string, error) {
	if strings.TrimSpace(s) == "none" {
		return nil, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" || seen[f] {
			continue
		}
		ok := false
		for _, a := range allFaults {
			ok = ok || a == f
		}
		if !ok {
			return nil, fmt.Errorf("unknown fault %q (known: %s)", f, strings.Join(allFaults, ","))
		}
		seen[f] = true
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--faults: no fault given (known: %s, or none)", strings.Join(allFaults, ","))
	}
	return out, nil
}

// Fault is one scheduled fault: At after the start, Kind on Target (a
// broker id, or a ZooKeeper node number for zk-kill), healed after Hold.
type Fault struct {
	At     time.Duration `json:"at"`
	Kind   string        `json:"kind"`
	Target int32         `json:"target"`
	Hold   time.Duration `json:"hold"`
}

func (f Fault) String() string {
	what := fmt.Sprintf("broker %d", f.Target)
	if f.Kind == FaultZKKill {
		what = fmt.Sprintf("zookeeper %d", f.Target)
	}
	return fmt.Sprintf("+%v %s %s for %v", f.At.Round(time.Millisecond), f.Kind, what, f.Hold.Round(time.Millisecond))
}

// ScheduleOptions are the inputs of Schedule.
type ScheduleOptions struct {
	Seed     int64
	Faults   []string
	Brokers  []int32 // broker ids that may be targeted
	ZKNodes  int     // ZooKeeper nodes (zk-kill targets 1..ZKNodes)
	Duration time.Duration
	Interval time.Duration // between the ends of one fault and the start of the next
	Hold     time.Duration // how long a fault lasts, at most (each is drawn from [Hold/2, Hold])
	Warmup   time.Duration // before the first fault
	Cooldown time.Duration // after the last heal, before the end
}

// Schedule draws the faults of a run: one at a time, each followed by a
// quiet interval, until the cooldown before the end.
func Schedule(o ScheduleOptions) []Fault {
	r := rand.New(rand.NewSource(o.Seed))
	kinds := append([]string(nil), o.Faults...)
	sort.Strings(kinds)
	var usable []string
	for _, k := range kinds {
		if k == FaultZKKill && o.ZKNodes == 0 || k != FaultZKKill && len(o.Brokers) == 0 {
			continue
		}
		usable = append(usable, k)
	}
	if len(usable) == 0 || o.Hold <= 0 {
		return nil
	}
	var out []Fault
	t := o.Warmup
	for {
		hold := o.Hold/2 + time.Duration(r.Int63n(int64(o.Hold/2)+1))
		if t+hold+o.Cooldown > o.Duration {
			return out
		}
		f := Fault{At: t, Kind: usable[r.Intn(len(usable))], Hold: hold}
		if f.Kind == FaultZKKill {
			f.Target = int32(1 + r.Intn(o.ZKNodes))
		} else {
			f.Target = o.Brokers[r.Intn(len(o.Brokers))]
		}
		out = append(out, f)
		t += hold + o.Interval
	}
}
