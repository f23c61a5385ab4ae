package controller

import (
	"slices"
	"sync"
	"testing"

	"github.com/klassik/klassik/broker/common"
)

// A new controller whose broker's metadata names partitions led by a
// broker that is no longer live (Config.LeadersHint) reads those state
// znodes first, elects the ones whose leader, as read, is dead, and only
// then reads the others; every other partition is read once after. The
// hint here is stale on purpose: it names one partition the dead broker
// does not lead (read early, left alone) and omits one it leads (elected
// after the full read). The outcome is the same as without a hint: every
// partition the dead broker led gets a live leader from its old ISR and
// the ISR without it, one leader epoch up, and each live broker gets each
// partition in exactly one LeaderAndIsr.
func TestIntegrationFailoverElectsHintedFirst(t *testing.T) {
	logs := map[int32]*stateCallLog{}
	var hintMu sync.Mutex
	var hint map[int32]int32 // of topic, what every node's "metadata" says
	cl := newCluster(t)
	cl.wrapZK = func(id int32, c zkClient) zkClient {
		l := &stateCallLog{}
		logs[id] = l
		return l.wrap(id, c)
	}
	const topic, partitions = "fo", 12
	cl.hint = func(int32) func(string) map[int32]int32 {
		return func(t string) map[int32]int32 {
			hintMu.Lock()
			defer hintMu.Unlock()
			if t != topic || hint == nil {
				return nil
			}
			return hint
		}
	}
	for _, id := range []int32{1, 2, 3} {
		cl.start(id)
	}
	old := cl.waitActive()
	before := cl.createRotatedTopic(topic, partitions)
	dead := old.id
	var deadLed []int32
	for p := int32(0); p < partitions; p++ {
		if before[p].Leader == dead {
			deadLed = append(deadLed, p)
		}
	}
	// The stale hint: the first partition the dead broker leads is missing
	// from it, and the first one it does not lead is named as its.
	omitted := deadLed[0]
	var misnamed int32 = -1
	h := map[int32]int32{}
	for p := int32(0); p < partitions; p++ {
		switch {
		case p == omitted:
		case before[p].Leader != dead && misnamed < 0:
			misnamed = p
			h[p] = dead
		default:
			h[p] = before[p].Leader
		}
	}
	hintMu.Lock()
	hint = h
	hintMu.Unlock()

	cl.stop(dead)
	next := cl.waitActive()
	waitFor(t, "the new controller's failover to complete", func() bool { return next.ctrl.lastFailover.Load() != nil })
	epoch := next.ctrl.Epoch()

	tp := func(p int32) common.TopicPartition { return common.TopicPartition{Topic: topic, Partition: p} }
	var hinted, early []common.TopicPartition
	for p, leader := range h {
		if leader == dead {
			hinted = append(hinted, tp(p))
			if p != misnamed {
				early = append(early, tp(p))
			}
		}
	}
	sortTPs(hinted)
	sortTPs(early)
	// The failover's state calls on the new controller: its first read of
	// the topic's states is the hinted partitions, its first write elects
	// exactly those the dead broker led among them, and only then does it
	// read the rest.
	var topicCalls []stateCall
	for _, c := range logs[next.id].snapshot() {
		if slices.ContainsFunc(c.tps, func(x common.TopicPartition) bool { return x.Topic == topic }) {
			var mine []common.TopicPartition
			for _, x := range c.tps {
				if x.Topic == topic {
					mine = append(mine, x)
				}
			}
			topicCalls = append(topicCalls, stateCall{c.write, mine})
		}
	}
	// Only the controller reads and writes states through this client; the
	// test reads through its own.
	if len(topicCalls) < 3 {
		t.Fatalf("the new controller's state calls for %s: %v; want the hinted read, the early elections, the rest", topic, topicCalls)
	}
	if c := topicCalls[0]; c.write || !slices.Equal(c.tps, hinted) {
		t.Errorf("first state call %v; want a read of the hinted partitions %v", c, hinted)
	}
	if c := topicCalls[1]; !c.write || !slices.Equal(c.tps, early) {
		t.Errorf("second state call %v; want the elections of %v", c, early)
	}
	if c := topicCalls[2]; c.write || slices.ContainsFunc(c.tps, func(x common.TopicPartition) bool { return slices.Contains(hinted, x) }) || len(c.tps) != partitions-len(hinted) {
		t.Errorf("third state call %v; want a read of the %d partitions not hinted", c, partitions-len(hinted))
	}
	if r, ok := next.ctrl.LastFailover(); !ok || !r.Done || r.Epoch != epoch || !slices.Equal(r.EarlyElected, early) {
		t.Errorf("the new controller's LastFailover: %+v (ok %v); want done, epoch %d, early elections of %v", r, ok, epoch, early)
	}
	reads := stateReads(topicCalls)
	for p := int32(0); p < partitions; p++ {
		if reads[tp(p)] != 1 {
			t.Errorf("%s-%d read %d times by the new controller, want once", topic, p, reads[tp(p)])
		}
	}

	// Three batches: the hinted elections, the omitted partition's
	// election after the full read, the ISR shrinks.
	checkFailoverOutcome(t, cl, topic, partitions, before, dead, epoch, 3)
}
