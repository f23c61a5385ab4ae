package api

// WriteTxnMarkers (key 27), versions 0–1 (flexible from 1): sent by a
// transaction coordinator to the leaders of a transaction's partitions.
//
// Behaviour: without ClusterAction on the cluster every partition answers
// CLUSTER_AUTHORIZATION_FAILED. Otherwise the replica manager appends the
// COMMIT or ABORT control batch to each partition it leads and waits for
// the ISR; for the __consumer_offsets partitions that took their marker,
// the group coordinator then makes the transaction's pending offsets
// visible (commit) or drops them (abort), as Kafka's
// scheduleHandleTxnCompletion does.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/config"
)

func (a *Apis) handleWriteTxnMarkers(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.WriteTxnMarkersRequest)
	if !a.authorize(ctx, r, kmsg.ACLOperationClusterAction, kmsg.ACLResourceTypeCluster, clusterResource) {
		resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
		for _, m := range req.Markers {
			rm := kmsg.NewWriteTxnMarkersResponseMarker()
			rm.ProducerID = m.ProducerID
			for _, t := range m.Topics {
				rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
					rp.Partition, rp.ErrorCode = p, kerr.ClusterAuthorizationFailed.Code
					rt.Partitions = append(rt.Partitions, rp)
				}
				rm.Topics = append(rm.Topics, rt)
			}
			resp.Markers = append(resp.Markers, rm)
		}
		return resp, nil
	}
	resp := a.replicas.WriteTxnMarkers(ctx, req)
	if a.groups == nil {
		return resp, nil
	}
	committed := map[int64]bool{}
	for _, m := range req.Markers {
		committed[m.ProducerID] = m.Committed
	}
	for _, m := range resp.Markers {
		var offsetsParts []int32
		for _, t := range m.Topics {
			if t.Topic != config.GroupMetadataTopicName {
				continue
			}
			for _, p := range t.Partitions {
				if p.ErrorCode == 0 {
					offsetsParts = append(offsetsParts, p.Partition)
				}
			}
		}
		if len(offsetsParts) > 0 {
			a.groups.HandleTxnCompletion(m.ProducerID, offsetsParts, committed[m.ProducerID])
		}
	}
	return resp, nil
}
