package api

// ElectLeaders (key 43), versions 0–2 (flexible from 2; v1 adds
// election_type and a top-level error).
//
// Behaviour: only the active
// controller serves it — elsewhere every partition (v0) or the top level
// (v1+) answers NOT_CONTROLLER. election_type 0 = preferred (v0 is always
// preferred), 1 = unclean; topic_partitions null = every partition. Each
// partition gets the controller's outcome: NONE when the election moved
// leadership, ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
// ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION.
//
// Authorization (before the controller check): Alter on the Cluster, else
// CLUSTER_AUTHORIZATION_FAILED at the top level (v1+) and for every
// requested partition.

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/controller"
)

func (a *Apis) handleElectLeaders(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ElectLeadersRequest)
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	kind := int8(0)
	if req.Version >= 1 {
		kind = req.ElectionType
	}
	parts := requestedPartitions(req.Topics, func(t kmsg.ElectLeadersRequestTopic) (string, []int32) { return t.Topic, t.Partitions })
	outcomes := map[common.TopicPartition]error{}
	var err error
	switch {
	case !a.authorize(ctx, r, kmsg.ACLOperationAlter, kmsg.ACLResourceTypeCluster, clusterResource):
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		for _, tp := range parts {
			outcomes[tp] = denied(kerr.ClusterAuthorizationFailed, "")
		}
	case a.controller == nil || !a.controller.IsActive():
		err = fmt.Errorf("%w: this is not the correct controller for this cluster", kerr.NotController)
	case kind != 0 && kind != 1:
		err = fmt.Errorf("%w: unknown election type %d", kerr.InvalidRequest, kind)
	default:
		var elected map[common.TopicPartition]controller.ElectionOutcome
		elected, err = a.controller.ElectLeaders(ctx, controller.ElectionType(kind), parts)
		for tp, o := range elected {
			outcomes[tp] = o.Err
		}
	}
	if err != nil {
		code := a.errorCode(err, "leader election failed")
		if req.Version >= 1 {
			resp.ErrorCode = code
			return resp, nil
		}
		// v0 has no top-level error: every requested partition carries it.
		outcomes = map[common.TopicPartition]error{}
		for _, tp := range parts {
			outcomes[tp] = err
		}
	}
	resp.Topics = sortedByTopic(outcomes, func(topic string) kmsg.ElectLeadersResponseTopic {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = topic
		return rt
	}, func(rt *kmsg.ElectLeadersResponseTopic, tp common.TopicPartition, perr error) {
		rp := kmsg.NewElectLeadersResponseTopicPartition()
		rp.Partition = tp.Partition
		if perr != nil {
			var ke *kerr.Error
			if !errors.As(perr, &ke) {
				perr = fmt.Errorf("%w: %v", kerr.UnknownServerError, perr)
			}
			rp.ErrorCode, rp.ErrorMessage = a.codeMessage(perr, "leader election failed", "topic", tp.Topic, "partition", tp.Partition)
		}
		rt.Partitions = append(rt.Partitions, rp)
	})
	return resp, nil
}
