package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
)

func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

var timestampRE = regexp.MustCompile(`^\{"timestamp":\d+,`)

// events replaces each line's timestamp by T, failing on a line without
// one.
func events(t *testing.T, out string) []string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !timestampRE.MatchString(l) {
			t.Fatalf("line without a timestamp: %q\n%s", l, out)
		}
		lines = append(lines, timestampRE.ReplaceAllString(l, `{"timestamp":T,`))
	}
	return lines
}

// The script, as a process against a real ZooKeeper and broker, prints
// Kafka's event lines: values with a prefix, repeating keys, offsets, and
// the closing summary; the records are in the topic.
func TestVerifiableProducerScript(t *testing.T) {
	c := clitest.StartWithTopic(t, testcluster.Options{Brokers: 1}, "vp", 1, 1)
	bs := strings.Join(c.Bootstrap(), ",")
	out, errOut, code := clitest.Script(t, nil, "kafka-verifiable-producer.sh", "--bootstrap-server", bs, "--topic", "vp",
		"--max-messages", "4", "--value-prefix", "7", "--repeating-keys", "3", "--acks", "1", "--message-create-time", "1700000000000")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	lines := events(t, out)
	want := []string{
		`{"timestamp":T,"name":"startup_complete"}`,
		`{"timestamp":T,"name":"producer_send_success","key":"0","value":"7.0","topic":"vp","partition":0,"offset":0}`,
		`{"timestamp":T,"name":"producer_send_success","key":"1","value":"7.1","topic":"vp","partition":0,"offset":1}`,
		`{"timestamp":T,"name":"producer_send_success","key":"2","value":"7.2","topic":"vp","partition":0,"offset":2}`,
		`{"timestamp":T,"name":"producer_send_success","key":"0","value":"7.3","topic":"vp","partition":0,"offset":3}`,
		`{"timestamp":T,"name":"shutdown_complete"}`,
	}
	summary := regexp.MustCompile(`^\{"timestamp":T,"name":"tool_data","sent":4,"acked":4,"target_throughput":-1,"avg_throughput":[0-9.E]+\}$`)
	if len(lines) != len(want)+1 || strings.Join(lines[:len(want)], "\n") != strings.Join(want, "\n") || !summary.MatchString(lines[len(want)]) {
		t.Fatalf("got\n%s\nwant\n%s\n+ tool_data", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := c.Client()
	cl.AddConsumeTopics("vp")
	fs := cl.PollRecords(ctx, 4)
	if rs := fs.Records(); len(rs) == 0 || string(rs[0].Value) != "7.0" || rs[0].Timestamp.UnixMilli() != 1700000000000 {
		t.Fatalf("first record: %+v %v", rs, fs.Errors())
	}

	// Without keys and with acks=0: null keys, offset -1.
	out, _, code = clitest.Script(t, nil, "kafka-verifiable-producer.sh", "--broker-list", bs, "--topic", "vp", "--max-messages", "1", "--acks", "0")
	if lines := events(t, out); code != 0 || len(lines) != 4 ||
		lines[1] != `{"timestamp":T,"name":"producer_send_success","key":null,"value":"0","topic":"vp","partition":0,"offset":-1}` {
		t.Fatalf("acks=0: %d\n%s", code, out)
	}
	_, errOut, code = clitest.Script(t, nil, "kafka-verifiable-producer.sh", "--bootstrap-server", bs, "--topic", "vp", "--acks", "2")
	if code != 1 || !strings.HasSuffix(errOut, "verifiable-producer: error: argument --acks: invalid choice: '2' (choose from {0,1,-1})\n") {
		t.Fatalf("bad acks: %d %q", code, errOut)
	}
}

func TestParse(t *testing.T) {
	for args, want := range map[string]string{
		"--topic t":                                       "one of the arguments --bootstrap-server --broker-list is required",
		"--bootstrap-server b":                            "argument --topic is required",
		"--bootstrap-server b --broker-list c":            "argument --broker-list: not allowed with argument --bootstrap-server",
		"--bootstrap-server b --topic t --max-messages x": `argument --max-messages: could not convert 'x' to Integer (For input string: "x")`,
		"--bootstrap-server b --topic t --what":           "unrecognized arguments: '--what'",
	} {
		_, _, err := parser.Parse(strings.Fields(args))
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}
