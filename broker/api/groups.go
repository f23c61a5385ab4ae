package api

// Wiring of the group coordinator (broker/group, Kafka's GroupCoordinator)
// into the request path: the interface this layer needs and the creation of
// the __consumer_offsets topic FindCoordinator triggers.

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/group"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/controller"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// GroupCoordinator is the part of *group.Coordinator the api layer routes
// to. Each method owns every rule of its API (coordinator ownership,
// generations, members, offsets); this layer only finds the coordinator.
type GroupCoordinator interface {
	PartitionFor(groupID string) int32
	JoinGroup(ctx context.Context, req *kmsg.JoinGroupRequest, info group.JoinInfo) *kmsg.JoinGroupResponse
	SyncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse
	Heartbeat(ctx context.Context, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse
	LeaveGroup(ctx context.Context, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse
	OffsetCommit(ctx context.Context, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse
	OffsetFetch(ctx context.Context, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse
	OffsetDelete(ctx context.Context, req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse
	DescribeGroups(ctx context.Context, req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse
	ListGroups(ctx context.Context, req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse
	DeleteGroups(ctx context.Context, req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse
}

var _ GroupCoordinator = (*group.Coordinator)(nil)

// ensureOffsetsTopic creates __consumer_offsets when it does not exist, as
// Kafka's FindCoordinator does regardless of auto.create.topics.enable:
// offsets.topic.num.partitions partitions, offsets.topic.replication.factor
// replicas (capped at the registered brokers, with a warning), compacted,
// compression "producer", offsets.topic.segment.bytes. It reports whether
// the topic existed already.
func (a *Apis) ensureOffsetsTopic(ctx context.Context) (bool, error) {
	const topic = config.GroupMetadataTopicName
	if _, _, err := a.zk.GetTopicAssignment(topic); err == nil {
		return true, nil
	} else if !errors.Is(err, zkclient.ErrTopicNotFound) {
		return false, err
	}
	gc := a.cfg.GroupCoordinator()
	brokers, err := a.registeredBrokers()
	if err != nil {
		return false, err
	}
	rf := int(gc.OffsetsTopicReplication)
	if len(brokers) == 0 {
		return false, fmt.Errorf("%w: no alive brokers to host the offsets topic", kerr.CoordinatorNotAvailable)
	}
	if len(brokers) < rf {
		// As the classic brokers did: cap at the live brokers and warn,
		// rather than leave consumer groups without a coordinator.
		a.logger.Warn("fewer alive brokers than offsets.topic.replication.factor; creating the offsets topic with fewer replicas",
			"alive_brokers", len(brokers), "offsets.topic.replication.factor", rf)
		rf = len(brokers)
	}
	assignment, err := controller.AssignReplicasToBrokers(controller.ApplyRackAwareMode(brokers, controller.RackAwareSafe),
		int(gc.OffsetsTopicPartitions), rf, a.fixedStartIndex, -1)
	if err != nil {
		return false, err
	}
	cfgs := map[string]string{
		"cleanup.policy":   "compact",
		"compression.type": "producer",
		"segment.bytes":    fmt.Sprint(gc.OffsetsTopicSegmentBytes),
	}
	err = a.createTopic(ctx, topicSpec{name: topic, assignment: assignment, configs: cfgs})
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return false, err
	}
	return false, nil
}

// coordinatorFor answers one FindCoordinator key of type group: the leader
// of the group's __consumer_offsets partition on the request's listener.
func (a *Apis) coordinatorFor(ctx context.Context, key string, listener string) (nodeID int32, host string, port int32, err error) {
	existed, err := a.ensureOffsetsTopic(ctx)
	if err != nil {
		return -1, "", -1, err
	}
	if !existed {
		return -1, "", -1, fmt.Errorf("%w: the offsets topic is being created", kerr.CoordinatorNotAvailable)
	}
	p := a.groups.PartitionFor(key)
	leaders, ok := a.meta.PartitionLeaders(config.GroupMetadataTopicName)
	leader, known := leaders[p]
	if !ok || !known || leader < 0 {
		return -1, "", -1, fmt.Errorf("%w: partition %d of the offsets topic has no leader", kerr.CoordinatorNotAvailable, p)
	}
	for _, b := range a.meta.AliveEndpoints(listener) {
		if b.ID == leader {
			return b.ID, b.Host, b.Port, nil
		}
	}
	return -1, "", -1, fmt.Errorf("%w: the coordinator %d is not available on listener %s", kerr.CoordinatorNotAvailable, leader, listener)
}
