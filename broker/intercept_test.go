package broker_test

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
