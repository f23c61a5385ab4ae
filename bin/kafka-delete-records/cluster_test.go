package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
)

func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

// The script, as a process against a real ZooKeeper and broker: records
// below the offset go, the low watermark is printed; an offset past the
// end and an unknown partition print the Java client's errors.
func TestDeleteRecordsScript(t *testing.T) {
	c := clitest.StartWithTopic(t, testcluster.Options{Brokers: 1}, "dr", 2, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := c.Client()
	for i := 0; i < 10; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "dr", Partition: 0, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	bs := strings.Join(c.Bootstrap(), ",")
	file := clitest.WriteFile(t, `{"partitions":[{"topic":"dr","partition":0,"offset":5},{"topic":"dr","partition":1,"offset":3},{"topic":"nope","partition":0,"offset":1}],"version":1}`)
	out, errOut, code := clitest.Script(t, nil, "kafka-delete-records.sh", "--bootstrap-server", bs, "--offset-json-file", file)
	want := "Executing records delete operation\nRecords delete operation completed:\n" +
		"partition: dr-0\tlow_watermark: 5\n" +
		"partition: dr-1\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: The requested offset is not within the range of offsets maintained by the server.\n" +
		"partition: nope-0\terror: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", code, out, want, errOut)
	}
	lo, err := c.Admin().ListStartOffsets(ctx, "dr")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := lo.Lookup("dr", 0); o.Offset != 5 {
		t.Errorf("start offset of dr-0 is %d, want 5", o.Offset)
	}

	dup := clitest.WriteFile(t, `{"partitions":[{"topic":"dr","partition":0,"offset":5},{"topic":"dr","partition":0,"offset":6}]}`)
	out, errOut, code = clitest.Script(t, nil, "kafka-delete-records.sh", "--bootstrap-server", bs, "--offset-json-file", dup)
	if code != 1 || out != "" || errOut != "Exception in thread \"main\" kafka.common.AdminCommandFailedException: Offset json file contains duplicate topic partitions: dr-0\n" {
		t.Fatalf("duplicates: %d %q %q", code, out, errOut)
	}
	_, errOut, code = clitest.Script(t, nil, "kafka-delete-records.sh", "--bootstrap-server", bs, "--offset-json-file", clitest.WriteFile(t, "{not json"))
	if code != 1 || errOut != "Exception in thread \"main\" kafka.admin.AdminOperationException: The input string is not a valid JSON\n" {
		t.Fatalf("bad json: %d %q", code, errOut)
	}
}

func TestParse(t *testing.T) {
	clitest.CheckParse(t, parse, []clitest.ParseCase{
		{Args: []string{"--offset-json-file", "f"}, Err: `Missing required argument "[bootstrap-server]"`, Usage: true},
		{Args: []string{"--bootstrap-server", "b"}, Err: `Missing required argument "[offset-json-file]"`, Usage: true},
		{Args: []string{"--bootstrap-server", "b", "--offset-json-file", "f", "--command-config", "c"}},
	})
	pos, err := parseOffsetJSON([]byte(`{"partitions":[{"topic":"a","partition":1,"offset":7}]}`))
	if err != nil || len(pos) != 1 || pos[0].tp.Topic != "a" || pos[0].tp.Partition != 1 || pos[0].offset != 7 {
		t.Fatalf("%+v %v", pos, err)
	}
	for in, want := range map[string]string{
		`{"version":2,"partitions":[]}`: "Not supported version field value 2",
		`{"version":1}`:                 "Missing partitions field",
		`[1]`:                           "The input string is not a valid JSON",
		`{"partitions":[{"topic":"a","partition":1}]}`: "No such field exists: `offset`",
	} {
		if _, err := parseOffsetJSON([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

// FuzzParseOffsetJSON: the offset-file parser never panics, and what it
// accepts has no entry without a topic field read.
func FuzzParseOffsetJSON(f *testing.F) {
	clitest.FuzzParser(f, []string{`{"partitions":[{"topic":"a","partition":1,"offset":7}],"version":1}`, `{"version":3}`, `{}`, `null`},
		parseOffsetJSON, nil)
}
