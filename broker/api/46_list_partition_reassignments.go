package api

// ListPartitionReassignments (key 46), version 0 (flexible).
//
// Behaviour: only the active
// controller serves it (elsewhere NOT_CONTROLLER). topics null lists every
// reassignment in progress; otherwise only the named partitions that are
// being reassigned appear. Each entry carries the full replica set and the
// adding and removing replicas, as /brokers/topics/<t> records them.

import (
	"context"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/controller"
)

func (a *Apis) handleListPartitionReassignments(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ListPartitionReassignmentsRequest)
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	if a.notController(&resp.ErrorCode, &resp.ErrorMessage) {
		return resp, nil
	}
	parts := requestedPartitions(req.Topics, func(t kmsg.ListPartitionReassignmentsRequestTopic) (string, []int32) { return t.Topic, t.Partitions })
	ongoing, err := a.controller.ListPartitionReassignments(ctx, parts)
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = a.codeMessage(err, "listing partition reassignments failed")
		return resp, nil
	}
	resp.Topics = sortedByTopic(ongoing, func(topic string) kmsg.ListPartitionReassignmentsResponseTopic {
		rt := kmsg.NewListPartitionReassignmentsResponseTopic()
		rt.Topic = topic
		return rt
	}, func(rt *kmsg.ListPartitionReassignmentsResponseTopic, tp common.TopicPartition, o controller.ReplicaAssignment) {
		rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		rp.Partition = tp.Partition
		rp.Replicas = nonNil(o.Replicas)
		rp.AddingReplicas = nonNil(o.AddingReplicas)
		rp.RemovingReplicas = nonNil(o.RemovingReplicas)
		rt.Partitions = append(rt.Partitions, rp)
	})
	return resp, nil
}

func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

// requestedPartitions lists the partitions a request names, topic by topic
// (split gives a topic entry's name and partitions); nil when topics is
// nil, which asks for all of them.
func requestedPartitions[T any](topics []T, split func(T) (string, []int32)) []common.TopicPartition {
	if topics == nil {
		return nil
	}
	parts := []common.TopicPartition{}
	for _, t := range topics {
		name, ps := split(t)
		for _, p := range ps {
			parts = append(parts, common.TopicPartition{Topic: name, Partition: p})
		}
	}
	return parts
}

// sortedByTopic lists m's partitions in topic-partition order, one T per
// topic (started by topic, given the name), each partition added to its
// topic's entry by add.
func sortedByTopic[V, T any](m map[common.TopicPartition]V, topic func(name string) T, add func(t *T, tp common.TopicPartition, v V)) []T {
	var out []T
	prev := ""
	for i, tp := range slices.SortedFunc(maps.Keys(m), common.TopicPartition.Compare) {
		if i == 0 || tp.Topic != prev {
			out = append(out, topic(tp.Topic))
			prev = tp.Topic
		}
		add(&out[len(out)-1], tp, m[tp])
	}
	return out
}
