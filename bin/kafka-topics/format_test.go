package main

import (
	"strings"
	"testing"

	"github.com/klassik/klassik/bin/internal/clitest"
)

func TestFormatTopicHeader(t *testing.T) {
	id, err := decodeUUID("lq6-OfjLSP-zvXUnUYrbsA")
	if err != nil {
		t.Fatal(err)
	}
	if got := formatTopicID(id); got != "lq6-OfjLSP-zvXUnUYrbsA" {
		t.Errorf("topic id round trip %q", got)
	}
	cases := []struct {
		t    topicInfo
		want string
	}{
		{topicInfo{Name: "t", TopicID: id, Partitions: []partitionInfo{{Replicas: []int32{1, 2, 3}}, {Replicas: []int32{2, 3, 1}}},
			Configs: []configEntry{{"cleanup.policy", "compact"}, {"segment.bytes", "1073741824"}}},
			"Topic: t\tTopicId: lq6-OfjLSP-zvXUnUYrbsA\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: cleanup.policy=compact,segment.bytes=1073741824"},
		{topicInfo{Name: "old", Partitions: []partitionInfo{{Replicas: []int32{1}}}},
			"Topic: old\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: "},
		{topicInfo{Name: "d", Partitions: []partitionInfo{{Replicas: []int32{1, 2}}}, MarkedForDeletion: true},
			"Topic: d\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: \tMarkedForDeletion: true"},
		{topicInfo{Name: "moving", Partitions: []partitionInfo{{Replicas: []int32{1, 2, 3, 4}, Adding: []int32{4}, Removing: []int32{1}, Reassign: true}}},
			"Topic: moving\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: "},
	}
	for _, tc := range cases {
		if got := formatTopicHeader(tc.t); got != tc.want {
			t.Errorf("formatTopicHeader\n got %q\nwant %q", got, tc.want)
		}
	}
}

func TestFormatPartition(t *testing.T) {
	cases := []struct {
		p      partitionInfo
		marked bool
		want   string
	}{
		{partitionInfo{Partition: 0, Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}}, false,
			"\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3"},
		{partitionInfo{Partition: 5, Leader: -1, Replicas: []int32{2}, ISR: nil}, false,
			"\tTopic: t\tPartition: 5\tLeader: none\tReplicas: 2\tIsr: "},
		{partitionInfo{Partition: 1, Leader: 2, Replicas: []int32{2, 3}, ISR: []int32{2}}, true,
			"\tTopic: t\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2\tMarkedForDeletion: true"},
		{partitionInfo{Partition: 0, Leader: 1, Replicas: []int32{1, 2, 4}, ISR: []int32{1, 2}, Reassign: true, Adding: []int32{4}, Removing: []int32{3}}, false,
			"\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,4\tIsr: 1,2\tAdding Replicas: 4\tRemoving Replicas: 3"},
	}
	for _, tc := range cases {
		if got := formatPartition("t", tc.p, tc.marked); got != tc.want {
			t.Errorf("formatPartition\n got %q\nwant %q", got, tc.want)
		}
	}
}

