package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The group and topic of the rebalance scenario.
const (
	rebGroup      = "classroom"
	rebTopic      = "reb"
	rebPartitions = 4
)

// rebalance: a consumer group lives in the coordinator as a state machine.
// Empty (no members) -> PreparingRebalance (a join or leave; the
// coordinator waits for every member to (re)join) -> CompletingRebalance
// (all joined; it waits for the leader's assignment in SyncGroup) ->
// Stable, and Dead once deleted. The members play the consumer protocol
// by hand here, so every state can be looked at while it lasts; the
// assignments are computed by franz-go's range, round-robin and sticky
// balancers, as a real group leader does.
func rebalance(s *Stage) string {
	s.Step("Start a throwaway ZooKeeper and one broker (the coordinator of every group), and create topic %s with %d partitions.", rebTopic, rebPartitions)
	b := s.StartBrokers(1, map[string]string{"offsets.topic.replication.factor": "1", "group.min.session.timeout.ms": "1000"})[0]
	s.Tool("kafka-topics.sh", "--bootstrap-server", b.Addr, "--create", "--topic", rebTopic, "--partitions", fmt.Sprint(rebPartitions), "--replication-factor", "1")
	s.waitCoordinator(b)
	seen := []string{}
	see := func(state string) {
		s.waitGroupState(b, state)
		s.Tool("kafka-consumer-groups.sh", "--bootstrap-server", b.Addr, "--describe", "--group", rebGroup, "--state")
		if !slices.Contains(seen, state) {
			seen = append(seen, state)
		}
	}
	names := &roster{ids: map[string]string{}}
	a := s.newMember(b, "A", 30*time.Second, names)
	bm := s.newMember(b, "B", 30*time.Second, names)
	c := s.newMember(b, "C", 3*time.Second, names)
	rangeOnly := []kgo.GroupBalancer{kgo.RangeBalancer()}

	s.Step("Consumer A joins group %s (JoinGroup, offering the range assignor). The group did not exist: it is created Empty and moves to PreparingRebalance; A is alone, so the join completes at once and A is the leader.", rebGroup)
	jA := s.joined(a.join(rangeOnly))
	s.Say("JoinGroup answered: generation %d, protocol %s, leader %s, members %s.", jA.Generation, *jA.Protocol, names.name(jA.LeaderID), memberNames(jA, names))
	s.Step("The coordinator now waits for the leader's SyncGroup with the assignment: the group is CompletingRebalance.")
	see("CompletingRebalance")
	s.Step("A, the leader, computes the assignment with the range assignor and sends it in SyncGroup: the group is Stable.")
	s.lead(a, jA, names)
	see("Stable")
	s.members(b)

	s.Step("Consumer B joins. The coordinator moves the group to PreparingRebalance and holds B's JoinGroup until every known member has joined again.")
	bJoin := bm.joinAsync(rangeOnly)
	see("PreparingRebalance")
	code := a.heartbeat()
	s.Say("A learns of it from its next heartbeat: %s. It joins again.", errName(code))
	if code != kerr.RebalanceInProgress.Code {
		s.Failf("A's heartbeat during the rebalance was answered %s, want REBALANCE_IN_PROGRESS", errName(code))
	}
	jA = s.joined(a.join(rangeOnly))
	s.awaitJoin(bJoin)
	s.Say("Both joins answered: generation %d, leader %s, members %s.", jA.Generation, names.name(jA.LeaderID), memberNames(jA, names))
	see("CompletingRebalance")
	s.Step("Leader A assigns with range: each member gets a contiguous run of the topic's partitions.")
	rangePlan := s.lead(a, jA, names, bm)
	see("Stable")
	s.members(b)

	both := []kgo.GroupBalancer{kgo.RoundRobinBalancer(), kgo.RangeBalancer()}
	s.Step("Consumer C joins, and this time every member offers round-robin first, range second: the coordinator picks the protocol all members support that most of them prefer.")
	cJoin := c.joinAsync(both)
	see("PreparingRebalance")
	if code := a.heartbeat(); code != kerr.RebalanceInProgress.Code {
		s.Failf("A's heartbeat during the rebalance was answered %s", errName(code))
	}
	aJoin, bJoin := a.joinAsync(both), bm.joinAsync(both)
	jA = s.awaitJoin(aJoin)
	s.awaitJoin(bJoin)
	s.awaitJoin(cJoin)
	s.Say("Generation %d, protocol %s, members %s.", jA.Generation, *jA.Protocol, memberNames(jA, names))
	s.Step("Leader A assigns with round-robin: partitions dealt out one by one in turn.")
	rrPlan := s.lead(a, jA, names, bm, c)
	s.Say("(range would have given %s)", planText(s.plan(kgo.RangeBalancer(), jA), names))
	c.heartbeat() // C's 3 s session counts from its last heartbeat
	see("Stable")
	s.members(b)
	if code := c.heartbeat(); code != 0 {
		s.Failf("C's heartbeat in the stable group: %s", errName(code))
	}
	if *jA.Protocol != "roundrobin" {
		s.Failf("the group chose %s, want roundrobin", *jA.Protocol)
	}

	s.Step("C stops heartbeating (as a consumer that hangs or loses its network). After its session.timeout.ms of 3 s the coordinator removes it and starts a rebalance.")
	stoppedAt := time.Now()
	s.WaitFor(20*time.Second, "A told of the rebalance", func() bool {
		if code := bm.heartbeat(); code != 0 && code != kerr.RebalanceInProgress.Code {
			s.Failf("B's heartbeat: %s", errName(code))
		}
		return a.heartbeat() == kerr.RebalanceInProgress.Code
	})
	s.Say("%.1f s later A's heartbeat says REBALANCE_IN_PROGRESS.", time.Since(stoppedAt).Seconds())
	see("PreparingRebalance")
	sticky := []kgo.GroupBalancer{kgo.StickyBalancer(), kgo.RoundRobinBalancer()}
	s.Step("A and B join again offering the sticky assignor first; in its metadata each says which partitions it holds now.")
	aJoin, bJoin = a.joinAsync(sticky), bm.joinAsync(sticky)
	jA = s.awaitJoin(aJoin)
	s.awaitJoin(bJoin)
	s.Say("Generation %d, protocol %s, members %s.", jA.Generation, *jA.Protocol, memberNames(jA, names))
	s.Step("Leader A assigns with sticky: A and B keep what they had and only C's partitions move.")
	aBefore, bBefore := slices.Clone(a.assigned), slices.Clone(bm.assigned)
	stickyPlan := s.lead(a, jA, names, bm)
	s.Say("(range would have given %s)", planText(s.plan(kgo.RangeBalancer(), jA), names))
	see("Stable")
	s.members(b)
	if *jA.Protocol != "sticky" || !containsAll(a.assigned, aBefore) || !containsAll(bm.assigned, bBefore) {
		s.Failf("the sticky generation moved partitions A (%v -> %v) or B (%v -> %v) held", aBefore, a.assigned, bBefore, bm.assigned)
	}

	s.Step("A and B leave the group (LeaveGroup). With no members left the group is Empty: it still exists, with its committed offsets, if any.")
	a.leave()
	bm.leave()
	see("Empty")

	s.Step("Delete the group. It becomes Dead and is dropped: the coordinator answers DescribeGroups for it with state Dead, which kafka-consumer-groups reports as a group that does not exist.")
	s.Tool("kafka-consumer-groups.sh", "--bootstrap-server", b.Addr, "--delete", "--group", rebGroup)
	s.Say("DescribeGroups answers state %s.", s.groupState(b))
	see("Dead")

	want := []string{"CompletingRebalance", "Stable", "PreparingRebalance", "Empty", "Dead"}
	if !slices.Equal(seen, want) {
		s.Failf("states seen %v, want %v", seen, want)
	}
	return fmt.Sprintf("group %s went through %s; range {%s}, roundrobin {%s}, sticky after C timed out {%s}", rebGroup, strings.Join(seen, ", "),
		planText(rangePlan, names), planText(rrPlan, names), planText(stickyPlan, names))
}

