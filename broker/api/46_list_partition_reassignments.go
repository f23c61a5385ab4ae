package api

// ListPartitionReassignments (key 46), version 0 (flexible).
//
// Behaviour (protocol.md §9.32, controller.md §15.5): only the active
// controller serves it (elsewhere NOT_CONTROLLER). topics null lists every
// reassignment in progress; otherwise only the named partitions that are
// being reassigned appear. Each entry carries the full replica set and the
// adding and removing replicas, as /brokers/topics/<t> records them.

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleListPartitionReassignments(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ListPartitionReassignmentsRequest)
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	reassigner, ok := a.controller.(Reassigner)
	if a.controller == nil || !ok || !a.controller.IsActive() {
		resp.ErrorCode = kerr.NotController.Code
		msg := "This is not the correct controller for this cluster."
		resp.ErrorMessage = &msg
		return resp, nil
	}
	var parts map[string][]int32
	if req.Topics != nil {
		parts = map[string][]int32{}
		for _, t := range req.Topics {
			parts[t.Topic] = append(parts[t.Topic], t.Partitions...)
		}
	}
	ongoing, err := reassigner.ListPartitionReassignments(ctx, parts)
	if err != nil {
		resp.ErrorCode = a.errorCode(err, "listing partition reassignments failed")
		resp.ErrorMessage = errorMessage(err)
		return resp, nil
	}
	topics := make([]string, 0, len(ongoing))
	for t := range ongoing {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		rt := kmsg.NewListPartitionReassignmentsResponseTopic()
		rt.Topic = t
		ps := make([]int32, 0, len(ongoing[t]))
		for p := range ongoing[t] {
			ps = append(ps, p)
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		for _, p := range ps {
			o := ongoing[t][p]
			rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
			rp.Partition = p
			rp.Replicas = nonNil(o.Replicas)
			rp.AddingReplicas = nonNil(o.Adding)
			rp.RemovingReplicas = nonNil(o.Removing)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}
