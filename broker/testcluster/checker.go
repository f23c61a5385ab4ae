package testcluster

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Checker compares what a producer had acknowledged with what a consumer read
// back and reports, per partition and offset, records that were lost,
// duplicated or reordered. It is the delivery oracle of the integration
// tests: produce with unique record ids (any string; Seq orders the ids of one
// producer), feed acknowledgements to Acked and consumed records to Consumed,
// then call Report.
//
// Definitions (per partition):
//   - lost: acknowledged at offset o, but no consumed record has that id;
//   - duplicated: one id consumed at more than one offset, or acknowledged
//     twice (a retried produce that was appended again);
//   - reordered: in consumed offset order the producer sequence numbers of
//     the ids do not increase (the producer sent them in Seq order);
//   - moved: consumed at an offset different from the acknowledged one.
//
// Safe for concurrent use (producer callbacks run on client goroutines).
type Checker struct {
	// mu guards the following.
	mu       sync.Mutex
	acked    map[string]ackInfo
	ackTwice []string
	consumed map[int32][]consumedRec
}

type ackInfo struct {
	partition int32
	offset    int64
	seq       int64
}

type consumedRec struct {
	id     string
	offset int64
}

// NewChecker returns an empty Checker.
func NewChecker() *Checker {
	return &Checker{acked: map[string]ackInfo{}, consumed: map[int32][]consumedRec{}}
}

// Acked records that the record id, sent as the seq-th record of its
// producer, was acknowledged at partition/offset.
func (c *Checker) Acked(id string, seq int64, partition int32, offset int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.acked[id]; dup {
		c.ackTwice = append(c.ackTwice, id)
	}
	c.acked[id] = ackInfo{partition: partition, offset: offset, seq: seq}
}

// Consumed records that id was read at partition/offset.
func (c *Checker) Consumed(id string, partition int32, offset int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.consumed[partition] = append(c.consumed[partition], consumedRec{id: id, offset: offset})
}

// NumConsumed is the number of consumed records so far (duplicates count).
func (c *Checker) NumConsumed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, rs := range c.consumed {
		n += len(rs)
	}
	return n
}

// Problem is one finding of the Checker.
type Problem struct {
	Kind      string // "lost", "duplicated", "reordered", "moved"
	ID        string
	Partition int32
	Offset    int64
	Detail    string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s: id=%s partition=%d offset=%d %s", p.Kind, p.ID, p.Partition, p.Offset, p.Detail)
}

// Report is the result of a check.
type Report struct {
	Acked, Consumed int
	Problems        []Problem
}

// OK reports whether nothing was lost, duplicated, reordered or moved.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// String summarises the report, listing at most 20 problems.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "acked=%d consumed=%d problems=%d", r.Acked, r.Consumed, len(r.Problems))
	for i, p := range r.Problems {
		if i == 20 {
			fmt.Fprintf(&b, "\n  ... %d more", len(r.Problems)-20)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Report computes the findings over everything recorded so far.
func (c *Checker) Report() Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	var r Report
	r.Acked = len(c.acked)
	for _, id := range c.ackTwice {
		a := c.acked[id]
		r.Problems = append(r.Problems, Problem{Kind: "duplicated", ID: id, Partition: a.partition, Offset: a.offset, Detail: "acknowledged twice"})
	}
	seen := map[string]int64{} // id -> first consumed offset
	parts := make([]int32, 0, len(c.consumed))
	for p := range c.consumed {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	for _, p := range parts {
		recs := append([]consumedRec(nil), c.consumed[p]...)
		sort.SliceStable(recs, func(i, j int) bool { return recs[i].offset < recs[j].offset })
		r.Consumed += len(recs)
		lastSeq, lastID := int64(-1), ""
		for _, rec := range recs {
			if first, dup := seen[rec.id]; dup {
				r.Problems = append(r.Problems, Problem{Kind: "duplicated", ID: rec.id, Partition: p, Offset: rec.offset,
					Detail: fmt.Sprintf("also consumed at offset %d", first)})
				continue
			}
			seen[rec.id] = rec.offset
			a, ok := c.acked[rec.id]
			if !ok {
				continue // consumed but never acknowledged: allowed (ack lost in flight)
			}
			if a.partition != p || a.offset != rec.offset {
				r.Problems = append(r.Problems, Problem{Kind: "moved", ID: rec.id, Partition: p, Offset: rec.offset,
					Detail: fmt.Sprintf("acknowledged at partition %d offset %d", a.partition, a.offset)})
			}
			if a.seq <= lastSeq {
				r.Problems = append(r.Problems, Problem{Kind: "reordered", ID: rec.id, Partition: p, Offset: rec.offset,
					Detail: fmt.Sprintf("producer sequence %d after %d (id %s)", a.seq, lastSeq, lastID)})
			}
			lastSeq, lastID = a.seq, rec.id
		}
	}
	lost := make([]Problem, 0)
	for id, a := range c.acked {
		if _, ok := seen[id]; !ok {
			lost = append(lost, Problem{Kind: "lost", ID: id, Partition: a.partition, Offset: a.offset})
		}
	}
	sort.Slice(lost, func(i, j int) bool {
		if lost[i].Partition != lost[j].Partition {
			return lost[i].Partition < lost[j].Partition
		}
		return lost[i].Offset < lost[j].Offset
	})
	r.Problems = append(r.Problems, lost...)
	return r
}