// member is one consumer group member speaking the protocol by hand, with
// a client of its own (a pending JoinGroup blocks its connection).
type member struct {
	s        *Stage
	name     string
	cl       *kgo.Client
	session  time.Duration
	id       string
	gen      int32
	bal      kgo.GroupBalancer // of the last join's protocol
	assigned []int32
	names    *roster // member id -> name, for the narration
}

func (s *Stage) newMember(b *Broker, name string, session time.Duration, names *roster) *member {
	return &member{s: s, name: name, session: session, names: names, gen: -1,
		cl: s.Client(kgo.SeedBrokers(b.Addr), kgo.ClientID("consumer-"+name))}
}

// join sends JoinGroup (again with the member id the coordinator hands
// out, as JoinGroup v4+ asks) and waits for the answer. It runs on other
// goroutines too, so it returns errors instead of failing the scenario.
func (m *member) join(bals []kgo.GroupBalancer) (*kmsg.JoinGroupResponse, error) {
	for attempt := 0; attempt < 3; attempt++ {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group = rebGroup
		req.SessionTimeoutMillis = int32(m.session / time.Millisecond)
		req.RebalanceTimeoutMillis = 30000
		req.MemberID = m.id
		req.ProtocolType = "consumer"
		current := map[string][]int32{}
		if len(m.assigned) > 0 {
			current[rebTopic] = m.assigned
		}
		for _, b := range bals {
			p := kmsg.NewJoinGroupRequestProtocol()
			p.Name = b.ProtocolName()
			p.Metadata = b.JoinGroupMetadata([]string{rebTopic}, current, m.gen)
			req.Protocols = append(req.Protocols, p)
		}
		ctx, cancel := m.s.Context(40 * time.Second)
		resp, err := req.RequestWith(ctx, m.cl)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%s's JoinGroup: %w", m.name, err)
		}
		if resp.ErrorCode == kerr.MemberIDRequired.Code {
			m.id = resp.MemberID
			continue
		}
		if resp.ErrorCode != 0 {
			return nil, fmt.Errorf("%s's JoinGroup: %s", m.name, errName(resp.ErrorCode))
		}
		m.id, m.gen = resp.MemberID, resp.Generation
		m.names.set(m.id, m.name)
		for _, b := range bals {
			if resp.Protocol != nil && b.ProtocolName() == *resp.Protocol {
				m.bal = b
			}
		}
		return resp, nil
	}
	return nil, fmt.Errorf("%s's JoinGroup kept asking for a member id", m.name)
}

