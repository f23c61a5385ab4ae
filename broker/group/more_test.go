package group

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/purgatory"
	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

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
