package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

func tool(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return clitest.Run(t, run, args...)
}

func produceN(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, partitions int32, n int) {
	t.Helper()
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i) % partitions, Value: []byte(fmt.Sprint(i))})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

var spaces = regexp.MustCompile(` +`)

// fields splits a table line on runs of spaces.
func fields(line string) []string {
	return strings.Split(strings.TrimSpace(spaces.ReplaceAllString(line, " ")), " ")
}

// A franz-go consumer group seen through every sub-command: describe
// (offsets, members, state) with lag, list, reset refused while active,
// describe of the empty group, reset to earliest / to offset / shift-by,
// delete.
func TestConsumerGroupsOverBootstrap(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Overrides: map[string]string{
		"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1"}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // bounds a failure only
	defer cancel()
	clitest.CreateTopic(t, ctx, c, "orders", 3, 1)
	prod := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableIdempotentWrite())
	produceN(t, ctx, prod, "orders", 3, 30)

	cons, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ClientID("billing-app"), kgo.ConsumerGroup("billing"),
		kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.Balancers(kgo.RangeBalancer()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	got := 0
	for got < 30 && ctx.Err() == nil {
		got += len(cons.PollFetches(ctx).Records())
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	produceN(t, ctx, prod, "orders", 3, 6) // lag 2 per partition
	bs := strings.Join(c.Bootstrap(), ",")
	adm := c.Admin()
	dg, err := adm.DescribeGroups(ctx, "billing")
	if err != nil || len(dg["billing"].Members) != 1 {
		t.Fatalf("describe via kadm: %v %+v", err, dg)
	}
	member := dg["billing"].Members[0]

	out, errOut, code := tool(t, "--bootstrap-server", bs, "--describe", "--group", "billing")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 5 || lines[0] != "" || errOut != "" {
		t.Fatalf("describe: %d\n%s\n%s", code, out, errOut)
	}
	if h := fields(lines[1]); strings.Join(h, " ") != "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID" {
		t.Fatalf("header %q", lines[1])
	}
	for p, l := range lines[2:] {
		want := []string{"billing", "orders", fmt.Sprint(p), "10", "12", "2", member.MemberID, member.ClientHost, "billing-app"}
		if f := fields(l); strings.Join(f, " ") != strings.Join(want, " ") {
			t.Errorf("row %d: %q, want %v", p, l, want)
		}
	}

	out, _, _ = tool(t, "--bootstrap-server", bs, "--describe", "--group", "billing", "--members", "--verbose")
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || strings.Join(fields(lines[1]), " ") != "GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS ASSIGNMENT" ||
		strings.Join(fields(lines[2]), " ") != strings.Join([]string{"billing", member.MemberID, member.ClientHost, "billing-app", "3", "orders(0,1,2)"}, " ") {
		t.Fatalf("members:\n%s", out)
	}
	out, _, _ = tool(t, "--bootstrap-server", bs, "--describe", "--group", "billing", "--state")
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || fields(lines[2])[0] != "billing" || !strings.HasSuffix(lines[2], "range                Stable          1") ||
		!strings.Contains(lines[2], fmt.Sprintf("(%d)", c.BrokerID(0))) {
		t.Fatalf("state:\n%q", out)
	}
	out, _, _ = tool(t, "--bootstrap-server", bs, "--list")
	if !strings.Contains("\n"+out, "\nbilling\n") {
		t.Fatalf("list: %q", out)
	}
	out, _, _ = tool(t, "--bootstrap-server", bs, "--list", "--state", "stable")
	if !regexp.MustCompile(`(?m)^GROUP +STATE\nbilling +Stable$`).MatchString(out) {
		t.Fatalf("list --state: %q", out)
	}
	out, _, _ = tool(t, "--bootstrap-server", bs, "--reset-offsets", "--group", "billing", "--topic", "orders", "--to-earliest", "--execute")
	if out != "\nError: Assignments can only be reset if the group 'billing' is inactive, but the current state is Stable.\n" {
		t.Fatalf("reset while active: %q", out)
	}

	cons.Close() // leaves the group: Empty, offsets kept
	c.WaitFor(30*time.Second, "group empty", func() bool {
		dg, err := adm.DescribeGroups(ctx, "billing")
		return err == nil && dg["billing"].State == "Empty"
	})
	out, errOut, _ = tool(t, "--bootstrap-server", bs, "--describe", "--group", "billing")
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if errOut != "\nConsumer group 'billing' has no active members.\n" || len(lines) != 5 ||
		strings.Join(fields(lines[3]), " ") != "billing orders 1 10 12 2 - - -" {
		t.Fatalf("describe empty: %q %q", out, errOut)
	}

	committed := func() string {
		or, err := adm.FetchOffsets(ctx, "billing")
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for p := int32(0); p < 3; p++ {
			r, _ := or.Lookup("orders", p)
			s = append(s, fmt.Sprint(r.At))
		}
		return strings.Join(s, ",")
	}
	out, errOut, _ = tool(t, "--bootstrap-server", bs, "--reset-offsets", "--group", "billing", "--topic", "orders", "--to-earliest")
	if !strings.HasPrefix(errOut, "WARN: No action will be performed as the --execute option is missing.") || committed() != "10,10,10" ||
		!strings.Contains(out, "billing                        orders                         0          0              \n") {
		t.Fatalf("implicit dry run: %q %q %s", out, errOut, committed())
	}
	out, _, _ = tool(t, "--bootstrap-server", bs, "--reset-offsets", "--group", "billing", "--topic", "orders", "--to-earliest", "--execute")
	if committed() != "0,0,0" || strings.Count(out, "\n") != 5 {
		t.Fatalf("to-earliest: %q %s", out, committed())
	}
	tool(t, "--bootstrap-server", bs, "--reset-offsets", "--group", "billing", "--all-topics", "--to-offset", "100", "--execute")
	if committed() != "12,12,12" {
		t.Fatalf("to-offset beyond the end is clamped: %s", committed())
	}
	tool(t, "--bootstrap-server", bs, "--reset-offsets", "--group", "billing", "--topic", "orders:1", "--shift-by", "-5", "--execute")
	if committed() != "12,7,12" {
		t.Fatalf("shift-by: %s", committed())
	}
	tool(t, "--bootstrap-server", bs, "--reset-offsets", "--group", "billing", "--topic", "orders:2", "--to-datetime", "2000-01-01T00:00:00.000Z", "--execute")
	if committed() != "12,7,0" {
		t.Fatalf("to-datetime: %s", committed())
	}
	// An explicit --dry-run prints the plan and changes nothing.
	out, errOut, _ = tool(t, "--bootstrap-server", bs, "--reset-offsets", "--group", "billing", "--topic", "orders", "--to-latest", "--dry-run")
	if errOut != "" || committed() != "12,7,0" || !regexp.MustCompile(`(?m)^billing +orders +1 +12 *$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^GROUP +TOPIC +PARTITION +NEW-OFFSET *$`).MatchString(out) {
		t.Fatalf("to-latest dry run: %q %q %s", out, errOut, committed())
	}
	tool(t, "--bootstrap-server", bs, "--reset-offsets", "--group", "billing", "--topic", "orders", "--to-latest", "--execute")
	if committed() != "12,12,12" {
		t.Fatalf("to-latest: %s", committed())
	}

	out, _, _ = tool(t, "--bootstrap-server", bs, "--delete", "--group", "billing")
	if out != "Deletion of requested consumer groups ('billing') was successful.\n" {
		t.Fatalf("delete: %q", out)
	}
	out, _, _ = tool(t, "--bootstrap-server", bs, "--describe", "--group", "billing")
	if out != "\nError: Consumer group 'billing' does not exist.\n" {
		t.Fatalf("describe deleted: %q", out)
	}
	out, _, _ = tool(t, "--bootstrap-server", bs, "--delete", "--group", "nobody")
	if !strings.HasPrefix(out, "\nError: Deletion of some consumer groups failed:\n* Group 'nobody' could not be deleted due to: java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.GroupIdNotFoundException") {
		t.Fatalf("delete missing: %q", out)
	}
}

// The classic mode lists and describes groups of ZooKeeper consumers and
// deletes them only when no consumer is registered.
func TestConsumerGroupsZooKeeperMode(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // bounds a failure only
	defer cancel()
	clitest.CreateTopic(t, ctx, c, "old", 2, 1)
	prod := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableIdempotentWrite())
	produceN(t, ctx, prod, "old", 2, 6)

	zc, err := zkclient.Connect(c.ZKConnect(), 6*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	cfg := clitools.ZKConsumerDefaults("legacy", "old")
	cfg.ConsumerID = "legacy_host-1-0123abcd"
	cfg.AutoOffsetReset = "smallest"
	cfg.AutoCommitInterval = 100 * time.Millisecond
	cfg.RebalanceBackoff = 100 * time.Millisecond
	zcons, err := clitools.StartZKConsumer(zc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer zcons.Close()
	for i := 0; i < 4; i++ {
		if _, err := zcons.Next(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	zk := c.ZK()
	c.WaitFor(30*time.Second, "offsets of 4 records committed", func() bool {
		var sum int64
		for p := int32(0); p < 2; p++ {
			if off, ok, _ := zk.GetConsumerOffset("legacy", "old", p); ok {
				sum += off
			}
		}
		return sum == 4
	})
	// One more partition owner: a consumer registered without partitions
	// (a second member whose range is empty) shows as a row of its own.
	_, err = zk.CreateRecursive("/consumers/legacy/ids/legacy_host-2-ffff0000",
		[]byte(`{"version":1,"subscription":{"other":1},"pattern":"static","timestamp":"1"}`), zkclient.Ephemeral)
	if err != nil {
		t.Fatal(err)
	}
	zkArgs := []string{"--zookeeper", c.ZKConnect()}
	out, errOut, code := tool(t, append(zkArgs, "--list")...)
	if code != 0 || out != "legacy\n" || !strings.HasPrefix(errOut, "Note: This will only show information about consumers that use ZooKeeper") {
		t.Fatalf("list: %d %q %q", code, out, errOut)
	}
	out, _, _ = tool(t, append(zkArgs, "--describe", "--group", "legacy")...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 5 || strings.Join(fields(lines[1]), " ") != "TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID" ||
		strings.Join(fields(lines[4]), " ") != "- - - - - legacy_host-2-ffff0000" {
		t.Fatalf("describe:\n%s", out)
	}
	var lagSum, offSum int
	for p, l := range lines[2:4] {
		f := fields(l)
		if f[0] != "old" || f[1] != fmt.Sprint(p) || f[3] != "3" || f[5] != cfg.ConsumerID {
			t.Errorf("row %q", l)
		}
		var off, lag int
		fmt.Sscan(f[2], &off)
		fmt.Sscan(f[4], &lag)
		offSum += off
		lagSum += lag
	}
	if offSum != 4 || lagSum != 2 {
		t.Errorf("offsets sum %d lag sum %d, want 4 and 2:\n%s", offSum, lagSum, out)
	}
	out, _, _ = tool(t, append(zkArgs, "--describe", "--group", "nope")...)
	if out != "Error: The consumer group 'nope' does not exist.\n" {
		t.Fatalf("describe missing: %q", out)
	}
	out, _, _ = tool(t, append(zkArgs, "--delete", "--group", "legacy")...)
	if out != "Error: Delete for group 'legacy' failed because its consumers are still active.\n" {
		t.Fatalf("delete active: %q", out)
	}
	if err := zcons.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zk.Delete("/consumers/legacy/ids/legacy_host-2-ffff0000", -1); err != nil {
		t.Fatal(err)
	}
	out, _, _ = tool(t, append(zkArgs, "--delete", "--group", "legacy")...)
	if out != "Deleted all consumer group information for group 'legacy' in zookeeper.\n" {
		t.Fatalf("delete: %q", out)
	}
	if ok, _, _ := zk.Exists("/consumers/legacy"); ok {
		t.Fatal("group still in ZooKeeper")
	}
}
