package main

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/common"
)

// isrShrinkExpand: a follower that has not caught up with the leader's log
// end for replica.lag.time.max.ms is removed from the ISR; until then an
// acks=all produce waits for it and the high watermark (the offset below
// which every ISR member has the data) stays behind. Once it fetches up to
// the log end again it is added back.
func isrShrinkExpand(s *Stage) string {
	const lagMs = 3000
	s.Step("Start a throwaway ZooKeeper and three brokers with replica.lag.time.max.ms=%d and min.insync.replicas=2.", lagMs)
	s.Say("Their ZooKeeper sessions last 20 s here, so a paused broker keeps its registration and only the ISR rule acts on it.")
	s.StartBrokers(3, map[string]string{"min.insync.replicas": "2", "replica.lag.time.max.ms": fmt.Sprint(lagMs),
		"zookeeper.session.timeout.ms": "20000"})

	s.Step("Create topic isr with one partition on brokers 1, 2 and 3; broker 1, first in the list, leads it.")
	s.Tool("kafka-topics.sh", "--bootstrap-server", s.brokers[0].Addr, "--create", "--topic", "isr", "--replica-assignment", "1:2:3")
	tp := common.TopicPartition{Topic: "isr", Partition: 0}
	s.waitPartition(tp, "broker %d leading isr-0 with all three in the ISR", func(st partState) bool {
		return st.Leader == 1 && len(st.ISR) == 3
	}, 1)
	s.Tool("kafka-topics.sh", "--bootstrap-server", s.brokers[0].Addr, "--describe", "--topic", "isr")

	prod := s.Client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("isr"), kgo.ProduceRequestTimeout(20*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	s.Step("Produce record \"one\" with acks=all: the leader answers once every ISR member has fetched it, and the high watermark moves past it.")
	off := s.produce(prod, "one")
	s.Say("\"one\" is at offset %d; the high watermark (what ListOffsets latest and consumers see) is %d.", off, s.highWatermark(tp))

	f := s.Broker(3)
	s.Step("Pause follower broker 3 with SIGSTOP (pid %d): the process stays and its ZooKeeper session outlives the pause, but it stops fetching.", f.Pid())
	s.Signal(f, syscall.SIGSTOP)
	pausedAt := time.Now()

	s.Step("Produce record \"two\" with acks=all while broker 3 is paused. The leader appends it at once, but the ISR is still 1,2,3, so the produce waits and the high watermark stays.")
	done := make(chan int64, 1)
	go func() {
		res := prod.ProduceSync(s.ctx, &kgo.Record{Value: []byte("two")})
		if err := res.FirstErr(); err != nil {
			done <- -1
			return
		}
		r, _ := res.First()
		done <- r.Offset
	}()
	s.WaitFor(10*time.Second, "\"two\" appended to the leader's log", func() bool { return s.logEndOffset(s.Broker(1), tp) == off+2 })
	hw := s.highWatermark(tp)
	s.Say("Leader's log end offset: %d; high watermark: %d (\"two\" is written but not committed: a consumer cannot read it yet).", off+2, hw)
	s.Tool("kafka-dump-log.sh", "--files", s.segment(s.Broker(1), tp, 0), "--print-data-log")
	if hw != off+1 {
		s.Failf("with a paused ISR member the high watermark is %d, want it held at %d", hw, off+1)
	}
	select {
	case <-done:
		s.Failf("the acks=all produce was acknowledged while broker 3, an ISR member, had not fetched it")
	default:
	}

	s.Step("Wait: after replica.lag.time.max.ms without broker 3 catching up, the leader removes it from the ISR in ZooKeeper; the ISR is now 1,2, which is enough for min.insync.replicas=2, so the high watermark moves and the produce is acknowledged.")
	var shrunk partState
	s.WaitFor(20*time.Second, "broker 3 out of the ISR", func() bool {
		shrunk = s.partition(tp)
		return slices.Equal(shrunk.ISR, []int32{1, 2})
	})
	s.Say("Broker 3 left the ISR %.1f s after it was paused.", time.Since(pausedAt).Seconds())
	var acked int64
	select {
	case acked = <-done:
	case <-time.After(15 * time.Second):
		s.Failf("the acks=all produce of \"two\" was not acknowledged after the ISR shrank")
	}
	if acked != off+1 {
		s.Failf("\"two\" acknowledged at offset %d, want %d", acked, off+1)
	}
	hwAfter := s.highWatermark(tp)
	s.Say("\"two\" acknowledged at offset %d; the high watermark is now %d.", acked, hwAfter)
	s.ZkGet("/brokers/topics/isr/partitions/0/state")
	s.Say("kafka-topics.sh --zookeeper reads the partition state znodes, the truth the brokers' metadata caches follow a moment later:")
	urp := s.Tool("kafka-topics.sh", "--zookeeper", s.ZooKeeperAddr(), "--describe", "--under-replicated-partitions")
	if !strings.Contains(urp, "Isr: 1,2\n") {
		s.Failf("isr-0 is not listed as under-replicated with ISR 1,2")
	}
	if hwAfter != off+2 {
		s.Failf("after the shrink the high watermark is %d, want %d", hwAfter, off+2)
	}

	s.Step("Continue broker 3 with SIGCONT. It fetches from the leader again, reaches the log end offset, and the leader adds it back to the ISR.")
	s.Signal(f, syscall.SIGCONT)
	s.WaitFor(30*time.Second, "broker 3 back in the ISR", func() bool {
		return slices.Equal(s.partition(tp).ISR, []int32{1, 2, 3})
	})
	s.ZkGet("/brokers/topics/isr/partitions/0/state")
	s.Tool("kafka-topics.sh", "--zookeeper", s.ZooKeeperAddr(), "--describe", "--topic", "isr")
	s.WaitFor(10*time.Second, "broker 3's log holding both records", func() bool { return s.logEndOffset(f, tp) == off+2 })
	s.Tool("kafka-dump-log.sh", "--files", s.segment(f, tp, 0))

	return fmt.Sprintf("ISR 1,2,3 -> 1,2 -> 1,2,3; high watermark held at %d while the paused follower was in the ISR, %d after it left", off+1, off+2)
}
