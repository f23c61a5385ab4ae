package api

// ControlledShutdown (key 7), versions 0–3 (flexible from 3; v0 uses request
// header v0 without a client id). Broker → controller.
//
// Behaviour: only the active
// controller serves it; any other broker answers NOT_CONTROLLER and the
// shutting-down broker retries against the controller it finds next. The
// controller moves leadership away from the broker and answers with the
// partitions it still leads (RF > 1); the caller retries until that list is
// empty. Errors from the controller (STALE_BROKER_EPOCH,
// BROKER_NOT_AVAILABLE, STALE_CONTROLLER_EPOCH when it lost controllership
// meanwhile) are passed through. v0/v1 carry no broker epoch: −1 means
// "do not check".

import (
	"context"
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/controller"
)

// Controller is what the api layer needs from this broker's controller
// module (*controller.Controller). Every call but IsActive is served only
// by the active controller and blocks until its event loop answered or ctx
// ends.
type Controller interface {
	// IsActive reports whether this broker is the active controller.
	IsActive() bool
	// ControlledShutdown runs the controller side of a controlled shutdown
	// and returns the partitions brokerID still leads.
	ControlledShutdown(ctx context.Context, brokerID int32, brokerEpoch int64) (remaining []common.TopicPartition, err error)
	// ElectLeaders runs an election of kind for partitions (nil = all) and
	// returns each partition's outcome (Err nil = elected).
	ElectLeaders(ctx context.Context, kind controller.ElectionType, partitions []common.TopicPartition) (map[common.TopicPartition]controller.ElectionOutcome, error)
	// AlterPartitionReassignments starts (replicas non-nil) or cancels
	// (nil) reassignments and returns each partition's outcome (nil =
	// accepted).
	AlterPartitionReassignments(ctx context.Context, targets map[common.TopicPartition][]int32) (map[common.TopicPartition]error, error)
	// ListPartitionReassignments returns the reassignments in progress
	// among partitions (nil = all): replicas, adding and removing.
	ListPartitionReassignments(ctx context.Context, partitions []common.TopicPartition) (map[common.TopicPartition]controller.ReplicaAssignment, error)
}

var _ Controller = (*controller.Controller)(nil)

func (a *Apis) handleControlledShutdown(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ControlledShutdownRequest)
	resp := req.ResponseKind().(*kmsg.ControlledShutdownResponse)
	if a.controller == nil || !a.controller.IsActive() {
		resp.ErrorCode = kerr.NotController.Code
		return resp, nil
	}
	epoch := int64(-1)
	if req.Version >= 2 {
		epoch = req.BrokerEpoch
	}
	remaining, err := a.controller.ControlledShutdown(ctx, req.BrokerID, epoch)
	if err != nil {
		if errors.Is(err, context.Canceled) || a.stoppingNow() {
			// This broker (the controller) is itself shutting down: the
			// requester should find the next controller and retry.
			resp.ErrorCode = kerr.NotController.Code
			return resp, nil
		}
		resp.ErrorCode = a.errorCode(err, "controlled shutdown failed", "requester", req.BrokerID)
		return resp, nil
	}
	remaining = slices.Clone(remaining)
	slices.SortFunc(remaining, common.TopicPartition.Compare)
	for _, tp := range remaining {
		rp := kmsg.NewControlledShutdownResponsePartitionsRemaining()
		rp.Topic = tp.Topic
		rp.Partition = tp.Partition
		resp.PartitionsRemaining = append(resp.PartitionsRemaining, rp)
	}
	return resp, nil
}

// stoppingNow reports whether Close was called (the broker is shutting down).
func (a *Apis) stoppingNow() bool {
	select {
	case <-a.stopping:
		return true
	default:
		return false
	}
}
