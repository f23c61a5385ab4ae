package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitest"
	kcommon "github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/testcluster"
)

func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

// The script, as a process against a real ZooKeeper and broker, prints
// GetOffsetShell's lines for each --time and filter, and its errors.
func TestGetOffsetsScript(t *testing.T) {
	c := clitest.StartWithTopic(t, testcluster.Options{Brokers: 1}, "go", 2, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clitest.CreateTopic(t, ctx, c, "other", 1, 1)
	c.WaitLeaders(20*time.Second, "other", 1)
	// The manual partitioner honours Record.Partition; the default one
	// would spread the records over both partitions.
	cl := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	base := time.UnixMilli(1700000000000)
	for i := 0; i < 3; i++ {
		r := &kgo.Record{Topic: "go", Partition: 0, Value: []byte("v"), Timestamp: base.Add(time.Duration(i) * time.Second)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	bs := strings.Join(c.Bootstrap(), ",")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--topic", "go"}, "go:0:3\ngo:1:0\n"},
		{[]string{"--topic", "go", "--time", "-1"}, "go:0:3\ngo:1:0\n"},
		{[]string{"--topic", "go", "--time", "earliest"}, "go:0:0\ngo:1:0\n"},
		{[]string{"--topic", "go", "--time", "-2", "--partitions", "1"}, "go:1:0\n"},
		{[]string{"--topic", "g.", "--time", "1700000001000"}, "go:0:1\n"},
		{[]string{"--topic", "go", "--partitions", "0", "--time", "max-timestamp"}, "go:0:2\n"},
		{[]string{"--topic-partitions", "go:1,oth.*", "--exclude-internal-topics"}, "go:1:0\nother:0:0\n"},
		{[]string{"--topic-partitions", "go:0-1"}, "go:0:3\n"},
		{[]string{"--topic-partitions", ":1-", "--exclude-internal-topics"}, "go:1:0\n"},
		{[]string{"--topic", "nothing"}, "Error occurred: Could not match any topic-partitions with the specified filters\n"},
		{[]string{"--topic-partitions", "go", "--topic", "go"}, "Error occurred: --topic-partitions cannot be used with --topic or --partitions\n"},
		{[]string{"--topic", "go", "--time", "yesterday"}, "Error occurred: Malformed time argument yesterday, please use -1 or latest / -2 or earliest / -3 or max-timestamp, or a specified long format timestamp\n"},
		{[]string{"--topic", "go", "--partitions", "0,x"}, "Error occurred: --partitions expects a comma separated list of numeric partition ids, but received: 0,x\n"},
	} {
		out, errOut, code := clitest.Script(t, nil, "kafka-get-offsets.sh", append([]string{"--bootstrap-server", bs}, tc.args...)...)
		wantCode := 0
		if strings.HasPrefix(tc.want, "Error occurred") {
			wantCode = 1
		}
		if code != wantCode || out != tc.want {
			t.Errorf("%v: exit %d\nstdout %q\nwant   %q\nstderr %s", tc.args, code, out, tc.want, errOut)
		}
	}
	// The deprecated --broker-list still works.
	if out, _, code := clitest.Script(t, nil, "kafka-get-offsets.sh", "--broker-list", bs, "--topic", "other"); code != 0 || out != "other:0:0\n" {
		t.Errorf("--broker-list: %d %q", code, out)
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--topic", "t"}, "Missing required option(s) [bootstrap-server]"},
		{[]string{"--bootstrap-server", "h:1", "--nope"}, "nope is not a recognized option"},
		{[]string{"--bootstrap-server", "h:1", "--topic-partitions", "a:b"}, "Invalid rule specification: a:b"},
		{[]string{"--bootstrap-server", "h:1", "--topic", "("}, "( is an invalid regex."},
	} {
		_, err := parse(tc.args)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	var out, errOut strings.Builder
	if code := run(context.Background(), []string{"--bootstrap-server", "nohost"}, &out, &errOut); code != 1 ||
		!strings.HasPrefix(errOut.String(), "Please provide valid host:port like host1:9091,host2:9092\n \nOption") {
		t.Errorf("bad host: %d %q", code, errOut.String())
	}
	f, err := parsePatternList("a:3,b:-2,:5-,c")
	if err != nil {
		t.Fatal(err)
	}
	for tp, want := range map[string]bool{"a-3": true, "a-4": false, "b-1": true, "b-2": false, "x-5": true, "x-4": false, "c-99": true, "ca-0": false} {
		topic, p, _ := strings.Cut(tp, "-")
		n := int32(p[0] - '0')
		if len(p) > 1 {
			n = 99
		}
		if got := f.allowed(tpOf(topic, n)); got != want {
			t.Errorf("%s: %v", tp, got)
		}
	}
}

func tpOf(topic string, p int32) kcommon.TopicPartition {
	return kcommon.TopicPartition{Topic: topic, Partition: p}
}
