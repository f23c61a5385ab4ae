package broker_test

import (
	"crypto/rand"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
)

// Kafka's replication quotas spare in-sync replicas ("To avoid ISR
// thrashing, we only throttle a replica on the follower if it's in the
// throttled replica list, the quota is exceeded and the replica is not in
// sync"): with every replica of the topic throttled at 100 KB/s on both
// brokers, written into ZooKeeper in Kafka's format with change
// notifications, 5 MB of acks=all writes replicate at full speed, the ISR
// keeps both replicas, and the bytes still count towards both brokers'
// replication rates.
func TestInSyncFollowerIsNotThrottled(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	zc := c.ZK()
	if err := zc.CreateTopic("insync", zkpaths.TopicAssignment{Version: 2, Partitions: map[int32][]int32{0: {1, 2}}}, nil); err != nil {
		t.Fatal(err)
	}
	c.WaitLeaders(30*time.Second, "insync", 1)
	c.WaitFor(30*time.Second, "both replicas in the ISR", func() bool {
		st, ok := c.PartitionState("insync", 0)
		return ok && len(st.ISR) == 2
	})
	if err := zc.ChangeEntityConfigs(zkpaths.ConfigTypeTopic, "insync", map[string]string{
		"leader.replication.throttled.replicas": "*", "follower.replication.throttled.replicas": "*"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1", "2"} {
		if err := zc.ChangeEntityConfigs(zkpaths.ConfigTypeBroker, id, map[string]string{
			"leader.replication.throttled.rate": "100000", "follower.replication.throttled.rate": "100000"}); err != nil {
			t.Fatal(err)
		}
	}
	c.WaitFor(20*time.Second, "the throttle rates on both brokers", func() bool {
		for i := 0; i < c.N(); i++ {
			cur := c.Broker(i).Dynamic().Current()
			if cur.LeaderReplicationThrottledRate != 100000 || cur.FollowerReplicationThrottledRate != 100000 {
				return false
			}
		}
		return true
	})

	cl := c.Client(kgo.DefaultProduceTopic("insync"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	ctx := ctxT(t, time.Minute)
	start := time.Now()
	value := make([]byte, 50_000)
	for i := 0; i < 100; i++ { // 5 MB: 50 s at the throttle
		rand.Read(value)
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: append([]byte(nil), value...)}).FirstErr(); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	took := time.Since(start)
	t.Logf("5 MB acks=all with an in-sync follower under a 100 KB/s throttle: %v", took)
	if took > 20*time.Second {
		t.Fatalf("an in-sync follower was throttled: 5 MB took %v", took)
	}
	if st, _ := c.PartitionState("insync", 0); len(st.ISR) != 2 {
		t.Fatalf("the ISR shrank to %v", st.ISR)
	}
	// The throttle lists were applied: both sides counted the bytes.
	c.WaitFor(10*time.Second, "the replication byte rates to count the writes", func() bool {
		l, ok1 := c.Broker(0).Metrics().Get("kafka.server.LeaderReplication.byte-rate").(gometrics.GaugeFloat64)
		f, ok2 := c.Broker(1).Metrics().Get("kafka.server.FollowerReplication.byte-rate").(gometrics.GaugeFloat64)
		return ok1 && ok2 && l.Value() > 100000 && f.Value() > 100000
	})
}
