package main

import (
	"slices"
	"testing"

	"github.com/klassik/klassik/broker/common/jvm"
)

// Kafka prints "Clearing broker-level throttles on brokers %s" with a Scala
// Set's mkString: up to four brokers in the order added, five or more in
// the hash trie's order. improve(1..5) & 31 are 7, 14, 20, 29 and 1, so
// {1,2,3,4,5} iterates 5,1,2,3,4.
func TestScalaSetOrder(t *testing.T) {
	for _, c := range []struct {
		in, want []int32
	}{
		{in: []int32{3, 1, 2, 1}, want: []int32{3, 1, 2}},
		{in: []int32{4, 3, 2, 1}, want: []int32{4, 3, 2, 1}},
		{in: []int32{1, 2, 3, 4, 5}, want: []int32{5, 1, 2, 3, 4}},
		{in: []int32{5, 4, 3, 2, 1, 1}, want: []int32{5, 1, 2, 3, 4}},
	} {
		if got := scalaSetOrder(c.in, int32Hash); !slices.Equal(got, c.want) {
			t.Errorf("%v: %v, want %v", c.in, got, c.want)
		}
	}
	// t4 and t5 share the fragment 2 at the root, so they come after the
	// root's own elements t3 (10), t2 (17) and t1 (27), from a sub-node.
	got := scalaSetOrder([]string{"t1", "t2", "t3", "t4", "t5"}, jvm.StringHashCode)
	if len(got) != 5 || !slices.Equal(got[:3], []string{"t3", "t2", "t1"}) || !slices.Contains(got[3:], "t4") || !slices.Contains(got[3:], "t5") {
		t.Errorf("topics: %v", got)
	}
	// Fewer than five topics: the order of the reassignment file.
	if got := scalaSetOrder([]string{"zeta", "alpha"}, jvm.StringHashCode); !slices.Equal(got, []string{"zeta", "alpha"}) {
		t.Errorf("two topics: %v", got)
	}
}

func TestImproveHash(t *testing.T) {
	for i, want := range map[int32]uint32{1: 7, 2: 14, 3: 20, 4: 29, 5: 1} {
		if got := improveHash(i) & 31; got != want {
			t.Errorf("improve(%d) & 31 = %d, want %d", i, got, want)
		}
	}
}
