package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/klassik/klassik/broker/testcluster"
)

// racks are the racks of startRacked's brokers, by index.
var racks = []string{"a", "b", "c"}

// startRacked starts the cluster most tests here use: three brokers on
// racks a, b and c.
func startRacked(t *testing.T) *testcluster.Cluster {
	t.Helper()
	return testcluster.Start(t, testcluster.Options{Brokers: 3, Racks: racks})
}

// ctxT is a context that ends after d or with the test.
func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Raw requests for the tests that check one broker's answer to one request
// (a kgo client would retry or route it elsewhere).

// request sends req through r (a kgo client, one of its brokers or the
// broker's own network client), failing the test on a transport error, and
// returns the typed response.
func request[R kmsg.Response](ctx context.Context, t *testing.T, r kmsg.Requestor, req kmsg.Request) R {
	t.Helper()
	resp, err := r.Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(R)
}

// produceRequest writes batch to partition 0 of topic with the given acks.
func produceRequest(topic string, acks int16, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = acks, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = topic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Partition, pp.Records = 0, batch
	pt.Partitions = []kmsg.ProduceRequestTopicPartition{pp}
	req.Topics = []kmsg.ProduceRequestTopic{pt}
	return req
}

// produceCode sends batch to partition 0 of topic at b and returns the
// partition's error code.
func produceCode(ctx context.Context, t *testing.T, b kmsg.Requestor, topic string, acks int16, batch []byte) int16 {
	t.Helper()
	return request[*kmsg.ProduceResponse](ctx, t, b, produceRequest(topic, acks, batch)).Topics[0].Partitions[0].ErrorCode
}

// produceAcks sends one record to partition 0 of topic with the given acks
// and returns the partition's error code.
func produceAcks(ctx context.Context, t *testing.T, b kmsg.Requestor, topic string, acks int16) int16 {
	t.Helper()
	return produceCode(ctx, t, b, topic, acks, oneRecordBatch("v"))
}

func oneRecordBatch(value string) []byte {
	o := record.DefaultBuildOptions()
	o.BaseTimestamp = time.Now().UnixMilli()
	return record.Build(o, []record.Record{{Value: []byte(value)}})
}

// assignedTopicRequest creates topic with an explicit replica assignment
// (one slice per partition: no partition count or replication factor) and
// topic configs.
func assignedTopicRequest(topic string, timeoutMillis int32, assignment [][]int32, configs map[string]string) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = timeoutMillis
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p, rs := range assignment {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = int32(p), rs
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	}
	for k, v := range configs {
		cf := kmsg.NewCreateTopicsRequestTopicConfig()
		cf.Name, cf.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, cf)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// consumeN polls cl, handing each record to each (if set), until n records
// arrived, and returns how many did (the last poll may bring more); at
// ctx's deadline it fails the test naming what was being read.
func consumeN(ctx context.Context, t *testing.T, cl *kgo.Client, n int, what string, each func(*kgo.Record)) int {
	t.Helper()
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: read %d of %d records before the deadline", what, got, n)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch error %s-%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if each != nil {
				each(r)
			}
			got++
		})
	}
	return got
}

// followerGate holds the followers' Fetch requests at broker index leader
// between hold and release (the leader answers them once released or when
// their context ends), so acks=all produces there wait for replication.
func followerGate(c *testcluster.Cluster, leader int) (hold, release func()) {
	var gate chan struct{}
	hold = func() {
		gate = make(chan struct{})
		g := gate
		c.Intercept(leader, int16(kmsg.Fetch), func(ctx context.Context, req *network.Request) (kmsg.Response, bool, error) {
			if fr, ok := req.Body.(*kmsg.FetchRequest); ok && fr.ReplicaID >= 0 {
				select {
				case <-g:
				case <-ctx.Done():
					return nil, true, ctx.Err()
				}
			}
			return nil, false, nil
		})
	}
	release = func() {
		c.Intercept(leader, int16(kmsg.Fetch), nil)
		close(gate)
	}
	return hold, release
}
