package api

// OffsetFetch (key 9), versions 0–8 (flexible from 6; v8 batches groups).
//
// Behaviour:
//   - v0 reads ZooKeeper (/consumers/<group>/offsets/<topic>/<partition>),
//     as Kafka does for that version: a partition unknown to the metadata
//     cache, or without a committed offset, answers offset −1 with
//     UNKNOWN_TOPIC_OR_PARTITION;
//   - v1+ is delegated to the group coordinator (broker/group).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleOffsetFetchV0 serves version 0 (the routing table sends v1+ to the group
// coordinator).
func (a *Apis) handleOffsetFetchV0(_ context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.OffsetFetchRequest)
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		leaders, _ := a.meta.PartitionLeaders(t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition = p
			rp.Offset = -1
			rp.Metadata = kmsg.StringPtr("")
			if _, known := leaders[p]; !known {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			} else if off, ok, err := a.zk.GetConsumerOffset(req.Group, t.Topic, p); err != nil {
				rp.ErrorCode = a.errorCode(err, "reading an offset from ZooKeeper failed", "group", req.Group, "topic", t.Topic, "partition", p)
			} else if !ok {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			} else {
				rp.Offset = off
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
