package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/klassik/klassik/broker/common"
)

// hwTruncation is KIP-101's second example (the replicas diverge): two
// replicas lose power together, the follower had its last record only in
// its page cache, it comes back first and leads a new epoch that writes a
// different record at the same offset. Before Kafka 0.11 the returning
// replica truncated to its own high watermark, kept its record and the
// logs diverged silently; with leader epochs it asks the new leader where
// its epoch ended and truncates there. Played twice: with
// inter.broker.protocol.version=0.10.2 and with the default.
func hwTruncation(s *Stage) string {
	s.Step("Start a throwaway ZooKeeper. The example runs twice on it, each time with two fresh brokers: first with inter.broker.protocol.version=0.10.2 (followers truncate to their high watermark, as before Kafka 0.11), then with the default 2.8-IV1 (followers truncate by leader epoch, KIP-101).")
	s.StartZooKeeper()

	old := hwTruncationRun(s, "hw-old", "0.10.2")
	if old.identical {
		s.Failf("with inter.broker.protocol.version=0.10.2 the two logs stayed identical (%v); the old protocol should have kept m1 on the returning replica", old.a)
	}
	cur := hwTruncationRun(s, "hw-epochs", "")
	if !cur.identical {
		s.Failf("with leader epochs the logs differ: broker %d %v, broker %d %v", cur.aID, cur.a, cur.bID, cur.b)
	}
	return fmt.Sprintf("IBP 0.10.2: offset 1 holds %q on broker %d and %q on broker %d, both in the ISR; leader epochs: both hold %v",
		valueAt(old.aRecs, 1), old.aID, valueAt(old.bRecs, 1), old.bID, strings.Join(cur.a, " "))
}

type hwRunResult struct {
	aID, bID     int32
	a, b         []string
	aRecs, bRecs []storedRecord
	identical    bool
}

func valueAt(recs []storedRecord, off int64) string {
	for _, r := range recs {
		if r.Offset == off {
			return r.Value
		}
	}
	return ""
}

