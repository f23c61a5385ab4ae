package controller

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"testing"

	"github.com/klassik/klassik/broker/common"

	"github.com/go-zookeeper/zk"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// memStore is an in-memory partitionStateStore: a map of state znodes with
// versions, an optional fencing failure and injectable version conflicts.
type memStore struct {
	states   map[common.TopicPartition]LeaderIsrAndControllerEpoch
	fenced   bool
	conflict map[common.TopicPartition]int // number of writes to fail with a bad version
	unclean  map[string]bool
	writes   []string
}

func newMemStore() *memStore {
	return &memStore{states: map[common.TopicPartition]LeaderIsrAndControllerEpoch{}, conflict: map[common.TopicPartition]int{}, unclean: map[string]bool{}}
}

func (s *memStore) ReadStates(tps []common.TopicPartition) (map[common.TopicPartition]LeaderIsrAndControllerEpoch, error) {
	out := map[common.TopicPartition]LeaderIsrAndControllerEpoch{}
	for _, tp := range tps {
		if l, ok := s.states[tp]; ok {
			out[tp] = l
		}
	}
	return out, nil
}

func (s *memStore) CreateStates(states map[common.TopicPartition]LeaderIsrAndControllerEpoch) (map[common.TopicPartition]error, error) {
	if s.fenced {
		return nil, ErrControllerMoved
	}
	errs := map[common.TopicPartition]error{}
	for _, tp := range sortedKeys(states) {
		if _, ok := s.states[tp]; ok {
			errs[tp] = errors.New("node exists")
			continue
		}
		l := states[tp]
		l.PartitionEpoch = 0
		s.states[tp] = l
		s.writes = append(s.writes, fmt.Sprintf("create %s %s", tp, l))
	}
	return errs, nil
}

func (s *memStore) UpdateStates(states map[common.TopicPartition]LeaderAndIsr, epoch int32) (map[common.TopicPartition]int32, map[common.TopicPartition]error, error) {
	if s.fenced {
		return nil, nil, ErrControllerMoved
	}
	versions := map[common.TopicPartition]int32{}
	errs := map[common.TopicPartition]error{}
	for _, tp := range sortedKeys(states) {
		cur, ok := s.states[tp]
		if !ok {
			errs[tp] = zk.ErrNoNode
			continue
		}
		if s.conflict[tp] > 0 {
			s.conflict[tp]--
			// Simulate a leader's concurrent ISR write.
			cur.PartitionEpoch++
			s.states[tp] = cur
			errs[tp] = zk.ErrBadVersion
			continue
		}
		if cur.PartitionEpoch != states[tp].PartitionEpoch {
			errs[tp] = zk.ErrBadVersion
			continue
		}
		l := LeaderIsrAndControllerEpoch{LeaderAndIsr: states[tp], ControllerEpoch: epoch}
		l.PartitionEpoch = cur.PartitionEpoch + 1
		s.states[tp] = l
		versions[tp] = l.PartitionEpoch
		s.writes = append(s.writes, fmt.Sprintf("set %s %s", tp, l))
	}
	return versions, errs, nil
}

func (s *memStore) UncleanElectionEnabled(topic string, dflt bool) (bool, error) {
	if v, ok := s.unclean[topic]; ok {
		return v, nil
	}
	return dflt, nil
}

type machines struct {
	ctx   *Context
	store *memStore
	batch *requestBatch
	psm   *partitionStateMachine
	rsm   *replicaStateMachine
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newMachines(epoch int32, brokers ...int32) *machines {
	ctx := NewContext()
	ctx.Epoch = epoch
	ctx.interBrokerListener = "PLAINTEXT"
	for _, id := range brokers {
		ctx.AddLiveBroker(Broker{ID: id, Epoch: int64(100 + id), Endpoints: []Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9000 + id}}})
	}
	store := newMemStore()
	batch := newRequestBatch(ctx, 1)
	log := quietLogger()
	return &machines{
		ctx: ctx, store: store, batch: batch,
		psm: &partitionStateMachine{ctx: ctx, batch: batch, store: store, stateLog: log, uncleanDflt: func() bool { return false }, controllerID: 1},
		rsm: &replicaStateMachine{ctx: ctx, batch: batch, store: store, stateLog: log},
	}
}

