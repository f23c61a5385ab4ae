package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
)

// Throttled reassignment, as Kafka's ReplicationQuotasTest does it: 50 MB
// on broker 1 move to broker 2 (a new replica, outside the ISR) with
// --throttle 2500000, so the copy takes about 50e6/2.5e6 = 20 s (an
// unthrottled copy takes well under a second). The leader holds back the
// partition's records from broker 2 and broker 2 leaves it out of its
// fetches while either one's windowed rate is above the bound. Kafka's
// algorithm itself lags the bound by about one window (the first window's
// rate is measured over a whole window) and one replica.fetch.backoff.ms;
// the long copy keeps that and a loaded machine's delays inside ±30 %.
const (
	throttleRate = 2_500_000
	// One 1 MB record per producer batch: a fetch response (1 MiB,
	// replica.fetch.max.bytes) carries one whole batch and the start of the
	// next, which both quotas count (as Kafka's do) and the next fetch
	// copies again; with whole batches that is under 5 % of the traffic.
	throttledRecords = 50
	throttledValue   = 1_000_000 // bytes per record: 50 MB in all
)

// TestThrottledReassignment: --execute --throttle writes Kafka's throttle
// configs (topic: leader 0:1, follower 0:2; brokers 1 and 2: both rates);
// the move takes as long as the rate predicts (±30 %); --verify then
// reports it complete and removes every throttle config; every record
// acknowledged before or during the move is on the new leader at its
// offset.
func TestThrottledReassignment(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	zc := c.ZK()
	if err := zc.CreateTopic("big", zkpaths.TopicAssignment{Version: 2, Partitions: map[int32][]int32{0: {1}}}, nil); err != nil {
		t.Fatal(err)
	}
	c.WaitLeaders(30*time.Second, "big", 1)

	check := testcluster.NewChecker()
	cl := c.Client(kgo.DefaultProduceTopic("big"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(1<<20))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	value := make([]byte, throttledValue)
	for i := 0; i < throttledRecords; i++ {
		rand.Read(value) // incompressible
		id := fmt.Sprintf("bulk-%d", i)
		r := &kgo.Record{Key: []byte(id), Value: append([]byte(nil), value...)}
		seq := int64(i)
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce %s: %v", id, err)
				return
			}
			check.Acked(id, seq, r.Partition, r.Offset)
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	bulkEnd := int64(throttledRecords) // one record per offset, from 0

	// A trickle of writes during the move, far below the throttle.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			id := fmt.Sprintf("trickle-%d", i)
			seq := int64(throttledRecords + i)
			if r, err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(id), Value: []byte(id)}).First(); err == nil {
				check.Acked(id, seq, r.Partition, r.Offset)
			}
		}
	}()

	plan := clitest.WriteFile(t, `{"version":1,"partitions":[{"topic":"big","partition":0,"replicas":[2]}]}`)
	rate := fmt.Sprint(throttleRate)
	start := time.Now()
	out, errOut, code := runZk(t, c.ZKConnect(), "--execute", "--reassignment-json-file", plan, "--throttle", rate)
	if code != 0 || !strings.Contains(out, "The inter-broker throttle limit was set to "+rate+" B/s\nSuccessfully started partition reassignment for big-0\n") {
		t.Fatalf("execute: %d %q %q", code, out, errOut)
	}
	topicCfg, err := zc.GetEntityConfigs(zkpaths.ConfigTypeTopic, "big")
	if err != nil || topicCfg["leader.replication.throttled.replicas"] != "0:1" || topicCfg["follower.replication.throttled.replicas"] != "0:2" {
		t.Fatalf("topic throttles %v %v", topicCfg, err)
	}
	for _, id := range []string{"1", "2"} {
		bc, err := zc.GetEntityConfigs(zkpaths.ConfigTypeBroker, id)
		if err != nil || bc["leader.replication.throttled.rate"] != rate || bc["follower.replication.throttled.rate"] != rate {
			t.Fatalf("broker %s throttles %v %v", id, bc, err)
		}
	}

	// The copy, from broker 2's first LeaderAndIsr for the partition until
	// it holds the whole bulk. (The controller then needs the ISR change
	// and a leader move to finish the reassignment.)
	tp := common.TopicPartition{Topic: "big", Partition: 0}
	var copyStart time.Time
	c.WaitFor(90*time.Second, "broker 2 to copy the bulk", func() bool {
		l, ok := c.Broker(1).LogManager().GetLog(tp)
		if ok && copyStart.IsZero() {
			copyStart = time.Now()
		}
		return ok && l.LogEndOffset() >= bulkEnd
	})
	took := time.Since(copyStart)
	want := time.Duration(float64(throttledRecords*throttledValue) / throttleRate * float64(time.Second))
	t.Logf("throttled copy of %d MB at %d B/s took %v (predicted %v; %v after --execute started)", throttledRecords*throttledValue/1_000_000, throttleRate, took, want, time.Since(start))
	// Faster than the throttle allows is a verdict; slower is also what a
	// loaded machine does, so it is only reported.
	if took < want*7/10 {
		t.Errorf("the copy took %v, faster than the throttle allows (predicted %v, -30 %%)", took, want)
	}
	if took > want*13/10 {
		t.Logf("the copy took %v, more than 30 %% over the predicted %v (a loaded machine, or a throttle stricter than set)", took, want)
	}
	c.WaitFor(90*time.Second, "the controller to finish the reassignment", func() bool {
		ok, _, err := zc.Exists(zkpaths.ReassignPartitionsPath)
		return err == nil && !ok
	})
	t.Logf("reassignment complete after %v", time.Since(start))
	// Both sides counted the moved bytes.
	for i, name := range []string{"kafka.server.LeaderReplication.byte-rate", "kafka.server.FollowerReplication.byte-rate"} {
		g, ok := c.Broker(i).Metrics().Get(name).(gometrics.GaugeFloat64)
		if !ok || g.Value() <= 0 {
			t.Errorf("broker %d: %s not above 0", c.BrokerID(i), name)
		}
	}

	out, errOut, code = runZk(t, c.ZKConnect(), "--verify", "--reassignment-json-file", plan)
	wantVerify := zkWarning +
		"Warning: because you are using the deprecated --zookeeper option, the results may be incomplete.  Use --bootstrap-server instead for more accurate results.\n" +
		"Status of partition reassignment:\n" +
		"Reassignment of partition big-0 is complete.\n" +
		"Clearing broker-level throttles on brokers 1,2\n" +
		"Clearing topic-level throttles on topic big\n"
	if code != 0 || out != wantVerify {
		t.Fatalf("verify: %d\n%s\nwant\n%s\nstderr %q", code, out, wantVerify, errOut)
	}
	if cfg, _ := zc.GetEntityConfigs(zkpaths.ConfigTypeTopic, "big"); len(cfg) != 0 {
		t.Fatalf("topic throttles left: %v", cfg)
	}
	for _, id := range []string{"1", "2"} {
		if bc, _ := zc.GetEntityConfigs(zkpaths.ConfigTypeBroker, id); len(bc) != 0 {
			t.Fatalf("broker %s throttles left: %v", id, bc)
		}
	}
	close(stop)
	wg.Wait()

	// Every acknowledged record is on the new leader, at its offset.
	c.WaitFor(30*time.Second, "broker 2 to lead big-0", func() bool {
		st, ok := c.PartitionState("big", 0)
		return ok && st.Leader == 2
	})
	end := consumeAll(t, c, check)
	rep := check.Report()
	if !rep.OK() {
		t.Fatalf("after the throttled move (log end %d): %s", end, rep)
	}
}

