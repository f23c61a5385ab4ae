package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestBootstrapModeKfake drives the admin-API actions against franz-go's
// in-process fake cluster (127.0.0.1 only), which serves every API the tool
// uses and completes reassignments at once. It pins the exact output of
// --execute (with a throttle), --verify, --list and --cancel; Klassik's own
// brokers are exercised by TestBootstrapMode.
func TestBootstrapModeKfake(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	bs := strings.Join(c.ListenAddrs(), ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // bounds a failure only
	defer cancel()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, 2, nil, "fake"); err != nil {
		t.Fatal(err)
	}
	md, err := adm.Metadata(ctx, "fake")
	if err != nil {
		t.Fatal(err)
	}
	current := assignment{}
	for p, pd := range md.Topics["fake"].Partitions {
		current[tp{Topic: "fake", Partition: p}] = pd.Replicas
	}
	ids := md.Brokers.NodeIDs()
	runTool := func(args ...string) (string, string, int) {
		var out, errOut strings.Builder
		code := (&tool{out: &out, fixedStartIndex: 0}).run(append([]string{"--bootstrap-server", bs}, args...), &errOut)
		return out.String(), errOut.String(), code
	}

	// A target that differs from the (random) current placement: the
	// broker without a replica first.
	cur0 := current[tp{Topic: "fake"}]
	var spare int32
	for _, id := range ids {
		if !slices.Contains(cur0, id) {
			spare = id
		}
	}
	target := []int32{spare, cur0[0]}
	plan := clitest.WriteFile(t, `{"version":1,"partitions":[{"topic":"fake","partition":0,"replicas":[`+joinInts(target, ",")+`]}]}`)
	out, errOut, code := runTool("--execute", "--reassignment-json-file", plan, "--throttle", "1000000")
	rollback := formatAssignmentJSON(assignment{{Topic: "fake"}: current[tp{Topic: "fake"}]})
	want := "Current partition replica assignment\n\n" + rollback + "\n\n" +
		"Save this to use as the --reassignment-json-file option during rollback\n" +
		youMustRunVerifyPeriodically + "\n" +
		"The inter-broker throttle limit was set to 1000000 B/s\n" +
		"Successfully started partition reassignment for fake-0\n"
	if code != 0 || out != want {
		t.Fatalf("execute: %d\n%s\nwant\n%s\nstderr %q", code, out, want, errOut)
	}
	if out, _, code := runTool("--list"); code != 0 || out != "No partition reassignments found.\n" {
		t.Errorf("list: %d %q", code, out)
	}
	out, errOut, code = runTool("--verify", "--reassignment-json-file", plan)
	wantVerify := "Status of partition reassignment:\n" +
		"There is no active reassignment of partition fake-0, but replica set is " + joinInts(current[tp{Topic: "fake"}], ",") + " rather than " + joinInts(target, ",") + ".\n\n" +
		"Clearing broker-level throttles on brokers " + joinInts(ids, ",") + "\n" +
		"Clearing topic-level throttles on topic fake\n"
	if code != 0 || out != wantVerify {
		t.Errorf("verify: %d\n%s\nwant\n%s\nstderr %q", code, out, wantVerify, errOut)
	}
	out, _, code = runTool("--cancel", "--reassignment-json-file", plan, "--preserve-throttles")
	if code != 0 || out != "None of the specified partition reassignments are active.\nNone of the specified partition moves are active.\n" {
		t.Errorf("cancel: %d %q", code, out)
	}
	out, _, code = runTool("--execute", "--reassignment-json-file", clitest.WriteFile(t, `{"partitions":[{"topic":"nope","partition":0,"replicas":[`+joinInts(ids[:1], ",")+`]}]}`))
	if code != 1 || out != "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.\n" {
		t.Errorf("unknown topic: %d %q", code, out)
	}
	out, _, code = runTool("--execute", "--reassignment-json-file", clitest.WriteFile(t, `{"partitions":[{"topic":"fake","partition":1,"replicas":[1],"log_dirs":["/data"]}]}`))
	if code != 0 || !strings.HasSuffix(out, "Successfully started partition reassignment for fake-1\nSuccessfully started log directory move for: fake-1-1\n") {
		t.Errorf("log dirs: %d %q", code, out)
	}
}
