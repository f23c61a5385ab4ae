package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
)

// --reset-offsets --export and --from-file, and --delete-offsets, through
// bin/kafka-consumer-groups.sh as a process against a real ZooKeeper and
// broker, on Kafka's exact output.
func TestExportImportAndDeleteOffsets(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Overrides: map[string]string{
		"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1"}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // bounds a failure only
	defer cancel()
	clitest.CreateTopic(t, ctx, c, "del", 2, 1)
	clitest.CreateTopic(t, ctx, c, "keep", 1, 1)
	c.WaitLeaders(20*time.Second, "del", 2)
	c.WaitLeaders(20*time.Second, "keep", 1)
	prod := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceN(t, ctx, prod, "del", 2, 20)
	produceN(t, ctx, prod, "keep", 1, 10)
	adm := c.Admin()
	commit := func(group string, offs map[string]map[int32]int64) {
		t.Helper()
		os := kadm.Offsets{}
		for topic, ps := range offs {
			for p, o := range ps {
				os.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1})
			}
		}
		if err := adm.CommitAllOffsets(ctx, group, os); err != nil {
			t.Fatal(err)
		}
	}
	commit("g1", map[string]map[int32]int64{"del": {0: 4, 1: 5}, "keep": {0: 3}})
	commit("g2", map[string]map[int32]int64{"del": {0: 1}})
	bs := strings.Join(c.Bootstrap(), ",")
	cg := func(args ...string) (string, string, int) {
		return clitest.Script(t, nil, "kafka-consumer-groups.sh", append([]string{"--bootstrap-server", bs}, args...)...)
	}
	expect := func(what, out, errOut string, code int, want string) {
		t.Helper()
		if code != 0 || out != want {
			t.Fatalf("%s: exit %d\nstdout %q\nwant   %q\nstderr %s", what, code, out, want, errOut)
		}
	}

	out, errOut, code := cg("--reset-offsets", "--group", "g1", "--all-topics", "--to-current", "--export", "--dry-run")
	expect("export one group", out, errOut, code, "del,0,4\ndel,1,5\nkeep,0,3\n\n")
	out, errOut, code = cg("--reset-offsets", "--group", "g1", "--group", "g2", "--all-topics", "--to-current", "--export", "--dry-run")
	expect("export two groups", out, errOut, code, "g1,del,0,4\ng1,del,1,5\ng1,keep,0,3\ng2,del,0,1\n\n")
	out, errOut, code = cg("--reset-offsets", "--all-groups", "--all-topics", "--to-current", "--export", "--dry-run")
	expect("export all groups", out, errOut, code, "g1,del,0,4\ng1,del,1,5\ng1,keep,0,3\ng2,del,0,1\n\n")

	// The single-group format back in, one offset clamped to the log end.
	out, errOut, code = cg("--reset-offsets", "--group", "g1", "--from-file", clitest.WriteFile(t, "del,0,2\ndel,1,99\n"), "--execute")
	expect("from-file one group", out, errOut, code, "\n"+
		"GROUP                          TOPIC                          PARTITION  NEW-OFFSET     \n"+
		"g1                             del                            0          2              \n"+
		"g1                             del                            1          10             \n")
	if !strings.Contains(errOut, "WARN New offset (99) is higher than latest offset for topic partition del-1. Value will be set to 10") {
		t.Errorf("no clamp warning: %q", errOut)
	}
	// The group format, for two groups; a group without a plan says so.
	out, errOut, code = cg("--reset-offsets", "--group", "g1", "--group", "g2", "--group", "g3", "--execute",
		"--from-file", clitest.WriteFile(t, "g1,keep,0,1\ng2,del,0,7\n"))
	expect("from-file groups", out, errOut, code, "\nError: No reset plan for group g3 found\n\n"+
		"GROUP                          TOPIC                          PARTITION  NEW-OFFSET     \n"+
		"g1                             keep                           0          1              \n"+
		"g2                             del                            0          7              \n")
	fetched := func(group string) map[string]map[int32]int64 {
		t.Helper()
		resp, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]map[int32]int64{}
		resp.Each(func(o kadm.OffsetResponse) {
			if got[o.Topic] == nil {
				got[o.Topic] = map[int32]int64{}
			}
			got[o.Topic][o.Partition] = o.At
		})
		return got
	}
	if got := fetched("g1"); got["del"][0] != 2 || got["del"][1] != 10 || got["keep"][0] != 1 {
		t.Fatalf("g1 offsets after the imports: %v", got)
	}
	if got := fetched("g2"); got["del"][0] != 7 {
		t.Fatalf("g2 offsets after the import: %v", got)
	}
	out, _, code = cg("--reset-offsets", "--group", "g1", "--from-file", clitest.WriteFile(t, "del,x,2\n"), "--dry-run")
	if code != 0 || !strings.HasPrefix(out, "\nError: Executing consumer group command failed due to ") {
		t.Errorf("bad CSV: %d %q", code, out)
	}

	// --delete-offsets of a whole topic; an unknown topic is "Not Provided".
	header := "\nTOPIC                          PARTITION       STATUS         \n"
	out, errOut, code = cg("--delete-offsets", "--group", "g1", "--topic", "del", "--topic", "nope")
	expect("delete-offsets", out, errOut, code, "Request succeed for deleting offsets with topic del, nope group g1\n"+header+
		"del                            0               Successful     \n"+
		"del                            1               Successful     \n"+
		"nope                           Not Provided    Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.\n")
	if got := fetched("g1"); len(got["del"]) != 0 || got["keep"][0] != 1 {
		t.Fatalf("g1 offsets after delete-offsets: %v", got)
	}
	out, errOut, code = cg("--delete-offsets", "--group", "nobody", "--topic", "keep:0")
	expect("unknown group", out, errOut, code, "\nError: 'nobody' does not exist.\n"+header+
		"keep                           0               Error: org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.\n")

	// A live member subscribed to the topic: the partition-level refusal.
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ConsumerGroup("live"), kgo.ConsumeTopics("keep"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	for n := 0; n < 10 && ctx.Err() == nil; {
		n += len(cons.PollFetches(ctx).Records())
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = cg("--delete-offsets", "--group", "live", "--topic", "keep")
	expect("subscribed group", out, errOut, code, "\nError: Encounter some partition level error, see the follow-up details:\n"+header+
		"keep                           0               Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException: Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.\n")

	_, errOut, code = cg("--delete-offsets", "--group", "g1")
	if code != 1 || !strings.HasPrefix(errOut, "Option [delete-offsets] takes the following options: [group], [topic]\n") {
		t.Errorf("delete-offsets without topic: %d %q", code, errOut)
	}
}

func TestParseResetPlan(t *testing.T) {
	p, err := parseResetPlan("t,0,5\nt,1,6\n", []string{"g"})
	if err != nil || p["g"][tp{"t", 0}] != 5 || p["g"][tp{"t", 1}] != 6 {
		t.Fatalf("%v %v", p, err)
	}
	p, err = parseResetPlan("a,t,0,5\n\"b,c\",t,1,6", []string{"a"})
	if err != nil || p["a"][tp{"t", 0}] != 5 || p["b,c"][tp{"t", 1}] != 6 {
		t.Fatalf("%v %v", p, err)
	}
	for _, bad := range []string{"", "t,0", "g,t,x,1", "g,t,0,1,9", `"g,t,0,1`} {
		if _, err := parseResetPlan(bad, nil); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	var b strings.Builder
	exportOffsetsToCsv(&b, []resetRow{{group: "a,b", topic: "t", partition: 1, offset: 2}}, false)
	if b.String() != "\"a,b\",t,1,2\n\n" {
		t.Errorf("export: %q", b.String())
	}
}

// FuzzParseResetPlan: the CSV reader never panics, and a plan it accepts
// exports and reads back to the same offsets.
func FuzzParseResetPlan(f *testing.F) {
	clitest.FuzzParser(f, []string{"t,0,5\nt,1,6\n", "g,t,0,5", `"g""x",t,0,1`, "\n\n", "a,b,c,d,e"},
		func(s string) (resetPlan, error) { return parseResetPlan(s, nil) },
		func(t *testing.T, in string, p resetPlan) {
			var rows []resetRow
			for g, m := range p {
				for x, off := range m {
					rows = append(rows, resetRow{group: g, topic: x.topic, partition: x.partition, offset: off})
				}
			}
			var b strings.Builder
			exportOffsetsToCsv(&b, rows, false)
			back, err := parseResetPlan(strings.TrimSuffix(b.String(), "\n"), nil)
			if err != nil {
				t.Fatalf("%q: export %q does not read back: %v", in, b.String(), err)
			}
			for g, m := range p {
				for x, off := range m {
					if back[g][x] != off {
						t.Fatalf("%q: %s %v: %d became %d", in, g, x, off, back[g][x])
					}
				}
			}
		})
}
