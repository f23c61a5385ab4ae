package main

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/storage/record"
)

// acksPerStep is how many records each producer sends in a step.
const acksPerStep = 5

// acksLagMs is replica.lag.time.max.ms in the acks scenario.
const acksLagMs = 15000

// acks: what a producer's acks setting promises with min.insync.replicas=2
// on two replicas. acks=all is refused (NOT_ENOUGH_REPLICAS) as soon as a
// follower is lost, instead of being stored on one disk; acks=1 and acks=0
// are stored on the leader alone, and lost in a clean election when the
// leader dies before the follower copied them — acks=1 after being
// acknowledged, acks=0 without the producer ever knowing.
func acks(s *Stage) string {
	s.Step("Start a throwaway ZooKeeper and three brokers with replica.lag.time.max.ms=%d; broker 3 holds no replica.", acksLagMs)
	// A paused follower must stay in the ISR for the whole last step, even
	// on a loaded machine, so the lag allowed is generous here.
	s.StartBrokers(3, map[string]string{"replica.lag.time.max.ms": fmt.Sprint(acksLagMs)})
	b1, b2 := s.Broker(1), s.Broker(2)
	tp := common.TopicPartition{Topic: "acks", Partition: 0}

	s.Step("Create topic acks on brokers 1 (leader) and 2 with min.insync.replicas=2: a write with acks=all needs both.")
	s.Tool("kafka-topics.sh", "--bootstrap-server", b1.Addr, "--create", "--topic", tp.Topic, "--replica-assignment", "1:2", "--config", "min.insync.replicas=2")
	s.waitPartition(tp, "broker %d leading acks with ISR {1, 2}", func(st partState) bool { return st.Leader == 1 && len(st.ISR) == 2 }, 1)
	one := s.producer(tp.Topic, 1)
	none := s.producer(tp.Topic, 0)
	leo := func(b *Broker) int { return len(s.storedRecords(b, tp)) }

	s.Step("kill -9 broker 2, the follower. When its session expires the controller shrinks the ISR to {1}.")
	s.Signal(b2, syscall.SIGKILL)
	s.waitPartition(tp, "ISR {1} (broker %d informed)", func(st partState) bool { return st.Leader == 1 && len(st.ISR) == 1 }, 1)
	s.ZkGet("/brokers/topics/acks/partitions/0/state")

	s.Step("Send %d records with each acks setting to the leader, which is now alone in the ISR.", acksPerStep)
	before := leo(b1)
	refused := 0
	for i := 0; i < acksPerStep; i++ {
		var code int16
		// Until broker 1 has applied the controller's LeaderAndIsr for the
		// new ISR it answers NOT_LEADER_OR_FOLLOWER; wait that out.
		s.WaitFor(defaultWait, "broker 1 to answer as leader", func() bool {
			code = s.produceRaw(b1, tp, -1, fmt.Sprintf("all-%d", i))
			return code != kerr.NotLeaderForPartition.Code
		})
		if code == kerr.NotEnoughReplicas.Code {
			refused++
		} else {
			s.Failf("acks=all record %d answered %s, want NOT_ENOUGH_REPLICAS", i, errName(code))
		}
	}
	afterAll := leo(b1)
	s.Say("acks=all: %d of %d answered NOT_ENOUGH_REPLICAS; the leader's log grew by %d (the check comes before the append).", refused, acksPerStep, afterAll-before)
	acked1 := s.sendAcks(one, "one", acksPerStep)
	s.Say("acks=1:   %d of %d acknowledged by the leader alone.", acked1, acksPerStep)
	sent0 := s.sendAcks(none, "none", acksPerStep)
	s.Say("acks=0:   %d of %d sent; the producer gets no answer at all.", sent0, acksPerStep)
	s.WaitFor(defaultWait, "the leader to store the acks=0 records", func() bool { return leo(b1) == afterAll+acked1+sent0 })
	s.Say("The leader's log ends at %d: one copy of each acks=1 and acks=0 record, none of acks=all.", leo(b1))
	if afterAll != before || refused != acksPerStep {
		s.Failf("acks=all stored %d records with ISR {1}", afterAll-before)
	}

	s.Step("Bring broker 2 back: it copies everything and rejoins the ISR. Nothing was lost yet, but for a while one disk held it.")
	s.Restart(b2)
	s.waitPartition(tp, "ISR {1, 2} again (broker %d informed)", func(st partState) bool { return st.Leader == 1 && len(st.ISR) == 2 }, 1)
	s.WaitFor(defaultWait, "broker 2 to catch up", func() bool { return leo(b2) == leo(b1) })
	base := leo(b1)

	s.Step("Now the leader dies before its follower copies: SIGSTOP broker 2 (it stays in the ISR until replica.lag.time.max.ms passes), send %d records with acks=1 and %d with acks=0 and one with acks=all, then kill -9 broker 1 and SIGCONT broker 2, all within about a second.", acksPerStep, acksPerStep)
	dialCtx, cancelDial := s.Context(10 * time.Second)
	toLeader, err := network.Dial(dialCtx, b1.Addr, "klassik-scenario-acks", 25*time.Second)
	if err != nil {
		s.Failf("connecting to broker 1: %v", err)
	}
	cancelDial()
	defer toLeader.Close()
	s.Signal(b2, syscall.SIGSTOP)
	stopped := time.Now()
	acked1 = s.sendAcks(one, "late-one", acksPerStep)
	sent0 = s.sendAcks(none, "late-none", acksPerStep)
	// The acks=all record goes straight to broker 1 on a connection of its
	// own, opened before the pause (no metadata request that could land on
	// the paused broker): the leader appends it and parks the answer until
	// broker 2 has it, which never happens before broker 1 dies.
	allDone := make(chan error, 1)
	lateAll := rawProduceRequest(tp, -1, "late-all-0")
	lateAll.TimeoutMillis = 20000
	go func() { // joined below (allDone); bounded by its context
		allDone <- s.produceOn(toLeader, lateAll)
	}()
	want := base + acked1 + sent0 + 1
	s.WaitFor(5*time.Second, fmt.Sprintf("the leader to store them (log end %d: %d acks=1, %d acks=0 and 1 acks=all record after %d)", want, acked1, sent0, base),
		func() bool { return leo(b1) == want })
	s.Signal(b1, syscall.SIGKILL)
	s.Signal(b2, syscall.SIGCONT)
	s.Say("Broker 2 was paused %.1f s; acks=1: %d acknowledged, acks=0: %d sent, acks=all: waiting for broker 2.", time.Since(stopped).Seconds(), acked1, sent0)

	s.Step("Broker 1's session expires; the controller elects broker 2, still in the ISR: a clean election.")
	st := s.waitPartition(tp, "broker 2 leading (broker %d informed)", func(st partState) bool { return st.Leader == 2 }, 2)
	s.ZkGet("/brokers/topics/acks/partitions/0/state")
	allErr := <-allDone
	kept := map[string]int{}
	for _, r := range s.storedRecords(b2, tp)[base:] {
		kept[strings.SplitN(r.Value, "-", 3)[1]]++
	}
	s.Say("New leader broker 2 (leader epoch %d) ends at %d; the follower had copied up to %d before its pause,", st.LeaderEpoch, leo(b2), base)
	s.Say("plus what a fetch already in flight brought (%d acks=1, %d acks=0 record(s)):", kept["one"], kept["none"])
	lost1, lost0 := acked1-kept["one"], sent0-kept["none"]
	s.Say("acks=1:   %d acknowledged, %d of them lost.", acked1, lost1)
	s.Say("acks=0:   %d sent, %d lost; the producer never knew either way.", sent0, lost0)
	if allErr != nil {
		s.Say("acks=all: not acknowledged (%v); the producer knows the write did not happen.", allErr)
	} else {
		s.Say("acks=all: acknowledged, and in broker 2's log: %v.", kept["all"] == 1)
	}
	s.Tool("kafka-topics.sh", "--bootstrap-server", b2.Addr, "--describe", "--topic", tp.Topic)
	if allErr == nil && kept["all"] != 1 {
		s.Failf("the acknowledged acks=all record is not in the new leader's log")
	}
	if lost1 == 0 {
		s.Failf("no acknowledged acks=1 record was lost: the paused follower copied all %d", acked1)
	}
	allOutcome := "never acknowledged"
	if allErr == nil {
		allOutcome = "acknowledged and kept"
	}
	return fmt.Sprintf("follower lost: acks=all %d/%d refused with NOT_ENOUGH_REPLICAS, acks=1 and acks=0 stored on one disk; leader lost: acks=1 %d of %d acknowledged records lost, acks=0 %d of %d lost, acks=all %s",
		refused, acksPerStep, lost1, acked1, lost0, sent0, allOutcome)
}

