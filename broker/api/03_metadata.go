package api

// Metadata (key 3), versions 0–12 (flexible from 9).
//
// Behaviour: the response is built by the metadata cache
// (brokers on the request's listener, controller id, cluster id, partition
// leaders/ISR/epochs, LEADER_NOT_AVAILABLE, LISTENER_NOT_FOUND, ...). This
// layer adds auto-creation, as Kafka's KafkaApis does in ZooKeeper mode:
//   - a requested topic (never for "all topics") that the cache answers with
//     UNKNOWN_TOPIC_OR_PARTITION is created when auto.create.topics.enable
//     is true and the request allows it (allow_auto_topic_creation, v4+;
//     implicitly true before v4), with num.partitions and
//     default.replication.factor and rack-aware placement in "safe" mode;
//   - such a topic is answered LEADER_NOT_AVAILABLE with no partitions (also
//     when it already existed in ZooKeeper but is not in the cache yet);
//     the client retries until the controller has elected leaders;
//   - a failed creation answers the failure's code (INVALID_TOPIC_EXCEPTION
//     for a bad name, INVALID_REPLICATION_FACTOR with too few brokers, ...).
//     Internal topic names are never auto-created here (they are created by
//     their coordinators).

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/controller"
)

func (a *Apis) handleMetadata(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.MetadataRequest)
	resp := a.meta.MetadataResponse(req, r.listener())
	allTopics := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	allow := req.Version < 4 || req.AllowAutoTopicCreation
	if allTopics || !allow || !a.cfg.AutoCreateTopicsEnable || a.zk == nil {
		return resp, nil
	}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		if t.ErrorCode != kerr.UnknownTopicOrPartition.Code || t.Topic == nil || config.IsInternalTopic(*t.Topic) {
			continue
		}
		code := a.autoCreate(ctx, *t.Topic)
		t.ErrorCode = code
		t.Partitions = nil
	}
	return resp, nil
}

// autoCreate creates a topic with the broker defaults and returns the code
// the Metadata response carries for it.
func (a *Apis) autoCreate(ctx context.Context, topic string) int16 {
	spec, err := a.planTopic(ctx, topic, createOptions{numPartitions: -1, replicationFactor: -1, rackMode: controller.RackAwareSafe})
	if err == nil {
		err = a.createTopic(ctx, spec)
	}
	if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
		return kerr.LeaderNotAvailable.Code
	}
	return a.errorCode(err, "auto topic creation failed", "topic", topic)
}
