package broker

import (
	"context"

	"github.com/klassik/klassik/broker/api"
	"github.com/klassik/klassik/controller"
)

// AlterPartitionReassignments adapts the controller's KIP-455 entry point to
// the api layer's topic -> partition maps.
func (a ctrlAdapter) AlterPartitionReassignments(ctx context.Context, targets map[string]map[int32][]int32) (map[string]map[int32]error, error) {
	tps := map[controller.TopicPartition][]int32{}
	for t, ps := range targets {
		for p, replicas := range ps {
			tps[controller.TopicPartition{Topic: t, Partition: p}] = replicas
		}
	}
	errs, err := a.c.AlterPartitionReassignments(ctx, tps)
	if err != nil {
		return nil, err
	}
	out := map[string]map[int32]error{}
	for t, ps := range targets {
		out[t] = map[int32]error{}
		for p := range ps {
			out[t][p] = errs[controller.TopicPartition{Topic: t, Partition: p}]
		}
	}
	return out, nil
}

// ListPartitionReassignments adapts the controller's listing.
func (a ctrlAdapter) ListPartitionReassignments(ctx context.Context, partitions map[string][]int32) (map[string]map[int32]api.OngoingReassignment, error) {
	var tps []controller.TopicPartition
	if partitions != nil {
		tps = []controller.TopicPartition{}
		for t, ps := range partitions {
			for _, p := range ps {
				tps = append(tps, controller.TopicPartition{Topic: t, Partition: p})
			}
		}
	}
	ongoing, err := a.c.ListPartitionReassignments(ctx, tps)
	if err != nil {
		return nil, err
	}
	out := map[string]map[int32]api.OngoingReassignment{}
	for tp, ra := range ongoing {
		if out[tp.Topic] == nil {
			out[tp.Topic] = map[int32]api.OngoingReassignment{}
		}
		out[tp.Topic][tp.Partition] = api.OngoingReassignment{Replicas: ra.Replicas, Adding: ra.AddingReplicas, Removing: ra.RemovingReplicas}
	}
	return out, nil
}

// ctrlAdapter exposes the controller module to the api layer.
type ctrlAdapter struct{ c *controller.Controller }

func (a ctrlAdapter) IsActive() bool { return a.c.IsActive() }

func (a ctrlAdapter) ControlledShutdown(ctx context.Context, brokerID int32, brokerEpoch int64) (map[string][]int32, error) {
	tps, err := a.c.ControlledShutdown(ctx, brokerID, brokerEpoch)
	if err != nil {
		return nil, err
	}
	out := map[string][]int32{}
	for _, tp := range tps {
		out[tp.Topic] = append(out[tp.Topic], tp.Partition)
	}
	return out, nil
}

func (a ctrlAdapter) ElectLeaders(ctx context.Context, kind int8, partitions map[string][]int32) (map[string]map[int32]error, error) {
	var tps []controller.TopicPartition
	if partitions != nil {
		tps = []controller.TopicPartition{}
		for t, ps := range partitions {
			for _, p := range ps {
				tps = append(tps, controller.TopicPartition{Topic: t, Partition: p})
			}
		}
	}
	outcomes, err := a.c.ElectLeaders(ctx, controller.ElectionType(kind), tps)
	if err != nil {
		return nil, err
	}
	out := map[string]map[int32]error{}
	for tp, o := range outcomes {
		if out[tp.Topic] == nil {
			out[tp.Topic] = map[int32]error{}
		}
		out[tp.Topic][tp.Partition] = o.Err
	}
	return out, nil
}
