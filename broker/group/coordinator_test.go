package group

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"

	"github.com/klassik/klassik/broker/common/jvm"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestPartitionForVectors(t *testing.T) {
	// Group ids with their Java String.hashCode and partition among 50
	// (abs(hashCode) mod offsets.topic.num.partitions, MinInt32 counting
	// as 0, as Kafka computes it).
	for _, tc := range []struct {
		group string
		hash  int32
		part  int32
	}{
		{"my-group", -1906497762, 12},
		{"g1", 3242, 42},
		{"test", 3556498, 48},
		{"console-consumer-12345", 158455506, 6},
		{"polygenelubricants", -2147483648, 0},
	} {
		if h := jvm.StringHashCode(tc.group); h != tc.hash {
			t.Errorf("hashCode(%q) = %d, want %d", tc.group, h, tc.hash)
		}
		if p := PartitionFor(tc.group, 50); p != tc.part {
			t.Errorf("PartitionFor(%q) = %d, want %d", tc.group, p, tc.part)
		}
	}
	// UTF-16 code units: é is one unit 0xE9; U+1F600 is two surrogates.
	if h := jvm.StringHashCode("é"); h != 0xE9 {
		t.Errorf("hashCode(é) = %d", h)
	}
	if h := jvm.StringHashCode("\U0001F600"); h != 31*0xD83D+0xDE00 {
		t.Errorf("hashCode(emoji) = %d", h)
	}
}

func TestStateTransitionTable(t *testing.T) {
	all := []State{Empty, PreparingRebalance, CompletingRebalance, Stable, Dead}
	legal := map[[2]State]bool{
		{Empty, PreparingRebalance}: true, {Stable, PreparingRebalance}: true, {CompletingRebalance, PreparingRebalance}: true,
		{PreparingRebalance, CompletingRebalance}: true, {CompletingRebalance, Stable}: true, {PreparingRebalance, Empty}: true,
		{Empty, Dead}: true, {PreparingRebalance, Dead}: true, {CompletingRebalance, Dead}: true, {Stable, Dead}: true, {Dead, Dead}: true,
	}
	for _, from := range all {
		for _, to := range all {
			if got := CanTransition(from, to); got != legal[[2]State{from, to}] {
				t.Errorf("%v -> %v: %v", from, to, got)
			}
			g := newGroup("g", 0, t0)
			g.state = from
			err := g.transitionLocked(to, t0)
			if (err == nil) != legal[[2]State{from, to}] {
				t.Errorf("transition %v -> %v: err %v", from, to, err)
			}
			if err != nil && g.state != from {
				t.Errorf("illegal transition changed the state to %v", g.state)
			}
		}
	}
	for _, s := range all {
		if p, ok := ParseState(strings.ToLower(s.String())); !ok || p != s {
			t.Errorf("ParseState(%v) = %v %v", s, p, ok)
		}
	}
}

func TestSelectProtocolByVote(t *testing.T) {
	g := newGroup("g", 0, t0)
	add := func(id string, names ...string) {
		m := &Member{ID: id}
		for _, n := range names {
			m.Protocols = append(m.Protocols, Protocol{Name: n})
		}
		g.joinSeq++
		m.joinSeq = g.joinSeq
		g.members[id] = m
	}
	add("a", "range", "roundrobin", "sticky")
	add("b", "roundrobin", "range")
	add("c", "roundrobin", "range", "sticky")
	if p := g.selectProtocolLocked(); p != "roundrobin" {
		t.Errorf("selected %q, want roundrobin (2 votes of 3)", p)
	}
}

func TestJoinGroupValidation(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSize = 1
	h := newHarness(t, cfg)
	bad := joinReq(5, "v", "", nil, "t")
	bad.SessionTimeoutMillis = 5999
	wantCode(t, "session below min", h.join(bad).ErrorCode, kerr.InvalidSessionTimeout)
	bad = joinReq(5, "v", "", nil, "t")
	bad.SessionTimeoutMillis = 1800001
	wantCode(t, "session above max", h.join(bad).ErrorCode, kerr.InvalidSessionTimeout)
	wantCode(t, "empty group id", h.join(joinReq(5, "", "", nil)).ErrorCode, kerr.InvalidGroupID)
	wantCode(t, "member id for missing group", h.join(joinReq(5, "nogroup", "x-1", nil)).ErrorCode, kerr.UnknownMemberID)
	bad = joinReq(5, "v", "", nil, "t")
	bad.Protocols = nil
	wantCode(t, "no protocols", h.join(bad).ErrorCode, kerr.InconsistentGroupProtocol)

	// v0-v3 joins directly; the group is then full (group.max.size=1).
	j := h.joinAsync(joinReq(3, "v", "", nil, "t"))
	h.waitParkedJoins("v", 1)
	other := joinReq(3, "v", "", nil, "t")
	other.ProtocolType = "connect"
	wantCode(t, "other protocol type", h.join(other).ErrorCode, kerr.InconsistentGroupProtocol)
	other = joinReq(3, "v", "", nil, "t")
	other.Protocols[0].Name = "sticky"
	wantCode(t, "no common protocol", h.join(other).ErrorCode, kerr.InconsistentGroupProtocol)
	wantCode(t, "group full", h.join(joinReq(3, "v", "", nil, "t")).ErrorCode, kerr.GroupMaxSizeReached)
	h.clock.Advance(3 * time.Second)
	r := recv(t, j)
	wantCode(t, "v3 join", r.ErrorCode, nil)
	if r.LeaderID != r.MemberID || len(r.Members) != 1 || r.Generation != 1 || *r.Protocol != "range" {
		t.Fatalf("single member join: %+v", r)
	}
	if !strings.HasPrefix(r.MemberID, "c-") || len(r.MemberID) != len("c-")+36 {
		t.Errorf("member id %q is not clientId-UUID", r.MemberID)
	}
}