// joinAsync is join on a goroutine of its own; the answer (or the error)
// arrives on the channel.
func (m *member) joinAsync(bals []kgo.GroupBalancer) <-chan joinResult {
	ch := make(chan joinResult, 1)
	go func() {
		r, err := m.join(bals)
		ch <- joinResult{r, err}
	}()
	return ch
}

// roster names the members by their member ids for the narration. The
// joins of several members run at once, so it is guarded.
type roster struct {
	mu  sync.Mutex
	ids map[string]string
}

func (r *roster) set(id, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids[id] = name
}

func (r *roster) name(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ids[id]
}

type joinResult struct {
	resp *kmsg.JoinGroupResponse
	err  error
}

// joined unwraps a join's answer, failing the scenario on an error.
func (s *Stage) joined(resp *kmsg.JoinGroupResponse, err error) *kmsg.JoinGroupResponse {
	if err != nil {
		s.Failf("%v", err)
	}
	return resp
}

// awaitJoin waits for the answer of a joinAsync.
func (s *Stage) awaitJoin(ch <-chan joinResult) *kmsg.JoinGroupResponse {
	r := <-ch
	return s.joined(r.resp, r.err)
}

// sync sends SyncGroup (the leader with the plan, a follower with none)
// and keeps the partitions it is given.
func (m *member) sync(plan []kmsg.SyncGroupRequestGroupAssignment) {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group = rebGroup
	req.Generation = m.gen
	req.MemberID = m.id
	req.ProtocolType = kmsg.StringPtr("consumer")
	if m.bal != nil {
		req.Protocol = kmsg.StringPtr(m.bal.ProtocolName())
	}
	req.GroupAssignment = plan
	ctx, cancel := m.s.Context(30 * time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil || resp.ErrorCode != 0 {
		m.s.Failf("%s's SyncGroup: %v %s", m.name, err, errName(resp.ErrorCode))
	}
	parts, err := m.bal.ParseSyncAssignment(resp.MemberAssignment)
	if err != nil {
		m.s.Failf("%s's assignment: %v", m.name, err)
	}
	m.assigned = slices.Sorted(slices.Values(parts[rebTopic]))
}

// heartbeat sends one Heartbeat and returns its error code.
func (m *member) heartbeat() int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.Generation, req.MemberID = rebGroup, m.gen, m.id
	ctx, cancel := m.s.Context(10 * time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		m.s.Failf("%s's heartbeat: %v", m.name, err)
	}
	return resp.ErrorCode
}

