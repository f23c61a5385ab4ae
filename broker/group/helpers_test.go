package group

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/purgatory"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var t0 = time.UnixMilli(1700000000000)

type harness struct {
	t     *testing.T
	c     *Coordinator
	clock *purgatory.FakeClock
	store *MemStore
}

func testConfig() Config {
	cfg := DefaultConfig()
	cfg.OffsetsTopicPartitions = 4
	return cfg
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newHarness starts a coordinator that leads every partition and has
// finished loading them.
func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	return newHarnessWith(t, cfg, NewMemStore(), purgatory.NewFakeClock(t0))
}

func newHarnessWith(t *testing.T, cfg Config, store *MemStore, clock *purgatory.FakeClock) *harness {
	t.Helper()
	c, err := New(cfg, store, clock, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	h := &harness{t: t, c: c, clock: clock, store: store}
	for p := int32(0); p < cfg.OffsetsTopicPartitions; p++ {
		c.OnBecomeLeader(p)
	}
	for p := int32(0); p < cfg.OffsetsTopicPartitions; p++ {
		h.waitLoaded(p)
	}
	return h
}

func (h *harness) waitLoaded(p int32) {
	h.t.Helper()
	h.waitFor("partition loaded", func() bool {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		return h.c.owned[p].state == partitionLoaded
	})
}

// waitFor polls cond with a deadline; the coordinator's goroutines make
// progress on their own, so no clock advance is involved.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *harness) group(id string) *Group {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	return h.c.groups[id]
}

// waitParkedJoins waits until n members of the group have a parked join.
func (h *harness) waitParkedJoins(id string, n int) {
	h.t.Helper()
	h.waitParked("parked joins", id, n, func(m *Member) bool { return m.joinCh != nil })
}

// waitParkedSyncs waits until n members of the group have a parked sync.
func (h *harness) waitParkedSyncs(id string, n int) {
	h.t.Helper()
	h.waitParked("parked syncs", id, n, func(m *Member) bool { return m.syncCh != nil })
}

// waitParked waits until exactly n members of the group satisfy parked
// (read under the group's lock).
func (h *harness) waitParked(what, id string, n int, parked func(*Member) bool) {
	h.t.Helper()
	h.waitFor(what, func() bool {
		g := h.group(id)
		if g == nil {
			return false
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		k := 0
		for _, m := range g.members {
			if parked(m) {
				k++
			}
		}
		return k == n
	})
}

// generation is the group's current generation (read under its lock).
func (h *harness) generation(id string) int32 {
	g := h.group(id)
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.generation
}

func (h *harness) state(id string) State {
	g := h.group(id)
	if g == nil {
		return Dead
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.state
}

func consumerMeta(topics ...string) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Topics = topics
	return m.AppendTo(nil)
}

func assignment(topic string, ps ...int32) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: topic, Partitions: ps}}
	return a.AppendTo(nil)
}

func joinReq(version int16, group, member string, instance *string, topics ...string) *kmsg.JoinGroupRequest {
	r := kmsg.NewPtrJoinGroupRequest()
	r.Version = version
	r.Group = group
	r.MemberID = member
	r.InstanceID = instance
	r.SessionTimeoutMillis = 10000
	r.RebalanceTimeoutMillis = 30000
	r.ProtocolType = "consumer"
	r.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: consumerMeta(topics...)}}
	return r
}

func (h *harness) joinAsync(req *kmsg.JoinGroupRequest) <-chan *kmsg.JoinGroupResponse {
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	go func() {
		ch <- h.c.JoinGroup(context.Background(), req, JoinInfo{ClientID: "c", ClientHost: "/127.0.0.1"})
	}()
	return ch
}

func (h *harness) join(req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	h.t.Helper()
	return recv(h.t, h.joinAsync(req))
}

