package api

// AlterPartitionReassignments (key 45), version 0 (flexible).
//
// Behaviour: only the
// active controller serves it; elsewhere the top-level error is
// NOT_CONTROLLER, which makes clients refresh metadata and retry at the
// controller. A partition with replicas starts (or changes) a
// reassignment; null replicas cancels the one in progress. Each partition
// gets the controller's verdict: NONE when accepted,
// NO_REASSIGNMENT_IN_PROGRESS for a cancel with nothing to cancel,
// INVALID_REPLICA_ASSIGNMENT, UNKNOWN_TOPIC_OR_PARTITION, ...

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
)

func (a *Apis) handleAlterPartitionReassignments(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.AlterPartitionAssignmentsRequest)
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	if a.notController(&resp.ErrorCode, &resp.ErrorMessage) {
		return resp, nil
	}
	// One walk of the request collects the targets and lays out the answer;
	// the controller's verdicts fill it in.
	targets := map[common.TopicPartition][]int32{}
	for _, t := range req.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			targets[common.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.Replicas // nil cancels
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	outcomes, err := a.controller.AlterPartitionReassignments(ctx, targets)
	if err != nil {
		resp.Topics = nil
		resp.ErrorCode, resp.ErrorMessage = a.codeMessage(err, "partition reassignment failed")
		return resp, nil
	}
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			perr := outcomes[common.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}]
			rp.ErrorCode, rp.ErrorMessage = a.codeMessage(perr, "partition reassignment failed", "topic", rt.Topic, "partition", rp.Partition)
		}
	}
	return resp, nil
}

// notController sets a response's top-level error to NOT_CONTROLLER (which
// makes clients refresh metadata and retry at the controller) when this
// broker is not the active controller, and reports whether it did.
func (a *Apis) notController(code *int16, msg **string) bool {
	if a.controller != nil && a.controller.IsActive() {
		return false
	}
	*code = kerr.NotController.Code
	m := "This is not the correct controller for this cluster."
	*msg = &m
	return true
}
