package api

// Fetch (key 1), versions 0–13 (flexible from 12; topic ids from 13).
//
// Behaviour: the replica manager serves consumer and follower fetches,
// long polling in the fetch purgatory, fetch sessions, leader-epoch fencing
// and the sendfile path for record data (it may return a response that the
// network layer splices from files).
//
// Authorization, as Kafka's KafkaApis: a follower fetch (replica_id ≥ 0)
// needs ClusterAction on the Cluster, else every partition answers
// TOPIC_AUTHORIZATION_FAILED; a consumer fetch (replica_id −1, or the
// debugging id −2) needs Read on each topic, decided once per topic, with
// TOPIC_AUTHORIZATION_FAILED for the partitions of a denied one. In a fetch
// session the decision is made on every request, over the session's
// partitions, so a revoked ACL takes effect at the next incremental fetch.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleFetch(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.FetchRequest)
	var mayRead func(topic string) bool
	if a.authorizer != nil {
		if req.ReplicaID >= 0 {
			if !a.authorize(ctx, r, kmsg.ACLOperationClusterAction, kmsg.ACLResourceTypeCluster, clusterResource) {
				mayRead = func(string) bool { return false }
			}
		} else {
			mayRead = a.topicChecker(ctx, r, kmsg.ACLOperationRead).allowed
		}
	}
	return a.replicas.FetchAuthorized(ctx, req, mayRead)
}
