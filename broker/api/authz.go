package api

// The checks the handlers share on top of the authorization hook
// (authorizer.go), as Kafka's AuthHelper offers them to KafkaApis: one
// decision per distinct topic of a request, the authorized-operations bit
// fields of Metadata, DescribeGroups and DescribeCluster, and the error
// responses of requests that need an operation on the Cluster (Kafka's
// authorizeClusterOperation, whose ClusterAuthorizationException becomes the
// request's error response).
//
// Without an authorizer (authorizer.class.name empty) nothing here
// allocates: topicChecker returns nil, whose allowed is always true.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// authorizedOperationsOmitted is Kafka's "not requested" value of every
// authorized_operations field (Integer.MIN_VALUE).
const authorizedOperationsOmitted int32 = -2147483648

// Kafka's default messages of the authorization errors (Errors.message()),
// sent where Kafka sends the error's own message.
const (
	topicAuthorizationFailedMessage   = "Topic authorization failed."
	clusterAuthorizationFailedMessage = "Cluster authorization failed."
)

// topicAuthz decides one operation on the topics of one request, asking
// the authorizer once per distinct topic name. A nil *topicAuthz (no
// authorizer) allows every topic.
type topicAuthz struct {
	a   *Apis
	ctx context.Context
	r   *request
	op  kmsg.ACLOperation
	// filtering marks decisions whose denial only filters (Action.Filtering).
	filtering bool
	seen      map[string]bool
}

// topicChecker returns the checker of op on topics for this request, nil
// when no authorizer is configured.
func (a *Apis) topicChecker(ctx context.Context, r *request, op kmsg.ACLOperation) *topicAuthz {
	if a.authorizer == nil {
		return nil
	}
	return &topicAuthz{a: a, ctx: ctx, r: r, op: op}
}

// filteringTopicChecker is topicChecker for decisions whose denial only
// filters what is answered (Kafka's logIfDenied=false).
func (a *Apis) filteringTopicChecker(ctx context.Context, r *request, op kmsg.ACLOperation) *topicAuthz {
	t := a.topicChecker(ctx, r, op)
	if t != nil {
		t.filtering = true
	}
	return t
}

// authorizeFiltering is authorize for a question whose denial refuses
// nothing by itself (Kafka's logIfDenied=false): the authorizer logs such
// a denial at debug.
func (a *Apis) authorizeFiltering(ctx context.Context, r *request, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) bool {
	return a.decide(ctx, r, Action{Operation: op, ResourceType: rt, Name: name, Filtering: true})
}

// allowed reports whether the principal may perform the checker's
// operation on topic.
func (t *topicAuthz) allowed(topic string) bool {
	if t == nil {
		return true
	}
	if ok, asked := t.seen[topic]; asked {
		return ok
	}
	if t.seen == nil {
		t.seen = make(map[string]bool)
	}
	ok := t.a.decide(t.ctx, t.r, Action{Operation: t.op, ResourceType: kmsg.ACLResourceTypeTopic, Name: topic, Filtering: t.filtering})
	t.seen[topic] = ok
	return ok
}

// supportedOperations are the operations an ACL may name per resource type
// (Kafka's AclEntry.supportedOperations); authorized_operations reports a
// subset of them.
func supportedOperations(rt kmsg.ACLResourceType) []kmsg.ACLOperation {
	switch rt {
	case kmsg.ACLResourceTypeTopic:
		return []kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate, kmsg.ACLOperationDescribe,
			kmsg.ACLOperationDelete, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs}
	case kmsg.ACLResourceTypeGroup:
		return []kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete}
	case kmsg.ACLResourceTypeCluster:
		return []kmsg.ACLOperation{kmsg.ACLOperationCreate, kmsg.ACLOperationClusterAction, kmsg.ACLOperationDescribeConfigs,
			kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationIdempotentWrite, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe}
	case kmsg.ACLResourceTypeTransactionalId:
		return []kmsg.ACLOperation{kmsg.ACLOperationDescribe, kmsg.ACLOperationWrite}
	case kmsg.ACLResourceTypeDelegationToken:
		return []kmsg.ACLOperation{kmsg.ACLOperationDescribe}
	}
	return nil
}

// authorizedOperations is the bit field (bit n = operation code n) of the
// supported operations the principal may perform on the resource; every
// supported one without an authorizer (Kafka's AuthHelper.authorizedOperations).
func (a *Apis) authorizedOperations(ctx context.Context, r *request, rt kmsg.ACLResourceType, name string) int32 {
	var bits int32
	for _, op := range supportedOperations(rt) {
		if a.authorizeFiltering(ctx, r, op, rt, name) {
			bits |= 1 << uint(op)
		}
	}
	return bits
}

// clusterAuthorizedOperations answers an include_cluster_authorized_operations
// flag as Kafka does: the cluster's bit field when the principal may
// Describe the cluster, 0 when not.
func (a *Apis) clusterAuthorizedOperations(ctx context.Context, r *request) int32 {
	if !a.authorize(ctx, r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeCluster, clusterResource) {
		return 0
	}
	return a.authorizedOperations(ctx, r, kmsg.ACLResourceTypeCluster, clusterResource)
}

