package main

import (
	"strings"
	"testing"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/controller"
)

func TestFormatAssignmentJSON(t *testing.T) {
	a := assignment{
		{Topic: "orders", Partition: 1}:  {2, 3},
		{Topic: "audit", Partition: 0}:   {1},
		{Topic: "orders", Partition: 0}:  {1, 2},
		{Topic: "orders", Partition: 10}: {3, 1},
	}
	want := `{"version":1,"partitions":[{"topic":"audit","partition":0,"replicas":[1],"log_dirs":["any"]},` +
		`{"topic":"orders","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},` +
		`{"topic":"orders","partition":1,"replicas":[2,3],"log_dirs":["any","any"]},` +
		`{"topic":"orders","partition":10,"replicas":[3,1],"log_dirs":["any","any"]}]}`
	if got := formatAssignmentJSON(a); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := formatAssignmentJSON(assignment{}); got != `{"version":1,"partitions":[]}` {
		t.Errorf("empty: %s", got)
	}
	// The output is valid input again.
	parts, dirs, err := parseReassignmentData([]byte(want))
	if err != nil || len(parts) != 4 || len(dirs) != 0 || parts[3].Part.Partition != 10 {
		t.Errorf("round trip: %+v %+v %v", parts, dirs, err)
	}
}

func TestParseReassignmentData(t *testing.T) {
	errs := []struct{ in, want string }{
		{`{"version":2,"partitions":[]}`, "Not supported version field value 2"},
		{`{"partitions":[{"topic":"t","replicas":[1]}]}`, "No such field exists: `partition`"},
		{`{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}`, "Size of replicas list List(1, 2) is different from size of log dirs list List(any) for partition t-0"},
	}
	for _, c := range errs {
		if _, _, err := parseReassignmentData([]byte(c.in)); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
	parts, dirs, err := parseReassignmentData([]byte(`{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","/data/b"]}]}`))
	if err != nil || len(parts) != 1 || len(dirs) != 1 || dirs[0] != (replicaDir{Part: tp{Topic: "t"}, Broker: 2, Dir: "/data/b"}) {
		t.Errorf("log dirs: %+v %+v %v", parts, dirs, err)
	}
	if _, _, err := parseReassignmentData([]byte(`{"version":1}`)); err != nil {
		t.Errorf("no partitions is not a parse error: %v", err)
	}

	execErrs := []struct{ in, want string }{
		{`{"version":1}`, "Partition reassignment list cannot be empty"},
		{`{"partitions":[{"topic":"t","partition":0,"replicas":[]}]}`, "Partition replica list cannot be empty"},
		{`{"partitions":[{"topic":"t","partition":0,"replicas":[1]},{"topic":"t","partition":0,"replicas":[2]}]}`, "Partition reassignment contains duplicate topic partitions: t-0"},
		{`{"partitions":[{"topic":"t","partition":0,"replicas":[1,1]},{"topic":"t","partition":1,"replicas":[2,3,2,3]}]}`, "Partition replica lists may not contain duplicate entries: t-0 contains multiple entries for 1. t-1 contains multiple entries for 2,3"},
	}
	for _, c := range execErrs {
		if _, _, err := parseExecuteAssignmentArgs([]byte(c.in)); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
}

func TestParseGenerateArgs(t *testing.T) {
	ids, topics, err := parseGenerateAssignmentArgs([]byte(`{"topics":[{"topic":"a"},{"topic":"b"}],"version":1}`), "3,1,2")
	if err != nil || joinInts(ids, ",") != "3,1,2" || strings.Join(topics, ",") != "a,b" {
		t.Fatalf("%v %v %v", ids, topics, err)
	}
	for _, c := range []struct{ json, brokers, want string }{
		{`{"topics":[]}`, "1,2,1", "Broker list contains duplicate entries: 1"},
		{`{"topics":[]}`, "1,x", `For input string: "x"`},
		{`{"topics":[{"topic":"a"},{"topic":"a"}]}`, "1", "List of topics to reassign contains duplicate entries: a"},
		{`nope`, "1", "The input string is not a valid JSON"},
		{`{"version":3,"topics":[]}`, "1", "Not supported version field value 3"},
	} {
		if _, _, err := parseGenerateAssignmentArgs([]byte(c.json), c.brokers); err == nil || err.Error() != c.want {
			t.Errorf("%s %s: %v, want %q", c.json, c.brokers, err, c.want)
		}
	}
}

// fakeSource is an assignmentSource over fixed data.
type fakeSource struct {
	current assignment
	nodes   []controller.BrokerMetadata
}

func (f fakeSource) replicaAssignmentForTopics(topics []string) (assignment, error) {
	out := assignment{}
	for k, v := range f.current {
		for _, t := range topics {
			if k.Topic == t {
				out[k] = v
			}
		}
	}
	return out, nil
}

func (f fakeSource) allBrokers() ([]controller.BrokerMetadata, error) { return f.nodes, nil }

// TestGenerate checks --generate's output with a fixed start index: the
// proposal is controller.AssignReplicasToBrokers' placement per topic,
// keeping partition counts and replication factors.
func TestGenerate(t *testing.T) {
	rack := func(s string) *string { return &s }
	src := fakeSource{
		current: assignment{
			{Topic: "orders", Partition: 0}: {1, 2},
			{Topic: "orders", Partition: 1}: {2, 1},
			{Topic: "orders", Partition: 2}: {1, 2},
			{Topic: "other", Partition: 0}:  {1},
		},
		nodes: []controller.BrokerMetadata{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}},
	}
	topicsFile := clitest.WriteFile(t, `{"topics":[{"topic":"orders"},{"topic":"missing"}],"version":1}`)
	var out strings.Builder
	tl := &tool{out: &out, fixedStartIndex: 0}
	err := tl.generate(src, &options{topicsFile: topicsFile, brokerList: "2,3,4,9"})
	want := "Current partition replica assignment\n" +
		`{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},{"topic":"orders","partition":1,"replicas":[2,1],"log_dirs":["any","any"]},{"topic":"orders","partition":2,"replicas":[1,2],"log_dirs":["any","any"]}]}` + "\n\n" +
		"Proposed partition reassignment configuration\n" +
		`{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[2,3],"log_dirs":["any","any"]},{"topic":"orders","partition":1,"replicas":[3,4],"log_dirs":["any","any"]},{"topic":"orders","partition":2,"replicas":[4,2],"log_dirs":["any","any"]}]}` + "\n"
	if err != nil || out.String() != want {
		t.Fatalf("generate: %v\n%s\nwant\n%s", err, out.String(), want)
	}

	// Too few brokers for the replication factor.
	out.Reset()
	err = tl.generate(src, &options{topicsFile: topicsFile, brokerList: "4"})
	if err == nil || err.Error() != "Replication factor: 2 larger than available brokers: 1." {
		t.Errorf("rf too large: %v", err)
	}
	// Some brokers with a rack, some without.
	src.nodes[1].Rack = rack("a")
	err = tl.generate(src, &options{topicsFile: topicsFile, brokerList: "1,2,3"})
	if err == nil || err.Error() != "Not all brokers have rack information. Add --disable-rack-aware in command line to make replica assignment without rack information." {
		t.Errorf("mixed racks: %v", err)
	}
	out.Reset()
	if err := tl.generate(src, &options{topicsFile: topicsFile, brokerList: "1,2,3", disableRackAware: true}); err != nil || !strings.Contains(out.String(), "Proposed partition reassignment configuration\n") {
		t.Errorf("--disable-rack-aware: %v %q", err, out.String())
	}
}

func TestStatesAndMessages(t *testing.T) {
	states := map[tp]partitionState{
		{Topic: "t", Partition: 2}: {current: []int32{1, 2, 3}, target: []int32{3}, done: false},
		{Topic: "t", Partition: 0}: {current: []int32{2, 3}, target: []int32{2, 3}, done: true},
		{Topic: "t", Partition: 1}: {current: []int32{1, 2}, target: []int32{2, 3}, done: true},
	}
	want := "Status of partition reassignment:\n" +
		"Reassignment of partition t-0 is complete.\n" +
		"There is no active reassignment of partition t-1, but replica set is 1,2 rather than 2,3.\n" +
		"Reassignment of partition t-2 is still in progress."
	if got := statesToString(states); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := startedMessage(assignment{{Topic: "b"}: {1}, {Topic: "a", Partition: 3}: {1}}); got != "Successfully started partition reassignments for a-3,b-0" {
		t.Errorf("started: %q", got)
	}
	if got := startedMessage(assignment{{Topic: "b"}: {1}}); got != "Successfully started partition reassignment for b-0" {
		t.Errorf("started one: %q", got)
	}
	list := reassignmentsToString(map[tp]ongoing{
		{Topic: "t", Partition: 1}: {replicas: []int32{3, 4, 1, 2}, adding: []int32{3, 4}, removing: []int32{1, 2}},
		{Topic: "t", Partition: 0}: {replicas: []int32{1, 2}},
	})
	if list != "Current partition reassignments:\nt-0: replicas: 1,2.\nt-1: replicas: 3,4,1,2. adding: 3,4. removing: 1,2." {
		t.Errorf("list: %q", list)
	}
	if reassignmentsToString(nil) != "No partition reassignments found." {
		t.Error("empty list")
	}
	if got := clearingMessage("broker", "broker", []string{"1"}); got != "Clearing broker-level throttles on broker 1" {
		t.Errorf("%q", got)
	}
	if got := clearingMessage("topic", "topic", []string{"a", "b"}); got != "Clearing topic-level throttles on topics a,b" {
		t.Errorf("%q", got)
	}
}

// TestMoveMap checks the throttle lists: leaders throttle the replicas
// moved from (partition:source), followers those moved to.
func TestMoveMap(t *testing.T) {
	current := assignment{{Topic: "t", Partition: 0}: {1, 2}, {Topic: "t", Partition: 1}: {2, 3}, {Topic: "u", Partition: 0}: {1}}
	proposed := assignment{{Topic: "t", Partition: 0}: {3, 2}, {Topic: "t", Partition: 1}: {2, 3}}
	ongoingMoves := map[tp]ongoing{{Topic: "u", Partition: 0}: {replicas: []int32{4, 1}, adding: []int32{4}, removing: []int32{1}}}
	mm, err := proposedMoveMap(ongoingMoves, proposed, current)
	if err != nil {
		t.Fatal(err)
	}
	if got := mm.leaderThrottles(); got["t"] != "0:1,0:2,1:2,1:3" || got["u"] != "0:1" {
		t.Errorf("leader throttles %v", got)
	}
	if got := mm.followerThrottles(); got["t"] != "0:3" || got["u"] != "0:4" {
		t.Errorf("follower throttles %v", got)
	}
	if got := joinInts(mm.reassigningBrokers(), ","); got != "1,2,3,4" {
		t.Errorf("brokers %s", got)
	}
	if _, err := proposedMoveMap(nil, assignment{{Topic: "x"}: {1}}, current); err == nil || err.Error() != "Trying to reassign a topic partition x-0 with 0 replicas" {
		t.Errorf("unknown partition: %v", err)
	}
}

// FuzzParseReassignmentData: never panics; accepted documents have one
// log-dir entry per non-"any" replica and every entry's replicas decoded.
func FuzzParseReassignmentData(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}`,
		`{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["/a","any"]}]}`,
		`{"version":2}`,
		`{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}`,
		`{"partitions":[{"topic":"t","partition":0,"replicas":null}]}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parts, dirs, err := parseReassignmentData(data)
		if err != nil {
			return
		}
		total := 0
		for _, p := range parts {
			total += len(p.Replicas)
			if p.Replicas == nil {
				t.Fatal("nil replicas")
			}
		}
		if len(dirs) > total {
			t.Fatalf("%d log dirs for %d replicas", len(dirs), total)
		}
		if a, _, err := parseExecuteAssignmentArgs(data); err == nil {
			if _, _, err := parseReassignmentData([]byte(formatAssignmentJSON(a))); err != nil {
				t.Fatalf("formatted output does not parse: %v", err)
			}
		}
	})
}

// FuzzParseTopicsData: never panics; accepted documents list strings.
func FuzzParseTopicsData(f *testing.F) {
	seeds := []string{`{"topics":[{"topic":"a"}],"version":1}`, `{"topics":[{}]}`, `{"version":"x"}`, `{}`}
	clitest.FuzzParser(f, seeds, parseTopicsData, func(t *testing.T, data []byte, topics []string) {
		if len(topics) > len(data) {
			t.Fatalf("%d topics from %d bytes", len(topics), len(data))
		}
	})
}
