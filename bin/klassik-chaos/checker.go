package main

// The checker: a Jepsen-style verdict over what the producer had
// acknowledged and what every consumer read. Pure logic, no I/O.
//
// Records of this run carry key "<producer>-<seq>" and value
// "<producer> <seq> <padding>"; a record of another producer (an earlier
// run on the same topic) takes part only in the consistency check.
//
// Violations:
//
//	lost          an acknowledged record is not at its acknowledged offset
//	              in what the consumers read (the offset holds nothing or
//	              another record)
//	duplicated    one producer sequence number read at two offsets
//	reordered     in a partition, a sequence number read at a higher offset
//	              than a larger one (the idempotent producer keeps each
//	              partition in send order)
//	inconsistent  two consumers read different records at the same
//	              partition and offset

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Violation kinds.
const (
	Lost         = "lost"
	Duplicated   = "duplicated"
	Reordered    = "reordered"
	Inconsistent = "inconsistent"
)

// Kinds lists the violation kinds in report order.
var Kinds = []string{Lost, Duplicated, Reordered, Inconsistent}

// Violation is one finding, by partition, offset and key.
type Violation struct {
	Kind      string `json:"kind"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Key       string `json:"key"`
	Detail    string `json:"detail"`
}

func (v Violation) String() string {
	return fmt.Sprintf("%-12s partition=%d offset=%d key=%s: %s", v.Kind, v.Partition, v.Offset, v.Key, v.Detail)
}

// slot is what was read at one offset: the first reader's record.
type slot struct {
	seen   bool
	seq    int64  // -1: a record of another producer
	hash   uint64 // of key and value, to compare readers
	reader string
}

// partLog is one partition's offsets from base on.
type partLog struct {
	base  int64
	slots []slot
}

// A view is the log as one set of readers read it: the consumer group
// (its members share a view, a partition moving between them at a
// rebalance) or the final reader. Each view is checked on its own, and
// the views against each other.
type view struct {
	name  string
	parts map[int32]*partLog
}

// Checker collects acknowledgements and reads; safe for concurrent use.
type Checker struct {
	producer string
	base     map[int32]int64

	mu        sync.Mutex
	views     map[string]*view
	viewOrder []string
	acks      []ack
	reads     map[string]int64 // records read, per reader
	conflicts []Violation      // inconsistent reads within a view, found as they come
}

type ack struct {
	partition int32
	offset    int64
	seq       int64
}

// NewChecker checks the records of producer; base gives each partition's
// first offset of the run (records below it are ignored).
func NewChecker(producer string, base map[int32]int64) *Checker {
	return &Checker{producer: producer, base: base, views: map[string]*view{}, reads: map[string]int64{}}
}

// Key and Value build a record of this checker's producer.
func (c *Checker) Key(seq int64) string { return c.producer + "-" + strconv.FormatInt(seq, 10) }

// Value is "<producer> <seq> <pad>", pad bytes long at least.
func (c *Checker) Value(seq int64, pad int) string {
	v := c.producer + " " + strconv.FormatInt(seq, 10) + " "
	if n := pad - len(v); n > 0 {
		v += strings.Repeat("x", n)
	}
	return v
}

// parseValue returns the sequence number of a record of producer, or -1.
func parseValue(producer, value string) int64 {
	rest, ok := strings.CutPrefix(value, producer+" ")
	if !ok {
		return -1
	}
	num, _, _ := strings.Cut(rest, " ")
	seq, err := strconv.ParseInt(num, 10, 64)
	if err != nil || seq < 0 {
		return -1
	}
	return seq
}

// Ack records an acknowledged send.
func (c *Checker) Ack(partition int32, offset, seq int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acks = append(c.acks, ack{partition, offset, seq})
}

// Acked is the number of acknowledgements so far.
func (c *Checker) Acked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.acks)
}

func (c *Checker) partLog(viewName string, partition int32) *partLog {
	v := c.views[viewName]
	if v == nil {
		v = &view{name: viewName, parts: map[int32]*partLog{}}
		c.views[viewName] = v
		c.viewOrder = append(c.viewOrder, viewName)
	}
	pl := v.parts[partition]
	if pl == nil {
		pl = &partLog{base: c.base[partition]}
		v.parts[partition] = pl
	}
	return pl
}

func recordHash(key, value []byte) uint64 {
	h := fnv.New64a()
	h.Write(key)
	h.Write([]byte{0})
	h.Write(value)
	return h.Sum64()
}

// Read records that reader, of view viewName, read a record at partition
// and offset.
func (c *Checker) Read(viewName, reader string, partition int32, offset int64, key, value []byte) {
	sum := recordHash(key, value)
	seq := parseValue(c.producer, string(value))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads[reader]++
	pl := c.partLog(viewName, partition)
	if offset < pl.base {
		return
	}
	i := int(offset - pl.base)
	for len(pl.slots) <= i {
		pl.slots = append(pl.slots, slot{})
	}
	s := &pl.slots[i]
	if !s.seen {
		*s = slot{seen: true, seq: seq, hash: sum, reader: reader}
		return
	}
	if s.hash != sum && len(c.conflicts) < 100000 {
		c.conflicts = append(c.conflicts, Violation{Kind: Inconsistent, Partition: partition, Offset: offset, Key: string(key),
			Detail: fmt.Sprintf("%s read %s, %s read %s", s.reader, c.describe(s.seq), reader, c.describe(seq))})
	}
}

func (c *Checker) describe(seq int64) string {
	if seq < 0 {
		return "a record of another producer"
	}
	return "key " + c.Key(seq)
}

// Reads is the number of records each reader read.
func (c *Checker) Reads() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int64{}
	for k, v := range c.reads {
		out[k] = v
	}
	return out
}

// Verdict is the outcome: the violations, sorted by kind, partition and
// offset, and counts.
type Verdict struct {
	Acked      int              `json:"acked"`
	Reads      map[string]int64 `json:"reads"`
	Counts     map[string]int   `json:"counts"`
	Violations []Violation      `json:"violations"`
}

// Clean reports whether there is no violation.
func (v Verdict) Clean() bool { return len(v.Violations) == 0 }

type vkey struct {
	kind      string
	partition int32
	offset    int64
}

// Verdict checks everything collected so far.
func (c *Checker) Verdict() Verdict {
	c.mu.Lock()
	defer c.mu.Unlock()
	found := map[vkey]*Violation{}
	var order []vkey
	add := func(v Violation, viewName string) {
		k := vkey{v.Kind, v.Partition, v.Offset}
		if old := found[k]; old != nil {
			if !strings.Contains(old.Detail, v.Detail) {
				old.Detail += "; " + v.Detail
			}
			if viewName != "" && !strings.Contains(old.Detail, "("+viewName+")") {
				old.Detail += " (" + viewName + ")"
			}
			return
		}
		if viewName != "" {
			v.Detail += " (" + viewName + ")"
		}
		found[k] = &v
		order = append(order, k)
	}
	for _, v := range c.conflicts {
		add(v, "")
	}
	for _, name := range c.viewOrder {
		c.checkView(c.views[name], add)
	}
	c.checkViewsAgree(add)
	vs := make([]Violation, 0, len(order))
	for _, k := range order {
		vs = append(vs, *found[k])
	}
	rank := map[string]int{}
	for i, k := range Kinds {
		rank[k] = i
	}
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := vs[i], vs[j]
		if a.Kind != b.Kind {
			return rank[a.Kind] < rank[b.Kind]
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.Offset < b.Offset
	})
	v := Verdict{Acked: len(c.acks), Reads: map[string]int64{}, Counts: map[string]int{}, Violations: vs}
	for k, n := range c.reads {
		v.Reads[k] = n
	}
	for _, k := range Kinds {
		v.Counts[k] = 0
	}
	for _, x := range vs {
		v.Counts[x.Kind]++
	}
	return v
}

func sortedPartitions(m map[int32]*partLog) []int32 {
	var ps []int32
	for p := range m {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

type at struct {
	partition int32
	offset    int64
}

// checkView finds what one view got wrong: reordered and duplicated
// sequence numbers, and acknowledged records not at their offset.
func (c *Checker) checkView(v *view, add func(Violation, string)) {
	where := map[int64][]at{}
	for _, p := range sortedPartitions(v.parts) {
		pl := v.parts[p]
		maxSeq, maxOff := int64(-1), int64(-1)
		for i, s := range pl.slots {
			if !s.seen || s.seq < 0 {
				continue
			}
			off := pl.base + int64(i)
			where[s.seq] = append(where[s.seq], at{p, off})
			if s.seq < maxSeq {
				add(Violation{Kind: Reordered, Partition: p, Offset: off, Key: c.Key(s.seq),
					Detail: fmt.Sprintf("read after key %s at offset %d", c.Key(maxSeq), maxOff)}, v.name)
			} else {
				maxSeq, maxOff = s.seq, off
			}
		}
	}
	for seq, ats := range where {
		if len(ats) < 2 {
			continue
		}
		var offs []string
		for _, a := range ats {
			offs = append(offs, fmt.Sprintf("%d/%d", a.partition, a.offset))
		}
		for _, a := range ats[1:] {
			add(Violation{Kind: Duplicated, Partition: a.partition, Offset: a.offset, Key: c.Key(seq),
				Detail: "read at partition/offset " + strings.Join(offs, ", ")}, v.name)
		}
	}
	for _, a := range c.acks {
		pl := v.parts[a.partition]
		var s slot
		if pl != nil && a.offset >= pl.base && int(a.offset-pl.base) < len(pl.slots) {
			s = pl.slots[a.offset-pl.base]
		}
		if s.seen && s.seq == a.seq {
			continue
		}
		detail := "acknowledged at this offset, not read there"
		if s.seen {
			detail = "acknowledged at this offset, which holds " + c.describe(s.seq)
		}
		if other := where[a.seq]; len(other) > 0 {
			detail += fmt.Sprintf(", read at partition %d offset %d instead", other[0].partition, other[0].offset)
		}
		add(Violation{Kind: Lost, Partition: a.partition, Offset: a.offset, Key: c.Key(a.seq), Detail: detail}, v.name)
	}
}

// checkViewsAgree finds offsets where two views read different records.
func (c *Checker) checkViewsAgree(add func(Violation, string)) {
	for i, an := range c.viewOrder {
		for _, bn := range c.viewOrder[i+1:] {
			a, b := c.views[an], c.views[bn]
			for _, p := range sortedPartitions(a.parts) {
				pa, pb := a.parts[p], b.parts[p]
				if pb == nil {
					continue
				}
				for j, sa := range pa.slots {
					off := pa.base + int64(j)
					k := int(off - pb.base)
					if !sa.seen || k < 0 || k >= len(pb.slots) || !pb.slots[k].seen {
						continue
					}
					if sb := pb.slots[k]; sb.hash != sa.hash {
						key := ""
						if sa.seq >= 0 {
							key = c.Key(sa.seq)
						}
						add(Violation{Kind: Inconsistent, Partition: p, Offset: off, Key: key,
							Detail: fmt.Sprintf("%s read %s, %s read %s", sa.reader, c.describe(sa.seq), sb.reader, c.describe(sb.seq))}, "")
					}
				}
			}
		}
	}
}
