package testcluster

import (
	"strings"
	"testing"
)

func TestCheckerClean(t *testing.T) {
	c := NewChecker()
	for i := int64(0); i < 10; i++ {
		id := string(rune('a' + i))
		c.Acked(id, i, int32(i%2), i/2)
		c.Consumed(id, int32(i%2), i/2)
	}
	r := c.Report()
	if !r.OK() || r.Acked != 10 || r.Consumed != 10 {
		t.Fatalf("clean run reported %s", r)
	}
}

func TestCheckerFindsEveryKind(t *testing.T) {
	c := NewChecker()
	c.Acked("a", 0, 0, 0)
	c.Acked("b", 1, 0, 1)
	c.Acked("c", 2, 0, 2)
	c.Acked("d", 3, 1, 0)
	c.Acked("e", 4, 1, 1)
	c.Acked("e", 4, 1, 2) // appended twice
	// consumed: a ok; c before b (reordered); d consumed twice; e at 1.
	c.Consumed("a", 0, 0)
	c.Consumed("c", 0, 1)
	c.Consumed("b", 0, 2)
	c.Consumed("d", 1, 0)
	c.Consumed("d", 1, 3)
	r := c.Report()
	kinds := map[string]int{}
	for _, p := range r.Problems {
		kinds[p.Kind]++
	}
	if kinds["reordered"] != 1 || kinds["duplicated"] != 2 || kinds["lost"] != 1 || kinds["moved"] != 2 {
		t.Fatalf("unexpected findings %v:\n%s", kinds, r)
	}
	if !strings.Contains(r.String(), "lost: id=e partition=1 offset=2") {
		t.Fatalf("report does not name the lost record:\n%s", r)
	}
}