// "two members join -> one leader, both get assignments".
func TestTwoMembersJoinAndSync(t *testing.T) {
	h := newHarness(t, testConfig())
	leader, follower := h.stableGroup("g")
	if h.state("g") != Stable {
		t.Fatalf("state %v", h.state("g"))
	}
	d := h.c.DescribeGroups(context.Background(), &kmsg.DescribeGroupsRequest{Version: 4, Groups: []string{"g"}}).Groups[0]
	if d.State != "Stable" || d.Protocol != "range" || d.ProtocolType != "consumer" || len(d.Members) != 2 {
		t.Fatalf("describe: %+v", d)
	}
	got := map[string][]byte{}
	for _, m := range d.Members {
		got[m.MemberID] = m.MemberAssignment
	}
	if !bytes.Equal(got[leader], assignment("t", 0)) || !bytes.Equal(got[follower], assignment("t", 1)) {
		t.Errorf("assignments %x", got)
	}
	// Stable: a sync answers the member's own assignment right away.
	s := recv(t, h.syncAsync("g", follower, 1, nil))
	if !bytes.Equal(s.MemberAssignment, assignment("t", 1)) {
		t.Errorf("follower re-sync got %x", s.MemberAssignment)
	}
	wantCode(t, "heartbeat", h.heartbeat("g", leader, 1, nil), nil)
	wantCode(t, "old generation", h.heartbeat("g", leader, 0, nil), kerr.IllegalGeneration)
	wantCode(t, "unknown member", h.heartbeat("g", "nobody", 1, nil), kerr.UnknownMemberID)
	wantCode(t, "sync wrong generation", recv(t, h.syncAsync("g", leader, 7, nil)).ErrorCode, kerr.IllegalGeneration)
	// The group record was persisted with both assignments.
	found := false
	h.readRecords(h.c.PartitionFor("g"), func(k, v []byte) {
		if key, _ := DecodeKey(k); key.Group != nil && v != nil {
			gv, err := DecodeGroupValue(v)
			if err != nil {
				t.Fatal(err)
			}
			found = gv.Generation == 1 && len(gv.Members) == 2 && *gv.Leader == leader
		}
	})
	if !found {
		t.Error("group metadata record for generation 1 not written")
	}
}

// "a third joins -> rebalance, generation increments".
func TestThirdMemberTriggersRebalance(t *testing.T) {
	h := newHarness(t, testConfig())
	leader, follower := h.stableGroup("g")
	j3 := h.joinAsync(joinReq(3, "g", "", nil, "t"))
	h.waitParkedJoins("g", 1)
	if h.state("g") != PreparingRebalance {
		t.Fatalf("state %v after a new member", h.state("g"))
	}
	wantCode(t, "leader heartbeat", h.heartbeat("g", leader, 1, nil), kerr.RebalanceInProgress)
	wantCode(t, "commit during PreparingRebalance", h.commit("g", leader, 1, "t", 0, 5, ""), nil)
	j1 := h.joinAsync(joinReq(5, "g", leader, nil, "t"))
	h.waitParkedJoins("g", 2)
	noResponse(t, j3)
	// The last member to rejoin completes the join without any delay.
	j2 := h.joinAsync(joinReq(5, "g", follower, nil, "t"))
	r1, r2, r3 := recv(t, j1), recv(t, j2), recv(t, j3)
	for _, r := range []*kmsg.JoinGroupResponse{r1, r2, r3} {
		wantCode(t, "rejoin", r.ErrorCode, nil)
		if r.Generation != 2 || r.LeaderID != leader {
			t.Fatalf("rejoin response %+v", r)
		}
	}
	if len(r1.Members) != 3 || len(r2.Members) != 0 {
		t.Errorf("leader got %d members, follower %d", len(r1.Members), len(r2.Members))
	}
	if h.state("g") != CompletingRebalance {
		t.Fatalf("state %v", h.state("g"))
	}
	wantCode(t, "commit in CompletingRebalance", h.commit("g", leader, 2, "t", 0, 6, ""), kerr.RebalanceInProgress)
	wantCode(t, "commit with old generation", h.commit("g", leader, 1, "t", 0, 6, ""), kerr.IllegalGeneration)
}