// consumeAll reads big-0 from the start up to its high watermark into
// check and returns the offset it stopped at.
func consumeAll(t *testing.T, c *testcluster.Cluster, check *testcluster.Checker) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := c.Admin()
	ends, err := adm.ListEndOffsets(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	o, _ := ends.Lookup("big", 0)
	cons := c.Client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"big": {0: kgo.NewOffset().AtStart()}}), kgo.FetchMaxBytes(50<<20))
	var next int64
	for next < o.Offset {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed up to %d of %d: %v", next, o.Offset, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			check.Consumed(string(r.Key), r.Partition, r.Offset)
			next = r.Offset + 1
		})
	}
	return next
}

// TestBootstrapThrottleConfigs: in --bootstrap-server mode --execute
// --throttle sets the same configs through IncrementalAlterConfigs (the
// brokers store them in ZooKeeper in Kafka's layout), and --verify, once
// the move is complete, deletes them with Kafka's output.
func TestBootstrapThrottleConfigs(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	zc := c.ZK()
	if err := zc.CreateTopic("small", zkpaths.TopicAssignment{Version: 2, Partitions: map[int32][]int32{0: {1}}}, map[string]string{"retention.ms": "86400000"}); err != nil {
		t.Fatal(err)
	}
	c.WaitLeaders(30*time.Second, "small", 1)
	plan := clitest.WriteFile(t, `{"version":1,"partitions":[{"topic":"small","partition":0,"replicas":[1,2]}]}`)
	out, errOut, code := runBootstrap(t, c, "--execute", "--reassignment-json-file", plan, "--throttle", "10000000", "--replica-alter-log-dirs-throttle", "2000000")
	wantTail := "Save this to use as the --reassignment-json-file option during rollback\n" +
		youMustRunVerifyPeriodically + "\n" +
		"The inter-broker throttle limit was set to 10000000 B/s\n" +
		"The replica-alter-dir throttle limit was set to 2000000 B/s\n" +
		"Successfully started partition reassignment for small-0\n"
	if code != 0 || !strings.HasSuffix(out, wantTail) {
		t.Fatalf("execute: %d\n%s\nwant suffix\n%s\nstderr %q", code, out, wantTail, errOut)
	}
	topicCfg, err := zc.GetEntityConfigs(zkpaths.ConfigTypeTopic, "small")
	if err != nil || topicCfg["leader.replication.throttled.replicas"] != "0:1" || topicCfg["follower.replication.throttled.replicas"] != "0:2" || topicCfg["retention.ms"] != "86400000" {
		t.Fatalf("topic throttles %v %v", topicCfg, err)
	}
	for _, id := range []string{"1", "2"} {
		bc, err := zc.GetEntityConfigs(zkpaths.ConfigTypeBroker, id)
		// No log directory move, so no broker gets the log-dir throttle.
		if err != nil || len(bc) != 2 || bc["leader.replication.throttled.rate"] != "10000000" || bc["follower.replication.throttled.rate"] != "10000000" {
			t.Fatalf("broker %s throttles %v %v", id, bc, err)
		}
	}
	c.WaitFor(60*time.Second, "--verify to report small-0 complete and clear the throttles", func() bool {
		out, _, code = runBootstrap(t, c, "--verify", "--reassignment-json-file", plan)
		return code == 0 && strings.Contains(out, "is complete")
	})
	if want := "Status of partition reassignment:\nReassignment of partition small-0 is complete.\n\n" +
		"Clearing broker-level throttles on brokers 1,2\nClearing topic-level throttles on topic small\n"; out != want {
		t.Fatalf("verify: %q, want %q", out, want)
	}
	if cfg, _ := zc.GetEntityConfigs(zkpaths.ConfigTypeTopic, "small"); len(cfg) != 1 || cfg["retention.ms"] != "86400000" {
		t.Fatalf("topic configs after --verify: %v", cfg)
	}
	for _, id := range []string{"1", "2"} {
		if bc, _ := zc.GetEntityConfigs(zkpaths.ConfigTypeBroker, id); len(bc) != 0 {
			t.Fatalf("broker %s throttles left: %v", id, bc)
		}
	}
	// The brokers took the removal: no bound any more.
	c.WaitFor(10*time.Second, "the brokers to drop the throttle rates", func() bool {
		for i := 0; i < c.N(); i++ {
			if cur := c.Broker(i).Dynamic().Current(); cur.LeaderReplicationThrottledRate != math.MaxInt64 || cur.FollowerReplicationThrottledRate != math.MaxInt64 {
				return false
			}
		}
		return true
	})
}