// hwTruncationRun plays the example once on two new brokers, A (the first
// leader) and B, with topic; ibp is inter.broker.protocol.version ("" =
// the default).
func hwTruncationRun(s *Stage, topic, ibp string) hwRunResult {
	overrides := map[string]string{}
	mode := "the default inter.broker.protocol.version (leader epochs)"
	if ibp != "" {
		overrides["inter.broker.protocol.version"] = ibp
		mode = "inter.broker.protocol.version=" + ibp + " (high-watermark truncation)"
	}
	s.Step("Run with %s: start two brokers, A and B.", mode)
	bs := s.StartBrokers(2, overrides)
	a, b := bs[0], bs[1]
	s.Say("A is broker %d, B is broker %d.", a.ID, b.ID)
	tp := common.TopicPartition{Topic: topic, Partition: 0}

	s.Step("Create topic %s with one partition on A and B, A first, so A leads leader epoch 0 with ISR {A, B}.", topic)
	s.Tool("kafka-topics.sh", "--bootstrap-server", a.Addr, "--create", "--topic", topic, "--replica-assignment", fmt.Sprintf("%d:%d", a.ID, b.ID))
	s.waitPartition(tp, "broker %d leading with both replicas in the ISR", func(st partState) bool {
		return st.Leader == a.ID && len(st.ISR) == 2
	}, a.ID)

	s.Step("Produce m0 and m1 with acks=all: both are acknowledged, so both are committed (below the high watermark, on every ISR member).")
	pr := s.producer(topic, -1)
	for _, v := range []string{"m0", "m1"} {
		s.Say("%s acknowledged at offset %d.", v, s.mustProduce(pr, v))
	}
	s.WaitFor(defaultWait, "B to hold both records", func() bool { return len(s.storedRecords(b, tp)) == 2 })
	s.Say("B has copied both; A's high watermark is 2.")

	s.Step("Both machines lose power at once: kill -9 A (pid %d) and B (pid %d). No controller is left to change the partition's state znode, which still says leader A, ISR {A, B}.", a.Pid(), b.Pid())
	s.Signal(a, syscall.SIGKILL)
	s.Signal(b, syscall.SIGKILL)
	s.waitGone(a.ID, b.ID)
	s.ZkGet(fmt.Sprintf("/brokers/topics/%s/partitions/0/state", topic))

	s.Say("A's high watermark reaches its disk in replication-offset-checkpoint every replica.high.watermark.checkpoint.interval.ms,")
	s.Say("the first time 30 s after the broker started; a broker that has run longer would have written 2 before the power loss,")
	s.Say("so write the file as that checkpoint would have:")
	s.writeHighWatermarkCheckpoint(a, tp, 2)

	bRecs := s.storedRecords(b, tp)
	if len(bRecs) != 2 {
		s.Failf("B's log holds %v, want m0 and m1", storedValues(bRecs))
	}
	seg := filepath.Join(partitionDir(b, tp), fmt.Sprintf("%020d.log", 0))
	s.Step("Kafka does not fsync on append: B's m1 was only in its page cache and is gone with the power. Cut B's segment at m1's batch (byte %d) to play that.", bRecs[1].Position)
	if err := os.Truncate(seg, int64(bRecs[1].Position)); err != nil {
		s.Failf("truncating %s: %v", seg, err)
	}
	s.dumpLog(b, tp)

	s.Step("B comes back first. It is the only live broker, so it becomes the controller, finds A dead and B itself in the ISR, and elects B, taking A out of the ISR in the same write (the next leader epoch), starting at its log end offset 1.")
	s.Restart(b)
	st := s.waitPartition(tp, "broker %d leading a new epoch", func(st partState) bool { return st.Leader == b.ID && st.LeaderEpoch > 0 }, b.ID)
	s.ZkGet(fmt.Sprintf("/brokers/topics/%s/partitions/0/state", topic))

	s.Step("A producer writes m2; B stores it at offset 1, in leader epoch %d.", st.LeaderEpoch)
	pr2 := s.producer(topic, -1)
	s.Say("m2 acknowledged at offset %d.", s.mustProduce(pr2, "m2"))

	if ibp != "" {
		s.Step("A comes back as follower of B. With inter.broker.protocol.version=%s it does not ask B anything: it truncates to its own high watermark, 2, which keeps m1, and fetches from offset 2. B's log ends at 2, so there is nothing to fetch; A is caught up and rejoins the ISR.", ibp)
	} else {
		s.Step("A comes back as follower of B. It asks B (OffsetForLeaderEpoch) where its latest epoch, 0, ends: B's leader-epoch-checkpoint says its next epoch starts at 1, so epoch 0 ends at 1. A truncates to 1, dropping m1, fetches m2 and rejoins the ISR.")
	}
	s.Restart(a)
	s.waitPartition(tp, "broker %d leading with A back in the ISR", func(st partState) bool {
		return st.Leader == b.ID && len(st.ISR) == 2
	}, b.ID)
	s.WaitFor(defaultWait, "A's log to end at 2", func() bool { return len(s.storedRecords(a, tp)) == 2 })
	s.ZkGet(fmt.Sprintf("/brokers/topics/%s/partitions/0/state", topic))

	s.Step("Compare the two replicas' logs and leader epoch caches.")
	s.Say("A (broker %d):", a.ID)
	s.dumpLog(a, tp)
	s.showEpochCheckpoint(a, tp)
	s.Say("B (broker %d), the leader:", b.ID)
	s.dumpLog(b, tp)
	s.showEpochCheckpoint(b, tp)
	r := hwRunResult{aID: a.ID, bID: b.ID, aRecs: s.storedRecords(a, tp), bRecs: s.storedRecords(b, tp)}
	r.a, r.b = storedValues(r.aRecs), storedValues(r.bRecs)
	r.identical = slices.Equal(r.a, r.b)
	if r.identical {
		s.Say("Identical: %v on both. m1 is lost (it was on one disk only after the double failure), but the replicas agree.", r.a)
	} else {
		s.Say("Diverged: A holds %v, B holds %v. Both count as in sync and the high watermark covers offset 1,", r.a, r.b)
		s.Say("so a consumer reading offset 1 gets %q or %q depending on which replica leads.", valueAt(r.aRecs, 1), valueAt(r.bRecs, 1))
	}

	if ibp != "" {
		s.Step("End of this run: kill -9 both brokers, so that no controller of this run sees the next run's power loss.")
		s.Signal(a, syscall.SIGKILL)
		s.Signal(b, syscall.SIGKILL)
		s.waitGone(a.ID, b.ID)
	}
	return r
}
