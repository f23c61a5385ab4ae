package group

import gometrics "github.com/rcrowley/go-metrics"

// RegisterMetrics registers Kafka's GroupMetadataManager gauges in r:
// NumOffsets, NumGroups and NumGroups<State> for every state, under
// kafka.coordinator.group.GroupMetadataManager. They are computed on read.
func (c *Coordinator) RegisterMetrics(r gometrics.Registry) {
	if r == nil {
		return
	}
	prefix := "kafka.coordinator.group.GroupMetadataManager."
	_ = r.Register(prefix+"NumOffsets", gometrics.NewFunctionalGauge(func() int64 {
		n, _ := c.counts()
		return int64(n)
	}))
	_ = r.Register(prefix+"NumGroups", gometrics.NewFunctionalGauge(func() int64 {
		_, byState := c.counts()
		total := 0
		for _, k := range byState {
			total += k
		}
		return int64(total)
	}))
	for _, s := range []State{PreparingRebalance, CompletingRebalance, Stable, Dead, Empty} {
		_ = r.Register(prefix+"NumGroups"+s.String(), gometrics.NewFunctionalGauge(func() int64 {
			_, byState := c.counts()
			return int64(byState[s])
		}))
	}
}

// counts returns the number of cached offsets and of groups per state.
func (c *Coordinator) counts() (offsets int, byState map[State]int) {
	c.mu.Lock()
	gs := make([]*Group, 0, len(c.groups))
	for _, g := range c.groups {
		gs = append(gs, g)
	}
	c.mu.Unlock()
	byState = map[State]int{}
	for _, g := range gs {
		g.mu.Lock()
		offsets += len(g.offsets)
		byState[g.state]++
		g.mu.Unlock()
	}
	return offsets, byState
}
