package api

// DescribeCluster (key 60), version 0 (flexible).
//
// Behaviour: cluster id, the controller the metadata
// cache knows (−1 if none), and the live brokers with their endpoint on the
// listener the request arrived on (and rack). With
// include_cluster_authorized_operations the bit field of the operations the
// principal may perform on the cluster (every one without an authorizer;
// 0 without Describe on it), else −2^31.

import (
	"context"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleDescribeCluster(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.ClusterID = a.clusterID
	resp.ControllerID = a.meta.ControllerID()
	resp.ClusterAuthorizedOperations = math.MinInt32
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = a.clusterAuthorizedOperations(ctx, r)
	}
	for _, b := range a.meta.AliveEndpoints(r.listener()) {
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID, rb.Host, rb.Port, rb.Rack = b.ID, b.Host, b.Port, b.Rack
		resp.Brokers = append(resp.Brokers, rb)
	}
	return resp, nil
}
