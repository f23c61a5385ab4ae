package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster"
)

// TestOffsetsTopicCappedAtLiveBrokers: with one broker and the default
// offsets.topic.replication.factor (3), the first consumer group still gets a
// coordinator: __consumer_offsets is created with as many replicas as there
// are live brokers (with a warning in the log), and a commit is read back.
func TestOffsetsTopicCappedAtLiveBrokers(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Overrides: map[string]string{"group.initial.rebalance.delay.ms": "0"}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := c.Admin()
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "capped"); err != nil {
		t.Fatal(err)
	}
	prod := c.Client(kgo.DefaultProduceTopic("capped"))
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	cons := c.Client(kgo.ConsumeTopics("capped"), kgo.ConsumerGroup("capped-group"), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got *kgo.Record
	for got == nil {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("no record consumed through the group: %v", fs.Errors())
		}
		fs.EachRecord(func(r *kgo.Record) { got = r })
	}
	if err := cons.CommitRecords(ctx, got); err != nil {
		t.Fatalf("commit: %v", err)
	}
	offsets, err := adm.FetchOffsets(ctx, "capped-group")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offsets.Lookup("capped", 0); !ok || o.At != got.Offset+1 {
		t.Fatalf("committed offset = %+v (found %v), want %d", o, ok, got.Offset+1)
	}
	td, err := adm.ListTopics(ctx, "__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	d := td["__consumer_offsets"]
	if d.Err != nil || len(d.Partitions) == 0 {
		t.Fatalf("__consumer_offsets: %+v", d)
	}
	for _, p := range d.Partitions {
		if len(p.Replicas) != 1 {
			t.Fatalf("__consumer_offsets partition %d has replicas %v, want 1 (capped at the live brokers)", p.Partition, p.Replicas)
		}
	}
}