func (m *machines) addTopic(topic string, assignment map[int32][]int32) []common.TopicPartition {
	m.ctx.AddTopic(topic)
	var tps []common.TopicPartition
	for p, rs := range assignment {
		tp := common.TopicPartition{Topic: topic, Partition: p}
		m.ctx.UpdateAssignment(tp, ReplicaAssignment{Replicas: rs})
		tps = append(tps, tp)
	}
	sortTPs(tps)
	return tps
}

// newPartitions runs NewPartitionCreation.
func (m *machines) newPartitions(t *testing.T, tps []common.TopicPartition) map[common.TopicPartition]error {
	t.Helper()
	var replicas []PartitionReplica
	for _, tp := range tps {
		for _, r := range m.ctx.Replicas(tp) {
			replicas = append(replicas, PartitionReplica{tp, r})
		}
	}
	must(m.psm.handleStateChanges(tps, NewPartition, nil, "test"))(t)
	must(m.rsm.handleStateChanges(replicas, NewReplica, "test"))(t)
	failed, err := m.psm.handleStateChanges(tps, OnlinePartition, &electionSpec{strategy: OfflineElection}, "test")
	if err != nil {
		t.Fatal(err)
	}
	must(m.rsm.handleStateChanges(replicas, OnlineReplica, "test"))(t)
	return failed
}

// must checks the result of a handleStateChanges call: must(call)(t).
func must[K comparable](failed map[K]error, err error) func(*testing.T) {
	return func(t *testing.T) {
		t.Helper()
		if err != nil || len(failed) > 0 {
			t.Fatalf("failed %v err %v", failed, err)
		}
	}
}

func leaderAndIsrFor(out []outgoingRequest, broker int32) *kmsg.LeaderAndISRRequest {
	for _, o := range out {
		if o.broker == broker && o.kind == kindLeaderAndIsr {
			return o.req.(*kmsg.LeaderAndISRRequest)
		}
	}
	return nil
}

// "leader = live[0], isr = live, leader epoch 0 ... add a LeaderAndIsr
// (isNew = true) for every ISR member, and an UpdateMetadata for the
// partition to all live-or-shutting-down brokers."
func TestNewPartitionInitialisesLeadership(t *testing.T) {
	m := newMachines(3, 1, 2, 3)
	tps := m.addTopic("orders", map[int32][]int32{0: {1, 2, 3}, 1: {2, 3, 4}})
	failed := m.newPartitions(t, tps)
	if len(failed) != 0 {
		t.Fatalf("failed: %v", failed)
	}
	got := m.store.states[common.TopicPartition{Topic: "orders", Partition: 0}]
	if got.Leader != 1 || !reflect.DeepEqual(got.ISR, []int32{1, 2, 3}) || got.LeaderEpoch != 0 || got.ControllerEpoch != 3 {
		t.Fatalf("orders-0 state: %s", got)
	}
	got = m.store.states[common.TopicPartition{Topic: "orders", Partition: 1}]
	if got.Leader != 2 || !reflect.DeepEqual(got.ISR, []int32{2, 3}) {
		t.Fatalf("orders-1 state (broker 4 is down): %s", got)
	}
	if m.psm.state(tps[0]) != OnlinePartition {
		t.Fatalf("state %s", m.psm.state(tps[0]))
	}
	out := m.batch.flush(3)
	// LeaderAndIsr to brokers 1,2,3 first, then UpdateMetadata to 1,2,3.
	var kinds []string
	for _, o := range out {
		kinds = append(kinds, fmt.Sprintf("%d:%d", o.kind, o.broker))
	}
	if want := []string{"0:1", "0:2", "0:3", "1:1", "1:2", "1:3"}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("requests %v want %v", kinds, want)
	}
	req := leaderAndIsrFor(out, 2)
	if req.ControllerEpoch != 3 || req.ControllerID != 1 || req.BrokerEpoch != 102 || req.Version != 7 {
		t.Fatalf("header: %+v", req)
	}
	if len(req.TopicStates) != 1 || len(req.TopicStates[0].PartitionStates) != 2 {
		t.Fatalf("topic states: %+v", req.TopicStates)
	}
	for _, p := range req.TopicStates[0].PartitionStates {
		if !p.IsNew {
			t.Fatalf("partition %d not new", p.Partition)
		}
	}
	if len(req.LiveLeaders) != 2 || req.LiveLeaders[0].Port != 9001 {
		t.Fatalf("live leaders %+v", req.LiveLeaders)
	}
	um := out[3].req.(*kmsg.UpdateMetadataRequest)
	if len(um.LiveBrokers) != 3 || len(um.TopicStates) != 1 {
		t.Fatalf("update metadata %+v", um)
	}
	if off := um.TopicStates[0].PartitionStates[1].OfflineReplicas; !reflect.DeepEqual(off, []int32{4}) {
		t.Fatalf("offline replicas %v", off)
	}
}

