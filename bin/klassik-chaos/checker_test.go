package main

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// feed feeds seqs (by offset from base) into view as reader.
func feed(c *Checker, view, reader string, partition int32, base int64, seqs ...int64) {
	for i, s := range seqs {
		key, value := c.Key(s), c.Value(s, 20)
		if s < 0 {
			key, value = "other", "other 1"
		}
		c.Read(view, reader, partition, base+int64(i), []byte(key), []byte(value))
	}
}

func kinds(v Verdict) []string {
	var out []string
	for _, x := range v.Violations {
		out = append(out, x.Kind+"@"+itoa(x.Partition)+"/"+itoa64(x.Offset))
	}
	return out
}

func itoa(n int32) string   { return strconv.Itoa(int(n)) }
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func TestCheckerClean(t *testing.T) {
	c := NewChecker("p1", map[int32]int64{0: 10, 1: 0})
	// Partition 0: seqs 0, 2, 4 at offsets 10-12; partition 1: 1, 3.
	for i, s := range []int64{0, 2, 4} {
		c.Ack(0, 10+int64(i), s)
	}
	c.Ack(1, 0, 1)
	c.Ack(1, 1, 3)
	feed(c, "group", "consumer-1", 0, 10, 0, 2, 4)
	feed(c, "group", "consumer-2", 0, 11, 2, 4) // re-read after a rebalance
	feed(c, "group", "consumer-2", 1, 0, 1, 3)
	feed(c, "final", "final-reader", 0, 10, 0, 2, 4)
	feed(c, "final", "final-reader", 1, 0, 1, 3, 5) // 5 was not acknowledged: fine
	feed(c, "final", "final-reader", 0, 9, -1)      // below the start: counted, not checked
	v := c.Verdict()
	if !v.Clean() {
		t.Fatalf("violations: %v", v.Violations)
	}
	if v.Acked != 5 || v.Reads["final-reader"] != 7 || v.Reads["consumer-2"] != 4 {
		t.Fatalf("counts: %+v", v)
	}
}

func TestCheckerFindsEachKind(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(c *Checker)
		want  []string
	}{
		{"lost: offset not read", func(c *Checker) {
			c.Ack(0, 0, 0)
			c.Ack(0, 1, 1)
			c.Ack(0, 2, 2)
			feed(c, "final", "r", 0, 0, 0)
			c.Read("final", "r", 0, 2, []byte(c.Key(2)), []byte(c.Value(2, 0)))
		}, []string{"lost@0/1"}},
		{"lost: offset holds another record", func(c *Checker) {
			c.Ack(0, 0, 0)
			c.Ack(0, 1, 1)
			feed(c, "final", "r", 0, 0, 0, -1)
		}, []string{"lost@0/1"}},
		{"duplicated", func(c *Checker) {
			c.Ack(0, 0, 0)
			c.Ack(0, 1, 1)
			feed(c, "final", "r", 0, 0, 0, 1, 1)
		}, []string{"duplicated@0/2"}},
		{"duplicated across partitions", func(c *Checker) {
			c.Ack(0, 0, 0)
			feed(c, "final", "r", 0, 0, 0)
			feed(c, "final", "r", 1, 0, 0)
		}, []string{"duplicated@1/0"}},
		{"reordered", func(c *Checker) {
			for i := int64(0); i < 3; i++ {
				c.Ack(0, i, i)
			}
			feed(c, "final", "r", 0, 0, 0, 2, 1)
			feed(c, "group", "g", 0, 0, 0, 2, 1)
		}, []string{"lost@0/1", "lost@0/2", "reordered@0/2"}},
		{"inconsistent within the group", func(c *Checker) {
			feed(c, "group", "consumer-1", 0, 0, 5)
			feed(c, "group", "consumer-2", 0, 0, 6)
		}, []string{"inconsistent@0/0"}},
		{"inconsistent between views", func(c *Checker) {
			feed(c, "group", "consumer-1", 0, 0, 5, 6)
			feed(c, "final", "r", 0, 0, 5, -1)
		}, []string{"inconsistent@0/1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChecker("p", map[int32]int64{0: 0, 1: 0})
			tc.build(c)
			v := c.Verdict()
			if got := kinds(v); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("violations %v, want %v\n%v", got, tc.want, v.Violations)
			}
			for _, x := range v.Violations {
				if x.Detail == "" || x.Kind != Inconsistent && !strings.HasPrefix(x.Key, "p-") {
					t.Errorf("violation without detail or key: %+v", x)
				}
			}
		})
	}
}

