package group

import (
	"sort"

	"github.com/klassik/klassik/broker/common"
)

// GroupSnapshot is a copy of one group's state for the web console.
type GroupSnapshot struct {
	Group        string
	State        State
	ProtocolType string
	Protocol     string
	Generation   int32
	Leader       string
	Members      []MemberSnapshot
	// Offsets are the committed offsets.
	Offsets map[common.TopicPartition]int64
}

// MemberSnapshot is one member of a GroupSnapshot.
type MemberSnapshot struct {
	ID         string
	InstanceID *string
	ClientID   string
	ClientHost string
	// Assignment is the member's raw assignment (the consumer protocol's
	// bytes for protocol type "consumer").
	Assignment []byte
}

// Snapshots copies every group this coordinator has loaded, sorted by id.
// It takes the coordinator lock to list them, then each group's lock in
// turn (never two at once).
func (c *Coordinator) Snapshots() []GroupSnapshot {
	c.mu.Lock()
	gs := make([]*Group, 0, len(c.groups))
	for _, g := range c.groups {
		gs = append(gs, g)
	}
	c.mu.Unlock()
	out := make([]GroupSnapshot, 0, len(gs))
	for _, g := range gs {
		g.mu.Lock()
		if g.unloaded {
			g.mu.Unlock()
			continue
		}
		s := GroupSnapshot{Group: g.id, State: g.state, ProtocolType: g.protocolType, Protocol: g.protocol,
			Generation: g.generation, Leader: g.leader, Offsets: make(map[common.TopicPartition]int64, len(g.offsets))}
		for _, m := range g.sortedMembersLocked() {
			s.Members = append(s.Members, MemberSnapshot{ID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID,
				ClientHost: m.ClientHost, Assignment: append([]byte(nil), m.Assignment...)})
		}
		for tp, o := range g.offsets {
			s.Offsets[tp] = o.Offset
		}
		g.mu.Unlock()
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}
