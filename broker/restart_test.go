package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/storage"
	"github.com/klassik/klassik/broker/testcluster"
)

// Topic configs set with IncrementalAlterConfigs and AlterConfigs are read
// back with DescribeConfigs (source DYNAMIC_TOPIC_CONFIG), applied live to
// the logs of every replica, and — with the topics, the data and the log
// offsets — survive a restart of the whole cluster.

func TestConfigsAndDataSurviveClusterRestart(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Racks: racks,
		Overrides: map[string]string{"offsets.topic.num.partitions": "3", "group.initial.rebalance.delay.ms": "0"}})
	adm := c.Admin()
	ctx := ctxT(t, 120*time.Second)
	const topic = "durable"
	c.CreateTopic(topic, 3, 3, map[string]*string{"segment.bytes": kadm.StringPtr("1048576")})
	if v, src := testcluster.TopicConfig(t, adm, topic, "segment.bytes"); v != "1048576" || src != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("segment.bytes = %s (source %v) after create", v, src)
	}
	if v, src := testcluster.TopicConfig(t, adm, topic, "retention.ms"); v != "604800000" || src != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("retention.ms = %s (source %v), want Kafka's default", v, src)
	}

	// IncrementalAlterConfigs: set retention.ms, keep segment.bytes.
	resps, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("3600000")}}, topic)
	if err != nil || resps[0].Err != nil {
		t.Fatalf("incremental alter: %v / %v", err, resps)
	}
	if v, src := testcluster.TopicConfig(t, adm, topic, "retention.ms"); v != "3600000" || src != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("retention.ms = %s (source %v) after incremental alter", v, src)
	}
	if v, _ := testcluster.TopicConfig(t, adm, topic, "segment.bytes"); v != "1048576" {
		t.Fatalf("incremental alter lost segment.bytes: %s", v)
	}
	// Every broker hosting a replica applies the change to its logs.
	waitLogConfig(t, c, topic, func(lc storage.LogConfig) bool { return lc.RetentionMs == 3600000 })

	// AlterConfigs replaces the whole set: segment.bytes goes back to the default.
	resps, err = adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "cleanup.policy", Value: kadm.StringPtr("compact,delete")}, {Name: "retention.ms", Value: kadm.StringPtr("7200000")}}, topic)
	if err != nil || resps[0].Err != nil {
		t.Fatalf("alter: %v / %v", err, resps)
	}
	if v, src := testcluster.TopicConfig(t, adm, topic, "segment.bytes"); v != "1073741824" || src != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("segment.bytes = %s (source %v) after AlterConfigs replaced the set", v, src)
	}
	waitLogConfig(t, c, topic, func(lc storage.LogConfig) bool {
		return lc.RetentionMs == 7200000 && lc.CleanupPolicyCompact && lc.CleanupPolicyDelete && lc.SegmentBytes == 1073741824
	})
	// An invalid value is refused with INVALID_CONFIG and changes nothing.
	resps, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("soon")}}, topic)
	if err != nil || resps[0].Err == nil {
		t.Fatalf("invalid retention.ms accepted: %v / %v", err, resps)
	}

	produceAndCheck(t, c, topic, 2000)
	before, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	// Committed group offsets (in __consumer_offsets) must survive too.
	commits := kadm.Offsets{}
	before.Each(func(lo kadm.ListedOffset) {
		commits.Add(kadm.Offset{Topic: topic, Partition: lo.Partition, At: lo.Offset / 2, LeaderEpoch: -1, Metadata: "half"})
	})
	if resp, err := adm.CommitOffsets(ctx, "durable-group", commits); err != nil || resp.Error() != nil {
		t.Fatalf("commit offsets: %v / %v", err, resp.Error())
	}

	// Restart the whole cluster.
	for i := 0; i < c.N(); i++ {
		c.StopBroker(i)
	}
	for i := 0; i < c.N(); i++ {
		c.RestartBroker(i)
	}
	c.WaitLeaders(20*time.Second, topic, 3)
	adm2 := c.Admin()
	if v, src := testcluster.TopicConfig(t, adm2, topic, "retention.ms"); v != "7200000" || src != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("retention.ms = %s (source %v) after the restart", v, src)
	}
	if v, _ := testcluster.TopicConfig(t, adm2, topic, "cleanup.policy"); v != "compact,delete" {
		t.Fatalf("cleanup.policy = %s after the restart", v)
	}
	waitLogConfig(t, c, topic, func(lc storage.LogConfig) bool { return lc.RetentionMs == 7200000 })
	var after kadm.ListedOffsets
	c.WaitFor(20*time.Second, "end offsets after the restart", func() bool {
		after, err = adm2.ListEndOffsets(ctx, topic)
		return err == nil && after.Error() == nil
	})
	before.Each(func(lo kadm.ListedOffset) {
		a, ok := after.Lookup(topic, lo.Partition)
		if !ok || a.Offset != lo.Offset {
			t.Errorf("partition %d end offset %d before, %+v after the restart", lo.Partition, lo.Offset, a)
		}
	})
	var fetched kadm.OffsetResponses
	c.WaitFor(30*time.Second, "the committed offsets after the restart", func() bool {
		fetched, err = adm2.FetchOffsets(ctx, "durable-group")
		return err == nil && fetched.Error() == nil
	})
	commits.Each(func(o kadm.Offset) {
		got, ok := fetched.Lookup(topic, o.Partition)
		if !ok || got.At != o.At || got.Metadata != "half" {
			t.Errorf("partition %d committed %+v after the restart, want %d/half", o.Partition, got, o.At)
		}
	})
	topics, err := adm2.ListTopics(ctx)
	if err != nil || !topics.Has(topic) {
		t.Fatalf("topic list after restart: %v %v", topics.Names(), err)
	}
	consumeAll(t, c, topic, 2000)
}

// waitLogConfig waits until every local log of topic on every running
// broker satisfies ok.
func waitLogConfig(t *testing.T, c *testcluster.Cluster, topic string, ok func(storage.LogConfig) bool) {
	t.Helper()
	c.WaitFor(30*time.Second, "the topic config applied to every replica's log", func() bool {
		found := 0
		for i := 0; i < c.N(); i++ {
			b := c.Broker(i)
			if b == nil {
				continue
			}
			for tp, l := range b.LogManager().AllLogs() {
				if tp.Topic != topic {
					continue
				}
				found++
				if !ok(l.Config()) {
					return false
				}
			}
		}
		return found > 0
	})
}
