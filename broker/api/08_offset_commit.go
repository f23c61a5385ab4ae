package api

// OffsetCommit (key 8), versions 0–8 (flexible from 8).
//
// Behaviour:
//   - v0 stores offsets in ZooKeeper, as Kafka does for that version:
//     /consumers/<group>/offsets/<topic>/<partition> (decimal string);
//     metadata longer than offset.metadata.max.bytes →
//     OFFSET_METADATA_TOO_LARGE, a partition unknown to the metadata cache →
//     UNKNOWN_TOPIC_OR_PARTITION;
//   - v1+ is delegated to the group coordinator (broker/group), which checks
//     coordinator ownership, generation and member, and appends to
//     __consumer_offsets.
//
// Authorization: Read on the group, else every partition answers
// GROUP_AUTHORIZATION_FAILED; then Read on each topic, the partitions of a
// denied topic answering TOPIC_AUTHORIZATION_FAILED while the others are
// committed.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleOffsetCommit(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.OffsetCommitRequest)
	if !a.authorize(ctx, r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, t := range req.Topics {
			resp.Topics = append(resp.Topics, offsetCommitErrorTopic(t, kerr.GroupAuthorizationFailed.Code))
		}
		return resp, nil
	}
	var denied []kmsg.OffsetCommitResponseTopic
	if check := a.topicChecker(ctx, r, kmsg.ACLOperationRead); check != nil {
		passed := *req
		passed.Topics = nil
		for _, t := range req.Topics {
			if check.allowed(t.Topic) {
				passed.Topics = append(passed.Topics, t)
			} else {
				denied = append(denied, offsetCommitErrorTopic(t, kerr.TopicAuthorizationFailed.Code))
			}
		}
		if len(denied) > 0 {
			req = &passed
		}
	}
	var resp *kmsg.OffsetCommitResponse
	switch {
	case len(req.Topics) == 0 && len(denied) > 0:
		resp = req.ResponseKind().(*kmsg.OffsetCommitResponse)
	case req.Version == 0:
		resp = a.offsetCommitV0(req)
	default:
		resp = a.groups.OffsetCommit(ctx, req)
	}
	resp.Topics = append(resp.Topics, denied...)
	return resp, nil
}

// offsetCommitErrorTopic answers every partition of t with code.
func offsetCommitErrorTopic(t kmsg.OffsetCommitRequestTopic, code int16) kmsg.OffsetCommitResponseTopic {
	rt := kmsg.NewOffsetCommitResponseTopic()
	rt.Topic = t.Topic
	for _, p := range t.Partitions {
		rp := kmsg.NewOffsetCommitResponseTopicPartition()
		rp.Partition, rp.ErrorCode = p.Partition, code
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}

// offsetCommitV0 serves version 0 (later versions go to the group
// coordinator).
func (a *Apis) offsetCommitV0(req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	maxMeta := a.conf().GroupCoordinator().OffsetMetadataMaxBytes
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		leaders, _ := a.meta.PartitionLeaders(t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			_, known := leaders[p.Partition]
			switch {
			case !known:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case p.Metadata != nil && len(*p.Metadata) > maxMeta:
				rp.ErrorCode = kerr.OffsetMetadataTooLarge.Code
			default:
				err := a.zk.SetConsumerOffset(req.Group, t.Topic, p.Partition, p.Offset)
				rp.ErrorCode = a.errorCode(err, "committing an offset to ZooKeeper failed", "group", req.Group, "topic", t.Topic, "partition", p.Partition)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