func TestParseValue(t *testing.T) {
	c := NewChecker("p7", nil)
	for _, tc := range []struct {
		value string
		want  int64
	}{
		{c.Value(42, 100), 42},
		{c.Value(0, 0), 0},
		{"p7 x", -1},
		{"p77 1 ", -1},
		{"p7 -3 ", -1},
		{"", -1},
	} {
		if got := parseValue("p7", tc.value); got != tc.want {
			t.Errorf("parseValue(%q) = %d, want %d", tc.value, got, tc.want)
		}
	}
	if n := len(c.Value(1, 100)); n != 100 {
		t.Errorf("value of %d bytes, want 100", n)
	}
}

func TestScheduleIsReproducible(t *testing.T) {
	o := ScheduleOptions{Seed: 7, Faults: []string{FaultStop, FaultKill9}, Brokers: []int32{1, 2, 3},
		Duration: 10 * time.Minute, Interval: 20 * time.Second, Hold: 10 * time.Second, Warmup: 5 * time.Second, Cooldown: 10 * time.Second}
	a, b := Schedule(o), Schedule(o)
	if !reflect.DeepEqual(a, b) || len(a) < 10 {
		t.Fatalf("schedules differ or too short: %v / %v", a, b)
	}
	o.Faults = []string{FaultKill9, FaultStop} // order does not matter
	if !reflect.DeepEqual(a, Schedule(o)) {
		t.Fatal("the order of --faults changed the schedule")
	}
	o.Seed = 8
	if reflect.DeepEqual(a, Schedule(o)) {
		t.Fatal("another seed gave the same schedule")
	}
	kinds := map[string]bool{}
	for i, f := range a {
		kinds[f.Kind] = true
		if f.Hold < 5*time.Second || f.Hold > 10*time.Second || f.At+f.Hold+o.Cooldown > o.Duration {
			t.Errorf("fault %v out of bounds", f)
		}
		if i > 0 && f.At < a[i-1].At+a[i-1].Hold+o.Interval {
			t.Errorf("fault %v overlaps %v", f, a[i-1])
		}
	}
	if !kinds[FaultKill9] || !kinds[FaultStop] {
		t.Errorf("kinds %v", kinds)
	}
	// zk-kill without ZooKeeper nodes is left out.
	if s := Schedule(ScheduleOptions{Seed: 1, Faults: []string{FaultZKKill}, Brokers: []int32{1}, Duration: time.Minute, Hold: time.Second}); len(s) != 0 {
		t.Errorf("zk-kill scheduled without nodes: %v", s)
	}
}

func TestParseFlags(t *testing.T) {
	if _, err := parseFaults("kill9,bogus"); err == nil {
		t.Error("unknown fault accepted")
	}
	if f, err := parseFaults("none"); err != nil || len(f) != 0 {
		t.Errorf("none: %v %v", f, err)
	}
	if m, err := parseCmds([]string{"1=bin/kafka-server-start.sh config/server.properties"}); err != nil || m[1] != "bin/kafka-server-start.sh config/server.properties" {
		t.Errorf("parseCmds: %v %v", m, err)
	}
	for _, bad := range []string{"x=cmd", "1=", "cmd"} {
		if _, err := parseCmds([]string{bad}); err == nil {
			t.Errorf("parseCmds(%q) accepted", bad)
		}
	}
	var sb strings.Builder
	if _, err := parseArgs([]string{"--faults", "zk-kill", "--bootstrap-server", "h:1"}, &sb); err == nil {
		t.Error("zk-kill without --zookeeper accepted")
	}
	if _, err := parseArgs([]string{"--consumers", "1", "--bootstrap-server", "h:1"}, &sb); err == nil {
		t.Error("one consumer accepted")
	}
}
