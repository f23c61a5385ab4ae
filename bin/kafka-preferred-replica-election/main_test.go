package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

func TestParse(t *testing.T) {
	clitest.CheckParse(t, parse, []clitest.ParseCase{
		{"no connection", []string{"--path-to-json-file", "x"}, "Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided", true},
		{"zookeeper first", []string{"--zookeeper", "h:1", "--bootstrap-server", "h:2"}, "Option(s) [bootstrap-server] are unavailable given other options on the command line", true},
		{"bootstrap first", []string{"--bootstrap-server", "h:2", "--zookeeper", "h:1"}, "Option(s) [zookeeper] are unavailable given other options on the command line", true},
		{"admin.config with zookeeper", []string{"--zookeeper", "h:1", "--admin.config", "c"}, "Option(s) [admin.config] are unavailable given other options on the command line", true},
		{"duplicates in file", []string{"--zookeeper", "h:1", "--path-to-json-file", clitest.WriteFile(t, `{"partitions":[{"topic":"a","partition":1},{"topic":"a","partition":1}]}`)}, "Preferred replica election data contains duplicate partitions: a-1", false},
		{"no partitions in file", []string{"--zookeeper", "h:1", "--path-to-json-file", clitest.WriteFile(t, `{"version":1}`)}, "Preferred replica election data is empty", false},
		{"file not JSON", []string{"--zookeeper", "h:1", "--path-to-json-file", clitest.WriteFile(t, `nope`)}, "Preferred replica election data is empty", false},
		{"zookeeper with chroot", []string{"--zookeeper", "h:1/chroot"}, "", false},
		{"bootstrap with admin.config", []string{"--bootstrap-server", "h:1", "--admin.config", "c"}, "", false},
	})
	req, _, err := parse([]string{"--zookeeper", "h:1", "--path-to-json-file", clitest.WriteFile(t, `{"partitions":[{"topic":"b","partition":0},{"topic":"a","partition":1}]}`)})
	if err != nil || req.zookeeper != "h:1" || admintool.JoinPartitions(req.partitions, ",") != "a-1,b-0" {
		t.Fatalf("%+v %v", req, err)
	}
	if req, _, _ := parse([]string{"--zookeeper", "h:1"}); req.partitions != nil {
		t.Fatalf("no file must mean all partitions: %+v", req)
	}
}

func TestRunUsage(t *testing.T) {
	var out, errOut strings.Builder
	if code := run(nil, &out, &errOut, time.Second); code != 1 || out.String() != deprecation+"\n" || !strings.HasPrefix(errOut.String(), helpText+"\n") {
		t.Errorf("help: %d %q %q", code, out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"--path-to-json-file", "x"}, &out, &errOut, time.Second); code != 1 || !strings.HasPrefix(errOut.String(), "Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided\nOption ") {
		t.Errorf("no connection: %d %q", code, errOut.String())
	}
}

func TestElectViaAdminOutput(t *testing.T) {
	tp := func(topic string, p int32) common.TopicPartition {
		return common.TopicPartition{Topic: topic, Partition: p}
	}
	var out, errOut strings.Builder
	err := electViaAdmin(context.Background(), &out, []common.TopicPartition{tp("a", 0)}, func(_ context.Context, tps []common.TopicPartition) (admintool.ElectionResults, error) {
		if len(tps) != 1 {
			t.Errorf("partitions %v", tps)
		}
		return admintool.ElectionResults{
			Succeeded: []common.TopicPartition{tp("a", 0)},
			Noop:      []common.TopicPartition{tp("a", 1), tp("b", 0)},
			Failed:    map[common.TopicPartition]error{tp("c", 0): admintool.NewKafkaError(kerr.PreferredLeaderNotAvailable.Code, nil)},
		}, nil
	})
	want := "Successfully completed preferred leader election for partitions a-0\n" +
		"Preferred replica already elected for partitions a-1, b-0\n" +
		"Error completing preferred leader election for partition: c-0: org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: The preferred leader was not available.\n"
	if out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
	if fail(err, &errOut); errOut.String() != "Exception in thread \"main\" kafka.common.AdminCommandFailedException: 1 preferred replica(s) could not be elected\n" {
		t.Errorf("stderr %q", errOut.String())
	}
	out.Reset()
	errOut.Reset()
	err = electViaAdmin(context.Background(), &out, nil, func(context.Context, []common.TopicPartition) (admintool.ElectionResults, error) {
		return admintool.ElectionResults{}, admintool.NewKafkaError(kerr.RequestTimedOut.Code, nil)
	})
	if fail(err, &errOut); out.String() != "Timeout waiting for election results\n" || errOut.String() != "Exception in thread \"main\" kafka.common.AdminCommandFailedException: Timeout waiting for election results\n"+
		"Caused by: org.apache.kafka.common.errors.TimeoutException: The request timed out.\n" {
		t.Errorf("timeout: %q %q", out.String(), errOut.String())
	}
}
