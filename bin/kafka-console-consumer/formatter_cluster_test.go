package main

import (
	"context"
	"encoding/binary"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
)

// The coordinator formatters, through bin/kafka-console-consumer.sh as a
// process, on the records the broker's group and transaction coordinators
// really wrote; and the deserializers on records of a topic, with the
// error a wrong-size value raises.
func TestFormattersOnBrokerRecords(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Overrides: map[string]string{
		"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1",
		"transaction.state.log.num.partitions": "1", "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clitest.CreateTopic(t, ctx, c, "ft", 1, 1)
	c.WaitLeaders(20*time.Second, "ft", 1)
	bs := strings.Join(c.Bootstrap(), ",")

	// An offset commit with metadata, by the group coordinator.
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "ft", Partition: 0, At: 2, LeaderEpoch: -1, Metadata: "md"})
	if err := c.Admin().CommitAllOffsets(ctx, "fg", offs); err != nil {
		t.Fatal(err)
	}
	// A committed transaction, by the transaction coordinator.
	tx, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.TransactionalID("tx1"), kgo.DefaultProduceTopic("ft"))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	key := binary.BigEndian.AppendUint64(nil, uint64(1<<40))
	if err := tx.ProduceSync(ctx, &kgo.Record{Key: key, Value: binary.BigEndian.AppendUint32(nil, 7)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}

	read := func(topic string, args ...string) (string, string, int) {
		return clitest.Script(t, nil, "kafka-console-consumer.sh", append([]string{"--bootstrap-server", bs, "--topic", topic,
			"--partition", "0", "--offset", "earliest", "--timeout-ms", "4000"}, args...)...)
	}
	out, errOut, code := read("__consumer_offsets", "--formatter", "kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter")
	wantOffsets := regexp.MustCompile(`^\[fg,ft,0\]::OffsetAndMetadata\(offset=2, leaderEpoch=Optional.empty, metadata=md, commitTimestamp=\d+, expireTimestamp=None\)\n$`)
	if code != 0 || !wantOffsets.MatchString(out) {
		t.Fatalf("offsets formatter: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}

	// A member that joined and left: the group coordinator's group
	// metadata records, Stable with the member, then Empty.
	member, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ClientID("gm-client"), kgo.ConsumerGroup("gm"),
		kgo.ConsumeTopics("ft"), kgo.DisableAutoCommit(), kgo.Balancers(kgo.RangeBalancer()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n == 0 && ctx.Err() == nil; {
		n = len(member.PollFetches(ctx).Records())
	}
	member.Close()
	out, errOut, code = read("__consumer_offsets", "--formatter", "kafka.coordinator.group.GroupMetadataManager$GroupMetadataMessageFormatter")
	stable := regexp.MustCompile(`(?m)^gm::GroupMetadata\(groupId=gm, generation=1, protocolType=Some\(consumer\), currentState=Stable, members=HashMap\((\S+) -> MemberMetadata\(memberId=(\S+), groupInstanceId=None, clientId=gm-client, clientHost=/127.0.0.1, sessionTimeoutMs=\d+, rebalanceTimeoutMs=\d+, supportedProtocols=List\(range\), \)\)\)$`)
	emptyRE := regexp.MustCompile(`(?m)^gm::GroupMetadata\(groupId=gm, generation=2, protocolType=Some\(consumer\), currentState=Empty, members=HashMap\(\)\)$`)
	if code != 0 || !stable.MatchString(out) || !emptyRE.MatchString(out) || strings.Contains(out, "[fg,") {
		t.Fatalf("group metadata formatter: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}

	out, errOut, code = read("__transaction_state", "--formatter", "kafka.coordinator.transaction.TransactionLog$TransactionLogMessageFormatter")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	line := regexp.MustCompile(`^tx1::TransactionMetadata\(transactionalId=tx1, producerId=\d+, producerEpoch=0, txnTimeoutMs=\d+, state=(\w+), pendingState=None, topicPartitions=HashSet\(([^)]*)\), txnStartTimestamp=-?\d+, txnLastUpdateTimestamp=\d+\)$`)
	var states []string
	for _, l := range lines {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("transaction log line %q does not match\nstdout %q\nstderr %s", l, out, errOut)
		}
		if (m[1] == "Ongoing" || m[1] == "PrepareCommit") != (m[2] == "ft-0") {
			t.Errorf("state %s with partitions %q", m[1], m[2])
		}
		states = append(states, m[1])
	}
	if code != 0 || strings.Join(states, ",") != "Empty,Ongoing,PrepareCommit,CompleteCommit" {
		t.Fatalf("transaction log states %v (exit %d)\n%s", states, code, out)
	}

	// The transactional record, decoded by the Long and Integer
	// deserializers (the commit marker is not a record).
	out, errOut, code = read("ft", "--max-messages", "1", "--property", "print.key=true",
		"--key-deserializer", "org.apache.kafka.common.serialization.LongDeserializer",
		"--value-deserializer", "org.apache.kafka.common.serialization.IntegerDeserializer")
	if code != 0 || out != "1099511627776\t7\n" {
		t.Fatalf("deserializers: %d %q %s", code, out, errOut)
	}
	// A value of the wrong size: the exception ends the run after the
	// count line, exit 1.
	out, errOut, code = read("ft", "--max-messages", "1", "--value-deserializer", "org.apache.kafka.common.serialization.LongDeserializer")
	if code != 1 || out != "" || !strings.Contains(errOut, "Processed a total of 1 messages\n") ||
		!strings.Contains(errOut, "ERROR Unknown error when running consumer:  (kafka.tools.ConsoleConsumer$)\norg.apache.kafka.common.errors.SerializationException: Size of data received by LongDeserializer is not 8\n") {
		t.Fatalf("wrong size: %d %q %q", code, out, errOut)
	}
	// With --skip-message-on-error the failure is logged and the run goes on.
	out, errOut, code = read("ft", "--max-messages", "1", "--skip-message-on-error", "--value-deserializer", "org.apache.kafka.common.serialization.LongDeserializer")
	if code != 0 || out != "" || !strings.Contains(errOut, "ERROR Error processing message, skipping this message:  (kafka.tools.ConsoleConsumer$)\norg.apache.kafka.common.errors.SerializationException: Size of data received by LongDeserializer is not 8\n") ||
		!strings.HasSuffix(errOut, "Processed a total of 1 messages\n") {
		t.Fatalf("skip on error: %d %q %q", code, out, errOut)
	}
	// An unknown class is named.
	out, errOut, code = read("ft", "--formatter", "com.example.MyFormatter")
	if code != 1 || out != "" || errOut != "Exception in thread \"main\" java.lang.ClassNotFoundException: com.example.MyFormatter\n" {
		t.Fatalf("unknown formatter: %d %q %q", code, out, errOut)
	}
	_, errOut, code = read("ft", "--key-deserializer", "com.example.KeyDeser")
	if code != 1 || errOut != "Exception in thread \"main\" java.lang.ClassNotFoundException: com.example.KeyDeser\n" {
		t.Fatalf("unknown deserializer: %d %q", code, errOut)
	}
	// NoOp prints nothing but counts.
	out, errOut, code = read("ft", "--max-messages", "1", "--formatter", "kafka.tools.NoOpMessageFormatter", "--enable-systest-events")
	if code != 0 || out != "shutdown_complete\n" || !strings.HasSuffix(errOut, "Processed a total of 1 messages\n") {
		t.Fatalf("no-op: %d %q %q", code, out, errOut)
	}
}
