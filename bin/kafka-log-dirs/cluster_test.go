package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/testcluster"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// TestScript runs bin/kafka-log-dirs.sh --version: kafka-run-class.sh
// builds this tool and runs it.
func TestScript(t *testing.T) { clitest.CheckScriptVersion(t, "kafka-log-dirs.sh") }

// expectedJSON is the JSON line for the given brokers, built from their
// log managers (the truth on disk) rather than from DescribeLogDirs.
func expectedJSON(c *testcluster.Cluster, idx []int, topics []string) string {
	by := map[int32][]dirInfo{}
	for _, i := range idx {
		lm := c.Broker(i).LogManager()
		var dirs []dirInfo
		for _, d := range lm.Dirs() {
			di := dirInfo{path: d}
			for tp, l := range lm.AllLogs() {
				if cur, _ := lm.LogDirs(tp); cur == d {
					di.parts = append(di.parts, partInfo{tp.Topic, tp.Partition, l.Size(), 0, false})
				}
			}
			dirs = append(dirs, di)
		}
		by[c.BrokerID(i)] = dirs
	}
	return formatJSON(by, topics)
}

// TestDescribeAgainstCluster runs bin/kafka-log-dirs.sh as a process
// against two brokers with two log.dirs each and checks its whole output:
// every broker, one broker with --broker-list, a --topic-list filter; a
// missing --describe prints Kafka's usage error.
func TestDescribeAgainstCluster(t *testing.T) {
	c := clitest.StartWithTopic(t, testcluster.Options{Brokers: 2, LogDirs: 2}, "dirs", 4, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clitest.CreateTopic(t, ctx, c, "other", 1, 1)
	c.WaitLeaders(20*time.Second, "other", 1)
	prod := c.Client(kgo.DefaultProduceTopic("dirs"))
	for i := range 50 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Partition: int32(i % 4), Value: []byte(strings.Repeat("x", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// Sizes settle once both replicas hold everything.
	c.WaitFor(20*time.Second, "followers caught up", func() bool {
		for p := int32(0); p < 4; p++ {
			tp := common.TopicPartition{Topic: "dirs", Partition: p}
			l0, ok0 := c.Broker(0).LogManager().GetLog(tp)
			l1, ok1 := c.Broker(1).LogManager().GetLog(tp)
			if !ok0 || !ok1 || l0.LogEndOffset() != l1.LogEndOffset() || l0.Size() != l1.Size() {
				return false
			}
		}
		return true
	})
	bs := strings.Join(c.Bootstrap(), ",")

	out, errOut, code := clitest.Script(t, nil, "kafka-log-dirs.sh", "--bootstrap-server", bs, "--describe")
	want := "Querying brokers for log directories information\n" +
		"Received log directory information from brokers 1,2\n" + expectedJSON(c, []int{0, 1}, nil) + "\n"
	if code != 0 || out != want {
		t.Fatalf("--describe: exit %d\nstdout %q\nwant   %q\nstderr %s", code, out, want, errOut)
	}

	out, errOut, code = clitest.Script(t, nil, "kafka-log-dirs.sh", "--bootstrap-server", bs, "--describe", "--broker-list", "2", "--topic-list", "other")
	want = "Querying brokers for log directories information\n" +
		"Received log directory information from brokers 2\n" + expectedJSON(c, []int{1}, []string{"other"}) + "\n"
	if code != 0 || out != want {
		t.Fatalf("--broker-list 2 --topic-list other: exit %d\nstdout %q\nwant   %q\nstderr %s", code, out, want, errOut)
	}
	if !strings.Contains(out, `"partitions":[]`) || strings.Contains(out, `"dirs-`) {
		t.Fatalf("topic filter not applied: %s", out)
	}

	out, errOut, code = clitest.Script(t, nil, "kafka-log-dirs.sh", "--bootstrap-server", bs)
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "Missing required argument \"[describe]\"\nOption") {
		t.Fatalf("without --describe: exit %d stdout %q stderr %q", code, out, errOut)
	}
}
