package clitools

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/zkpaths"
)

// The old consumer's range assignment (kafka.consumer.RangeAssignor):
// sorted threads, sorted partitions, consecutive ranges, the first
// n%threads threads getting one extra partition.
func TestRangeAssign(t *testing.T) {
	cases := []struct {
		name    string
		threads []string
		parts   []int32
		want    map[string][]int32
	}{
		{"one consumer takes all", []string{"a-0"}, []int32{2, 0, 1}, map[string][]int32{"a-0": {0, 1, 2}}},
		{"even split", []string{"b-0", "a-0"}, []int32{0, 1, 2, 3, 4, 5}, map[string][]int32{"a-0": {0, 1, 2}, "b-0": {3, 4, 5}}},
		{"first threads get the extra", []string{"c-0", "a-0", "b-0"}, []int32{0, 1, 2, 3, 4, 5, 6, 7}, map[string][]int32{"a-0": {0, 1, 2}, "b-0": {3, 4, 5}, "c-0": {6, 7}}},
		{"more threads than partitions", []string{"a-0", "b-0", "c-0"}, []int32{0, 1}, map[string][]int32{"a-0": {0}, "b-0": {1}}},
		{"several streams of one consumer", []string{"a-1", "a-0", "b-0"}, []int32{0, 1, 2, 3}, map[string][]int32{"a-0": {0, 1}, "a-1": {2}, "b-0": {3}}},
		{"no threads", nil, []int32{0}, map[string][]int32{}},
		{"no partitions", []string{"a-0"}, nil, map[string][]int32{}},
		{"duplicates ignored", []string{"a-0", "a-0"}, []int32{1, 1, 0}, map[string][]int32{"a-0": {0, 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := RangeAssign(c.threads, c.parts)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("RangeAssign(%v, %v) = %v, want %v", c.threads, c.parts, got, c.want)
			}
		})
	}
}

func TestRangeAssignCoversEachPartitionOnce(t *testing.T) {
	for nt := 1; nt <= 7; nt++ {
		for np := 0; np <= 13; np++ {
			var threads []string
			for i := 0; i < nt; i++ {
				threads = append(threads, ThreadIDs(string(rune('a'+i)), 1)...)
			}
			var parts []int32
			for p := 0; p < np; p++ {
				parts = append(parts, int32(p))
			}
			seen := map[int32]int{}
			sizes := map[int]bool{}
			for _, ps := range RangeAssign(threads, parts) {
				sizes[len(ps)] = true
				for _, p := range ps {
					seen[p]++
				}
			}
			if len(seen) != np {
				t.Fatalf("%d threads, %d partitions: %d assigned", nt, np, len(seen))
			}
			for p, n := range seen {
				if n != 1 {
					t.Fatalf("partition %d assigned %d times", p, n)
				}
			}
			if len(sizes) > 2 {
				t.Fatalf("%d threads, %d partitions: uneven sizes %v", nt, np, sizes)
			}
		}
	}
}

func TestThreadIDs(t *testing.T) {
	if got := ThreadIDs("g_h-1-abc", 2); !reflect.DeepEqual(got, []string{"g_h-1-abc-0", "g_h-1-abc-1"}) {
		t.Fatal(got)
	}
}

func TestNewConsumerID(t *testing.T) {
	id := NewConsumerID("billing", time.UnixMilli(1500000000000))
	if !strings.HasPrefix(id, "billing_") || !strings.Contains(id, "-1500000000000-") || len(id[strings.LastIndex(id, "-")+1:]) != 8 {
		t.Fatalf("consumer id %q does not look like <group>_<host>-<ms>-<8 hex>", id)
	}
}

func TestParseKeyValues(t *testing.T) {
	got, err := ParseKeyValues([]string{"print.key=true", "key.separator==", "a=b=c", "print.key=false"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"print.key": "false", "key.separator": "=", "a": "b=c"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	for _, bad := range []string{"novalue", "=x"} {
		if _, err := ParseKeyValues([]string{bad}); err == nil || !strings.Contains(err.Error(), "Invalid command line properties") {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}

func TestBoolAndMillis(t *testing.T) {
	p := map[string]string{"x": "TRUE", "y": "nope", "ms": "250", "neg": "-1"}
	if v, err := Bool(p, "x", false); err != nil || !v {
		t.Fatal(v, err)
	}
	if _, err := Bool(p, "y", false); err == nil {
		t.Fatal("want error for y")
	}
	if v, _ := Bool(p, "missing", true); !v {
		t.Fatal("default lost")
	}
	if d, err := Millis(p, "ms", 0); err != nil || d != 250*time.Millisecond {
		t.Fatal(d, err)
	}
	if _, err := Millis(p, "neg", 0); err == nil {
		t.Fatal("negative accepted")
	}
}

func TestUnescape(t *testing.T) {
	if got := Unescape(`a\tb\nc\\d`); got != "a\tb\nc\\d" {
		t.Fatalf("%q", got)
	}
	if got := Unescape(":"); got != ":" {
		t.Fatalf("%q", got)
	}
}

func TestBrokerBootstrap(t *testing.T) {
	bs := []zkpaths.BrokerInfo{
		{ID: 2, Endpoints: []zkpaths.EndPoint{{ListenerName: "SSL", Host: "h2", Port: 9093, SecurityProtocol: "SSL"}, {ListenerName: "PLAINTEXT", Host: "h2", Port: 9092, SecurityProtocol: "PLAINTEXT"}}},
		{ID: 1, Endpoints: []zkpaths.EndPoint{{ListenerName: "PLAINTEXT", Host: "", Port: 9092, SecurityProtocol: "PLAINTEXT"}}},
		{ID: 3},
		{ID: 4, Endpoints: []zkpaths.EndPoint{{ListenerName: "X", Host: "::1", Port: 1, SecurityProtocol: "SASL_PLAINTEXT"}}},
	}
	want := []string{"localhost:9092", "h2:9092", "[::1]:1"}
	if got := BrokerBootstrap(bs); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

func TestApplyProperties(t *testing.T) {
	c := ZKConsumerDefaults("g", "t")
	err := c.ApplyProperties(map[string]string{"auto.commit.interval.ms": "100", "auto.offset.reset": "smallest",
		"rebalance.backoff.ms": "50", "rebalance.max.retries": "9", "consumer.id": "me", "auto.commit.enable": "false"})
	if err != nil {
		t.Fatal(err)
	}
	if c.AutoCommitInterval != 100*time.Millisecond || c.AutoOffsetReset != "smallest" || c.RebalanceBackoff != 50*time.Millisecond ||
		c.RebalanceMaxRetries != 9 || c.ConsumerID != "me" || c.AutoCommit {
		t.Fatalf("%+v", c)
	}
	if err := c.ApplyProperties(map[string]string{"auto.offset.reset": "earliest"}); err == nil || !strings.Contains(err.Error(), "smallest and largest") {
		t.Fatal(err)
	}
}

// FuzzParseKeyValues: never panics; on success every pair's key is
// non-empty and maps to the text after its first '='.
func FuzzParseKeyValues(f *testing.F) {
	for _, s := range []string{"a=b", "key.separator=:", "x==", "=v", "novalue", "a=b=c", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseKeyValues([]string{s})
		if err != nil {
			return
		}
		k, v, _ := strings.Cut(s, "=")
		if k == "" || m[k] != v {
			t.Fatalf("%q -> %v", s, m)
		}
	})
}
