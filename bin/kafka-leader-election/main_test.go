package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

// TestParse covers LeaderElectionCommand.validate's rules and messages.
func TestParse(t *testing.T) {
	jsonFile := clitest.WriteFile(t, `{"partitions":[{"topic":"b","partition":1},{"topic":"a","partition":0}]}`)
	dupFile := clitest.WriteFile(t, `{"partitions":[{"topic":"a","partition":0},{"topic":"a","partition":0}]}`)
	bs := []string{"--bootstrap-server", "127.0.0.1:1"}
	clitest.CheckParse(t, parse, []clitest.ParseCase{
		{"missing both", []string{"--topic", "t"}, "Missing required option(s): election-type, bootstrap-server", false},
		{"missing election type", append(bs, "--topic", "t", "--partition", "0"), "Missing required option(s): election-type", false},
		{"none of the selectors", append(bs, "--election-type", "preferred"), "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file", false},
		{"two selectors", append(bs, "--election-type", "preferred", "--all-topic-partitions", "--topic", "t"), "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file", false},
		{"topic without partition", append(bs, "--election-type", "preferred", "--topic", "t"), "Missing required option(s): partition", false},
		{"partition without topic", append(bs, "--election-type", "preferred", "--all-topic-partitions", "--partition", "1"), "Option partition is only allowed if topic is used", false},
		{"bad election type", append(bs, "--election-type", "random", "--all-topic-partitions"), "Cannot parse argument 'random' of option election-type", true},
		{"bad partition", append(bs, "--election-type", "unclean", "--topic", "t", "--partition", "x"), "Cannot parse argument 'x' of option partition", true},
		{"unknown option", append(bs, "--zookeeper", "h:1"), "zookeeper is not a recognized option", true},
		{"abbreviation refused", append(bs, "--election", "preferred"), "election is not a recognized option", true},
		{"duplicates in file", append(bs, "--election-type", "preferred", "--path-to-json-file", dupFile), "Replica election data contains duplicate partitions: a-0", false},
		{"single partition", append(bs, "--election-type", "UNCLEAN", "--topic", "t", "--partition=3"), "", false},
		{"all", append(bs, "--election-type", "preferred", "--all-topic-partitions"), "", false},
		{"file", append(bs, "--election-type", "preferred", "--path-to-json-file", jsonFile), "", false},
	})
	req, _, err := parse(append(bs, "--election-type", "UNCLEAN", "--topic", "t", "--partition", "3"))
	if err != nil || req.electionType != admintool.ElectionUnclean || len(req.partitions) != 1 || req.partitions[0] != (common.TopicPartition{Topic: "t", Partition: 3}) {
		t.Fatalf("single: %+v %v", req, err)
	}
	req, _, err = parse(append(bs, "--election-type", "preferred", "--all-topic-partitions"))
	if err != nil || req.partitions != nil || req.electionType != admintool.ElectionPreferred {
		t.Fatalf("all: %+v %v", req, err)
	}
	req, _, err = parse(append(bs, "--election-type", "preferred", "--path-to-json-file", jsonFile))
	if err != nil || admintool.JoinPartitions(req.partitions, ",") != "a-0,b-1" {
		t.Fatalf("file: %+v %v", req, err)
	}
	if _, special, _ := parse(nil); special != "help" {
		t.Fatalf("no arguments: %q", special)
	}
	if _, special, _ := parse([]string{"--version"}); special != "version" {
		t.Fatalf("--version: %q", special)
	}
}

