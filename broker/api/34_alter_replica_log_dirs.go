package api

// AlterReplicaLogDirs (key 34), versions 0–2 (flexible from 2).
//
// Behaviour: moves replicas this broker hosts to another of its log.dirs
// (broker/replica alterlogdirs.go: a -future log copied by a mover and
// swapped in when caught up). Per partition: NONE when the move started or
// the replica is already there; LOG_DIR_NOT_FOUND for a path not in
// log.dirs; KAFKA_STORAGE_ERROR for an offline directory;
// REPLICA_NOT_AVAILABLE when the partition exists but this broker has no
// replica yet (the directory is remembered for when it is created);
// UNKNOWN_TOPIC_OR_PARTITION for an unknown partition; INVALID_TOPIC_EXCEPTION
// when the -future directory name would exceed 255 bytes.
//
// Authorization: Alter on the Cluster, else CLUSTER_AUTHORIZATION_FAILED for
// every partition, as KafkaApis.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleAlterReplicaLogDirs(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.AlterReplicaLogDirsRequest)
	if a.authorize(ctx, r, kmsg.ACLOperationAlter, kmsg.ACLResourceTypeCluster, clusterResource) {
		return a.logDirs.AlterReplicaLogDirs(ctx, req), nil
	}
	resp := req.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	byTopic := map[string]int{}
	for _, d := range req.Dirs {
		for _, t := range d.Topics {
			j, ok := byTopic[t.Topic]
			if !ok {
				j = len(resp.Topics)
				byTopic[t.Topic] = j
				rt := kmsg.NewAlterReplicaLogDirsResponseTopic()
				rt.Topic = t.Topic
				resp.Topics = append(resp.Topics, rt)
			}
			for _, p := range t.Partitions {
				rp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, kerr.ClusterAuthorizationFailed.Code
				resp.Topics[j].Partitions = append(resp.Topics[j].Partitions, rp)
			}
		}
	}
	return resp, nil
}
