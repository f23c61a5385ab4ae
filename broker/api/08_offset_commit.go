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

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleOffsetCommitV0 serves version 0 (the routing table sends v1+ to the group
// coordinator).
func (a *Apis) handleOffsetCommitV0(_ context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.OffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	maxMeta := a.cfg.GroupCoordinator().OffsetMetadataMaxBytes
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
	return resp, nil
}