func TestNewPartitionWithoutLiveReplicaStaysNew(t *testing.T) {
	m := newMachines(1, 1)
	tps := m.addTopic("t", map[int32][]int32{0: {5}})
	failed := m.newPartitions(t, tps)
	if !errors.Is(failed[tps[0]], ErrStateChangeFailed) {
		t.Fatalf("failed = %v", failed)
	}
	if m.psm.state(tps[0]) != NewPartition {
		t.Fatalf("state %s", m.psm.state(tps[0]))
	}
	if len(m.store.states) != 0 {
		t.Fatal("state znode written")
	}
}

// Leaders are re-elected before dead replicas leave the ISR; "a
// partition whose only ISR member died keeps isr=[dead], leader=-1".
func TestBrokerFailureFlow(t *testing.T) {
	m := newMachines(2, 1, 2, 3)
	tps := m.addTopic("t", map[int32][]int32{0: {1, 2, 3}, 1: {1}})
	m.newPartitions(t, tps)
	m.batch.flush(2)

	m.ctx.RemoveLiveBroker(1)
	var offline []common.TopicPartition
	for _, tp := range tps {
		l, _ := m.ctx.Leadership(tp)
		if !m.ctx.IsReplicaOnline(l.Leader, tp, false) {
			offline = append(offline, tp)
		}
	}
	must(m.psm.handleStateChanges(offline, OfflinePartition, nil, "broker failure"))(t)
	failed, err := m.psm.triggerOnlinePartitionStateChange("", "broker failure")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(failed[common.TopicPartition{Topic: "t", Partition: 1}], ErrStateChangeFailed) || len(failed) != 1 {
		t.Fatalf("failed = %v", failed)
	}
	must(m.rsm.handleStateChanges(m.ctx.ReplicasOnBrokers([]int32{1}), OfflineReplica, "broker failure"))(t)

	p0 := m.store.states[common.TopicPartition{Topic: "t", Partition: 0}]
	// Election: leader 2, isr [2,3], epoch 1; then removing 1 (not in ISR) writes nothing.
	if p0.Leader != 2 || !reflect.DeepEqual(p0.ISR, []int32{2, 3}) || p0.LeaderEpoch != 1 || p0.PartitionEpoch != 1 {
		t.Fatalf("t-0 %s", p0)
	}
	p1 := m.store.states[common.TopicPartition{Topic: "t", Partition: 1}]
	if p1.Leader != NoLeader || !reflect.DeepEqual(p1.ISR, []int32{1}) || p1.LeaderEpoch != 1 {
		t.Fatalf("t-1 %s", p1)
	}
	if m.psm.state(common.TopicPartition{Topic: "t", Partition: 1}) != OfflinePartition {
		t.Fatal("t-1 should be offline")
	}
	if n := m.ctx.OfflinePartitionCount(); n != 1 {
		t.Fatalf("offline count %d", n)
	}
	out := m.batch.flush(2)
	req := leaderAndIsrFor(out, 3)
	if req == nil || req.TopicStates[0].PartitionStates[0].Leader != 2 {
		t.Fatalf("broker 3 should learn leader 2: %+v", out)
	}
	if leaderAndIsrFor(out, 1) != nil {
		t.Fatal("request for a dead broker")
	}
}