// "a member stops heartbeating -> removed after session timeout and the
// others rebalance".
func TestSessionTimeoutRemovesMember(t *testing.T) {
	h := newHarness(t, testConfig())
	leader, follower := h.stableGroup("g")
	h.clock.Advance(6 * time.Second)
	wantCode(t, "leader heartbeat", h.heartbeat("g", leader, 1, nil), nil)
	h.clock.Advance(5 * time.Second) // follower silent for 11s > 10s
	if h.state("g") != PreparingRebalance {
		t.Fatalf("state %v after the follower's session expired", h.state("g"))
	}
	wantCode(t, "expired follower", h.heartbeat("g", follower, 1, nil), kerr.UnknownMemberID)
	wantCode(t, "leader told to rejoin", h.heartbeat("g", leader, 1, nil), kerr.RebalanceInProgress)
	r := h.join(joinReq(5, "g", leader, nil, "t"))
	wantCode(t, "rejoin", r.ErrorCode, nil)
	if r.Generation != 2 || len(r.Members) != 1 {
		t.Fatalf("rejoin %+v", r)
	}
	// The leader never syncs: after the rebalance timeout it is removed
	// too and the group ends Empty at generation 3.
	h.clock.Advance(30 * time.Second)
	h.waitFor("empty group", func() bool { return h.state("g") == Empty })
	if gen := h.generation("g"); gen != 3 {
		t.Errorf("generation %d, want 3", gen)
	}
}

// A join parked in PreparingRebalance is released when the members that
// did not rejoin are dropped at the rebalance timeout.
func TestRebalanceTimeoutDropsSilentMembers(t *testing.T) {
	h := newHarness(t, testConfig())
	leader, follower := h.stableGroup("g")
	j := h.joinAsync(joinReq(5, "g", leader, nil, "t", "u")) // changed subscription
	h.waitParkedJoins("g", 1)
	h.clock.Advance(9 * time.Second)
	wantCode(t, "follower heartbeat", h.heartbeat("g", follower, 1, nil), kerr.RebalanceInProgress)
	noResponse(t, j)
	h.clock.Advance(21 * time.Second)
	r := recv(t, j)
	wantCode(t, "join", r.ErrorCode, nil)
	if r.Generation != 2 || len(r.Members) != 1 {
		t.Fatalf("join after timeout %+v", r)
	}
	wantCode(t, "dropped follower", h.heartbeat("g", follower, 2, nil), kerr.UnknownMemberID)
}

// "static member rejoin with same instance id keeps its assignment and a
// duplicate instance id is FENCED".
func TestStaticMembership(t *testing.T) {
	h := newHarness(t, testConfig())
	i1, i2 := "instance-1", "instance-2"
	j1 := h.joinAsync(joinReq(5, "s", "", &i1, "t"))
	h.waitParkedJoins("s", 1)
	j2 := h.joinAsync(joinReq(5, "s", "", &i2, "t"))
	h.waitParkedJoins("s", 2)
	h.clock.Advance(6 * time.Second)
	r1, r2 := recv(t, j1), recv(t, j2)
	wantCode(t, "static join", r1.ErrorCode, nil)
	if len(r1.Members) != 2 || r1.Members[0].InstanceID == nil || *r1.Members[0].InstanceID != i1 {
		t.Fatalf("leader members %+v", r1.Members)
	}
	s2 := h.syncAsync("s", r2.MemberID, 1, nil)
	h.waitParkedSyncs("s", 1)
	recv(t, h.syncAsync("s", r1.MemberID, 1, map[string][]byte{r1.MemberID: assignment("t", 0), r2.MemberID: assignment("t", 1)}))
	recv(t, s2)

	// instance-2 restarts: same instance id, unknown member id.
	r := h.join(joinReq(5, "s", "", &i2, "t"))
	wantCode(t, "static rejoin", r.ErrorCode, nil)
	if r.MemberID == r2.MemberID || r.Generation != 1 || len(r.Members) != 0 {
		t.Fatalf("static rejoin %+v", r)
	}
	if h.state("s") != Stable {
		t.Fatalf("static rejoin caused a rebalance: %v", h.state("s"))
	}
	s := recv(t, h.syncAsync("s", r.MemberID, 1, nil))
	if !bytes.Equal(s.MemberAssignment, assignment("t", 1)) {
		t.Errorf("static member lost its assignment: %x", s.MemberAssignment)
	}
	// The old incarnation is fenced.
	wantCode(t, "old id heartbeat", h.heartbeat("s", r2.MemberID, 1, &i2), kerr.FencedInstanceID)
	wantCode(t, "old id commit", h.commitStatic("s", r2.MemberID, &i2), kerr.FencedInstanceID)
	old := joinReq(5, "s", r2.MemberID, &i2, "t")
	wantCode(t, "old id join", h.join(old).ErrorCode, kerr.FencedInstanceID)
	wantCode(t, "new id heartbeat", h.heartbeat("s", r.MemberID, 1, &i2), nil)

	// LeaveGroup v3 by instance id alone (admin removal) and an unknown one.
	lr := h.c.LeaveGroup(context.Background(), &kmsg.LeaveGroupRequest{Version: 3, Group: "s",
		Members: []kmsg.LeaveGroupRequestMember{{InstanceID: &i2}, {MemberID: "ghost"}}})
	if lr.ErrorCode != 0 || lr.Members[0].ErrorCode != 0 || lr.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("leave %+v", lr)
	}
	if h.state("s") != PreparingRebalance {
		t.Errorf("state after leave %v", h.state("s"))
	}
}

