package replica

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/metadata"
	"github.com/klassik/klassik/broker/storage"
)

func umPartition(topic string, partition, leader, epoch int32) kmsg.UpdateMetadataRequestTopicPartition {
	ps := kmsg.NewUpdateMetadataRequestTopicPartition()
	ps.Topic = topic
	ps.Partition = partition
	ps.Leader = leader
	ps.LeaderEpoch = epoch
	ps.ISR = []int32{2}
	ps.Replicas = []int32{2}
	return ps
}

func TestManagerWithMetadataCache(t *testing.T) {
	dir := t.TempDir()
	mc := storage.DefaultManagerConfig(dir)
	mc.Logger = quietLogger()
	lm, err := storage.NewLogManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lm.Shutdown() }()
	cache := metadata.New(1, "cluster")
	m := New(Config{BrokerID: 1, Logger: quietLogger()}, NewLogStore(lm), cache)
	defer m.Shutdown()
	ctx := context.Background()
	makeLeader(t, m, "gone", 0, 0)
	produceOne(t, m, 1, "gone", 0, makeBatch(1, "x"))

	req := updateMetadataReq(1, -1)
	b := kmsg.NewUpdateMetadataRequestLiveBroker()
	b.ID = 2
	ep := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
	ep.Host, ep.Port, ep.ListenerName, ep.SecurityProtocol = "127.0.0.1", 9092, "PLAINTEXT", 0
	b.Endpoints = append(b.Endpoints, ep)
	req.LiveBrokers = append(req.LiveBrokers, b)
	other := kmsg.NewUpdateMetadataRequestTopicState()
	other.Topic = "other"
	other.TopicID = topicIDFor("other")
	other.PartitionStates = append(other.PartitionStates, umPartition("other", 0, 2, 0))
	gone := kmsg.NewUpdateMetadataRequestTopicState()
	gone.Topic = "gone"
	gone.PartitionStates = append(gone.PartitionStates, umPartition("gone", 0, 0, 0))
	req.TopicStates = append(req.TopicStates, other, gone)
	if r := m.UpdateMetadata(ctx, req); r.ErrorCode != 0 {
		t.Fatal(r.ErrorCode)
	}
	// Known to the cluster, led elsewhere: NOT_LEADER_OR_FOLLOWER, also when
	// fetched by topic id (v13) through the cache's id map.
	if r := produceOne(t, m, 1, "other", 0, makeBatch(1, "y")); r.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("produce to a partition led elsewhere: %d", r.ErrorCode)
	}
	fp := onlyFetchPartition(t, doFetch(t, m, fetchReq("", 0, 0, func(r *kmsg.FetchRequest) {
		r.Version = 13
		r.Topics[0].TopicID = topicIDFor("other")
	})))
	if fp.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("v13 fetch of a partition led elsewhere: %d", fp.ErrorCode)
	}

	// The topic is being deleted (leader -2): the hosted partition and its
	// log go away.
	del := updateMetadataReq(1, -1)
	del.LiveBrokers = req.LiveBrokers
	gone.PartitionStates[0] = umPartition("gone", 0, -2, 1)
	del.TopicStates = append(del.TopicStates, gone)
	if r := m.UpdateMetadata(ctx, del); r.ErrorCode != 0 {
		t.Fatal(r.ErrorCode)
	}
	if _, ok := m.Partition(common.TopicPartition{Topic: "gone", Partition: 0}); ok {
		t.Fatal("deleted topic's partition still hosted")
	}
	if _, ok := lm.GetLog(common.TopicPartition{Topic: "gone", Partition: 0}); ok {
		t.Fatal("deleted topic's log still open")
	}
}
