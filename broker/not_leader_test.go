package broker_test

// NOT_LEADER_OR_FOLLOWER on the data path: which partitions a broker
// answers it for, and what the client does when it gets it.

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/testcluster"
)

// A data-path request for a partition the cluster knows but this broker
// does not host answers NOT_LEADER_OR_FOLLOWER, so the client refreshes its
// metadata and goes to the leader; only a partition the cluster does not
// know answers UNKNOWN_TOPIC_OR_PARTITION. Kafka's ReplicaManager tells the
// two apart with its metadata cache.
func TestNotHostedPartitionAnswersNotLeader(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	ctx := ctxT(t, 60*time.Second)
	const topic = "led-by-one"

	// Partition 0 lives on broker 1 only (RF 1).
	req := assignedTopicRequest(topic, 10000, [][]int32{{c.BrokerID(0)}}, nil)
	ctrl, _ := c.Controller()
	if code := request[*kmsg.CreateTopicsResponse](ctx, t, c.Direct(c.Index(ctrl)), req).Topics[0].ErrorCode; code != 0 {
		t.Fatalf("create: code %d", code)
	}
	other := c.Broker(1)
	c.WaitFor(15*time.Second, "broker 2's metadata cache knows the partition and its leader", func() bool {
		st, ok := other.Metadata().Partition(topic, 0)
		return ok && st.Leader == c.BrokerID(0)
	})
	if _, hosted := other.Replicas().Partition(replicaTP(topic, 0)); hosted {
		t.Fatal("broker 2 hosts a partition assigned to broker 1 only")
	}
	topicID, _ := other.Metadata().TopicID(topic)
	to := c.Direct(1)

	for _, tc := range []struct {
		topic string
		want  int16
	}{
		{topic, kerr.NotLeaderForPartition.Code},
		{"never-created", kerr.UnknownTopicOrPartition.Code},
	} {
		id := topicID
		if tc.topic != topic {
			id = [16]byte{}
		}
		if got := produceAcks(ctx, t, to, tc.topic, 1); got != tc.want {
			t.Errorf("Produce of %s at broker 2: code %d, want %d", tc.topic, got, tc.want)
		}
		if tc.topic == topic { // a fetch by name of an unknown topic id is a different error in v13
			if got := fetchCode(ctx, t, to, tc.topic, id); got != tc.want {
				t.Errorf("Fetch of %s at broker 2: code %d, want %d", tc.topic, got, tc.want)
			}
		}
		if got := listOffsetsCode(ctx, t, to, tc.topic); got != tc.want {
			t.Errorf("ListOffsets of %s at broker 2: code %d, want %d", tc.topic, got, tc.want)
		}
	}
}

// The harness's intercept hook answers requests of one API key in place of
// the broker: the first Produce requests are refused with
// NOT_LEADER_OR_FOLLOWER (nothing appended); the idempotent producer
// refreshes its metadata, retries, and every record still lands exactly once
// and in order.
func TestInterceptedProduceErrorsAreRetried(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	c.CreateTopic("flaky", 2, 1, nil)
	var refused atomic.Int32
	c.Intercept(0, 0, func(_ context.Context, req *network.Request) (kmsg.Response, bool, error) {
		if refused.Add(1) > 3 {
			return nil, false, nil // pass through from now on
		}
		pr := req.Body.(*kmsg.ProduceRequest)
		resp := pr.ResponseKind().(*kmsg.ProduceResponse)
		for _, tp := range pr.Topics {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic = tp.Topic
			for _, p := range tp.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.BaseOffset = p.Partition, kerr.NotLeaderForPartition.Code, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, true, nil
	})
	// A short metadata min age keeps the producer's retries quick.
	produceAndCheck(t, c, "flaky", 500, kgo.MetadataMinAge(50*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if refused.Load() < 4 {
		t.Fatalf("the interceptor saw %d produce requests; it never passed one through", refused.Load())
	}
	c.Intercept(0, 0, nil)
}

func fetchCode(ctx context.Context, t *testing.T, b kmsg.Requestor, topic string, id [16]byte) int16 {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MaxBytes = -1, 0, 1<<20
	req.SessionEpoch = -1 // no fetch session
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = topic, id
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = 0, 0, 1<<20, -1
	ft.Partitions = []kmsg.FetchRequestTopicPartition{fp}
	req.Topics = []kmsg.FetchRequestTopic{ft}
	resp := request[*kmsg.FetchResponse](ctx, t, b, req)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch response shape: code %d, %d topics", resp.ErrorCode, len(resp.Topics))
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

func listOffsetsCode(ctx context.Context, t *testing.T, b kmsg.Requestor, topic string) int16 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = topic
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition, lp.Timestamp, lp.CurrentLeaderEpoch = 0, -1, -1
	lt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{lp}
	req.Topics = []kmsg.ListOffsetsRequestTopic{lt}
	return request[*kmsg.ListOffsetsResponse](ctx, t, b, req).Topics[0].Partitions[0].ErrorCode
}