func (h *harness) syncAsync(group, member string, gen int32, assign map[string][]byte) <-chan *kmsg.SyncGroupResponse {
	r := kmsg.NewPtrSyncGroupRequest()
	r.Version = 3
	r.Group, r.MemberID, r.Generation = group, member, gen
	for id, a := range assign {
		r.GroupAssignment = append(r.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: id, MemberAssignment: a})
	}
	ch := make(chan *kmsg.SyncGroupResponse, 1)
	go func() { ch <- h.c.SyncGroup(context.Background(), r) }()
	return ch
}

func (h *harness) heartbeat(group, member string, gen int32, instance *string) int16 {
	r := kmsg.NewPtrHeartbeatRequest()
	r.Version = 3
	r.Group, r.MemberID, r.Generation, r.InstanceID = group, member, gen, instance
	return h.c.Heartbeat(context.Background(), r).ErrorCode
}

func (h *harness) commit(group, member string, gen int32, topic string, partition int32, offset int64, meta string) int16 {
	h.t.Helper()
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Version = 7
	r.Group, r.MemberID, r.Generation = group, member, gen
	r.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{
		{Partition: partition, Offset: offset, LeaderEpoch: 4, Metadata: &meta}}}}
	resp := h.c.OffsetCommit(context.Background(), r)
	return resp.Topics[0].Partitions[0].ErrorCode
}

// fetch returns offset, metadata and error of one partition (OffsetFetch v5).
func (h *harness) fetch(group, topic string, partition int32) (int64, string, int16) {
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version = 5
	r.Group = group
	r.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: topic, Partitions: []int32{partition}}}
	resp := h.c.OffsetFetch(context.Background(), r)
	if resp.ErrorCode != 0 {
		return -1, "", resp.ErrorCode
	}
	p := resp.Topics[0].Partitions[0]
	return p.Offset, *p.Metadata, p.ErrorCode
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("timed out waiting for a response")
		var zero T
		return zero
	}
}

func noResponse[T any](t *testing.T, ch <-chan T) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("unexpected early response %+v", v)
	case <-time.After(20 * time.Millisecond):
	}
}

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(code).Error()
}

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	var w int16
	if want != nil {
		w = want.Code
	}
	if got != w {
		t.Fatalf("%s: got %s, want %s", what, errName(got), errName(w))
	}
}

// stableGroup forms a two-member group "g" at generation 1 with the
// leader assigning t-0 to itself and t-1 to the follower.
func (h *harness) stableGroup(group string) (leader, follower string) {
	h.t.Helper()
	r1 := h.join(joinReq(5, group, "", nil, "t"))
	wantCode(h.t, "first join", r1.ErrorCode, kerr.MemberIDRequired)
	r2 := h.join(joinReq(5, group, "", nil, "t"))
	wantCode(h.t, "second join", r2.ErrorCode, kerr.MemberIDRequired)
	j1 := h.joinAsync(joinReq(5, group, r1.MemberID, nil, "t"))
	h.waitParkedJoins(group, 1)
	j2 := h.joinAsync(joinReq(5, group, r2.MemberID, nil, "t"))
	h.waitParkedJoins(group, 2)
	// Initial rebalance delay (3s) extended once because the second
	// member joined during the first delay.
	h.clock.Advance(3 * time.Second)
	noResponse(h.t, j1)
	h.clock.Advance(3 * time.Second)
	a, b := recv(h.t, j1), recv(h.t, j2)
	wantCode(h.t, "join 1", a.ErrorCode, nil)
	wantCode(h.t, "join 2", b.ErrorCode, nil)
	leader, follower = a.MemberID, b.MemberID
	s2 := h.syncAsync(group, follower, 1, nil)
	h.waitParkedSyncs(group, 1)
	s1 := h.syncAsync(group, leader, 1, map[string][]byte{leader: assignment("t", 0), follower: assignment("t", 1)})
	wantCode(h.t, "leader sync", recv(h.t, s1).ErrorCode, nil)
	wantCode(h.t, "follower sync", recv(h.t, s2).ErrorCode, nil)
	return leader, follower
}
