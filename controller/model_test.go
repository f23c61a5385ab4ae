package controller

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klassik/klassik/broker/common"

	"github.com/klassik/klassik/zkpaths"
)

// FuzzControllerInvariants drives the real controller handlers over the
// in-memory ZooKeeper with a random sequence of broker deaths, start-ups,
// bounces, leader ISR changes, controller failovers, controlled shutdowns
// and reassignments, and checks the controller invariants after every step:
//   - a state znode with leader ≥ 0 has the leader in its ISR, the ISR is a
//     non-empty subset of the replicas;
//   - leader_epoch, the znode version and controller_epoch never decrease;
//   - with unclean election disabled a new leader was in the ISR stored
//     before the step;
//   - a leader is a registered broker, and a partition without a leader has
//     no live ISR member (registered and not in controlled shutdown), once the queue
//     is quiescent;
//   - at most one controller is active and /controller_epoch only grows.
func FuzzControllerInvariants(f *testing.F) {
	f.Add([]byte{0, 1, 1, 1, 3, 0, 0, 2, 1, 2, 4, 0, 5, 3, 2, 3})
	f.Add([]byte{0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2})
	f.Add([]byte{4, 0, 4, 1, 2, 0, 2, 1, 3, 3, 5, 0, 5, 1, 0, 3, 1, 3})
	f.Add([]byte{3, 0, 3, 1, 3, 2, 0, 1, 0, 0, 1, 1, 1, 0})
	f.Add([]byte{6, 0, 3, 0, 6, 1, 0, 2, 3, 1, 4, 0, 3, 0, 6, 2, 2, 3, 3, 2, 5, 1})
	f.Fuzz(runModel)
}

func runModel(t *testing.T, ops []byte) {
	{
		if len(ops) > 80 {
			ops = ops[:80]
		}
		h := newHarness(t)
		brokers := []int32{1, 2, 3, 4}
		must := func(cmd string, args ...string) {
			t.Helper()
			if _, err := h.exec(cmd, args); err != nil {
				t.Fatalf("%s %v: %v", cmd, args, err)
			}
		}
		must("broker-up", "1", "2", "3", "4")
		nextCtrl := int32(100)
		must("start", "100")
		nextCtrl++
		must("create-topic", "m", "0:1,2,3", "1:2,3,4", "2:3", "3:4,1", "4:1,2,3,4")
		registered := map[int32]bool{1: true, 2: true, 3: true, 4: true}
		// shuttingDown mirrors the active controller's set: a broker in
		// controlled shutdown is never elected until it goes away or
		// the controller changes.
		shuttingDown := map[int32]bool{}
		prev := snapshotStates(t, h)
		prevEpoch := int32(0)
		for i := 0; i+1 < len(ops); i += 2 {
			b := brokers[int(ops[i+1])%len(brokers)]
			bs := strconv.Itoa(int(b))
			var step string
			switch ops[i] % 7 {
			case 0:
				if !registered[b] {
					continue
				}
				must("broker-down", bs)
				registered[b] = false
				delete(shuttingDown, b)
				step = "down " + bs
			case 1:
				if registered[b] {
					continue
				}
				must("broker-up", bs)
				registered[b] = true
				step = "up " + bs
			case 2:
				if !registered[b] {
					continue
				}
				must("broker-bounce", bs)
				delete(shuttingDown, b)
				step = "bounce " + bs
			case 3:
				p := int32(ops[i+1]) % 5
				s, ok := prev[common.TopicPartition{Topic: "m", Partition: p}]
				if !ok || s.Leader < 0 || !registered[s.Leader] {
					continue
				}
				// The leader shrinks the ISR to itself or expands it with
				// every registered replica, alternately.
				var isr []int32
				if len(s.ISR) > 1 {
					isr = []int32{s.Leader}
				} else {
					isr = []int32{s.Leader}
					a, _ := zkAssignment(t, h, "m", p)
					for _, r := range a {
						if r != s.Leader && registered[r] {
							isr = append(isr, r)
						}
					}
				}
				args := []string{"m", strconv.Itoa(int(p))}
				for _, r := range isr {
					args = append(args, strconv.Itoa(int(r)))
				}
				must("leader-isr", args...)
				step = fmt.Sprintf("leader-isr m-%d %v", p, isr)
				prev = snapshotStates(t, h) // the leader's own write is the new baseline
			case 4:
				var active int32 = -1
				for id, c := range h.ctrls {
					if c.IsActive() {
						active = id
					}
				}
				must("start", strconv.Itoa(int(nextCtrl)))
				nextCtrl++
				if active >= 0 {
					must("stop", strconv.Itoa(int(active)))
				}
				clear(shuttingDown)
				step = "failover"
			case 6:
				// Reassign a partition to a rotation of the brokers, keeping
				// its replication factor.
				p := int32(ops[i+1]) % 5
				cur, _ := zkAssignment(t, h, "m", p)
				var target []string
				for k := range cur {
					target = append(target, strconv.Itoa(int(brokers[(int(b)+k)%len(brokers)])))
				}
				must("reassign", fmt.Sprintf("m-%d", p), strings.Join(target, ","))
				step = fmt.Sprintf("reassign m-%d to %v", p, target)
			case 5:
				if !registered[b] {
					continue
				}
				must("controlled-shutdown", bs)
				shuttingDown[b] = true
				step = "controlled-shutdown " + bs
			}
			cur := snapshotStates(t, h)
			checkInvariants(t, step, prev, cur, registered, shuttingDown, h)
			actives := 0
			for _, c := range h.ctrls {
				if c.IsActive() {
					actives++
				}
			}
			if actives > 1 {
				t.Fatalf("after %s: %d active controllers", step, actives)
			}
			data, _, err := h.get(zkpaths.ControllerEpochPath)
			if err != nil {
				t.Fatal(err)
			}
			e, _ := zkpaths.DecodeControllerEpoch(data)
			if e < prevEpoch {
				t.Fatalf("after %s: /controller_epoch went from %d to %d", step, prevEpoch, e)
			}
			prevEpoch = e
			prev = cur
		}
	}
}