func (h *harness) commitStatic(group, member string, instance *string) int16 {
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Version = 7
	r.Group, r.MemberID, r.Generation, r.InstanceID = group, member, 1, instance
	r.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Offset: 1}}}}
	return h.c.OffsetCommit(context.Background(), r).Topics[0].Partitions[0].ErrorCode
}

func TestLeaveGroupV0AndPendingMember(t *testing.T) {
	h := newHarness(t, testConfig())
	leader, follower := h.stableGroup("g")
	lr := h.c.LeaveGroup(context.Background(), &kmsg.LeaveGroupRequest{Version: 1, Group: "g", MemberID: follower})
	wantCode(t, "leave v1", lr.ErrorCode, nil)
	lr = h.c.LeaveGroup(context.Background(), &kmsg.LeaveGroupRequest{Version: 1, Group: "g", MemberID: follower})
	wantCode(t, "leave again", lr.ErrorCode, kerr.UnknownMemberID)
	lr = h.c.LeaveGroup(context.Background(), &kmsg.LeaveGroupRequest{Version: 1, Group: "nogroup", MemberID: "x"})
	wantCode(t, "leave missing group", lr.ErrorCode, kerr.UnknownMemberID)
	// The leader is the only one left; its rejoin completes generation 2.
	r := h.join(joinReq(5, "g", leader, nil, "t"))
	if r.ErrorCode != 0 || r.Generation != 2 || len(r.Members) != 1 {
		t.Fatalf("rejoin %+v", r)
	}
	// A pending (MEMBER_ID_REQUIRED) member expires after its session.
	p := h.join(joinReq(5, "g", "", nil, "t"))
	wantCode(t, "new member", p.ErrorCode, kerr.MemberIDRequired)
	h.clock.Advance(11 * time.Second) // leader's session also ends: no heartbeat
	wantCode(t, "expired pending member", h.join(joinReq(5, "g", p.MemberID, nil, "t")).ErrorCode, kerr.UnknownMemberID)
}

func TestOffsetCommitFetchRoundTrip(t *testing.T) {
	cfg := testConfig()
	cfg.OffsetMetadataMaxBytes = 8
	h := newHarness(t, cfg)
	leader, _ := h.stableGroup("g")
	wantCode(t, "commit", h.commit("g", leader, 1, "t", 0, 42, "meta"), nil)
	off, meta, code := h.fetch("g", "t", 0)
	if off != 42 || meta != "meta" || code != 0 {
		t.Fatalf("fetch %d %q %s", off, meta, errName(code))
	}
	off, _, code = h.fetch("g", "t", 1)
	if off != -1 || code != 0 {
		t.Fatalf("uncommitted partition %d %s", off, errName(code))
	}
	wantCode(t, "wrong generation", h.commit("g", leader, 2, "t", 0, 43, ""), kerr.IllegalGeneration)
	wantCode(t, "unknown member", h.commit("g", "nobody", 1, "t", 0, 43, ""), kerr.UnknownMemberID)
	wantCode(t, "simple commit on a live group", h.commit("g", "", -1, "t", 0, 43, ""), kerr.UnknownMemberID)
	wantCode(t, "metadata too large", h.commit("g", leader, 1, "t", 0, 44, "123456789"), kerr.OffsetMetadataTooLarge)
	if off, _, _ := h.fetch("g", "t", 0); off != 42 {
		t.Errorf("offset changed by failed commits: %d", off)
	}
	// Simple consumer: generation -1, no member, group created Empty.
	wantCode(t, "simple commit", h.commit("simple", "", -1, "x", 3, 7, ""), nil)
	wantCode(t, "commit to missing group with a generation", h.commit("missing", "m", 1, "x", 3, 7, ""), kerr.IllegalGeneration)
	// v2+ with topics null fetches everything; v8 batches groups.
	all := h.c.OffsetFetch(context.Background(), &kmsg.OffsetFetchRequest{Version: 7, Group: "g"})
	if len(all.Topics) != 1 || all.Topics[0].Partitions[0].Offset != 42 || all.Topics[0].Partitions[0].LeaderEpoch != 4 {
		t.Fatalf("fetch all %+v", all)
	}
	v8 := h.c.OffsetFetch(context.Background(), &kmsg.OffsetFetchRequest{Version: 8, RequireStable: true, Groups: []kmsg.OffsetFetchRequestGroup{
		{Group: "simple"}, {Group: "g", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t", Partitions: []int32{0}}}}, {Group: "none"}}})
	if len(v8.Groups) != 3 || v8.Groups[0].Topics[0].Partitions[0].Offset != 7 || v8.Groups[1].Topics[0].Partitions[0].Offset != 42 ||
		v8.Groups[2].ErrorCode != 0 || len(v8.Groups[2].Topics) != 0 {
		t.Fatalf("fetch v8 %+v", v8)
	}
	// Failed appends are not applied and map to coordinator errors.
	h.store.FailAppends(kerr.NotLeaderForPartition)
	wantCode(t, "append failure", h.commit("g", leader, 1, "t", 0, 50, ""), kerr.NotCoordinator)
	h.store.FailAppends(nil)
	if off, _, _ := h.fetch("g", "t", 0); off != 42 {
		t.Errorf("failed append applied: %d", off)
	}
}

func TestOffsetCommitV2RetentionWritesValueV1(t *testing.T) {
	h := newHarness(t, testConfig())
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Version = 2
	r.Group, r.Generation, r.RetentionTimeMillis = "old", -1, 60000
	r.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Offset: 9}}}}
	wantCode(t, "commit v2", h.c.OffsetCommit(context.Background(), r).Topics[0].Partitions[0].ErrorCode, nil)
	var vals []OffsetValue
	h.readRecords(h.c.PartitionFor("old"), func(k, v []byte) {
		if key, _ := DecodeKey(k); key.Offset != nil && v != nil {
			ov, err := DecodeOffsetValue(v)
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, ov)
		}
	})
	if len(vals) != 1 || vals[0].Version != 1 || vals[0].ExpireTimestamp != t0.UnixMilli()+60000 {
		t.Fatalf("values %+v", vals)
	}
	// The explicit expire timestamp wins over offsets.retention.minutes.
	h.clock.Advance(61 * time.Second)
	if n := h.c.ExpireOffsets(); n != 1 {
		t.Errorf("expired %d offsets, want 1", n)
	}
}