// leave sends LeaveGroup.
func (m *member) leave() {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = rebGroup
	req.MemberID = m.id
	mi := kmsg.NewLeaveGroupRequestMember()
	mi.MemberID = m.id
	req.Members = append(req.Members, mi)
	ctx, cancel := m.s.Context(10 * time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil || resp.ErrorCode != 0 {
		m.s.Failf("%s's LeaveGroup: %v", m.name, err)
	}
}

// lead has the leader compute the plan for the joined members with the
// chosen protocol's balancer, send it, and the followers fetch theirs.
func (s *Stage) lead(leader *member, j *kmsg.JoinGroupResponse, names *roster, followers ...*member) []kmsg.SyncGroupRequestGroupAssignment {
	if j.LeaderID != leader.id {
		s.Failf("%s is not the leader (%s is)", leader.name, names.name(j.LeaderID))
	}
	plan := s.plan(leader.bal, j)
	s.Say("%s's plan (%s): %s", leader.name, leader.bal.ProtocolName(), planText(plan, names))
	leader.sync(plan)
	for _, f := range followers {
		f.sync(nil)
	}
	return plan
}

// plan runs a balancer over the joined members as a group leader does.
func (s *Stage) plan(bal kgo.GroupBalancer, j *kmsg.JoinGroupResponse) []kmsg.SyncGroupRequestGroupAssignment {
	mb, _, err := bal.MemberBalancer(j.Members)
	if err != nil {
		s.Failf("%s balancer: %v", bal.ProtocolName(), err)
	}
	be, ok := mb.(kgo.GroupMemberBalancerOrError)
	if !ok {
		s.Failf("%s balancer cannot report errors", bal.ProtocolName())
	}
	into, err := be.BalanceOrError(map[string]int32{rebTopic: rebPartitions})
	if err != nil {
		s.Failf("%s balancer: %v", bal.ProtocolName(), err)
	}
	return into.IntoSyncAssignment()
}

// planText is "A: reb-0,reb-1  B: reb-2,reb-3" in member name order.
func planText(plan []kmsg.SyncGroupRequestGroupAssignment, names *roster) string {
	var parts []string
	for _, a := range plan {
		var ca kmsg.ConsumerMemberAssignment
		if err := ca.ReadFrom(a.MemberAssignment); err != nil {
			continue
		}
		var ps []string
		for _, t := range ca.Topics {
			sorted := slices.Sorted(slices.Values(t.Partitions))
			for _, p := range sorted {
				ps = append(ps, fmt.Sprintf("%s-%d", t.Topic, p))
			}
		}
		parts = append(parts, names.name(a.MemberID)+": "+strings.Join(ps, ","))
	}
	sort.Strings(parts)
	return strings.Join(parts, "  ")
}

// memberNames lists the joined members by name, the leader marked.
func memberNames(j *kmsg.JoinGroupResponse, names *roster) string {
	var ns []string
	for _, m := range j.Members {
		n := names.name(m.MemberID)
		if m.MemberID == j.LeaderID {
			n += " (leader)"
		}
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return strings.Join(ns, ", ")
}

func containsAll(have, want []int32) bool {
	for _, p := range want {
		if !slices.Contains(have, p) {
			return false
		}
	}
	return true
}

// members shows the members and their partitions as the coordinator
// records them.
func (s *Stage) members(b *Broker) {
	s.Tool("kafka-consumer-groups.sh", "--bootstrap-server", b.Addr, "--describe", "--group", rebGroup, "--members", "--verbose")
}

// groupState asks broker b (DescribeGroups) for the group's state.
func (s *Stage) groupState(b *Broker) string {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{rebGroup}
	resp := s.request(b, req)
	if resp == nil {
		return ""
	}
	gs := resp.(*kmsg.DescribeGroupsResponse).Groups
	if len(gs) != 1 || gs[0].ErrorCode != 0 {
		return ""
	}
	return gs[0].State
}

// waitGroupState waits until the coordinator reports the state.
func (s *Stage) waitGroupState(b *Broker, state string) {
	s.WaitFor(20*time.Second, "group "+rebGroup+" "+state, func() bool { return s.groupState(b) == state })
}

// waitCoordinator waits until broker b coordinates the group (the offsets
// topic, created on the first FindCoordinator, has its leaders).
func (s *Stage) waitCoordinator(b *Broker) {
	s.WaitFor(30*time.Second, "the group coordinator", func() bool {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey = rebGroup
		resp := s.request(b, req)
		if resp == nil {
			return false
		}
		r := resp.(*kmsg.FindCoordinatorResponse)
		if r.ErrorCode != 0 {
			return false
		}
		if len(r.Coordinators) > 0 && r.Coordinators[0].ErrorCode != 0 {
			return false
		}
		return s.groupState(b) == "Dead" // answers for the unknown group: loaded
	})
}