func TestWriteDescriptionFilters(t *testing.T) {
	topics := []topicInfo{
		{Name: "a", MinISR: 2, Partitions: []partitionInfo{
			{Partition: 1, Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1}},       // under-replicated, under min ISR
			{Partition: 0, Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}}, // healthy
			{Partition: 2, Leader: -1, Replicas: []int32{3}, ISR: []int32{3}},            // no leader
			{Partition: 3, Leader: 4, Replicas: []int32{4, 1}, ISR: []int32{4, 1}},       // leader not live, at min ISR
		}},
		{Name: "b", Configs: []configEntry{{"retention.ms", "1"}}, Partitions: []partitionInfo{
			{Partition: 0, Leader: 2, Replicas: []int32{2}, ISR: []int32{2}},
		}},
	}
	live := map[int32]bool{1: true, 2: true, 3: true}
	run := func(o topicOptions) []string {
		var b strings.Builder
		writeDescription(&b, topics, &o, live)
		return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	}
	partitionsOf := func(lines []string) string {
		var ps []string
		for _, l := range lines {
			if strings.HasPrefix(l, "\tTopic: ") {
				f := strings.Split(l, "\t")
				ps = append(ps, strings.TrimPrefix(f[1], "Topic: ")+"-"+strings.TrimPrefix(f[2], "Partition: "))
			} else if l != "" {
				ps = append(ps, "H:"+strings.TrimPrefix(strings.Split(l, "\t")[0], "Topic: "))
			}
		}
		return strings.Join(ps, " ")
	}
	cases := []struct {
		name string
		o    topicOptions
		want string
	}{
		{"all", topicOptions{}, "H:a a-0 a-1 a-2 a-3 H:b b-0"},
		{"under-replicated", topicOptions{underReplicated: true}, "a-1"},
		{"unavailable", topicOptions{unavailable: true}, "a-2 a-3"},
		{"under-min-isr", topicOptions{underMinIsr: true}, "a-1 a-2"},
		{"at-min-isr", topicOptions{atMinIsr: true}, "a-3"},
		{"topics-with-overrides", topicOptions{withOverrides: true}, "H:b"},
	}
	for _, tc := range cases {
		if got := partitionsOf(run(tc.o)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestTopicFilter(t *testing.T) {
	all := []string{"__consumer_offsets", "b", "a", "test.topic", "testXtopic", "orders-1"}
	cases := []struct {
		topic           string
		hasTopic, exclI bool
		want            string
	}{
		{"", false, false, "__consumer_offsets a b orders-1 test.topic testXtopic"},
		{"", false, true, "a b orders-1 test.topic testXtopic"},
		{`test\.topic`, true, false, "test.topic"},
		{`test.topic`, true, false, "test.topic testXtopic"},
		{"a,b", true, false, "a b"},
		{`"a, b"`, true, false, "a b"},
		{"orders-.*", true, false, "orders-1"},
		{"__.*", true, true, ""},
		{"orders", true, false, ""},
	}
	for _, tc := range cases {
		f, err := newTopicFilter(tc.topic, tc.hasTopic, tc.exclI)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(filterTopics(all, f), " "); got != tc.want {
			t.Errorf("filter %q excl=%v: got %q, want %q", tc.topic, tc.exclI, got, tc.want)
		}
	}
	if _, err := newTopicFilter("(", true, false); err == nil {
		t.Errorf("bad regex accepted")
	}
	o := &topicOptions{topic: "x", hasTopic: true}
	if err := ensureTopicExists(nil, o); err == nil || err.Error() != "Topic 'x' does not exist as expected" {
		t.Errorf("ensureTopicExists: %v", err)
	}
	o.ifExists = true
	if err := ensureTopicExists(nil, o); err != nil {
		t.Errorf("--if-exists: %v", err)
	}
}

// FuzzParseReplicaAssignment: the parser never panics, and an accepted
// assignment has consecutive partitions from 0, one replication factor and
// no duplicate broker within a partition.
func FuzzParseReplicaAssignment(f *testing.F) {
	seeds := []string{"0:1:2,1:2:0", "1", "0:0", "1,2:3", " 4 : 5 ", "", ",", "2147483648"}
	clitest.FuzzParser(f, seeds, parseReplicaAssignment, func(t *testing.T, s string, m map[int32][]int32) {
		rf := len(m[0])
		for p := int32(0); p < int32(len(m)); p++ {
			r, ok := m[p]
			if !ok || len(r) != rf {
				t.Fatalf("%q: partition %d missing or wrong size in %v", s, p, m)
			}
			seen := map[int32]bool{}
			for _, b := range r {
				if seen[b] {
					t.Fatalf("%q: duplicate broker in %v", s, r)
				}
				seen[b] = true
			}
		}
	})
}
