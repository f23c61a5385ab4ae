package main

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Golden output of ConsumerGroupCommand's tables (column widths grow with
// the longest value, never below Kafka's minimums).
func TestPrintTables(t *testing.T) {
	offsets := []assignmentRow{
		{group: "billing", topic: str("orders"), partition: i32(0), offset: i64(5), logEndOffset: i64(8), lag: lag(i64(5), i64(8)),
			consumerID: str("consumer-1-0d6b4c36-5b0e-4d0c-a5b0-1d9c0c0f8e7a"), host: str("/127.0.0.1"), clientID: str("consumer-1")},
		{group: "billing", topic: str("orders"), partition: i32(1), logEndOffset: i64(3), lag: lag(nil, i64(3)),
			consumerID: str(missing), host: str(missing), clientID: str(missing)},
	}
	members := []memberRow{
		{group: "g", consumerID: "c-1", host: "/10.0.0.1", clientID: "c", numPartitions: 3, assignment: map[string][]int32{"t": {2, 0}, "a": {1}}},
		{group: "g", consumerID: "c-2", host: "/10.0.0.2", clientID: "c", numPartitions: 0},
	}
	static := members[0]
	static.instanceID = "static-1"
	cases := []struct {
		name  string
		print func(w io.Writer)
		want  string
	}{
		{"offsets", func(w io.Writer) { printOffsets(w, offsets) }, "\n" +
			"GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID                                     HOST            CLIENT-ID\n" +
			"billing         orders          0          5               8               3               consumer-1-0d6b4c36-5b0e-4d0c-a5b0-1d9c0c0f8e7a /127.0.0.1      consumer-1\n" +
			"billing         orders          1          -               3               -               -                                               -               -\n"},
		{"members, verbose", func(w io.Writer) { printMembers(w, members, true) }, "\n" +
			"GROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT\n" +
			"g               c-1             /10.0.0.1       c               3               a(1), t(0,2)\n" +
			"g               c-2             /10.0.0.2       c               0               -\n"},
		{"members with an instance id", func(w io.Writer) { printMembers(w, []memberRow{static}, false) }, "\n" +
			"GROUP           CONSUMER-ID     GROUP-INSTANCE-ID HOST            CLIENT-ID       #PARTITIONS     \n" +
			"g               c-1             static-1          /10.0.0.1       c               3               \n"},
		{"state", func(w io.Writer) {
			printState(w, stateRow{group: "g", coordinator: "127.0.0.1:9092 (1)", strategy: "range", state: "Stable", members: 2})
		}, "\n" +
			"GROUP                     COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           #MEMBERS\n" +
			"g                         127.0.0.1:9092 (1)        range                Stable          2\n"},
		{"group states", func(w io.Writer) {
			printGroupStates(w, [][2]string{{"a", "Stable"}, {"a-much-longer-group-name", "Empty"}})
		},
			"GROUP                    STATE\na                        Stable\na-much-longer-group-name Empty\n"},
		{"offsets to reset", func(w io.Writer) { printOffsetsToReset(w, []resetRow{{"g", "orders", 0, 12}}) },
			"\nGROUP                          TOPIC                          PARTITION  NEW-OFFSET     \n" +
				"g                              orders                         0          12             \n"},
		{"empty reset plan", func(w io.Writer) { printOffsetsToReset(w, nil) }, ""},
		{"zookeeper assignment", func(w io.Writer) {
			printZKAssignment(w, []assignmentRow{
				{topic: str("old"), partition: i32(0), offset: i64(2), logEndOffset: i64(2), lag: i64(0), consumerID: str("g_h-1-abcd1234")},
				{consumerID: str("g_h-2-ffff0000")},
			})
		}, "\n" +
			"TOPIC                          PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG        CONSUMER-ID                                       \n" +
			"old                            0          2               2               0          g_h-1-abcd1234                                    \n" +
			"-                              -          -               -               -          g_h-2-ffff0000                                    \n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			c.print(&b)
			checkOutput(t, b.String(), c.want)
		})
	}
}

func TestGroupStatus(t *testing.T) {
	cases := []struct {
		state        string
		rows         int
		print        bool
		stdout, serr string
	}{
		{"Stable", 2, true, "", ""},
		{"Stable", 0, false, "", ""},
		{"Empty", 1, true, "", "\nConsumer group 'g' has no active members.\n"},
		{"PreparingRebalance", 1, true, "", "\nWarning: Consumer group 'g' is rebalancing.\n"},
		{"Dead", 0, false, "\nError: Consumer group 'g' does not exist.\n", ""},
		{"Stable", -1, false, "\nError: The consumer group 'g' does not exist.\n", ""},
	}
	for _, c := range cases {
		var o, e strings.Builder
		if got := groupStatus(&o, &e, "g", c.state, c.rows); got != c.print || o.String() != c.stdout || e.String() != c.serr {
			t.Errorf("%s/%d: %v %q %q", c.state, c.rows, got, o.String(), e.String())
		}
	}
}

func TestJavaError(t *testing.T) {
	for err, want := range map[error]string{
		kerr.NonEmptyGroup:   "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.",
		kerr.GroupIDNotFound: "org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.",
		fmt.Errorf("request ListGroups has 1 separate shard errors, first: unable to dial: refused"): "org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node assignment.",
	} {
		if got := javaError(err); got != want {
			t.Errorf("%v: %q, want %q", err, got, want)
		}
	}
}

// checkOutput fails the test unless the tool printed exactly want.
func checkOutput(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}
