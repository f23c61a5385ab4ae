package group

import (
	"context"
	"sort"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeGroups handles DescribeGroups v0-v5. Authorized operations are
// the api layer's (it owns the authorizer); this sets them to
// Int32.MinValue ("not requested").
func (c *Coordinator) DescribeGroups(_ context.Context, req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		resp.Groups = append(resp.Groups, c.describeGroup(id))
	}
	return resp
}

func (c *Coordinator) describeGroup(id string) kmsg.DescribeGroupsResponseGroup {
	out := kmsg.NewDescribeGroupsResponseGroup()
	out.Group = id
	out.AuthorizedOperations = -2147483648
	g, code := c.lookup(id, false)
	if code != 0 {
		out.ErrorCode = code
		return out
	}
	out.State = Dead.String()
	if g == nil {
		return out
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if code := lockedCode(g); code != 0 {
		out.ErrorCode = code
		return out
	}
	out.State = g.state.String()
	out.ProtocolType = g.protocolType
	if g.state == Stable {
		out.Protocol = g.protocol
	}
	if g.state == Dead {
		return out
	}
	for _, m := range g.sortedMembersLocked() {
		dm := kmsg.DescribeGroupsResponseGroupMember{MemberID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID,
			ClientHost: m.ClientHost, ProtocolMetadata: []byte{}, MemberAssignment: []byte{}}
		if g.state == Stable {
			dm.ProtocolMetadata = m.metadataFor(g.protocol)
			dm.MemberAssignment = m.Assignment
		}
		out.Members = append(out.Members, dm)
	}
	return out
}

// GroupOverview is one ListGroups entry.
type GroupOverview struct {
	Group        string
	ProtocolType string
	State        State
}

// ListGroups handles ListGroups v0-v4: the groups of loaded partitions,
// filtered by state names (case-insensitive) when given. While a partition
// loads the error is COORDINATOR_LOAD_IN_PROGRESS with the groups known so
// far.
func (c *Coordinator) ListGroups(_ context.Context, req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	var states []State
	for _, s := range req.StatesFilter {
		if st, ok := ParseState(s); ok {
			states = append(states, st)
		} else {
			states = append(states, State(-1)) // matches nothing, as an unknown name in Kafka
		}
	}
	code, groups := c.Groups(states)
	resp.ErrorCode = code
	for _, o := range groups {
		resp.Groups = append(resp.Groups, kmsg.ListGroupsResponseGroup{Group: o.Group, ProtocolType: o.ProtocolType,
			GroupState: o.State.String()})
	}
	return resp
}

// Groups lists the loaded groups in the given states (all when empty),
// sorted by id, with COORDINATOR_LOAD_IN_PROGRESS while any partition loads.
func (c *Coordinator) Groups(states []State) (int16, []GroupOverview) {
	c.mu.Lock()
	var code int16
	if c.closed {
		code = kerr.CoordinatorNotAvailable.Code
	}
	for _, o := range c.owned {
		if o.state == partitionLoading {
			code = kerr.CoordinatorLoadInProgress.Code
		}
	}
	gs := make([]*Group, 0, len(c.groups))
	for _, g := range c.groups {
		gs = append(gs, g)
	}
	c.mu.Unlock()
	var out []GroupOverview
	for _, g := range gs {
		g.mu.Lock()
		o := GroupOverview{Group: g.id, ProtocolType: g.protocolType, State: g.state}
		gone := g.unloaded || g.state == Dead
		g.mu.Unlock()
		if gone {
			continue
		}
		match := len(states) == 0
		for _, s := range states {
			if s == o.State {
				match = true
			}
		}
		if match {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return code, out
}

// DeleteGroups handles DeleteGroups v0-v2: Empty groups are removed with
// their offsets (tombstones); others answer NON_EMPTY_GROUP.
func (c *Coordinator) DeleteGroups(_ context.Context, req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		resp.Groups = append(resp.Groups, kmsg.DeleteGroupsResponseGroup{Group: id, ErrorCode: c.deleteGroup(id)})
	}
	return resp
}

func (c *Coordinator) deleteGroup(id string) int16 {
	g, code := c.lockGroup(id, false, kerr.GroupIDNotFound.Code)
	if code != 0 {
		return code
	}
	switch g.state {
	case Dead:
		g.mu.Unlock()
		return kerr.GroupIDNotFound.Code
	case Empty:
	default:
		g.mu.Unlock()
		return kerr.NonEmptyGroup.Code
	}
	now := c.clock.Now()
	if err := g.transitionLocked(Dead, now); err != nil {
		g.mu.Unlock()
		c.log.Error("illegal group state transition", "group", id, "err", err)
		return kerr.UnknownServerError.Code
	}
	c.shutdownGroupLocked(g, kerr.CoordinatorNotAvailable.Code)
	recs := make([]record.Record, 0, len(g.offsets)+1)
	for tp := range g.offsets {
		recs = append(recs, offsetTombstone(id, tp))
	}
	sortByKey(recs)
	recs = append(recs, record.Record{Key: EncodeGroupKey(id)})
	for tp := range g.offsets {
		g.deleteOffsetLocked(tp)
	}
	g.mu.Unlock()
	c.removeGroup(g)
	// Kafka drops the group from the cache before the tombstones are
	// written and reports success regardless of the write. The write
	// goes after any commit of the group still waiting for its turn.
	g.mu.Lock()
	if err := c.writeLocked(g, buildBatch(now, recs)); err != nil {
		c.log.Warn("failed to write group tombstones", "group", id, "err", err)
	}
	g.mu.Unlock()
	c.log.Info("group deleted", "group", id, "offsets", len(recs)-1)
	return 0
}
