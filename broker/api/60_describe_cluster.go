package api

// DescribeCluster (key 60), version 0 (flexible).
//
// Behaviour: cluster id, the controller the metadata
// cache knows (−1 if none), and the live brokers with their endpoint on the
// listener the request arrived on (and rack). No authorizer: cluster
// authorized operations are left at kmsg's default (none requested) or −2^31.

import (
	"context"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleDescribeCluster(_ context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.ClusterID = a.clusterID
	resp.ControllerID = a.meta.ControllerID()
	resp.ClusterAuthorizedOperations = math.MinInt32
	for _, b := range a.meta.AliveEndpoints(r.listener()) {
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID, rb.Host, rb.Port, rb.Rack = b.ID, b.Host, b.Port, b.Rack
		resp.Brokers = append(resp.Brokers, rb)
	}
	return resp, nil
}