func zkAssignment(t *testing.T, h *harness, topic string, p int32) ([]int32, bool) {
	data, _, err := h.get(zkpaths.TopicPath(topic))
	if err != nil {
		t.Fatal(err)
	}
	ta, err := zkpaths.DecodeTopicAssignment(data)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := ta.Partitions[p]
	return r, ok
}

func snapshotStates(t *testing.T, h *harness) map[common.TopicPartition]zkpaths.LeaderAndIsr {
	out := map[common.TopicPartition]zkpaths.LeaderAndIsr{}
	for p := int32(0); p < 5; p++ {
		data, st, err := h.get(zkpaths.PartitionStatePath("m", p))
		if err != nil {
			continue
		}
		s, err := zkpaths.DecodeLeaderAndIsr(data, st.Version)
		if err != nil {
			t.Fatal(err)
		}
		out[common.TopicPartition{Topic: "m", Partition: p}] = s
	}
	return out
}

func checkInvariants(t *testing.T, step string, prev, cur map[common.TopicPartition]zkpaths.LeaderAndIsr, registered, shuttingDown map[int32]bool, h *harness) {
	t.Helper()
	for tp, s := range cur {
		replicas, _ := zkAssignment(t, h, tp.Topic, tp.Partition)
		if len(s.ISR) == 0 {
			t.Fatalf("after %s: %s has an empty ISR", step, tp)
		}
		for _, r := range s.ISR {
			if !slices.Contains(replicas, r) {
				t.Fatalf("after %s: %s ISR %v not within replicas %v", step, tp, s.ISR, replicas)
			}
		}
		if s.Leader >= 0 {
			if !slices.Contains(s.ISR, s.Leader) {
				t.Fatalf("after %s: %s leader %d not in ISR %v", step, tp, s.Leader, s.ISR)
			}
			if !registered[s.Leader] {
				t.Fatalf("after %s: %s led by unregistered broker %d", step, tp, s.Leader)
			}
		} else {
			for _, r := range s.ISR {
				if registered[r] && !shuttingDown[r] {
					t.Fatalf("after %s: %s has no leader although ISR member %d is live (%s)", step, tp, r, s)
				}
			}
		}
		p, ok := prev[tp]
		if !ok {
			continue
		}
		if s.LeaderEpoch < p.LeaderEpoch || s.ZkVersion < p.ZkVersion || s.ControllerEpoch < p.ControllerEpoch {
			t.Fatalf("after %s: %s went backwards: %s -> %s", step, tp, p, s)
		}
		if s.Leader >= 0 && s.Leader != p.Leader && !slices.Contains(p.ISR, s.Leader) {
			t.Fatalf("after %s: %s elected %d outside the previous ISR %v (unclean election is off)", step, tp, s.Leader, p.ISR)
		}
	}
}