func TestUncleanElectionFromTopicConfig(t *testing.T) {
	m := newMachines(1, 1, 2)
	tps := m.addTopic("t", map[int32][]int32{0: {1, 2}})
	m.newPartitions(t, tps)
	m.batch.flush(1)
	tp := tps[0]
	// ISR shrank to [1] earlier, then broker 1 dies.
	st := m.store.states[tp]
	st.ISR = []int32{1}
	st.PartitionEpoch++
	m.store.states[tp] = st
	m.ctx.RemoveLiveBroker(1)
	must(m.psm.handleStateChanges(tps, OfflinePartition, nil, "test"))(t)
	failed, _ := m.psm.handleStateChanges(tps, OnlinePartition, &electionSpec{strategy: OfflineElection}, "test")
	if len(failed) != 1 {
		t.Fatal("clean election should fail")
	}
	var unclean int
	m.psm.onUnclean = func(common.TopicPartition) { unclean++ }
	m.store.unclean["t"] = true
	must(m.psm.handleStateChanges(tps, OnlinePartition, &electionSpec{strategy: OfflineElection}, "test"))(t)
	got := m.store.states[tp]
	if got.Leader != 2 || !reflect.DeepEqual(got.ISR, []int32{2}) || got.LeaderRecoveryState != RecoveryRecovering || unclean != 1 {
		t.Fatalf("unclean: %s count %d", got, unclean)
	}
}

