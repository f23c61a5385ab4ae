package api

// Fetch (key 1), versions 0–13 (flexible from 12; topic ids from 13).
//
// Behaviour: the replica manager serves consumer and follower fetches,
// long polling in the fetch purgatory, fetch sessions, leader-epoch fencing
// and the sendfile path for record data (it may return a response that the
// network layer splices from files).
//
// Quotas (throttle.go), consumer fetches only: max_bytes is capped at what
// consumer_byte_rate allows in one quota window (Kafka's
// getMaxValueInQuotaWindow); the records returned count against it and
// the handler time against request_percentage; a violated quota answers
// throttle_time_ms and mutes the connection. Unlike Kafka, which answers a
// throttled fetch empty and takes the bytes back, the records already read
// are sent and counted: the fetch session has moved past them, and the
// mute holds the client to the same rate.
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
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
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
	if a.quotas == nil || req.ReplicaID >= 0 {
		return a.replicas.FetchInto(ctx, req, mayRead, r.net.KeptFetch())
	}
	user, client := r.quotaIdentity()
	// A consumer never asks for more than its quota allows in one window
	// with nothing else recorded: more would always be throttled.
	if limit := a.quotas.Fetch.MaxValueInWindow(user, client); limit < float64(req.MaxBytes) {
		req.MaxBytes = int32(max(limit, 1))
		req.MinBytes = min(req.MinBytes, req.MaxBytes)
	}
	resp, err := a.replicas.FetchInto(ctx, req, mayRead, r.net.KeptFetch())
	if err != nil {
		return nil, err
	}
	rq := a.requestThrottle(ctx, r)
	bw := a.quotas.Fetch.Record(user, client, float64(fetchResponseBytes(resp)), time.Now())
	a.throttleMax(r, resp, bw, a.quotas.Fetch, rq)
	return resp, nil
}

// fetchResponseBytes is the size of a fetch response's records, the bulk
// of what consumer_byte_rate counts.
func fetchResponseBytes(resp kmsg.Response) int {
	var fr *kmsg.FetchResponse
	n := 0
	switch r := resp.(type) {
	case *network.FileFetchResponse:
		fr, n = r.FetchResponse, r.FileBytes()
	case *kmsg.FetchResponse:
		fr = r
	default:
		return 0
	}
	for _, t := range fr.Topics {
		for _, p := range t.Partitions {
			n += len(p.RecordBatches)
		}
	}
	return n
}