func TestOffsetDelete(t *testing.T) {
	h := newHarness(t, testConfig())
	leader, _ := h.stableGroup("g")
	wantCode(t, "commit t", h.commit("g", leader, 1, "t", 0, 1, ""), nil)
	wantCode(t, "commit other", h.commit("g", leader, 1, "other", 0, 1, ""), nil)
	resp := h.c.OffsetDelete(context.Background(), &kmsg.OffsetDeleteRequest{Group: "g", Topics: []kmsg.OffsetDeleteRequestTopic{
		{Topic: "t", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}},
		{Topic: "other", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}})
	if resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].ErrorCode != kerr.GroupSubscribedToTopic.Code || resp.Topics[1].Partitions[0].ErrorCode != 0 {
		t.Fatalf("offset delete %+v", resp)
	}
	if off, _, _ := h.fetch("g", "other", 0); off != -1 {
		t.Errorf("deleted offset still there: %d", off)
	}
	if off, _, _ := h.fetch("g", "t", 0); off != 1 {
		t.Errorf("subscribed offset deleted: %d", off)
	}
	resp = h.c.OffsetDelete(context.Background(), &kmsg.OffsetDeleteRequest{Group: "nope"})
	wantCode(t, "missing group", resp.ErrorCode, kerr.GroupIDNotFound)
}

func TestDeleteGroupsAndListGroups(t *testing.T) {
	h := newHarness(t, testConfig())
	leader, follower := h.stableGroup("busy")
	wantCode(t, "simple commit", h.commit("simple", "", -1, "x", 0, 1, ""), nil)
	j := h.joinAsync(joinReq(3, "joining", "", nil, "t"))
	h.waitParkedJoins("joining", 1)

	list := func(states ...string) []string {
		resp := h.c.ListGroups(context.Background(), &kmsg.ListGroupsRequest{Version: 4, StatesFilter: states})
		var out []string
		for _, g := range resp.Groups {
			out = append(out, g.Group+"/"+g.GroupState)
		}
		return out
	}
	if got := strings.Join(list(), " "); got != "busy/Stable joining/PreparingRebalance simple/Empty" {
		t.Errorf("list all: %s", got)
	}
	if got := strings.Join(list("stable", "Empty"), " "); got != "busy/Stable simple/Empty" {
		t.Errorf("list filtered: %s", got)
	}
	if got := list("Dead"); len(got) != 0 {
		t.Errorf("list Dead: %v", got)
	}

	resp := h.c.DeleteGroups(context.Background(), &kmsg.DeleteGroupsRequest{Version: 2, Groups: []string{"busy", "simple", "missing"}})
	wantCode(t, "busy", resp.Groups[0].ErrorCode, kerr.NonEmptyGroup)
	wantCode(t, "simple", resp.Groups[1].ErrorCode, nil)
	wantCode(t, "missing", resp.Groups[2].ErrorCode, kerr.GroupIDNotFound)
	if off, _, _ := h.fetch("simple", "x", 0); off != -1 {
		t.Errorf("offsets survived the group: %d", off)
	}
	d := h.c.DescribeGroups(context.Background(), &kmsg.DescribeGroupsRequest{Groups: []string{"simple"}}).Groups[0]
	if d.State != "Dead" || d.ErrorCode != 0 {
		t.Errorf("describe deleted group %+v", d)
	}
	// Tombstones for the offset and the group were written.
	var tombstones []string
	h.readRecords(h.c.PartitionFor("simple"), func(k, v []byte) {
		if v == nil {
			s, _ := DescribeRecord(k, v)
			tombstones = append(tombstones, s)
		}
	})
	want := []string{"key: offset_commit::group=simple,partition=x-0 payload: <DELETE>", "key: group_metadata::group=simple payload: <DELETE>"}
	if strings.Join(tombstones, "\n") != strings.Join(want, "\n") {
		t.Errorf("tombstones:\n%s", strings.Join(tombstones, "\n"))
	}
	// Members leave: busy becomes Empty (after its rebalance) and deletable.
	for _, m := range []string{leader, follower} {
		h.c.LeaveGroup(context.Background(), &kmsg.LeaveGroupRequest{Version: 1, Group: "busy", MemberID: m})
	}
	if h.state("busy") != Empty {
		t.Fatalf("busy is %v", h.state("busy"))
	}
	resp = h.c.DeleteGroups(context.Background(), &kmsg.DeleteGroupsRequest{Groups: []string{"busy"}})
	wantCode(t, "busy after leaving", resp.Groups[0].ErrorCode, nil)
	h.clock.Advance(3 * time.Second)
	recv(t, j)
}