// requireCluster serves a request with h only when the principal may
// perform op on the Cluster; otherwise denied builds the request's error
// response with CLUSTER_AUTHORIZATION_FAILED.
func (a *Apis) requireCluster(op kmsg.ACLOperation, denied func(req kmsg.Request) kmsg.Response, h handlerFunc) handlerFunc {
	return func(ctx context.Context, r *request) (kmsg.Response, error) {
		if !a.authorize(ctx, r, op, kmsg.ACLResourceTypeCluster, clusterResource) {
			return denied(r.body), nil // the authorizer logs the denial
		}
		return h(ctx, r)
	}
}

// The error responses of the controller-to-broker and broker-to-controller
// requests (their getErrorResponse in Kafka's clients).

func leaderAndIsrDenied(req kmsg.Request) kmsg.Response {
	lr := req.(*kmsg.LeaderAndISRRequest)
	resp := lr.ResponseKind().(*kmsg.LeaderAndISRResponse)
	code := kerr.ClusterAuthorizationFailed.Code
	resp.ErrorCode = code
	if lr.Version < 5 {
		for _, p := range lr.PartitionStates {
			pe := kmsg.NewLeaderAndISRResponseTopicPartition()
			pe.Topic, pe.Partition, pe.ErrorCode = p.Topic, p.Partition, code
			resp.Partitions = append(resp.Partitions, pe)
		}
		for _, t := range lr.TopicStates { // v2–v4 group partitions by topic
			for _, p := range t.PartitionStates {
				pe := kmsg.NewLeaderAndISRResponseTopicPartition()
				pe.Topic, pe.Partition, pe.ErrorCode = t.Topic, p.Partition, code
				resp.Partitions = append(resp.Partitions, pe)
			}
		}
		return resp
	}
	for _, t := range lr.TopicStates {
		rt := kmsg.NewLeaderAndISRResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.PartitionStates {
			pe := kmsg.NewLeaderAndISRResponseTopicPartition()
			pe.Topic, pe.Partition, pe.ErrorCode = t.Topic, p.Partition, code
			rt.Partitions = append(rt.Partitions, pe)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func stopReplicaDenied(req kmsg.Request) kmsg.Response {
	sr := req.(*kmsg.StopReplicaRequest)
	resp := sr.ResponseKind().(*kmsg.StopReplicaResponse)
	code := kerr.ClusterAuthorizationFailed.Code
	resp.ErrorCode = code
	add := func(topic string, p int32) {
		pe := kmsg.NewStopReplicaResponsePartition()
		pe.Topic, pe.Partition, pe.ErrorCode = topic, p, code
		resp.Partitions = append(resp.Partitions, pe)
	}
	for _, t := range sr.Topics {
		switch {
		case sr.Version >= 3:
			for _, p := range t.PartitionStates {
				add(t.Topic, p.Partition)
			}
		case sr.Version >= 1:
			for _, p := range t.Partitions {
				add(t.Topic, p)
			}
		default:
			add(t.Topic, t.Partition)
		}
	}
	return resp
}

func updateMetadataDenied(req kmsg.Request) kmsg.Response {
	resp := req.(*kmsg.UpdateMetadataRequest).ResponseKind().(*kmsg.UpdateMetadataResponse)
	resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
	return resp
}

func controlledShutdownDenied(req kmsg.Request) kmsg.Response {
	resp := req.(*kmsg.ControlledShutdownRequest).ResponseKind().(*kmsg.ControlledShutdownResponse)
	resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
	return resp
}

// notAuthorizedMessage is the message of the ClusterAuthorizationException
// Kafka throws for a request without its cluster operation.
func notAuthorizedMessage(req kmsg.Request) *string {
	s := "Request " + kmsg.NameForKey(req.Key()) + " is not authorized."
	return &s
}

func alterPartitionReassignmentsDenied(req kmsg.Request) kmsg.Response {
	ar := req.(*kmsg.AlterPartitionAssignmentsRequest)
	resp := ar.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	code, msg := kerr.ClusterAuthorizationFailed.Code, notAuthorizedMessage(req)
	resp.ErrorCode, resp.ErrorMessage = code, msg
	for _, t := range ar.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func listPartitionReassignmentsDenied(req kmsg.Request) kmsg.Response {
	lr := req.(*kmsg.ListPartitionReassignmentsRequest)
	resp := lr.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, notAuthorizedMessage(req)
	for _, t := range lr.Topics {
		rt := kmsg.NewListPartitionReassignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
			rp.Partition = p
			rp.Replicas, rp.AddingReplicas, rp.RemovingReplicas = []int32{}, []int32{}, []int32{}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// deniedError is an authorization failure answered with Kafka's exact
// error_message (codeMessage sends Error()).
type deniedError struct {
	code *kerr.Error
	msg  string
}

func (e *deniedError) Error() string { return e.msg }
func (e *deniedError) Unwrap() error { return e.code }

func denied(code *kerr.Error, msg string) error { return &deniedError{code: code, msg: msg} }
