package api

// OffsetFetch (key 9), versions 0–8 (flexible from 6; v8 batches groups).
//
// Behaviour:
//   - v0 reads ZooKeeper (/consumers/<group>/offsets/<topic>/<partition>),
//     as Kafka does for that version: a partition unknown to the metadata
//     cache, or without a committed offset, answers offset −1 with
//     UNKNOWN_TOPIC_OR_PARTITION;
//   - v1+ is delegated to the group coordinator (broker/group).
//
// Authorization: Describe on the group, else GROUP_AUTHORIZATION_FAILED
// (top level in v2–v7, per group in v8, per partition before v2); then
// Describe on each topic: a denied topic's partitions answer offset −1
// with TOPIC_AUTHORIZATION_FAILED, and a request for all of a group's
// offsets leaves denied topics out. A coordinator error (v2+) is answered
// alone, as Kafka does.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleOffsetFetch(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.OffsetFetchRequest)
	if req.Version >= 8 {
		return a.offsetFetchGroups(ctx, r, req), nil
	}
	if !a.authorize(ctx, r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
		code := kerr.GroupAuthorizationFailed.Code
		if req.Version >= 2 {
			resp.ErrorCode = code
		} else {
			for _, t := range req.Topics {
				resp.Topics = append(resp.Topics, offsetFetchErrorTopic(t.Topic, t.Partitions, code))
			}
		}
		return resp, nil
	}
	check := a.topicChecker(ctx, r, kmsg.ACLOperationDescribe)
	passed := req
	var denied []kmsg.OffsetFetchResponseTopic
	if check != nil && req.Topics != nil {
		cp := *req
		cp.Topics = make([]kmsg.OffsetFetchRequestTopic, 0, len(req.Topics))
		for _, t := range req.Topics {
			if check.allowed(t.Topic) {
				cp.Topics = append(cp.Topics, t)
			} else {
				denied = append(denied, offsetFetchErrorTopic(t.Topic, t.Partitions, kerr.TopicAuthorizationFailed.Code))
			}
		}
		passed = &cp
	}
	var resp *kmsg.OffsetFetchResponse
	if req.Version == 0 {
		resp = a.offsetFetchV0(passed)
	} else {
		resp = a.groups.OffsetFetch(ctx, passed)
	}
	if resp.ErrorCode != 0 {
		return resp, nil
	}
	if check != nil && req.Topics == nil {
		resp.Topics = slices.DeleteFunc(resp.Topics, func(t kmsg.OffsetFetchResponseTopic) bool { return !check.allowed(t.Topic) })
	}
	resp.Topics = append(resp.Topics, denied...)
	return resp, nil
}

// offsetFetchGroups serves v8+, which batches groups: each group is
// authorized on its own.
func (a *Apis) offsetFetchGroups(ctx context.Context, r *request, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	if a.authorizer == nil {
		return a.groups.OffsetFetch(ctx, req)
	}
	check := a.topicChecker(ctx, r, kmsg.ACLOperationDescribe)
	passed := *req
	passed.Groups = nil
	deniedGroup := map[string]bool{}
	deniedTopics := map[string][]kmsg.OffsetFetchResponseGroupTopic{}
	for _, g := range req.Groups {
		if !a.authorize(ctx, r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup, g.Group) {
			deniedGroup[g.Group] = true
			continue
		}
		if g.Topics != nil {
			topics := make([]kmsg.OffsetFetchRequestGroupTopic, 0, len(g.Topics))
			for _, t := range g.Topics {
				if check.allowed(t.Topic) {
					topics = append(topics, t)
					continue
				}
				et := offsetFetchErrorTopic(t.Topic, t.Partitions, kerr.TopicAuthorizationFailed.Code)
				gt := kmsg.NewOffsetFetchResponseGroupTopic()
				gt.Topic = et.Topic
				for _, p := range et.Partitions {
					gt.Partitions = append(gt.Partitions, kmsg.OffsetFetchResponseGroupTopicPartition{
						Partition: p.Partition, Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: p.Metadata, ErrorCode: p.ErrorCode})
				}
				deniedTopics[g.Group] = append(deniedTopics[g.Group], gt)
			}
			g.Topics = topics
		}
		passed.Groups = append(passed.Groups, g)
	}
	answered := map[string]kmsg.OffsetFetchResponseGroup{}
	if len(passed.Groups) > 0 {
		for _, g := range a.groups.OffsetFetch(ctx, &passed).Groups {
			answered[g.Group] = g
		}
	}
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	for _, g := range req.Groups {
		out := kmsg.NewOffsetFetchResponseGroup()
		out.Group = g.Group
		switch got, ok := answered[g.Group]; {
		case deniedGroup[g.Group]:
			out.ErrorCode = kerr.GroupAuthorizationFailed.Code
		case ok:
			out = got
			if out.ErrorCode == 0 {
				if g.Topics == nil {
					out.Topics = slices.DeleteFunc(out.Topics, func(t kmsg.OffsetFetchResponseGroupTopic) bool { return !check.allowed(t.Topic) })
				}
				out.Topics = append(out.Topics, deniedTopics[g.Group]...)
			}
		}
		resp.Groups = append(resp.Groups, out)
	}
	return resp
}

// offsetFetchErrorTopic answers partitions of topic with code: offset −1,
// empty metadata (Kafka's UNAUTHORIZED_PARTITION for the topic error).
func offsetFetchErrorTopic(topic string, partitions []int32, code int16) kmsg.OffsetFetchResponseTopic {
	rt := kmsg.NewOffsetFetchResponseTopic()
	rt.Topic = topic
	for _, p := range partitions {
		rp := kmsg.NewOffsetFetchResponseTopicPartition()
		rp.Partition, rp.Offset, rp.Metadata, rp.ErrorCode = p, -1, kmsg.StringPtr(""), code
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}

// offsetFetchV0 serves version 0 (later versions go to the group
// coordinator).
func (a *Apis) offsetFetchV0(req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
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
	return resp
}
