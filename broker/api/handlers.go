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

// toGroups forwards to a group coordinator method, read from a.groups when
// the request arrives.
func toGroups[Req kmsg.Request, Resp kmsg.Response](a *Apis, serve func(GroupCoordinator, context.Context, Req) Resp) handlerFunc {
	return forward(func(ctx context.Context, req Req) Resp { return serve(a.groups, ctx, req) })
}

// toReplicas forwards to a replica manager method, read from a.replicas
// when the request arrives.
func toReplicas[Req kmsg.Request, Resp kmsg.Response](a *Apis, serve func(ReplicaManager, context.Context, Req) Resp) handlerFunc {
	return forward(func(ctx context.Context, req Req) Resp { return serve(a.replicas, ctx, req) })
}

// byVersion serves version 0 of a request with v0 and every later version
// with v1Plus.
func byVersion(v0, v1Plus handlerFunc) handlerFunc {
	return func(ctx context.Context, r *request) (kmsg.Response, error) {
		if r.body.GetVersion() == 0 {
			return v0(ctx, r)
		}
		return v1Plus(ctx, r)
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
		2: toReplicas(a, ReplicaManager.ListOffsets),

		3: a.handleMetadata,

		// LeaderAndIsr (key 4), versions 0–7 (flexible from 4), controller
		// to broker: the replica manager rejects a stale controller epoch
		// (STALE_CONTROLLER_EPOCH) or broker epoch (STALE_BROKER_EPOCH) and
		// makes this broker leader or follower of each partition whose
		// leader epoch is newer than the one it has.
		4: toReplicas(a, ReplicaManager.LeaderAndIsr),

		// StopReplica (key 5), versions 0–4 (flexible from 2), controller to
		// broker: the replica manager checks the epochs, stops fetching and,
		// with delete_partition, removes the log.
		5: toReplicas(a, ReplicaManager.StopReplica),

		6: a.handleUpdateMetadata,
		7: a.handleControlledShutdown,
		// OffsetCommit (key 8) and OffsetFetch (key 9): version 0 keeps
		// offsets in ZooKeeper (NN_offset_*.go), later versions go to the
		// group coordinator.
		8:  byVersion(a.handleOffsetCommitV0, toGroups(a, GroupCoordinator.OffsetCommit)),
		9:  byVersion(a.handleOffsetFetchV0, toGroups(a, GroupCoordinator.OffsetFetch)),
		10: a.handleFindCoordinator,
		11: a.handleJoinGroup,

		// The group APIs below go to the group coordinator (broker/group),
		// which checks that this broker coordinates the group
		// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) and applies every
		// group rule.
		//
		// Heartbeat (key 12), versions 0–4 (flexible from 4).
		12: toGroups(a, GroupCoordinator.Heartbeat),
		// LeaveGroup (key 13), versions 0–5 (flexible from 4; v3+ batches
		// members).
		13: toGroups(a, GroupCoordinator.LeaveGroup),
		// SyncGroup (key 14), versions 0–5 (flexible from 4): a member's
		// SyncGroup parks until the leader's assignment arrives.
		14: toGroups(a, GroupCoordinator.SyncGroup),
		// DescribeGroups (key 15), versions 0–5 (flexible from 5): unknown
		// groups are described as Dead.
		15: toGroups(a, GroupCoordinator.DescribeGroups),
		// ListGroups (key 16), versions 0–4 (flexible from 3; v4 filters by
		// state): only the groups this broker coordinates are listed;
		// clients ask every broker.
		16: toGroups(a, GroupCoordinator.ListGroups),

		17: a.handleSaslHandshake,
		18: a.handleApiVersions,
		19: a.handleCreateTopics,
		20: a.handleDeleteTopics,

		// DeleteRecords (key 21), versions 0–2 (flexible from 2): the
		// replica manager advances the log start offset on the leader
		// (OFFSET_OUT_OF_RANGE beyond the high watermark,
		// NOT_LEADER_OR_FOLLOWER, POLICY_VIOLATION for compact-only topics,
		// INVALID_TOPIC_EXCEPTION for internal topics).
		21: toReplicas(a, ReplicaManager.DeleteRecords),

		22: a.handleInitProducerID,

		// OffsetForLeaderEpoch (key 23), versions 0–4 (flexible from 4): the
		// leader answers from its leader-epoch cache the end offset of the
		// requested epoch; FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH when
		// current_leader_epoch is older or newer than its own.
		23: toReplicas(a, ReplicaManager.OffsetForLeaderEpoch),

		24: a.handleAddPartitionsToTxn,
		25: a.handleAddOffsetsToTxn,
		26: a.handleEndTxn,
		27: a.handleWriteTxnMarkers,
		28: a.handleTxnOffsetCommit,

		32: a.handleDescribeConfigs,
		33: a.handleAlterConfigs,
		36: a.handleSaslAuthenticate,
		37: a.handleCreatePartitions,

		// DeleteGroups (key 42), versions 0–2 (flexible from 2), and
		// OffsetDelete (key 47), version 0: the group coordinator, as for
		// the group APIs above.
		42: toGroups(a, GroupCoordinator.DeleteGroups),

		43: a.handleElectLeaders,
		44: a.handleIncrementalAlterConfigs,
		45: a.handleAlterPartitionReassignments,
		46: a.handleListPartitionReassignments,

		47: toGroups(a, GroupCoordinator.OffsetDelete),

		50: a.handleDescribeUserScramCredentials,
		51: a.handleAlterUserScramCredentials,

		60: a.handleDescribeCluster,
		61: a.handleDescribeProducers,
		65: a.handleDescribeTransactions,
		66: a.handleListTransactions,
	}
}
