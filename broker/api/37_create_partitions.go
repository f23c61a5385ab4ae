package api

// CreatePartitions (key 37), versions 0–3 (flexible from 2).
//
// Behaviour:
//   - only the active controller serves it (NOT_CONTROLLER elsewhere);
//   - per topic: named twice → INVALID_REQUEST; unknown →
//     UNKNOWN_TOPIC_OR_PARTITION; count ≤ current → INVALID_PARTITIONS;
//     topic being reassigned → REASSIGNMENT_IN_PROGRESS; explicit
//     assignments must list exactly the new partitions, with the topic's
//     replication factor, known brokers and no duplicates →
//     INVALID_REPLICA_ASSIGNMENT;
//   - authorization (after the duplicate check): Alter on the topic, else
//     TOPIC_AUTHORIZATION_FAILED "The topic authorization is failed.";
//   - without assignments the new partitions continue the existing placement
//     (controller.AssignReplicasForNewPartitions);
//   - validate_only stops before writing; otherwise /brokers/topics/<t> is
//     rewritten (conditional on the version read, keeping topic_id) and the
//     request waits up to timeout_ms for the new partitions' leaders.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/quota"
	"github.com/klassik/klassik/controller"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

func (a *Apis) handleCreatePartitions(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.CreatePartitionsRequest)
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	alter := a.topicChecker(ctx, r, kmsg.ACLOperationAlter)
	// controller_mutation_rate: each topic's new partitions
	// (THROTTLING_QUOTA_EXCEEDED from v3, KIP-599).
	mutations := a.mutationQuota(r, 3)
	errs := eachTopic(a, req.Topics, func(t kmsg.CreatePartitionsRequestTopic) string { return t.Topic }, "duplicate topic in request: %s",
		func(_ int, t kmsg.CreatePartitionsRequestTopic) error {
			if !alter.allowed(t.Topic) {
				return denied(kerr.TopicAuthorizationFailed, "The topic authorization is failed.")
			}
			return a.addPartitions(ctx, t, req.ValidateOnly, mutations)
		})
	var waitFor []leaderWait
	for i, t := range req.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		rt.ErrorCode, rt.ErrorMessage = a.codeMessage(errs[i], "create partitions failed", "topic", t.Topic)
		if errs[i] == nil && !req.ValidateOnly {
			waitFor = append(waitFor, leaderWait{idx: i, topic: t.Topic, n: int(t.Count)})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	for _, w := range a.awaitLeaders(ctx, req.TimeoutMillis, waitFor) {
		resp.Topics[w.idx].ErrorCode = kerr.RequestTimedOut.Code
	}
	a.throttleMutations(r, resp, mutations)
	return resp, nil
}

func (a *Apis) addPartitions(ctx context.Context, t kmsg.CreatePartitionsRequestTopic, validateOnly bool, mutations *quota.Mutation) error {
	if err := validateTopicName(t.Topic); err != nil {
		return err
	}
	ta, version, err := a.zk.GetTopicAssignment(t.Topic)
	if errors.Is(err, zkclient.ErrTopicNotFound) {
		return fmt.Errorf("%w: the topic '%s' does not exist", kerr.UnknownTopicOrPartition, t.Topic)
	}
	if err != nil {
		return err
	}
	if marked, err := a.zk.IsTopicMarkedForDeletion(t.Topic); err != nil {
		return err
	} else if marked {
		return fmt.Errorf("%w: the topic '%s' is marked for deletion", kerr.InvalidTopicException, t.Topic)
	}
	if len(ta.Adding) > 0 || len(ta.Removing) > 0 {
		return fmt.Errorf("%w: a partition reassignment is in progress for the topic '%s'", kerr.ReassignmentInProgress, t.Topic)
	}
	cur := len(ta.Partitions)
	if int(t.Count) <= cur {
		return fmt.Errorf("%w: topic currently has %d partitions, %d would not be an increase", kerr.InvalidPartitions, cur, t.Count)
	}
	if len(ta.Partitions[0]) > 0 {
		if err := checkAssignmentSize(int64(t.Count), int64(len(ta.Partitions[0]))); err != nil {
			return err
		}
	}
	brokers, err := a.registeredBrokers()
	if err != nil {
		return err
	}
	var added map[int32][]int32
	if t.Assignment != nil {
		if len(t.Assignment) != int(t.Count)-cur {
			return fmt.Errorf("%w: increasing the number of partitions by %d but %d assignments provided",
				kerr.InvalidReplicaAssignment, int(t.Count)-cur, len(t.Assignment))
		}
		added = make(map[int32][]int32, len(t.Assignment))
		for i, as := range t.Assignment {
			added[int32(cur+i)] = as.Replicas
		}
		all := maps.Clone(ta.Partitions)
		maps.Copy(all, added)
		// Only the new partitions must name live brokers; existing ones may
		// sit on brokers that are down.
		ids := make([]int32, len(brokers))
		for i, b := range brokers {
			ids[i] = b.ID
		}
		for p, rs := range added {
			for _, b := range rs {
				if !slices.Contains(ids, b) {
					return fmt.Errorf("%w: unknown broker %d in the assignment of partition %d", kerr.InvalidReplicaAssignment, b, p)
				}
			}
		}
		if err := controller.ValidateReplicaAssignment(all, nil); err != nil {
			return err
		}
	} else {
		added, err = controller.AssignReplicasForNewPartitions(brokers, ta.Partitions, int(t.Count))
		if err != nil {
			return err
		}
	}
	if validateOnly {
		return nil
	}
	if err := mutations.Record(float64(int(t.Count) - cur)); err != nil {
		return err
	}
	next := ta
	next.Partitions = maps.Clone(ta.Partitions)
	maps.Copy(next.Partitions, added)
	if _, err := a.zk.UpdateTopicAssignment(t.Topic, next, version); err != nil {
		return err
	}
	a.logger.Info("added partitions", "topic", t.Topic, "from", cur, "to", t.Count)
	return nil
}
