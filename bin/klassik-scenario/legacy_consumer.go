package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// legacyConsumer: before Kafka 0.9 a consumer group lived entirely in
// ZooKeeper. Each consumer registers an ephemeral /consumers/<g>/ids/<id>,
// every member runs the same range assignment over the sorted ids when
// that list changes, claims its partitions with ephemeral
// /consumers/<g>/owners/<topic>/<partition> nodes, and commits what it has
// consumed to /consumers/<g>/offsets/<topic>/<partition>.
func legacyConsumer(s *Stage) string {
	const group, topic = "classic", "legacy"
	s.Step("Start a throwaway ZooKeeper and one broker, create topic %s with 2 partitions and produce 10 records.", topic)
	b := s.StartBrokers(1, nil)[0]
	s.Tool("kafka-topics.sh", "--bootstrap-server", b.Addr, "--create", "--topic", topic, "--partitions", "2", "--replication-factor", "1")
	prod := s.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			s.produce(prod, fmt.Sprintf("message-%02d", i))
		}
	}
	produce(0, 10)
	zk := s.ZooKeeperAddr()
	base := "/consumers/" + group
	offset := func(p int) int64 {
		data, _, err := s.zkc.Get(fmt.Sprintf("%s/offsets/%s/%d", base, topic, p))
		if err != nil {
			return -1
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil {
			return -1
		}
		return n
	}
	owner := func(p int) string {
		data, _, err := s.zkc.Get(fmt.Sprintf("%s/owners/%s/%d", base, topic, p))
		if err != nil {
			return ""
		}
		return string(data)
	}
	ids := func() []string {
		c, err := s.zkc.Children(base + "/ids")
		if err != nil {
			return nil
		}
		slices.Sort(c)
		return c
	}

	s.Step("Start the classic consumer: kafka-console-consumer.sh --zookeeper talks to ZooKeeper, not to a group coordinator. It commits its offsets to ZooKeeper every 500 ms here (auto.commit.interval.ms; the old default was 60 s).")
	c1, out1 := s.Background("kafka-console-consumer.sh", "--zookeeper", zk, "--topic", topic, "--group", group, "--from-beginning",
		"--consumer-property", "auto.commit.interval.ms=500")
	s.WaitFor(20*time.Second, "the consumer registered and owning both partitions", func() bool {
		return len(ids()) == 1 && owner(0) != "" && owner(1) != ""
	})
	first := ids()[0]
	s.Say("It registered itself as an ephemeral child of %s/ids:", base)
	s.Tool("zookeeper-shell.sh", zk, "ls", base+"/ids")
	s.ZkGet(base + "/ids/" + first)
	s.Say("and, alone in the group, claimed both partitions with ephemeral owner nodes holding \"<consumer id>-<thread>\":")
	s.ZkGet(fmt.Sprintf("%s/owners/%s/0", base, topic))
	s.ZkGet(fmt.Sprintf("%s/owners/%s/1", base, topic))

	s.Step("It consumes all 10 records and commits: the offsets (the next offset to read, per partition) appear under %s/offsets.", base)
	s.WaitFor(20*time.Second, "offsets 5 and 5 committed", func() bool { return offset(0) == 5 && offset(1) == 5 })
	s.ZkGet(fmt.Sprintf("%s/offsets/%s/0", base, topic))
	s.Say("(and 5 for partition 1 too)")

	s.Step("Produce 10 more records: the committed offsets grow to 10 in ZooKeeper.")
	produce(10, 20)
	s.WaitFor(20*time.Second, "offsets 10 and 10 committed", func() bool { return offset(0) == 10 && offset(1) == 10 })
	s.ZkGet(fmt.Sprintf("%s/offsets/%s/0", base, topic))
	s.Say("kafka-consumer-groups.sh --zookeeper reads the same nodes for every partition, with the owners:")
	s.Tool("kafka-consumer-groups.sh", "--zookeeper", zk, "--describe", "--group", group)

	s.Step("Start a second consumer in the same group. Its registration changes %s/ids; both members' watches fire and each runs the range assignment over the sorted ids: one partition each. Each first commits and releases what it owned, then claims its share.", base)
	_, _ = s.Background("kafka-console-consumer.sh", "--zookeeper", zk, "--topic", topic, "--group", group,
		"--consumer-property", "auto.commit.interval.ms=500")
	s.WaitFor(20*time.Second, "two members, one partition each", func() bool {
		o0, o1 := owner(0), owner(1)
		return len(ids()) == 2 && o0 != "" && o1 != "" && !strings.HasPrefix(o1, strings.TrimSuffix(o0, "-0"))
	})
	s.Tool("zookeeper-shell.sh", zk, "ls", base+"/ids")
	s.ZkGet(fmt.Sprintf("%s/owners/%s/0", base, topic))
	s.ZkGet(fmt.Sprintf("%s/owners/%s/1", base, topic))
	s.Tool("kafka-consumer-groups.sh", "--zookeeper", zk, "--describe", "--group", group)

	s.Step("Stop the first consumer (SIGTERM): it commits, deletes its owner node and closes its session, so its ids node goes; the second consumer rebalances and owns both partitions.")
	s.Stop(c1)
	s.WaitFor(20*time.Second, "the second consumer owning both", func() bool {
		return len(ids()) == 1 && ids()[0] != first && owner(0) != "" && owner(1) != "" &&
			strings.HasPrefix(owner(0), ids()[0]) && strings.HasPrefix(owner(1), ids()[0])
	})
	s.Tool("zookeeper-shell.sh", zk, "ls", base+"/ids")
	s.ZkGet(fmt.Sprintf("%s/owners/%s/0", base, topic))
	s.ZkGet(fmt.Sprintf("%s/owners/%s/1", base, topic))
	got, err := os.ReadFile(out1)
	if err != nil {
		s.Failf("%v", err)
	}
	n := strings.Count(string(got), "message-")
	s.Say("The first consumer printed %d records before it stopped.", n)
	if n != 20 {
		s.Failf("the first consumer printed %d records, want 20", n)
	}
	return fmt.Sprintf("consumers registered under %s/ids, owned partitions under owners, offsets in ZooKeeper grew 5,5 -> 10,10, range rebalance 2 -> 1 member", base)
}