func TestOffsetExpiry(t *testing.T) {
	cfg := testConfig()
	cfg.OffsetsRetention = 10 * time.Minute
	cfg.OffsetsRetentionCheckInterval = time.Minute
	h := newHarness(t, cfg)
	wantCode(t, "simple commit", h.commit("simple", "", -1, "x", 0, 1, ""), nil)
	leader, follower := h.stableGroup("g")
	wantCode(t, "member commit", h.commit("g", leader, 1, "t", 0, 5, ""), nil)
	wantCode(t, "unsubscribed topic commit", h.commit("g", leader, 1, "gone", 0, 5, ""), nil)
	// Keep g's members alive across the retention period.
	for i := 0; i < 11*12; i++ {
		h.clock.Advance(5 * time.Second)
		h.heartbeat("g", leader, 1, nil)
		h.heartbeat("g", follower, 1, nil)
	}
	if off, _, _ := h.fetch("simple", "x", 0); off != -1 {
		t.Errorf("simple consumer offset did not expire: %d", off)
	}
	h.waitFor("simple group removed", func() bool { return h.group("simple") == nil })
	if off, _, _ := h.fetch("g", "t", 0); off != 5 {
		t.Errorf("subscribed offset of a Stable group expired")
	}
	if off, _, _ := h.fetch("g", "gone", 0); off != -1 {
		t.Errorf("offset of an unsubscribed topic did not expire")
	}
	// Empty consumer group: offsets expire retention after it became Empty.
	for _, m := range []string{leader, follower} {
		h.c.LeaveGroup(context.Background(), &kmsg.LeaveGroupRequest{Version: 1, Group: "g", MemberID: m})
	}
	h.clock.Advance(9 * time.Minute)
	if off, _, _ := h.fetch("g", "t", 0); off != 5 {
		t.Errorf("offset of an Empty group expired early")
	}
	h.clock.Advance(2 * time.Minute)
	if off, _, _ := h.fetch("g", "t", 0); off != -1 {
		t.Errorf("offset of an Empty group did not expire")
	}
	h.waitFor("tombstones written", func() bool {
		n := 0
		h.readRecords(h.c.PartitionFor("g"), func(k, v []byte) {
			if key, _ := DecodeKey(k); key.Group != nil && v == nil {
				n++
			}
		})
		return n == 1
	})
}

func (h *harness) readRecords(partition int32, fn func(k, v []byte)) {
	h.t.Helper()
	if err := readAll(h.store, partition, fn); err != nil {
		h.t.Fatal(err)
	}
}

func TestNotCoordinatorAndResign(t *testing.T) {
	h := newHarness(t, testConfig())
	leader, _ := h.stableGroup("g")
	p := h.c.PartitionFor("g")
	j := h.joinAsync(joinReq(5, "g", leader, nil, "t", "u"))
	h.waitParkedJoins("g", 1)
	h.c.OnResign(p)
	wantCode(t, "parked join on resign", recv(t, j).ErrorCode, kerr.NotCoordinator)
	wantCode(t, "heartbeat", h.heartbeat("g", leader, 1, nil), kerr.NotCoordinator)
	wantCode(t, "join", h.join(joinReq(5, "g", "", nil, "t")).ErrorCode, kerr.NotCoordinator)
	_, _, code := h.fetch("g", "t", 0)
	wantCode(t, "fetch", code, kerr.NotCoordinator)
	d := h.c.DescribeGroups(context.Background(), &kmsg.DescribeGroupsRequest{Groups: []string{"g"}}).Groups[0]
	wantCode(t, "describe", d.ErrorCode, kerr.NotCoordinator)
}

// A failed write of the leader's assignment answers every parked sync
// with the mapped error and starts a new rebalance.
func TestSyncPersistFailure(t *testing.T) {
	h := newHarness(t, testConfig())
	leader, follower := h.stableGroup("g")
	j1 := h.joinAsync(joinReq(5, "g", leader, nil, "t"))
	h.waitParkedJoins("g", 1)
	j2 := h.joinAsync(joinReq(5, "g", follower, nil, "t"))
	if r := recv(t, j1); r.Generation != 2 {
		t.Fatalf("rejoin %+v", r)
	}
	recv(t, j2)
	h.store.FailAppends(kerr.NotEnoughReplicas)
	s2 := h.syncAsync("g", follower, 2, nil)
	h.waitParkedSyncs("g", 1)
	s1 := h.syncAsync("g", leader, 2, map[string][]byte{leader: assignment("t", 0)})
	wantCode(t, "leader", recv(t, s1).ErrorCode, kerr.CoordinatorNotAvailable)
	wantCode(t, "follower", recv(t, s2).ErrorCode, kerr.CoordinatorNotAvailable)
	if h.state("g") != PreparingRebalance {
		t.Errorf("state %v", h.state("g"))
	}
}

