package api

// The one handler table: every served API key and its handler. Keys whose
// whole behaviour lives in another package (the replica manager for the
// data path and the controller's requests to brokers, the group
// coordinator for the group APIs) are routed here directly, each with its
// key, versions and behaviour notes; the others have their own
// NN_<api>.go file.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// forward routes a request whose answer another package computes in full.
func forward[Req kmsg.Request, Resp kmsg.Response](serve func(context.Context, Req) Resp) handlerFunc {
	return func(ctx context.Context, r *request) (kmsg.Response, error) {
		return serve(ctx, r.body.(Req)), nil
	}
}

// handlerTable builds the table New installs. The forwarded calls read
// a.replicas and a.groups when a request arrives; enabled keeps a key
// unserved while its dependency is not wired.
func (a *Apis) handlerTable() map[int16]handlerFunc {
	return map[int16]handlerFunc{
		0: a.handleProduce,

		// Fetch (key 1), versions 0–13 (flexible from 12; topic ids from
		// 13): the replica manager serves consumer and follower fetches,
		// long polling in the fetch purgatory, fetch sessions, leader-epoch
		// fencing and the sendfile path for record data (it may return a
		// response that the network layer splices from files).
		1: func(ctx context.Context, r *request) (kmsg.Response, error) {
			return a.replicas.Fetch(ctx, r.body.(*kmsg.FetchRequest))
		},

		// ListOffsets (key 2), versions 0–7 (flexible from 6): the replica
		// manager answers earliest (−2), latest (−1), max timestamp (−3)
		// and by-timestamp lookups on the leader, honouring the isolation
		// level and current_leader_epoch fencing; v0 answers old-style
		// offset lists.
		2: forward(func(ctx context.Context, req *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse {
			return a.replicas.ListOffsets(ctx, req)
		}),

		3: a.handleMetadata,

		// LeaderAndIsr (key 4), versions 0–7 (flexible from 4), controller
		// to broker: the replica manager rejects a stale controller epoch
		// (STALE_CONTROLLER_EPOCH) or broker epoch (STALE_BROKER_EPOCH) and
		// makes this broker leader or follower of each partition whose
		// leader epoch is newer than the one it has.
		4: forward(func(ctx context.Context, req *kmsg.LeaderAndISRRequest) *kmsg.LeaderAndISRResponse {
			return a.replicas.LeaderAndIsr(ctx, req)
		}),

		// StopReplica (key 5), versions 0–4 (flexible from 2), controller to
		// broker: the replica manager checks the epochs, stops fetching and,
		// with delete_partition, removes the log.
		5: forward(func(ctx context.Context, req *kmsg.StopReplicaRequest) *kmsg.StopReplicaResponse {
			return a.replicas.StopReplica(ctx, req)
		}),

		6:  a.handleUpdateMetadata,
		7:  a.handleControlledShutdown,
		8:  a.handleOffsetCommit,
		9:  a.handleOffsetFetch,
		10: a.handleFindCoordinator,
		11: a.handleJoinGroup,

		// The group APIs below go to the group coordinator (broker/group),
		// which checks that this broker coordinates the group
		// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) and applies every
		// group rule.
		//
		// Heartbeat (key 12), versions 0–4 (flexible from 4).
		12: forward(func(ctx context.Context, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
			return a.groups.Heartbeat(ctx, req)
		}),
		// LeaveGroup (key 13), versions 0–5 (flexible from 4; v3+ batches
		// members).
		13: forward(func(ctx context.Context, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
			return a.groups.LeaveGroup(ctx, req)
		}),
		// SyncGroup (key 14), versions 0–5 (flexible from 4): a member's
		// SyncGroup parks until the leader's assignment arrives.
		14: forward(func(ctx context.Context, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
			return a.groups.SyncGroup(ctx, req)
		}),
		// DescribeGroups (key 15), versions 0–5 (flexible from 5): unknown
		// groups are described as Dead.
		15: forward(func(ctx context.Context, req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
			return a.groups.DescribeGroups(ctx, req)
		}),
		// ListGroups (key 16), versions 0–4 (flexible from 3; v4 filters by
		// state): only the groups this broker coordinates are listed;
		// clients ask every broker.
		16: forward(func(ctx context.Context, req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
			return a.groups.ListGroups(ctx, req)
		}),

		18: a.handleApiVersions,
		19: a.handleCreateTopics,
		20: a.handleDeleteTopics,

		// DeleteRecords (key 21), versions 0–2 (flexible from 2): the
		// replica manager advances the log start offset on the leader
		// (OFFSET_OUT_OF_RANGE beyond the high watermark,
		// NOT_LEADER_OR_FOLLOWER, POLICY_VIOLATION for compact-only topics,
		// INVALID_TOPIC_EXCEPTION for internal topics).
		21: forward(func(ctx context.Context, req *kmsg.DeleteRecordsRequest) *kmsg.DeleteRecordsResponse {
			return a.replicas.DeleteRecords(ctx, req)
		}),

		22: a.handleInitProducerID,

		// OffsetForLeaderEpoch (key 23), versions 0–4 (flexible from 4): the
		// leader answers from its leader-epoch cache the end offset of the
		// requested epoch; FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH when
		// current_leader_epoch is older or newer than its own.
		23: forward(func(ctx context.Context, req *kmsg.OffsetForLeaderEpochRequest) *kmsg.OffsetForLeaderEpochResponse {
			return a.replicas.OffsetForLeaderEpoch(ctx, req)
		}),

		32: a.handleDescribeConfigs,
		33: a.handleAlterConfigs,
		37: a.handleCreatePartitions,

		// DeleteGroups (key 42), versions 0–2 (flexible from 2), and
		// OffsetDelete (key 47), version 0: the group coordinator, as for
		// the group APIs above.
		42: forward(func(ctx context.Context, req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
			return a.groups.DeleteGroups(ctx, req)
		}),

		43: a.handleElectLeaders,
		44: a.handleIncrementalAlterConfigs,
		45: a.handleAlterPartitionReassignments,
		46: a.handleListPartitionReassignments,

		47: forward(func(ctx context.Context, req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
			return a.groups.OffsetDelete(ctx, req)
		}),

		60: a.handleDescribeCluster,
	}
}
