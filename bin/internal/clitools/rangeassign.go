package clitools

import (
	"slices"
	"strconv"
)

// RangeAssign is the old ZooKeeper consumer's range assignment for one
// topic (Kafka's kafka.consumer.RangeAssignor): threads and partitions are
// sorted, each thread gets len(partitions)/len(threads) consecutive
// partitions and the first len(partitions)%len(threads) threads one more.
// Every consumer computes the same answer from the same ZooKeeper view,
// which is what makes the decentralised rebalance converge. Threads that
// get nothing are absent from the result.
func RangeAssign(threads []string, partitions []int32) map[string][]int32 {
	if len(threads) == 0 || len(partitions) == 0 {
		return map[string][]int32{}
	}
	ts := slices.Clone(threads)
	slices.Sort(ts)
	ts = slices.Compact(ts)
	ps := slices.Clone(partitions)
	slices.Sort(ps)
	ps = slices.Compact(ps)
	per, extra := len(ps)/len(ts), len(ps)%len(ts)
	out := map[string][]int32{}
	for i, t := range ts {
		start := per*i + min(i, extra)
		n := per
		if i < extra {
			n++
		}
		if n > 0 {
			out[t] = slices.Clone(ps[start : start+n])
		}
	}
	return out
}

// ThreadIDs lists a consumer's stream thread ids, "<consumerId>-<i>" for i
// in [0, streams), the strings the owner znodes hold.
func ThreadIDs(consumerID string, streams int) []string {
	out := make([]string, 0, streams)
	for i := 0; i < streams; i++ {
		out = append(out, consumerID+"-"+strconv.Itoa(i))
	}
	return out
}
