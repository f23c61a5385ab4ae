package api

// DeleteTopics (key 20), versions 0–6 (flexible from 4; v6 by name or id).
//
// Behaviour:
//   - only the active controller serves it (NOT_CONTROLLER elsewhere);
//   - delete.topic.enable=false → TOPIC_DELETION_DISABLED (v3+;
//     INVALID_REQUEST before);
//   - v6: an entry with both name and id → every entry INVALID_REQUEST; an
//     unknown id → UNKNOWN_TOPIC_ID; ids are resolved through ZooKeeper;
//   - unknown name → UNKNOWN_TOPIC_OR_PARTITION; invalid name →
//     INVALID_TOPIC_EXCEPTION; a topic already marked is not an error;
//   - authorization: Delete on the topic, else TOPIC_AUTHORIZATION_FAILED;
//     a topic named by id (v6) that the principal may not Describe answers
//     TOPIC_AUTHORIZATION_FAILED with a null name;
//   - otherwise /admin/delete_topics/<t> is created and the controller
//     deletes asynchronously; the request waits up to timeout_ms for the
//     topic to leave this broker's metadata cache → else REQUEST_TIMED_OUT.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/zkpaths/zkclient"
)

func (a *Apis) handleDeleteTopics(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DeleteTopicsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)

	// Normalise v0–v5 names and v6 entries into one list.
	type entry struct {
		name *string
		id   [16]byte
	}
	var entries []entry
	if req.Version >= 6 {
		for _, t := range req.Topics {
			entries = append(entries, entry{name: t.Topic, id: t.TopicID})
		}
	} else {
		for _, n := range req.TopicNames {
			n := n
			entries = append(entries, entry{name: &n})
		}
	}
	bothSet := false
	for _, e := range entries {
		if e.name != nil && e.id != [16]byte{} {
			bothSet = true
		}
	}

	isController := a.controller != nil && a.controller.IsActive()
	mutations := a.mutationQuota(r, 5)
	var ids map[[16]byte]string // resolved lazily
	var waitFor []int
	describe := a.topicChecker(ctx, r, kmsg.ACLOperationDescribe)
	deletable := a.topicChecker(ctx, r, kmsg.ACLOperationDelete)
	for _, e := range entries {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID = e.name, e.id
		var err error
		switch {
		case bothSet:
			err = fmt.Errorf("%w: topic name and topic id cannot both be set", kerr.InvalidRequest)
		case !isController:
			err = fmt.Errorf("%w: this is not the correct controller for this cluster", kerr.NotController)
		case !a.conf().DeleteTopicEnable:
			if req.Version >= 3 {
				err = fmt.Errorf("%w: topic deletion is disabled", kerr.TopicDeletionDisabled)
			} else {
				err = fmt.Errorf("%w: topic deletion is disabled", kerr.InvalidRequest)
			}
		default:
			if e.name == nil {
				if ids == nil {
					ids, err = a.topicIDs(ctx)
				}
				if err == nil {
					if n, ok := ids[e.id]; ok {
						name := n
						rt.Topic = &name
					} else {
						err = fmt.Errorf("%w: topic id %s does not exist", kerr.UnknownTopicID, encodeTopicID(e.id))
					}
				}
			}
			if err == nil && e.name == nil && !describe.allowed(*rt.Topic) {
				rt.Topic = nil
				err = denied(kerr.TopicAuthorizationFailed, topicAuthorizationFailedMessage)
			}
			if err == nil && !deletable.allowed(*rt.Topic) {
				err = denied(kerr.TopicAuthorizationFailed, topicAuthorizationFailedMessage)
			}
			if err == nil {
				// controller_mutation_rate: the topic's partitions
				// (THROTTLING_QUOTA_EXCEEDED from v5, KIP-599).
				leaders, _ := a.meta.PartitionLeaders(*rt.Topic)
				err = mutations.Record(float64(len(leaders)))
			}
			if err == nil {
				err = a.markForDeletion(ctx, *rt.Topic)
			}
			if err == nil {
				waitFor = append(waitFor, len(resp.Topics))
			}
		}
		if err != nil {
			rt.ErrorCode, rt.ErrorMessage = a.codeMessage(err, "delete topic failed")
			if req.Version < 5 {
				rt.ErrorMessage = nil
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}

	if len(waitFor) > 0 && req.TimeoutMillis > 0 {
		gone := func(i int) bool {
			_, known := a.meta.PartitionLeaders(*resp.Topics[i].Topic)
			return !known
		}
		a.waitForMetadata(ctx, time.Duration(req.TimeoutMillis)*time.Millisecond, func() bool {
			for _, i := range waitFor {
				if !gone(i) {
					return false
				}
			}
			return true
		})
		for _, i := range waitFor {
			if !gone(i) {
				resp.Topics[i].ErrorCode = kerr.RequestTimedOut.Code
			}
		}
	}
	a.throttleMutations(r, resp, mutations)
	return resp, nil
}

// requireTopic checks that topic is a valid name of an existing topic
// (UNKNOWN_TOPIC_OR_PARTITION when it does not exist).
func (a *Apis) requireTopic(topic string) error {
	if err := validateTopicName(topic); err != nil {
		return err
	}
	if _, _, err := a.zk.GetTopicAssignment(topic); err != nil {
		if errors.Is(err, zkclient.ErrTopicNotFound) {
			return fmt.Errorf("%w: topic %s does not exist", kerr.UnknownTopicOrPartition, topic)
		}
		return err
	}
	return nil
}

// markForDeletion validates the topic and creates its deletion marker.
func (a *Apis) markForDeletion(ctx context.Context, topic string) error {
	if err := a.requireTopic(topic); err != nil {
		return err
	}
	err := a.zk.CreateDeleteTopicPath(topic)
	if errors.Is(err, zkclient.ErrTopicAlreadyMarkedForDeletion) {
		return nil // already marked: the deletion is under way
	}
	if err == nil {
		a.logger.Info("marked topic for deletion", "topic", topic)
	}
	return err
}

// topicIDs maps every topic id in ZooKeeper to its name.
func (a *Apis) topicIDs(ctx context.Context) (map[[16]byte]string, error) {
	topics, err := a.zk.GetAllTopics()
	if err != nil {
		return nil, err
	}
	out := make(map[[16]byte]string, len(topics))
	for _, t := range topics {
		ta, _, err := a.zk.GetTopicAssignment(t)
		if errors.Is(err, zkclient.ErrTopicNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if id := decodeTopicID(ta.TopicID); id != [16]byte{} {
			out[id] = t
		}
	}
	return out, nil
}

func encodeTopicID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }
