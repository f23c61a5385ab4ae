package replica

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/broker/common"
)

// Kafka's HostedPartition.Offline: once its log directory failed, a
// replica answers KAFKA_STORAGE_ERROR to Produce, Fetch, LeaderAndIsr and
// StopReplica, while the replicas of other directories work as before.
func TestOfflinePartitionAnswersStorageError(t *testing.T) {
	m, _ := newTestManager(t, nil)
	makeLeader(t, m, "t", 0, 0)
	makeLeader(t, m, "t", 1, 0)
	off := common.TopicPartition{Topic: "t", Partition: 0}
	m.MarkPartitionsOffline([]common.TopicPartition{off})
	if !m.IsOffline(off) || len(m.OfflinePartitions()) != 1 {
		t.Fatalf("offline partitions %v", m.OfflinePartitions())
	}
	if _, hosted := m.Partition(off); hosted {
		t.Fatal("offline partition still hosted")
	}
	storageErr := kerr.KafkaStorageError.Code
	if got := produceOne(t, m, 1, "t", 0, makeBatch(1, "a")).ErrorCode; got != storageErr {
		t.Errorf("produce to the offline replica: %v", kerr.ErrorForCode(got))
	}
	if got := produceOne(t, m, 1, "t", 1, makeBatch(1, "a")).ErrorCode; got != 0 {
		t.Errorf("produce to the online replica: %v", kerr.ErrorForCode(got))
	}
	if got := onlyFetchPartition(t, doFetch(t, m, fetchReq("t", 0, 0))).ErrorCode; got != storageErr {
		t.Errorf("fetch of the offline replica: %v", kerr.ErrorForCode(got))
	}
	resp := m.LeaderAndIsr(context.Background(), lairReq(1, "t", topicIDFor("t"), 0, 1, 1, []int32{1}, []int32{1}))
	if got := lairCode(t, resp); got != storageErr {
		t.Errorf("LeaderAndIsr for the offline replica: %v", kerr.ErrorForCode(got))
	}
	sr := m.StopReplica(context.Background(), stopReplicaReq(3, "t", 1, true, 0))
	if got := sr.Partitions[0].ErrorCode; got != storageErr {
		t.Errorf("StopReplica of the offline replica: %v", kerr.ErrorForCode(got))
	}
}

// Kafka refuses to create the log of a partition LeaderAndIsr does not
// call new while a log directory is offline (its log may be there): such
// a partition answers KAFKA_STORAGE_ERROR and gets no log; a new one is
// created as usual.
func TestNotNewPartitionNotCreatedWhileDirOffline(t *testing.T) {
	m, store := newTestManager(t, nil)
	store.offline = []string{"/data/broken"}
	req := lairReq(1, "t", topicIDFor("t"), 5, 1, 0, []int32{1}, []int32{1})
	req.TopicStates[0].PartitionStates[0].IsNew = false
	if got := lairCode(t, m.LeaderAndIsr(context.Background(), req)); got != kerr.KafkaStorageError.Code {
		t.Fatalf("LeaderAndIsr (is_new=false) with a dir offline: %v", kerr.ErrorForCode(got))
	}
	if _, ok := store.GetLog(common.TopicPartition{Topic: "t", Partition: 5}); ok {
		t.Fatal("log created for a partition that is not new")
	}
	if got := produceOne(t, m, 1, "t", 5, makeBatch(1, "a")).ErrorCode; got != kerr.KafkaStorageError.Code {
		t.Errorf("produce: %v", kerr.ErrorForCode(got))
	}
	makeLeader(t, m, "t", 6, 0) // is_new=true
}
