package faulttest

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kadmCreateRequest builds a CreateTopics request with an explicit replica
// assignment, so each scenario knows which broker leads which partition
// (the first replica is the preferred leader).
func kadmCreateRequest(topic string, assignment map[int32][]int32, configs map[string]*string) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 20000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = topic
	rt.NumPartitions = -1
	rt.ReplicationFactor = -1
	parts := make([]int32, 0, len(assignment))
	for p := range assignment {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	for _, p := range parts {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition = p
		ra.Replicas = append([]int32(nil), assignment[p]...)
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	}
	keys := make([]string, 0, len(configs))
	for k := range configs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name = k
		c.Value = configs[k]
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

func kerrCode(code int16) error { return kerr.ErrorForCode(code) }

// RoundRobin returns an assignment of n partitions over brokers ids 1..nb
// with rf replicas each, rotating the preferred leader so each broker leads
// some partitions.
func RoundRobin(n, nb, rf int) map[int32][]int32 {
	a := map[int32][]int32{}
	for p := 0; p < n; p++ {
		var rs []int32
		for r := 0; r < rf; r++ {
			rs = append(rs, int32((p+r)%nb+1))
		}
		a[int32(p)] = rs
	}
	return a
}