func TestOnTopicsDeleted(t *testing.T) {
	h := newHarness(t, testConfig())
	wantCode(t, "commit", h.commit("a", "", -1, "gone", 0, 1, ""), nil)
	wantCode(t, "commit", h.commit("a", "", -1, "kept", 0, 2, ""), nil)
	wantCode(t, "commit", h.commit("b", "", -1, "gone", 3, 1, ""), nil)
	if n := h.c.OnTopicsDeleted([]string{"gone"}); n != 2 {
		t.Fatalf("removed %d", n)
	}
	if off, _, _ := h.fetch("a", "gone", 0); off != -1 {
		t.Error("offset of deleted topic kept")
	}
	if off, _, _ := h.fetch("a", "kept", 0); off != 2 {
		t.Error("offset of another topic removed")
	}
}

func TestOffsetFetchV1ErrorsPerPartition(t *testing.T) {
	h := newHarness(t, testConfig())
	h.c.OnResign(h.c.PartitionFor("g"))
	resp := h.c.OffsetFetch(context.Background(), &kmsg.OffsetFetchRequest{Version: 1, Group: "g",
		Topics: []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}})
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 || resp.Topics[0].Partitions[1].ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("v1 %+v", resp)
	}
	resp = h.c.OffsetFetch(context.Background(), &kmsg.OffsetFetchRequest{Version: 8, Groups: []kmsg.OffsetFetchRequestGroup{{Group: "g"}}})
	if resp.Groups[0].ErrorCode != kerr.NotCoordinator.Code || len(resp.Groups[0].Topics) != 0 {
		t.Fatalf("v8 %+v", resp)
	}
}

// JoinGroup v0 has no rebalance timeout: the session timeout bounds the
// rebalance.
func TestJoinV0UsesSessionTimeoutAsRebalanceTimeout(t *testing.T) {
	cfg := testConfig()
	cfg.InitialRebalanceDelay = 0
	h := newHarness(t, cfg)
	req := joinReq(0, "g0", "", nil, "t")
	r := h.join(req)
	wantCode(t, "v0 join", r.ErrorCode, nil)
	g := h.group("g0")
	g.mu.Lock()
	rt := g.members[r.MemberID].RebalanceTimeout
	g.mu.Unlock()
	if rt != 10*time.Second {
		t.Errorf("rebalance timeout %v", rt)
	}
}

// Members racing through join, sync, heartbeat and commit on the real
// clock converge on one generation in which every member holds its own
// assignment. Run with -race it checks the group lock discipline.
func TestConcurrentMembersConverge(t *testing.T) {
	cfg := testConfig()
	cfg.InitialRebalanceDelay = 20 * time.Millisecond
	store := NewMemStore()
	c, err := New(cfg, store, purgatory.RealClock(), quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	h := &harness{t: t, c: c, store: store}
	for p := int32(0); p < cfg.OffsetsTopicPartitions; p++ {
		c.OnBecomeLeader(p)
		h.waitLoaded(p)
	}
	const n = 5
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	synced := map[string]int32{} // member id -> generation of its last successful sync
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := ""
			for ctx.Err() == nil {
				req := joinReq(3, "race", id, nil, "t")
				jr := c.JoinGroup(ctx, req, JoinInfo{ClientID: fmt.Sprintf("m%d", i)})
				if jr.ErrorCode == kerr.UnknownMemberID.Code {
					id = ""
					continue
				}
				if jr.ErrorCode != 0 {
					continue
				}
				id = jr.MemberID
				sr := kmsg.NewPtrSyncGroupRequest()
				sr.Group, sr.MemberID, sr.Generation = "race", id, jr.Generation
				for k, m := range jr.Members {
					sr.GroupAssignment = append(sr.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: m.MemberID, MemberAssignment: assignment("t", int32(k))})
				}
				if c.SyncGroup(ctx, sr).ErrorCode != 0 {
					continue
				}
				mu.Lock()
				synced[id] = jr.Generation
				mu.Unlock()
				for ctx.Err() == nil {
					code := c.Heartbeat(ctx, &kmsg.HeartbeatRequest{Group: "race", MemberID: id, Generation: jr.Generation}).ErrorCode
					if code != 0 {
						break
					}
					meta := ""
					cr := &kmsg.OffsetCommitRequest{Version: 7, Group: "race", MemberID: id, Generation: jr.Generation,
						Topics: []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: int32(i), Offset: 1, Metadata: &meta}}}}}
					c.OffsetCommit(ctx, cr)
					time.Sleep(2 * time.Millisecond)
				}
			}
		}()
	}
	h.waitFor("convergence", func() bool {
		g := h.group("race")
		if g == nil {
			return false
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.state != Stable || len(g.members) != n {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		seen := map[string]bool{}
		for id, m := range g.members {
			if synced[id] != g.generation || seen[string(m.Assignment)] || len(m.Assignment) == 0 {
				return false
			}
			seen[string(m.Assignment)] = true
		}
		return true
	})
	cancel()
	wg.Wait()
}

// Static members that do not rejoin in time stay in the group (Kafka's
// onCompleteJoin drops only dynamic ones); the rejoined member leads.
func TestStaticMemberSurvivesMissedRejoin(t *testing.T) {
	h := newHarness(t, testConfig())
	i1, i2 := "i1", "i2"
	j1 := h.joinAsync(joinReq(5, "s", "", &i1, "t"))
	h.waitParkedJoins("s", 1)
	j2 := h.joinAsync(joinReq(5, "s", "", &i2, "t"))
	h.waitParkedJoins("s", 2)
	h.clock.Advance(6 * time.Second)
	r1, r2 := recv(t, j1), recv(t, j2)
	s2 := h.syncAsync("s", r2.MemberID, 1, nil)
	h.waitParkedSyncs("s", 1)
	recv(t, h.syncAsync("s", r1.MemberID, 1, map[string][]byte{r1.MemberID: assignment("t", 0), r2.MemberID: assignment("t", 1)}))
	recv(t, s2)

	// i2 (the follower) changes its subscription; i1 only heartbeats.
	j := h.joinAsync(joinReq(5, "s", r2.MemberID, &i2, "t", "u"))
	h.waitParkedJoins("s", 1)
	for i := 0; i < 5; i++ {
		h.clock.Advance(5 * time.Second)
		wantCode(t, "i1 heartbeat", h.heartbeat("s", r1.MemberID, 1, &i1), kerr.RebalanceInProgress)
	}
	h.clock.Advance(5 * time.Second) // rebalance timeout (30s) reached
	r := recv(t, j)
	wantCode(t, "rejoin", r.ErrorCode, nil)
	if r.Generation != 2 || r.LeaderID != r2.MemberID || len(r.Members) != 2 {
		t.Fatalf("rejoin %+v", r)
	}
	wantCode(t, "i1 still a member", h.heartbeat("s", r1.MemberID, 2, &i1), nil)
}

// Concurrent commits of one partition: the cached offset is the one the
// log ends with, so a coordinator that reloads the partition agrees with
// the one that wrote it.
func TestConcurrentCommitsCacheMatchesLog(t *testing.T) {
	store := NewMemStore()
	h := newHarnessWith(t, testConfig(), store, purgatory.NewFakeClock(t0))
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.commit("cc", "", -1, "t", 0, int64(i), "")
		}()
	}
	wg.Wait()
	cached, _, _ := h.fetch("cc", "t", 0)
	var last int64 = -1
	h.readRecords(h.c.PartitionFor("cc"), func(k, v []byte) {
		if key, _ := DecodeKey(k); key.Offset != nil && v != nil {
			ov, _ := DecodeOffsetValue(v)
			last = ov.Offset
		}
	})
	if cached != last {
		t.Fatalf("cache has %d, log ends with %d", cached, last)
	}
	h.c.Close()
	h2 := newHarnessWith(t, testConfig(), store, purgatory.NewFakeClock(t0))
	if reloaded, _, _ := h2.fetch("cc", "t", 0); reloaded != cached {
		t.Fatalf("reloaded %d, cached %d", reloaded, cached)
	}
}

