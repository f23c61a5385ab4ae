package group_test

// Older protocol versions as other client libraries send them: sarama with its default V2_1_0_0 (JoinGroup v3, SyncGroup v2,
// Heartbeat v2, LeaveGroup v2, OffsetCommit v6, OffsetFetch v5) and
// kafka-go's Reader (FindCoordinator v0, JoinGroup v1/v2, SyncGroup v0,
// Heartbeat v0, OffsetCommit v2, OffsetFetch v1).

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
)

type saramaHandler struct{}

func (saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (saramaHandler) ConsumeClaim(s sarama.ConsumerGroupSession, _ sarama.ConsumerGroupClaim) error {
	<-s.Context().Done()
	return nil
}

func TestSaramaConsumerGroup(t *testing.T) {
	addr, _ := startWire(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := newAdmin(t, addr)

	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_1_0_0
	cfg.Consumer.Group.Session.Timeout = 6 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = 200 * time.Millisecond
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.MaxWaitTime = 200 * time.Millisecond
	start := func() (stop func()) {
		cg, err := sarama.NewConsumerGroup([]string{addr}, "sg", cfg)
		if err != nil {
			t.Fatal(err)
		}
		cctx, ccancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for cctx.Err() == nil {
				if err := cg.Consume(cctx, []string{topic}, saramaHandler{}); err != nil {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
		var once sync.Once
		stop = func() {
			once.Do(func() {
				ccancel()
				wg.Wait()
				_ = cg.Close() // sends LeaveGroup
			})
		}
		t.Cleanup(stop)
		return stop
	}
	stop1 := start()
	start()
	d := waitDescribed(ctx, t, adm, "sg", "two sarama members", func(d kadm.DescribedGroup) bool {
		return d.State == "Stable" && len(d.Members) == 2 && ownedPartitions(d) == partitions
	})
	if d.Protocol != "range" {
		t.Errorf("protocol %q", d.Protocol)
	}
	stop1()
	waitDescribed(ctx, t, adm, "sg", "one sarama member", func(d kadm.DescribedGroup) bool {
		return d.State == "Stable" && len(d.Members) == 1 && ownedPartitions(d) == partitions
	})
}

func TestKafkaGoReaderGroup(t *testing.T) {
	addr, _ := startWire(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := newAdmin(t, addr)
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, GroupID: "kg", Topic: topic,
		SessionTimeout: 6 * time.Second, HeartbeatInterval: 200 * time.Millisecond, MaxWait: 200 * time.Millisecond,
		CommitInterval: 0, WatchPartitionChanges: false})
	rctx, rcancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = r.FetchMessage(rctx) // drives the group; the topic is empty
	}()
	t.Cleanup(func() { rcancel(); <-done; _ = r.Close() })
	waitDescribed(ctx, t, adm, "kg", "kafka-go member", func(d kadm.DescribedGroup) bool {
		return d.State == "Stable" && len(d.Members) == 1 && ownedPartitions(d) == partitions
	})
	// A commit through the reader (OffsetCommit v2) is read back by kadm
	// (OffsetFetch v8).
	if err := r.CommitMessages(ctx, kafka.Message{Topic: topic, Partition: 2, Offset: 41}); err != nil {
		t.Fatal(err)
	}
	os, err := adm.FetchOffsets(ctx, "kg")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := os.Lookup(topic, 2); !ok || o.At != 42 {
		t.Fatalf("committed %+v", os)
	}
}
