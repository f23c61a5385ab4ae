package broker_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
)

// A franz-go consumer group finds its coordinator (creating
// __consumer_offsets), joins, consumes everything, commits; the committed
// offsets are read back with OffsetFetch, the group is listed and described,
// and a new member of the group resumes after the committed offsets.
func TestConsumerGroupCommitAndResume(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Racks: racks,
		Overrides: map[string]string{"offsets.topic.num.partitions": "6", "group.initial.rebalance.delay.ms": "0"}})
	adm := c.Admin()
	ctx := ctxT(t, 90*time.Second)
	const topic, groupID = "grouped", "cg"
	c.CreateTopic(topic, 4, 1, nil)
	produceAndCheck(t, c, topic, 1000)

	cons := c.Client(kgo.ConsumerGroup(groupID), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	seen := map[string]bool{}
	consumeN(ctx, t, cons, 1000, "the group consumer", func(r *kgo.Record) {
		if seen[string(r.Value)] {
			t.Errorf("record %s delivered twice", r.Value)
		}
		seen[string(r.Value)] = true
	})
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}

	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := adm.FetchOffsets(ctx, groupID)
	if err != nil {
		t.Fatalf("fetch offsets: %v", err)
	}
	ends.Each(func(lo kadm.ListedOffset) {
		o, ok := committed.Lookup(topic, lo.Partition)
		if !ok || o.At != lo.Offset {
			t.Errorf("partition %d committed %+v, end offset %d", lo.Partition, o, lo.Offset)
		}
	})
	groups, err := adm.ListGroups(ctx)
	if err != nil || !slices.Contains(groups.Groups(), groupID) {
		t.Fatalf("list groups: %v %v", groups.Groups(), err)
	}
	described, err := adm.DescribeGroups(ctx, groupID)
	if err != nil {
		t.Fatal(err)
	}
	if d := described[groupID]; d.State != "Stable" || len(d.Members) != 1 || d.Protocol == "" {
		t.Fatalf("describe: state %q, %d members, protocol %q, err %v", d.State, len(d.Members), d.Protocol, d.Err)
	}
	cons.Close()

	// Ten more records; a new member resumes after the committed offsets.
	prod := c.Client(kgo.DefaultProduceTopic(topic))
	for i := 0; i < 10; i++ {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("late-%d", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	again := c.Client(kgo.ConsumerGroup(groupID), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var late []string
	consumeN(ctx, t, again, 10, "the resumed member", func(r *kgo.Record) { late = append(late, string(r.Value)) })
	for _, v := range late {
		if len(v) < 5 || v[:5] != "late-" {
			t.Fatalf("resumed member re-read %q: committed offsets were not used", v)
		}
	}
}

// OffsetCommit and OffsetFetch v0 keep offsets in ZooKeeper, as Kafka does
// for that version: /consumers/<group>/offsets/<topic>/<partition>.
func TestOffsetCommitV0InZooKeeper(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	ctx := ctxT(t, 30*time.Second)
	c.CreateTopic("legacy", 2, 1, nil)
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version = 0
	commit.Group = "old-consumer"
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = "legacy"
	for _, p := range []int32{0, 7} {
		cp := kmsg.NewOffsetCommitRequestTopicPartition()
		cp.Partition, cp.Offset = p, 42
		ct.Partitions = append(ct.Partitions, cp)
	}
	commit.Topics = []kmsg.OffsetCommitRequestTopic{ct}
	// kgo would pick the highest version; the broker's own client sends the
	// version set on the request.
	b, err := network.Dial(ctx, c.Addr(0), "legacy-consumer", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cresp := request[*kmsg.OffsetCommitResponse](ctx, t, b, commit)
	if p := cresp.Topics[0].Partitions; p[0].ErrorCode != 0 || p[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("commit codes %d %d", p[0].ErrorCode, p[1].ErrorCode)
	}
	data, _, err := c.ZK().Get(zkpaths.ConsumerOffsetPath("old-consumer", "legacy", 0))
	if err != nil || string(data) != "42" {
		t.Fatalf("znode holds %q (%v), want 42", data, err)
	}
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Version = 0
	fetch.Group = "old-consumer"
	ft := kmsg.NewOffsetFetchRequestTopic()
	ft.Topic, ft.Partitions = "legacy", []int32{0, 1}
	fetch.Topics = []kmsg.OffsetFetchRequestTopic{ft}
	fresp := request[*kmsg.OffsetFetchResponse](ctx, t, b, fetch)
	ps := fresp.Topics[0].Partitions
	if ps[0].Offset != 42 || ps[0].ErrorCode != 0 || ps[1].Offset != -1 || ps[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("fetch: %+v", ps)
	}
}