func TestElectionRetriesOnBadVersionAndAbortsOnNewerController(t *testing.T) {
	m := newMachines(4, 1, 2)
	tps := m.addTopic("t", map[int32][]int32{0: {1, 2}, 1: {2, 1}})
	m.newPartitions(t, tps)
	m.batch.flush(4)
	m.store.conflict[tps[0]] = 2
	// A newer controller wrote t-1 (a write bumps the znode version).
	st := m.store.states[tps[1]]
	st.ControllerEpoch = 5
	st.PartitionEpoch++
	m.store.states[tps[1]] = st
	failed, err := m.psm.handleStateChanges(tps, OnlinePartition, &electionSpec{strategy: PreferredElection}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || failed[tps[1]] == nil {
		t.Fatalf("failed = %v", failed)
	}
	if got := m.store.states[tps[0]]; got.LeaderEpoch != 1 || got.PartitionEpoch != 3 {
		t.Fatalf("retried write: %s", got)
	}
}

func TestFencedWriteRaisesControllerMoved(t *testing.T) {
	m := newMachines(1, 1)
	tps := m.addTopic("t", map[int32][]int32{0: {1}})
	must(m.psm.handleStateChanges(tps, NewPartition, nil, "test"))(t)
	m.store.fenced = true
	_, err := m.psm.handleStateChanges(tps, OnlinePartition, &electionSpec{strategy: OfflineElection}, "test")
	if !errors.Is(err, ErrControllerMoved) {
		t.Fatalf("err = %v", err)
	}
}

func TestIllegalTransitions(t *testing.T) {
	m := newMachines(1, 1)
	tps := m.addTopic("t", map[int32][]int32{0: {1}})
	failed, err := m.psm.handleStateChanges(tps, NonExistentPartition, nil, "test")
	if err != nil || !errors.Is(failed[tps[0]], ErrIllegalStateTransition) {
		t.Fatalf("failed %v err %v", failed, err)
	}
	r := PartitionReplica{tps[0], 1}
	rf, err := m.rsm.handleStateChanges([]PartitionReplica{r}, ReplicaDeletionStarted, "test")
	if err != nil || !errors.Is(rf[r], ErrIllegalStateTransition) {
		t.Fatalf("failed %v err %v", rf, err)
	}
}

// The partition and replica valid-previous-state tables, checked cell by
// cell: each row is a target state, each column a previous state, in state
// order ('x' = legal, '.' = illegal).
func TestTransitionTables(t *testing.T) {
	checkGrid(t, partitionStates, []string{
		//                    NonEx New Online Offline
		NonExistentPartition: "...x",
		NewPartition:         "x...",
		OnlinePartition:      ".xxx",
		OfflinePartition:     ".xxx",
	})
	checkGrid(t, replicaStates, []string{
		//                         NonEx New Online Offline DelStarted DelSuccessful DelIneligible
		NonExistentReplica:        ".....x.",
		NewReplica:                "x......",
		OnlineReplica:             ".xxx..x",
		OfflineReplica:            ".xxx..x",
		ReplicaDeletionStarted:    "...x...",
		ReplicaDeletionSuccessful: "....x..",
		ReplicaDeletionIneligible: "...xx..",
	})
	if NewPartition.String() != "NewPartition" || PartitionState(9).String() != "NonExistentPartition" ||
		ReplicaDeletionIneligible.String() != "ReplicaDeletionIneligible" || ReplicaState(-1).String() != "NonExistentReplica" {
		t.Fatal("state names differ")
	}
}

func checkGrid[S ~int8](t *testing.T, table stateTable[S], grid []string) {
	t.Helper()
	if len(table) != len(grid) {
		t.Fatalf("%d states in the table, %d in the grid", len(table), len(grid))
	}
	for to, row := range grid {
		for from, cell := range row {
			if got := table.valid(S(from), S(to)); got != (cell == 'x') {
				t.Errorf("%s -> %s: legal = %v, want %v", table.name(S(from)), table.name(S(to)), got, cell == 'x')
			}
		}
	}
}

func TestRequestBatchRules(t *testing.T) {
	m := newMachines(7, 1, 2)
	tps := m.addTopic("t", map[int32][]int32{0: {1, 2}})
	m.newPartitions(t, tps)
	if err := m.batch.newBatch(); err == nil {
		t.Fatal("newBatch on a non-empty batch must fail")
	}
	m.batch.flush(7)
	if err := m.batch.newBatch(); err != nil {
		t.Fatal(err)
	}
	tp := tps[0]
	l, _ := m.ctx.Leadership(tp)
	a, _ := m.ctx.Assignment(tp)
	m.batch.addLeaderAndIsr([]int32{1, -1}, tp, l, a, true)
	m.batch.addLeaderAndIsr([]int32{1}, tp, l, a, false) // isNew stays true
	m.batch.addStopReplica([]int32{2}, tp, true)
	m.batch.addStopReplica([]int32{2}, tp, false) // delete stays true
	m.batch.maxVersion = func(broker int32, key int16) int16 {
		if broker == 2 && key == 5 {
			return 2
		}
		return -1
	}
	out := m.batch.flush(7)
	req := leaderAndIsrFor(out, 1)
	if !req.TopicStates[0].PartitionStates[0].IsNew {
		t.Fatal("isNew is not sticky")
	}
	last := out[len(out)-1]
	sr := last.req.(*kmsg.StopReplicaRequest)
	if last.kind != kindStopReplica || sr.Version != 2 || !sr.DeletePartitions || len(last.deletePartitions) != 1 {
		t.Fatalf("stop replica %+v", sr)
	}
	if !m.batch.empty() {
		t.Fatal("flush must clear the batch")
	}
}

// A deleted topic is announced with leader -2 and StopReplica carries leader
// epoch -2.
func TestDeletionSentinels(t *testing.T) {
	m := newMachines(1, 1)
	tps := m.addTopic("t", map[int32][]int32{0: {1}})
	m.newPartitions(t, tps)
	m.batch.flush(1)
	m.ctx.topicsToDelete["t"] = true
	m.batch.addUpdateMetadata([]int32{1}, tps)
	m.batch.addStopReplica([]int32{1}, tps[0], true)
	out := m.batch.flush(1)
	um := out[0].req.(*kmsg.UpdateMetadataRequest)
	if um.TopicStates[0].PartitionStates[0].Leader != LeaderDuringDelete {
		t.Fatalf("leader %d", um.TopicStates[0].PartitionStates[0].Leader)
	}
	sr := out[1].req.(*kmsg.StopReplicaRequest)
	if ps := sr.Topics[0].PartitionStates[0]; ps.LeaderEpoch != EpochDuringDelete || !ps.Delete {
		t.Fatalf("stop replica %+v", ps)
	}
}
