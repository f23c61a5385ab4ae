package api

// DescribeLogDirs (key 35), versions 0–2 (flexible from 2).
//
// Behaviour: every entry of log.dirs with its error (NONE, or
// KAFKA_STORAGE_ERROR and no topics for an offline directory) and the
// current and future logs in it of the requested partitions (topics null:
// every partition): size in bytes, offset_lag (a current log: how far its
// end is below its high watermark, 0; a future log: how far it is behind
// the current log's end) and is_future.
//
// Authorization: Describe on the Cluster. Without it the answer lists no
// directory at all: versions 0–2 have no error field, and KafkaApis 2.8
// answers an empty result list (the top-level CLUSTER_AUTHORIZATION_FAILED
// only exists from v3).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleDescribeLogDirs(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeLogDirsRequest)
	if !a.authorize(ctx, r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeCluster, clusterResource) {
		return req.ResponseKind(), nil
	}
	return a.logDirs.DescribeLogDirs(ctx, req), nil
}
