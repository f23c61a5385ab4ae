package main

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/testcluster"
)

// TestLogDirMovesAsProcess runs bin/kafka-reassign-partitions.sh as a
// process with a reassignment JSON whose log_dirs move broker 1's replica
// to its other log directory, throttled by
// --replica-alter-log-dirs-throttle: --execute starts the move and sets the
// throttle, --verify reports it in progress and then completed (Kafka's
// lines) and only then clears the throttle. The move starts at 1,000 B/s, so
// the first --verify sees it in progress whatever the machine's speed; the
// throttle is then raised through AlterConfigs to let it finish; a directory outside log.dirs
// fails with Kafka's message.
func TestLogDirMovesAsProcess(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, LogDirs: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "jbodmove", -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, []int32{1, 2}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	if resp, err := req.RequestWith(ctx, c.Client()); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create jbodmove: %v %+v", err, resp)
	}
	c.WaitFor(20*time.Second, "jbodmove's leader and full ISR", func() bool {
		s, ok := c.PartitionState("jbodmove", 0)
		return ok && s.Leader >= 0 && len(s.ISR) == 2
	})
	prod := c.Client(kgo.DefaultProduceTopic("jbodmove"), kgo.ProducerLinger(5*time.Millisecond))
	value := []byte(strings.Repeat("v", 4096))
	for range 1000 { // 4 MB: a few seconds at 1 MB/s
		prod.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Error(err)
			}
		})
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	tp := common.TopicPartition{Topic: "jbodmove", Partition: 0}
	lm := c.Broker(0).LogManager()
	from, _ := lm.LogDirs(tp)
	to := lm.Dirs()[0]
	if to == from {
		to = lm.Dirs()[1]
	}
	bs := strings.Join(c.Bootstrap(), ",")
	script := func(args ...string) (string, string, int) {
		return clitest.Script(t, nil, "kafka-reassign-partitions.sh", append([]string{"--bootstrap-server", bs}, args...)...)
	}

	bad := clitest.WriteFile(t, `{"version":1,"partitions":[{"topic":"jbodmove","partition":0,"replicas":[1,2],"log_dirs":["/not/a/log/dir","any"]}]}`)
	out, errOut, code := script("--execute", "--reassignment-json-file", bad)
	if code != 1 || !strings.HasSuffix(out, "Successfully started partition reassignment for jbodmove-0\nError: Failed to alter dir for jbodmove-0-1\n") {
		t.Fatalf("execute to a directory outside log.dirs: exit %d\n%s%s", code, out, errOut)
	}

	// The throttle is in force on broker 1 before the move starts: the
	// tool's own AlterConfigs reaches the broker through ZooKeeper's change
	// notification, which can come after its AlterReplicaLogDirs (in Kafka
	// as well), and an unthrottled start would copy the 4 MB at once.
	adm := kadm.NewClient(c.Client())
	slow := "1000"
	if _, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "replica.alter.log.dirs.io.max.bytes.per.second", Value: &slow}}, 1); err != nil {
		t.Fatalf("set the log dir throttle: %v", err)
	}
	c.WaitFor(20*time.Second, "the log dir throttle on broker 1", func() bool {
		return c.Broker(0).Dynamic().Current().ReplicaAlterLogDirsIOMaxBytesPerSecond == 1000
	})
	plan := clitest.WriteFile(t, `{"version":1,"partitions":[{"topic":"jbodmove","partition":0,"replicas":[1,2],"log_dirs":["`+to+`","any"]}]}`)
	out, errOut, code = script("--execute", "--reassignment-json-file", plan, "--replica-alter-log-dirs-throttle", "1000")
	want := "Current partition replica assignment\n\n" +
		`{"version":1,"partitions":[{"topic":"jbodmove","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}` + "\n\n" +
		"Save this to use as the --reassignment-json-file option during rollback\n" +
		"Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.\n" +
		"The replica-alter-dir throttle limit was set to 1000 B/s\n" +
		"Successfully started partition reassignment for jbodmove-0\n" +
		"Successfully started log directory move for: jbodmove-0-1\n"
	if code != 0 || out != want {
		t.Fatalf("execute: exit %d\nstdout %q\nwant   %q\nstderr %s", code, out, want, errOut)
	}
	if got := c.Broker(0).Dynamic().Current().ReplicaAlterLogDirsIOMaxBytesPerSecond; got != 1000 {
		t.Fatalf("log dir throttle on broker 1 after --execute: %d", got)
	}

	inProgress := "Status of partition reassignment:\nReassignment of partition jbodmove-0 is complete.\n" +
		"Reassignment of replica jbodmove-0-1 is still in progress.\n"
	done := "Status of partition reassignment:\nReassignment of partition jbodmove-0 is complete.\n" +
		"Reassignment of replica jbodmove-0-1 completed successfully.\n" +
		"Clearing broker-level throttles on brokers 1,2\nClearing topic-level throttles on topic jbodmove\n"
	// 4 MB at 1,000 B/s cannot finish before the first --verify.
	if out, errOut, code := script("--verify", "--reassignment-json-file", plan); code != 0 || out != inProgress {
		t.Fatalf("first verify: exit %d\n%q\nwant %q\n%s", code, out, inProgress, errOut)
	}
	faster := "100000000"
	if _, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "replica.alter.log.dirs.io.max.bytes.per.second", Value: &faster}}, 1); err != nil {
		t.Fatalf("raise the log dir throttle: %v", err)
	}
	c.WaitFor(60*time.Second, "--verify to report the move completed", func() bool {
		out, errOut, code := script("--verify", "--reassignment-json-file", plan)
		switch {
		case code == 0 && out == inProgress:
			return false
		case code == 0 && out == done:
			return true
		}
		t.Fatalf("verify: exit %d\n%q\n%s", code, out, errOut)
		return false
	})
	if cur, fut := lm.LogDirs(tp); cur != to || fut != "" {
		t.Fatalf("after the move: current %q future %q, want %q", cur, fut, to)
	}
	c.WaitFor(20*time.Second, "the log dir throttle removed", func() bool {
		return c.Broker(0).Dynamic().Current().ReplicaAlterLogDirsIOMaxBytesPerSecond == math.MaxInt64
	})
}
