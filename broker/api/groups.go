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
	TxnOffsetCommit(ctx context.Context, req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse
	// HandleTxnCompletion makes a transaction's pending offsets in the
	// given __consumer_offsets partitions visible (commit) or drops them,
	// once its marker is appended there.
	HandleTxnCompletion(producerID int64, offsetsPartitions []int32, commit bool)
}

var _ GroupCoordinator = (*group.Coordinator)(nil)

// internalTopic is an internal topic a coordinator lives on, created on
// first use (FindCoordinator) whatever auto.create.topics.enable says.
type internalTopic struct {
	name       string
	partitions int32
	// rf is the configured replication factor and rfKey its property,
	// named in the error when too few brokers are alive.
	rf      int16
	rfKey   string
	configs map[string]string
	// what names the topic in the error answered while it is created.
	what string
}

// ensureInternalTopic creates t when it does not exist and reports whether
// it existed already. As Kafka does, it refuses with COORDINATOR_NOT_AVAILABLE
// (retriable) while fewer brokers are registered than the replication
// factor: an internal topic with fewer replicas than configured would stay
// under-replicated for good, so a single-broker set-up configures a factor
// of 1 instead (config/server.properties does).
func (a *Apis) ensureInternalTopic(ctx context.Context, t internalTopic) (bool, error) {
	if _, _, err := a.zk.GetTopicAssignment(t.name); err == nil {
		return true, nil
	} else if !errors.Is(err, zkclient.ErrTopicNotFound) {
		return false, err
	}
	brokers, err := a.registeredBrokers()
	if err != nil {
		return false, err
	}
	if len(brokers) < int(t.rf) {
		a.logger.Error("too few alive brokers to create an internal topic; this can be ignored while the cluster is starting",
			"topic", t.name, "alive_brokers", len(brokers), t.rfKey, t.rf)
		return false, fmt.Errorf("%w: %d alive brokers do not meet the required replication factor %d for %s (configured via %s)",
			kerr.CoordinatorNotAvailable, len(brokers), t.rf, t.name, t.rfKey)
	}
	assignment, err := controller.AssignReplicasToBrokers(controller.ApplyRackAwareMode(brokers, controller.RackAwareSafe),
		int(t.partitions), int(t.rf), a.fixedStartIndex, -1)
	if err != nil {
		return false, err
	}
	err = a.createTopic(ctx, topicSpec{name: t.name, assignment: assignment, configs: t.configs})
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return false, err
	}
	return false, nil
}

// offsetsTopic is __consumer_offsets as the group coordinator needs it:
// offsets.topic.num.partitions partitions, offsets.topic.replication.factor
// replicas, compacted, compression "producer", offsets.topic.segment.bytes.
func (a *Apis) offsetsTopic() internalTopic {
	gc := a.conf().GroupCoordinator()
	return internalTopic{
		name: config.GroupMetadataTopicName, partitions: gc.OffsetsTopicPartitions,
		rf: gc.OffsetsTopicReplication, rfKey: "offsets.topic.replication.factor", what: "the offsets topic",
		configs: map[string]string{
			"cleanup.policy":   "compact",
			"compression.type": "producer",
			"segment.bytes":    fmt.Sprint(gc.OffsetsTopicSegmentBytes),
		},
	}
}

// coordinatorFor answers one FindCoordinator key of type group: the leader
// of the group's __consumer_offsets partition on the request's listener.
func (a *Apis) coordinatorFor(ctx context.Context, key string, listener string) (nodeID int32, host string, port int32, err error) {
	return a.coordinatorOn(ctx, a.offsetsTopic(), a.groups.PartitionFor(key), listener)
}

// coordinatorOn names the leader of partition p of the internal topic t
// on listener, creating t on first use (the key is then answered
// COORDINATOR_NOT_AVAILABLE).
func (a *Apis) coordinatorOn(ctx context.Context, t internalTopic, p int32, listener string) (int32, string, int32, error) {
	existed, err := a.ensureInternalTopic(ctx, t)
	if err != nil {
		return -1, "", -1, err
	}
	if !existed {
		return -1, "", -1, fmt.Errorf("%w: %s is being created", kerr.CoordinatorNotAvailable, t.what)
	}
	return a.leaderEndpoint(t.name, p, listener)
}

// leaderEndpoint names the live leader of an internal topic's partition on
// listener: the coordinator FindCoordinator returns.
func (a *Apis) leaderEndpoint(topic string, p int32, listener string) (int32, string, int32, error) {
	leaders, ok := a.meta.PartitionLeaders(topic)
	leader, known := leaders[p]
	if !ok || !known || leader < 0 {
		return -1, "", -1, fmt.Errorf("%w: partition %d of %s has no leader", kerr.CoordinatorNotAvailable, p, topic)
	}
	for _, b := range a.meta.AliveEndpoints(listener) {
		if b.ID == leader {
			return b.ID, b.Host, b.Port, nil
		}
	}
	return -1, "", -1, fmt.Errorf("%w: the coordinator %d is not available on listener %s", kerr.CoordinatorNotAvailable, leader, listener)
}
