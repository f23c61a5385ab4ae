package api

// The one handler table: every served API key and its handler. Keys whose
// whole behaviour lives in another package (the replica manager for the
// controller's requests to brokers, the group coordinator for the group
// membership APIs) are routed here directly behind their authorization
// check, each with its key, versions and behaviour notes; the others have
// their own NN_<api>.go file.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
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

// readGroup serves a group request with the coordinator when the principal
// may Read the group (group names it); otherwise the response carries
// GROUP_AUTHORIZATION_FAILED, set by deny.
func readGroup[Req kmsg.Request, Resp kmsg.Response](a *Apis, group func(Req) string, deny func(Resp, int16),
	serve func(GroupCoordinator, context.Context, Req) Resp) handlerFunc {
	return func(ctx context.Context, r *request) (kmsg.Response, error) {
		req := r.body.(Req)
		if !a.authorize(ctx, r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, group(req)) {
			resp := req.ResponseKind().(Resp)
			deny(resp, kerr.GroupAuthorizationFailed.Code)
			return resp, nil
		}
		return serve(a.groups, ctx, req), nil
	}
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

		34: a.handleAlterReplicaLogDirs,
		35: a.handleDescribeLogDirs,

		1: a.handleFetch,
		2: a.handleListOffsets,
		3: a.handleMetadata,

		// LeaderAndIsr (key 4), versions 0–7 (flexible from 4), controller
		// to broker: the replica manager rejects a stale controller epoch
		// (STALE_CONTROLLER_EPOCH) or broker epoch (STALE_BROKER_EPOCH) and
		// makes this broker leader or follower of each partition whose
		// leader epoch is newer than the one it has. Like every request
		// between brokers it needs ClusterAction on the Cluster, else every
		// partition answers CLUSTER_AUTHORIZATION_FAILED.
		4: a.requireCluster(kmsg.ACLOperationClusterAction, leaderAndIsrDenied, toReplicas(a, ReplicaManager.LeaderAndIsr)),

		// StopReplica (key 5), versions 0–4 (flexible from 2), controller to
		// broker: the replica manager checks the epochs, stops fetching and,
		// with delete_partition, removes the log. ClusterAction, as key 4.
		5: a.requireCluster(kmsg.ACLOperationClusterAction, stopReplicaDenied, toReplicas(a, ReplicaManager.StopReplica)),

		6:  a.requireCluster(kmsg.ACLOperationClusterAction, updateMetadataDenied, a.handleUpdateMetadata),
		7:  a.requireCluster(kmsg.ACLOperationClusterAction, controlledShutdownDenied, a.handleControlledShutdown),
		8:  a.handleOffsetCommit,
		9:  a.handleOffsetFetch,
		10: a.handleFindCoordinator,
		11: a.handleJoinGroup,

		// The group APIs below go to the group coordinator (broker/group),
		// which checks that this broker coordinates the group
		// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) and applies every
		// group rule. Each needs Read on the group, else it answers
		// GROUP_AUTHORIZATION_FAILED without reaching the coordinator.
		//
		// Heartbeat (key 12), versions 0–4 (flexible from 4).
		12: readGroup(a, func(req *kmsg.HeartbeatRequest) string { return req.Group },
			func(resp *kmsg.HeartbeatResponse, code int16) { resp.ErrorCode = code }, GroupCoordinator.Heartbeat),
		// LeaveGroup (key 13), versions 0–5 (flexible from 4; v3+ batches
		// members).
		13: readGroup(a, func(req *kmsg.LeaveGroupRequest) string { return req.Group },
			func(resp *kmsg.LeaveGroupResponse, code int16) { resp.ErrorCode = code }, GroupCoordinator.LeaveGroup),
		14: a.handleSyncGroup,
		15: a.handleDescribeGroups,
		16: a.handleListGroups,

		17: a.handleSaslHandshake,
		18: a.handleApiVersions,
		19: a.handleCreateTopics,
		20: a.handleDeleteTopics,

		21: a.handleDeleteRecords,
		22: a.handleInitProducerID,

		23: a.handleOffsetForLeaderEpoch,

		24: a.handleAddPartitionsToTxn,
		25: a.handleAddOffsetsToTxn,
		26: a.handleEndTxn,
		27: a.handleWriteTxnMarkers,
		28: a.handleTxnOffsetCommit,
		29: a.handleDescribeACLs,
		30: a.handleCreateACLs,
		31: a.handleDeleteACLs,

		32: a.handleDescribeConfigs,
		33: a.handleAlterConfigs,
		36: a.handleSaslAuthenticate,
		37: a.handleCreatePartitions,

		42: a.handleDeleteGroups,
		43: a.handleElectLeaders,
		44: a.handleIncrementalAlterConfigs,
		// AlterPartitionReassignments (45) needs Alter and
		// ListPartitionReassignments (46) Describe on the Cluster, checked
		// before the controller is asked (CLUSTER_AUTHORIZATION_FAILED).
		45: a.requireCluster(kmsg.ACLOperationAlter, alterPartitionReassignmentsDenied, a.handleAlterPartitionReassignments),
		46: a.requireCluster(kmsg.ACLOperationDescribe, listPartitionReassignmentsDenied, a.handleListPartitionReassignments),
		47: a.handleOffsetDelete,
		48: a.handleDescribeClientQuotas,
		49: a.handleAlterClientQuotas,

		50: a.handleDescribeUserScramCredentials,
		51: a.handleAlterUserScramCredentials,

		60: a.handleDescribeCluster,
		61: a.handleDescribeProducers,
		65: a.handleDescribeTransactions,
		66: a.handleListTransactions,
	}
}