func TestEmptyGroupIDAndSyncV5Protocol(t *testing.T) {
	h := newHarness(t, testConfig())
	ctx := context.Background()
	wantCode(t, "heartbeat", h.c.Heartbeat(ctx, &kmsg.HeartbeatRequest{MemberID: "m"}).ErrorCode, kerr.InvalidGroupID)
	wantCode(t, "sync", h.c.SyncGroup(ctx, &kmsg.SyncGroupRequest{MemberID: "m"}).ErrorCode, kerr.InvalidGroupID)
	wantCode(t, "leave", h.c.LeaveGroup(ctx, &kmsg.LeaveGroupRequest{MemberID: "m"}).ErrorCode, kerr.InvalidGroupID)

	leader, _ := h.stableGroup("g")
	pt, p := "consumer", "range"
	r := h.c.SyncGroup(ctx, &kmsg.SyncGroupRequest{Version: 5, Group: "g", MemberID: leader, Generation: 1, ProtocolType: &pt, Protocol: &p})
	if r.ErrorCode != 0 || r.ProtocolType == nil || *r.ProtocolType != "consumer" || *r.Protocol != "range" {
		t.Fatalf("sync v5 %+v", r)
	}
	other := "roundrobin"
	r = h.c.SyncGroup(ctx, &kmsg.SyncGroupRequest{Version: 5, Group: "g", MemberID: leader, Generation: 1, ProtocolType: &pt, Protocol: &other})
	wantCode(t, "sync v5 other protocol", r.ErrorCode, kerr.InconsistentGroupProtocol)
}

func TestMetrics(t *testing.T) {
	h := newHarness(t, testConfig())
	r := gometrics.NewRegistry()
	h.c.RegisterMetrics(r)
	h.stableGroup("g")
	wantCode(t, "commit", h.commit("s", "", -1, "t", 0, 1, ""), nil)
	wantCode(t, "commit", h.commit("s", "", -1, "t", 1, 1, ""), nil)
	get := func(name string) int64 {
		return r.Get("kafka.coordinator.group.GroupMetadataManager." + name).(gometrics.Gauge).Value()
	}
	if get("NumGroups") != 2 || get("NumGroupsStable") != 1 || get("NumGroupsEmpty") != 1 || get("NumOffsets") != 2 {
		t.Errorf("groups %d stable %d empty %d offsets %d", get("NumGroups"), get("NumGroupsStable"), get("NumGroupsEmpty"), get("NumOffsets"))
	}
}
