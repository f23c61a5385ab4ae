package broker_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/storage/record"
)

// CreateTopics refuses bad input with Kafka's error codes: illegal names
// (too long, bad characters, "." and "..", a '.'/'_' collision) get
// INVALID_TOPIC_EXCEPTION, and so on for partitions, replication factor,
// configs and explicit assignments. Auto-creation through Metadata refuses
// illegal names the same way.
func TestCreateTopicsRejectsBadInput(t *testing.T) {
	c := startRacked(t)
	adm := c.Admin()
	ctx := ctxT(t, 60*time.Second)
	c.CreateTopic("dot.name", 1, 1, nil)
	cases := []struct {
		name       string
		partitions int32
		rf         int16
		configs    map[string]*string
		want       error
	}{
		{name: strings.Repeat("x", 250), partitions: 1, rf: 1, want: kerr.InvalidTopicException},
		{name: "bad/name", partitions: 1, rf: 1, want: kerr.InvalidTopicException},
		{name: "bad name", partitions: 1, rf: 1, want: kerr.InvalidTopicException},
		{name: ".", partitions: 1, rf: 1, want: kerr.InvalidTopicException},
		{name: "..", partitions: 1, rf: 1, want: kerr.InvalidTopicException},
		{name: "dot_name", partitions: 1, rf: 1, want: kerr.InvalidTopicException},
		{name: "dot.name", partitions: 1, rf: 1, want: kerr.TopicAlreadyExists},
		{name: "too-many-replicas", partitions: 1, rf: 4, want: kerr.InvalidReplicationFactor},
		{name: "no-partitions", partitions: 0, rf: 1, want: kerr.InvalidPartitions},
		{name: "bad-config", partitions: 1, rf: 1, configs: map[string]*string{"retention.ms": kadm.StringPtr("x")}, want: kerr.InvalidConfig},
		{name: "unknown-config", partitions: 1, rf: 1, configs: map[string]*string{"no.such.config": kadm.StringPtr("1")}, want: kerr.InvalidConfig},
	}
	for _, tc := range cases {
		res, err := adm.CreateTopic(ctx, tc.partitions, tc.rf, tc.configs, tc.name)
		got := res.Err
		if got == nil {
			got = err // kadm returns the topic's error as the call's error
		}
		if !errors.Is(got, tc.want) {
			t.Errorf("create %q: got %v, want %v", tc.name, got, tc.want)
		}
	}
	if n, _ := c.ZK().GetAllTopics(); len(n) != 1 {
		t.Errorf("topics in ZooKeeper after the refused creations: %v", n)
	}

	// An explicit assignment naming an unknown broker.
	req := assignedTopicRequest("bad-assignment", 5000, [][]int32{{1, 99}}, nil)
	cl := c.Client()
	ctrl, _ := c.Controller()
	if code := request[*kmsg.CreateTopicsResponse](ctx, t, c.Direct(c.Index(ctrl)), req).Topics[0].ErrorCode; code != kerr.InvalidReplicaAssignment.Code {
		t.Errorf("assignment with an unknown broker: code %d, want INVALID_REPLICA_ASSIGNMENT", code)
	}
	// A non-controller answers NOT_CONTROLLER.
	other := c.BrokerID((c.Index(ctrl) + 1) % c.N())
	if code := request[*kmsg.CreateTopicsResponse](ctx, t, c.Direct(c.Index(other)), req).Topics[0].ErrorCode; code != kerr.NotController.Code {
		t.Errorf("CreateTopics at a non-controller: code %d, want NOT_CONTROLLER", code)
	}

	// Metadata auto-creation: an illegal name is INVALID_TOPIC_EXCEPTION, a
	// legal one is created and answered LEADER_NOT_AVAILABLE first.
	md := kmsg.NewPtrMetadataRequest()
	md.AllowAutoTopicCreation = true
	for _, n := range []string{"bad/name", "auto-created"} {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(n)
		md.Topics = append(md.Topics, mt)
	}
	mresp, err := md.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, mt := range mresp.Topics {
		switch *mt.Topic {
		case "bad/name":
			if mt.ErrorCode != kerr.InvalidTopicException.Code {
				t.Errorf("metadata for bad/name: code %d", mt.ErrorCode)
			}
		case "auto-created":
			if mt.ErrorCode != kerr.LeaderNotAvailable.Code && mt.ErrorCode != 0 {
				t.Errorf("metadata for auto-created: code %d", mt.ErrorCode)
			}
		}
	}
	c.WaitFor(30*time.Second, "the auto-created topic's leader", func() bool {
		s, ok := c.PartitionState("auto-created", 0)
		return ok && s.Leader >= 0
	})
}

// A batch with a broken CRC is refused with CORRUPT_MESSAGE and what was
// written before it is still readable, at the same offsets.
func TestCorruptBatchRefused(t *testing.T) {
	c := startRacked(t)
	ctx := ctxT(t, 60*time.Second)
	const topic = "raw"
	c.CreateTopic(topic, 1, 1, nil)
	c.WaitLeaders(20*time.Second, topic, 1)
	st, _ := c.PartitionState(topic, 0)
	leader := c.Direct(c.Index(st.Leader))
	produce := func(batch []byte) int16 {
		t.Helper()
		return produceCode(ctx, t, leader, topic, 1, batch)
	}
	batch := func(vals ...string) []byte {
		var recs []record.Record
		for i, v := range vals {
			recs = append(recs, record.Record{OffsetDelta: int32(i), Value: []byte(v)})
		}
		o := record.DefaultBuildOptions()
		o.BaseTimestamp = time.Now().UnixMilli()
		return record.Build(o, recs)
	}
	for _, vals := range [][]string{{"a", "b"}, {"c"}, {"d", "e", "f"}} {
		if code := produce(batch(vals...)); code != 0 {
			t.Fatalf("valid batch refused with %d", code)
		}
	}
	bad := batch("x", "y")
	bad[len(bad)-1] ^= 0xff // payload byte: the CRC no longer matches
	if code := produce(bad); code != kerr.CorruptMessage.Code {
		t.Fatalf("corrupt batch answered %d, want CORRUPT_MESSAGE (2)", code)
	}
	if code := produce(batch("g")); code != 0 {
		t.Fatalf("valid batch after the corrupt one refused with %d", code)
	}
	cons := c.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	want := []string{"a", "b", "c", "d", "e", "f", "g"}
	var got []string
	consumeN(ctx, t, cons, len(want), "the batches around the corrupt one", func(r *kgo.Record) {
		if r.Offset != int64(len(got)) {
			t.Errorf("record %q at offset %d, want %d", r.Value, r.Offset, len(got))
		}
		got = append(got, string(r.Value))
	})
	if strings.Join(got, "") != strings.Join(want, "") {
		t.Fatalf("read %v, want %v", got, want)
	}
}
