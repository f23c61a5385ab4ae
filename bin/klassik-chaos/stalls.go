package main

// Stalls: per partition, the longest time the producer went without an
// acknowledged write to it. A partition's stall is the time between two
// consecutive acknowledgements of its records (the first measured from the
// producer's start); records of the partition that failed after its last
// acknowledgement, or a partition never acknowledged at all, make a stall
// that no acknowledgement ended, measured up to the producer's stop. The
// records are spread over the partitions by key, so at --throughput every
// partition has records in flight all the time and a gap between
// acknowledgements is time the cluster did not acknowledge. Pure logic, no
// I/O.

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// Stall is one partition's longest stall of acknowledged writes.
type Stall struct {
	Partition int32     `json:"partition"`
	From      time.Time `json:"from"` // the acknowledgement before it, or the producer's start
	To        time.Time `json:"to"`   // the acknowledgement that ended it, or the producer's stop
	Seconds   float64   `json:"seconds"`
	// Unended: no acknowledgement ended it (its records failed, or the run
	// stopped first).
	Unended bool `json:"unended,omitempty"`
}

// Duration is To - From.
func (s Stall) Duration() time.Duration { return s.To.Sub(s.From) }

// StallTracker measures stalls; safe for concurrent use.
type StallTracker struct {
	mu       sync.Mutex
	start    time.Time
	lastAck  map[int32]time.Time
	lastFail map[int32]time.Time
	longest  map[int32]Stall
}

// NewStallTracker starts measuring at start (the producer's start).
func NewStallTracker(start time.Time) *StallTracker {
	return &StallTracker{start: start, lastAck: map[int32]time.Time{}, lastFail: map[int32]time.Time{}, longest: map[int32]Stall{}}
}

func (s *StallTracker) consider(st Stall) {
	st.Seconds = st.Duration().Seconds()
	if old, ok := s.longest[st.Partition]; !ok || st.Duration() > old.Duration() {
		s.longest[st.Partition] = st
	}
}

// Ack records an acknowledgement of partition at time at.
func (s *StallTracker) Ack(partition int32, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	from, ok := s.lastAck[partition]
	if !ok {
		from = s.start
	}
	if at.After(s.lastAck[partition]) {
		s.lastAck[partition] = at
	}
	s.consider(Stall{Partition: partition, From: from, To: at})
}

// Fail records a record of partition that failed at time at (a negative
// partition, a record never given one, is ignored).
func (s *StallTracker) Fail(partition int32, at time.Time) {
	if partition < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if at.After(s.lastFail[partition]) {
		s.lastFail[partition] = at
	}
}

// Longest returns every partition's longest stall, sorted by partition,
// for partitions 0..partitions-1 and any other that was acknowledged:
// stop ends the stalls no acknowledgement ended.
func (s *StallTracker) Longest(partitions int32, stop time.Time) []Stall {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := int32(0); p < partitions; p++ {
		if _, ok := s.lastAck[p]; !ok {
			s.consider(Stall{Partition: p, From: s.start, To: stop, Unended: true})
		}
	}
	for p, f := range s.lastFail {
		if last, ok := s.lastAck[p]; ok && f.After(last) {
			s.consider(Stall{Partition: p, From: last, To: stop, Unended: true})
		}
	}
	out := make([]Stall, 0, len(s.longest))
	for _, st := range s.longest {
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}

// describe is a stall as the verdict prints it, times relative to start.
func (st Stall) describe(start time.Time) string {
	end := "until an acknowledgement at"
	if st.Unended {
		end = "not ended by an acknowledgement; the producer stopped at"
	}
	return fmt.Sprintf("partition %d: %.3f s without an acknowledged write, from %s (+%.3fs) %s %s (+%.3fs)", st.Partition, st.Seconds,
		st.From.UTC().Format("15:04:05.000"), st.From.Sub(start).Seconds(), end, st.To.UTC().Format("15:04:05.000"), st.To.Sub(start).Seconds())
}
