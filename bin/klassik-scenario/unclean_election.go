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

// uncleanElection: when the only ISR member dies, an out-of-sync replica
// may lead only if unclean.leader.election.enable is true, and then the
// acknowledged records it never copied are gone; with
// false the partition stays offline until an ISR member returns. Two
// topics on the same two replicas live through the same failures, one
// with each setting.
func uncleanElection(s *Stage) string {
	s.Step("Start a throwaway ZooKeeper and three brokers; broker 3 holds no replica and stays up, so a controller is always there.")
	s.StartBrokers(3, nil)
	b1, b2 := s.Broker(1), s.Broker(2)
	on := common.TopicPartition{Topic: "unclean-on", Partition: 0}
	off := common.TopicPartition{Topic: "unclean-off", Partition: 0}

	s.Step("Create two topics on brokers 1 (leader) and 2: unclean-on with unclean.leader.election.enable=true, unclean-off with false (the default).")
	s.Tool("kafka-topics.sh", "--bootstrap-server", b1.Addr, "--create", "--topic", on.Topic, "--replica-assignment", "1:2", "--config", "unclean.leader.election.enable=true")
	s.Tool("kafka-topics.sh", "--bootstrap-server", b1.Addr, "--create", "--topic", off.Topic, "--replica-assignment", "1:2")
	both := []common.TopicPartition{on, off}
	for _, tp := range both {
		s.waitPartition(tp, "broker %d leading "+tp.Topic+" with ISR {1, 2}", func(st partState) bool { return st.Leader == 1 && len(st.ISR) == 2 }, 1)
	}
	prOn, prOff := s.producer(on.Topic, -1), s.producer(off.Topic, -1)

	s.Step("Produce \"a\" with acks=all to both: it is on both replicas.")
	s.mustProduce(prOn, "a")
	s.mustProduce(prOff, "a")
	s.WaitFor(defaultWait, "broker 2 to copy \"a\"", func() bool {
		return len(s.storedRecords(b2, on)) == 1 && len(s.storedRecords(b2, off)) == 1
	})

	s.Step("kill -9 broker 2, the follower. When its ZooKeeper session expires the controller removes it from both ISRs: broker 1 is the only in-sync replica.")
	s.Signal(b2, syscall.SIGKILL)
	for _, tp := range both {
		s.waitPartition(tp, "ISR {1} for "+tp.Topic+" (broker %d informed)", func(st partState) bool {
			return st.Leader == 1 && slices.Equal(st.ISR, []int32{1})
		}, 1)
	}
	s.ZkGet("/brokers/topics/unclean-on/partitions/0/state")

	s.Step("Produce \"b\" and \"c\" with acks=all to both: with ISR {1} and min.insync.replicas=1 they are acknowledged, but exist on broker 1 only.")
	for _, v := range []string{"b", "c"} {
		s.Say("%s: acknowledged at offset %d in unclean-on and %d in unclean-off.", v, s.mustProduce(prOn, v), s.mustProduce(prOff, v))
	}

	s.Step("kill -9 broker 1, the last in-sync replica. Both partitions go offline: leader -1, the ISR keeps its last member.")
	s.Signal(b1, syscall.SIGKILL)
	for _, tp := range both {
		s.waitPartition(tp, "no leader for "+tp.Topic, func(st partState) bool { return st.Leader == -1 }, -1)
	}
	s.ZkGet("/brokers/topics/unclean-off/partitions/0/state")

	s.Step("Bring back broker 2, which is not in sync. The controller may elect it only where unclean election is allowed.")
	s.Restart(b2)
	stOn := s.waitPartition(on, "broker 2 leading unclean-on (unclean election; broker %d informed)", func(st partState) bool { return st.Leader == 2 }, 2)
	s.Say("unclean-on: broker 2 leads leader epoch %d with ISR %v. In the same controller event unclean-off got no leader:", stOn.LeaderEpoch, stOn.ISR)
	s.ZkGet("/brokers/topics/unclean-on/partitions/0/state")
	s.ZkGet("/brokers/topics/unclean-off/partitions/0/state")
	if st := s.partition(off); st.Leader != -1 {
		s.Failf("unclean-off was given leader %d out of sync, with unclean.leader.election.enable=false", st.Leader)
	}
	s.Tool("kafka-topics.sh", "--bootstrap-server", b2.Addr, "--describe", "--topic", off.Topic)
	if _, err := s.produceTo(s.producer(off.Topic, -1, kgo.RecordDeliveryTimeout(2*time.Second)), "x", 5*time.Second); err == nil {
		s.Failf("a write to the offline unclean-off was acknowledged")
	} else {
		s.Say("A write to unclean-off fails: %v. The partition is offline rather than lose data.", err)
	}
	onRecs := storedValues(s.storedRecords(b2, on))
	s.Say("unclean-on's new leader holds %v: the acknowledged \"b\" and \"c\" are gone.", onRecs)
	s.dumpLog(b2, on)

	s.Step("Bring back broker 1. unclean-off: broker 1 is in its ISR and leads again with everything. unclean-on: broker 1 follows broker 2 and truncates to where broker 2's epoch began, deleting \"b\" and \"c\" from the last disk that had them.")
	s.Restart(b1)
	s.waitPartition(off, "broker 1 leading unclean-off again (broker %d informed)", func(st partState) bool { return st.Leader == 1 }, 1)
	s.WaitFor(defaultWait, "broker 1 to truncate unclean-on", func() bool { return len(s.storedRecords(b1, on)) == len(onRecs) })
	s.Say("A new record \"d\" in unclean-on takes offset %d, the offset \"b\" had.", s.mustProduce(prOn, "d"))
	s.WaitFor(defaultWait, "broker 1 to copy \"d\"", func() bool { return len(s.storedRecords(b1, on)) == len(onRecs)+1 })
	s.dumpLog(b1, on)
	offRecs := storedValues(s.storedRecords(b1, off))
	s.Say("unclean-off on broker 1 holds %v.", offRecs)
	s.Tool("kafka-topics.sh", "--bootstrap-server", b1.Addr, "--describe", "--topic", on.Topic+","+off.Topic)

	if want := []string{"0:a"}; !slices.Equal(onRecs, want) {
		s.Failf("unclean-on's unclean leader held %v, want %v", onRecs, want)
	}
	if want := []string{"0:a", "1:b", "2:c"}; !slices.Equal(offRecs, want) {
		s.Failf("unclean-off holds %v after its ISR member returned, want %v", offRecs, want)
	}
	onAfter := storedValues(s.storedRecords(b1, on))
	return fmt.Sprintf("unclean election on: acknowledged b, c lost, offset 1 reused by d (%s); off: offline until broker 1 returned, then %s intact",
		strings.Join(onAfter, " "), strings.Join(offRecs, " "))
}
