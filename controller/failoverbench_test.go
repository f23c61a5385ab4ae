package controller

import (
	"testing"

	"github.com/klassik/klassik/broker/common"
)

// BenchmarkFailoverStateMachines10k is the controller's own CPU in a
// failover at 10,000 partitions (RF=3 over brokers 1-3, broker 1 dead and
// leading a third of them): classification, elections, ISR shrinks and the
// flush of the batch, against the in-memory store, so no ZooKeeper time.
func BenchmarkFailoverStateMachines10k(b *testing.B) {
	const partitions = 10000
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m := newMachines(2, 2, 3)
		assignment := map[int32][]int32{}
		for p := int32(0); p < partitions; p++ {
			assignment[p] = rotatedReplicas(p)
		}
		tps := m.addTopic("t", assignment)
		for _, tp := range tps {
			rs := assignment[tp.Partition]
			l := LeaderIsrAndControllerEpoch{LeaderAndIsr: LeaderAndIsr{Leader: rs[0], ISR: rs}, ControllerEpoch: 1}
			m.store.states[tp] = l
			m.ctx.PutLeadership(tp, l)
		}
		b.StartTimer()
		online, offline := m.rsm.initializeStates()
		m.psm.initializeStates()
		written, err := m.psm.electPending("controller startup")
		if err != nil {
			b.Fatal(err)
		}
		if err := m.rsm.startup(online, offline, written); err != nil {
			b.Fatal(err)
		}
		out := m.batch.flush(2)
		b.StopTimer()
		if len(written) != partitions/3+1 || len(out) != 4 {
			b.Fatalf("%d elected, %d requests", len(written), len(out))
		}
		if l, _ := m.ctx.Leadership(common.TopicPartition{Topic: "t", Partition: 0}); l.Leader != 2 || l.LeaderEpoch != 1 {
			b.Fatalf("t-0: %s", l)
		}
		b.StartTimer()
	}
}