func TestParseElectionData(t *testing.T) {
	cases := []struct{ in, want string }{
		{`not json`, "Replica election data is empty"},
		{`{"version":1}`, `Replica election data is missing "partitions" field`},
		{`{"partitions":[{"topic":"t"}]}`, "partition entry 0: No such field exists: `partition`"},
		{`{"partitions":[{"topic":1,"partition":0}]}`, "partition entry 0: Failed to read `topic`: 1 is not a string"},
		{`{"partitions":[{"topic":"t","partition":0},{"topic":"u","partition":2},{"topic":"t","partition":0},{"topic":"u","partition":2}]}`, "Replica election data contains duplicate partitions: t-0,u-2"},
	}
	for _, c := range cases {
		if _, err := parseElectionData([]byte(c.in)); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
	tps, err := parseElectionData([]byte(`{"partitions":[],"extra":true}`))
	if err != nil || tps == nil || len(tps) != 0 {
		t.Errorf("empty list: %v %v (must be an empty, non-nil list: an empty set, not all partitions)", tps, err)
	}
}

// TestElectOutput checks the lines LeaderElectionCommand prints for each
// outcome, and what escapes to stderr.
func TestElectOutput(t *testing.T) {
	tp := func(topic string, p int32) common.TopicPartition {
		return common.TopicPartition{Topic: topic, Partition: p}
	}
	msg := "custom broker message"
	results := admintool.ElectionResults{
		Succeeded: []common.TopicPartition{tp("a", 0), tp("a", 1)},
		Noop:      []common.TopicPartition{tp("b", 0)},
		Failed: map[common.TopicPartition]error{
			tp("c", 1): admintool.NewKafkaError(kerr.PreferredLeaderNotAvailable.Code, nil),
			tp("c", 0): admintool.NewKafkaError(kerr.UnknownTopicOrPartition.Code, &msg),
		},
	}
	var out, errOut strings.Builder
	req := &request{electionType: admintool.ElectionPreferred, partitions: nil}
	err := elect(context.Background(), &out, req, func(ctx context.Context, typ int8, tps []common.TopicPartition) (admintool.ElectionResults, error) {
		if typ != admintool.ElectionPreferred || tps != nil {
			t.Errorf("call(%d, %v)", typ, tps)
		}
		return results, nil
	})
	want := "Successfully completed leader election (PREFERRED) for partitions a-0, a-1\n" +
		"Valid replica already elected for partitions b-0\n" +
		"Error completing leader election (PREFERRED) for partition: c-0: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: custom broker message\n" +
		"Error completing leader election (PREFERRED) for partition: c-1: org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: The preferred leader was not available.\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	if code := fail(err, &errOut); code != 1 || errOut.String() != "Exception in thread \"main\" kafka.common.AdminCommandFailedException: 2 replica(s) could not be elected\n" {
		t.Errorf("failure: %d %q", code, errOut.String())
	}

	errorCases := []struct {
		err          error
		stdout, stde string
	}{
		{admintool.NewKafkaError(kerr.RequestTimedOut.Code, nil), "Timeout waiting for election results\n", "Exception in thread \"main\" kafka.common.AdminCommandFailedException: Timeout waiting for election results\nCaused by: org.apache.kafka.common.errors.TimeoutException: The request timed out.\n"},
		{admintool.NewKafkaError(kerr.ClusterAuthorizationFailed.Code, nil), "Not authorized to perform leader election\n", "Exception in thread \"main\" kafka.common.AdminCommandFailedException: Not authorized to perform leader election\nCaused by: org.apache.kafka.common.errors.ClusterAuthorizationException: Cluster authorization failed.\n"},
		{admintool.UnsupportedAPI("ELECT_LEADERS"), "", "Exception in thread \"main\" java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.UnsupportedVersionException: The broker does not support ELECT_LEADERS\n"},
	}
	for _, c := range errorCases {
		out.Reset()
		errOut.Reset()
		err := elect(context.Background(), &out, &request{electionType: admintool.ElectionUnclean}, func(context.Context, int8, []common.TopicPartition) (admintool.ElectionResults, error) {
			return admintool.ElectionResults{}, c.err
		})
		if fail(err, &errOut); out.String() != c.stdout || errOut.String() != c.stde {
			t.Errorf("%v: stdout %q stderr %q", c.err, out.String(), errOut.String())
		}
	}

	out.Reset()
	err = elect(context.Background(), &out, &request{electionType: admintool.ElectionUnclean}, func(context.Context, int8, []common.TopicPartition) (admintool.ElectionResults, error) {
		return admintool.ElectionResults{Succeeded: []common.TopicPartition{tp("t", 2)}}, nil
	})
	if err != nil || out.String() != "Successfully completed leader election (UNCLEAN) for partitions t-2\n" {
		t.Errorf("unclean: %v %q", err, out.String())
	}
}

// TestUnreachable: a cluster that cannot be reached ends like Kafka's
// admin client timing out.
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var out, errOut strings.Builder
	code := run([]string{"--bootstrap-server", addr, "--election-type", "preferred", "--all-topic-partitions"}, &out, &errOut, 2*time.Second)
	if code != 1 || out.String() != "Timeout waiting for election results\n" ||
		!strings.HasPrefix(errOut.String(), "Exception in thread \"main\" kafka.common.AdminCommandFailedException: Timeout waiting for election results\n"+
			"Caused by: org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node assignment. Call: electLeaders") {
		t.Fatalf("%d %q %q", code, out.String(), errOut.String())
	}
}

// TestRunUsage checks the help and option-error paths of run.
func TestRunUsage(t *testing.T) {
	var out, errOut strings.Builder
	if code := run(nil, &out, &errOut, time.Second); code != 1 || !strings.HasPrefix(errOut.String(), helpText+"\nOption ") || !strings.Contains(errOut.String(), "--election-type <[PREFERRED,UNCLEAN]: election type>") {
		t.Errorf("help: %d %q", code, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"--version"}, &out, &errOut, time.Second); code != 0 || out.String() != admintool.Version+"\n" {
		t.Errorf("version: %d %q", code, out.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"--bootstrap-server", "h:1", "--election-type", "preferred", "--path-to-json-file", "/nonexistent/e.json"}, &out, &errOut, time.Second); code != 1 ||
		errOut.String() != "Exception in thread \"main\" java.nio.file.NoSuchFileException: /nonexistent/e.json\n" {
		t.Errorf("missing file: %d %q", code, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"--bogus"}, &out, &errOut, time.Second); code != 1 || !strings.HasPrefix(errOut.String(), "bogus is not a recognized option\nOption ") {
		t.Errorf("bogus: %d %q", code, errOut.String())
	}
}