// sendAcks produces n records named prefix-i with cl and returns how many
// the producer reported done (acknowledged for acks=1, sent for acks=0).
func (s *Stage) sendAcks(cl *kgo.Client, prefix string, n int) int {
	done := 0
	for i := 0; i < n; i++ {
		if _, err := s.produceTo(cl, fmt.Sprintf("%s-%d", prefix, i), 10*time.Second); err != nil {
			s.Failf("%s-%d: %v", prefix, i, err)
		}
		done++
	}
	return done
}

// produceRaw sends one Produce request with one record to broker b with
// the given acks (not 0) and returns the partition's error code.
func (s *Stage) produceRaw(b *Broker, tp common.TopicPartition, acks int16, value string) int16 {
	resp := s.request(b, rawProduceRequest(tp, acks, value))
	if resp == nil {
		s.Failf("Produce to broker %d: no answer", b.ID)
	}
	for _, t := range resp.(*kmsg.ProduceResponse).Topics {
		for _, p := range t.Partitions {
			return p.ErrorCode
		}
	}
	s.Failf("Produce to broker %d: empty answer", b.ID)
	return 0
}

// rawProduceRequest is a Produce request of one record to tp.
func rawProduceRequest(tp common.TopicPartition, acks int16, value string) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Acks = acks
	req.TimeoutMillis = 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = tp.Topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = tp.Partition
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = time.Now().UnixMilli()
	rp.Records = record.Build(opts, []record.Record{{Value: []byte(value)}})
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// produceOn sends req on cl and returns the partition's error, or the
// connection's when the broker died first.
func (s *Stage) produceOn(cl *network.Client, req *kmsg.ProduceRequest) error {
	ctx, cancel := s.Context(25 * time.Second)
	defer cancel()
	resp, err := cl.Request(ctx, req)
	if err != nil {
		return err
	}
	for _, t := range resp.(*kmsg.ProduceResponse).Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return kerr.ErrorForCode(p.ErrorCode)
			}
			return nil
		}
	}
	return errors.New("empty produce answer")
}
