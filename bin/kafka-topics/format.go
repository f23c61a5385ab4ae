package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/klassik/klassik/config"
)

// partitionInfo is one partition as printed by --describe.
type partitionInfo struct {
	Partition int32
	Leader    int32 // -1: no leader
	Replicas  []int32
	ISR       []int32
	Adding    []int32 // reassignment in progress (bootstrap mode only)
	Removing  []int32
	Reassign  bool
}

// configEntry is one topic config shown in the Configs: column.
type configEntry struct{ Name, Value string }

// topicInfo is one topic as printed by --describe.
type topicInfo struct {
	Name              string
	TopicID           [16]byte // zero: unknown (printed without TopicId)
	Partitions        []partitionInfo
	Configs           []configEntry // only non-default values, in print order
	MarkedForDeletion bool
	MinISR            int // min.insync.replicas; 0 when unknown (ZooKeeper mode)
}

// formatTopicID renders a topic id as Kafka's Uuid.toString: URL-safe
// base64 without padding.
func formatTopicID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// replicationFactor is Kafka's getReplicationFactor: the replica count of
// a partition, not counting replicas being added by a reassignment.
func replicationFactor(p partitionInfo) int {
	if p.Reassign && (len(p.Adding) > 0 || len(p.Removing) > 0) {
		n := 0
		for _, r := range p.Replicas {
			if !slices.Contains(p.Adding, r) {
				n++
			}
		}
		return n
	}
	return len(p.Replicas)
}

// formatTopicHeader renders the first line of a topic's description:
// "Topic: t\tTopicId: id\tPartitionCount: n\tReplicationFactor: r\tConfigs: k=v,...".
func formatTopicHeader(t topicInfo) string {
	var b strings.Builder
	b.WriteString("Topic: " + t.Name)
	if t.TopicID != ([16]byte{}) {
		b.WriteString("\tTopicId: " + formatTopicID(t.TopicID))
	}
	rf := 0
	if len(t.Partitions) > 0 {
		rf = replicationFactor(t.Partitions[0])
	}
	fmt.Fprintf(&b, "\tPartitionCount: %d\tReplicationFactor: %d\tConfigs: ", len(t.Partitions), rf)
	for i, c := range t.Configs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(c.Name + "=" + c.Value)
	}
	if t.MarkedForDeletion {
		b.WriteString("\tMarkedForDeletion: true")
	}
	return b.String()
}

// formatPartition renders one partition line:
// "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3".
func formatPartition(topic string, p partitionInfo, markedForDeletion bool) string {
	leader := "none"
	if p.Leader >= 0 {
		leader = fmt.Sprint(p.Leader)
	}
	s := fmt.Sprintf("\tTopic: %s\tPartition: %d\tLeader: %s\tReplicas: %s\tIsr: %s",
		topic, p.Partition, leader, joinInt32(p.Replicas), joinInt32(p.ISR))
	if p.Reassign {
		s += "\tAdding Replicas: " + joinInt32(p.Adding) + "\tRemoving Replicas: " + joinInt32(p.Removing)
	}
	if markedForDeletion {
		s += "\tMarkedForDeletion: true"
	}
	return s
}

// partition filters (Kafka's PartitionDescription predicates).
func isUnderReplicated(p partitionInfo) bool { return replicationFactor(p)-len(p.ISR) > 0 }

func isUnderMinIsr(p partitionInfo, minISR int) bool {
	return p.Leader < 0 || (minISR > 0 && len(p.ISR) < minISR)
}

func isAtMinIsr(p partitionInfo, minISR int) bool { return minISR > 0 && len(p.ISR) == minISR }

func isUnavailable(p partitionInfo, live map[int32]bool) bool {
	return p.Leader < 0 || !live[p.Leader]
}

// writeDescription prints topics as kafka-topics.sh --describe does, with
// the report filters of o applied. live is the set of live broker ids.
func writeDescription(w io.Writer, topics []topicInfo, o *topicOptions, live map[int32]bool) {
	describeConfigs := !o.reportFilter()
	describePartitions := !o.withOverrides
	for _, t := range topics {
		if describeConfigs && (!o.withOverrides || len(t.Configs) > 0) {
			fmt.Fprintln(w, formatTopicHeader(t))
		}
		if !describePartitions {
			continue
		}
		parts := slices.Clone(t.Partitions)
		slices.SortFunc(parts, func(a, b partitionInfo) int { return int(a.Partition) - int(b.Partition) })
		for _, p := range parts {
			show := describeConfigs ||
				(o.underReplicated && isUnderReplicated(p)) ||
				(o.unavailable && isUnavailable(p, live)) ||
				(o.underMinIsr && isUnderMinIsr(p, t.MinISR)) ||
				(o.atMinIsr && isAtMinIsr(p, t.MinISR))
			if show {
				fmt.Fprintln(w, formatPartition(t.Name, p, t.MarkedForDeletion))
			}
		}
	}
}

// topicFilter selects topics as Kafka's IncludeList: --topic is a regular
// expression (commas separate alternatives) that must match the whole name;
// internal topics are dropped when excludeInternal is set.
type topicFilter struct {
	re              *regexp.Regexp // nil: every topic
	excludeInternal bool
}

func newTopicFilter(topic string, hasTopic, excludeInternal bool) (topicFilter, error) {
	f := topicFilter{excludeInternal: excludeInternal}
	if !hasTopic {
		return f, nil
	}
	// Kafka's IncludeList: commas become alternatives, blanks are dropped and
	// surrounding quotes (left by some shells' quoting) are removed.
	expr := strings.TrimSpace(topic)
	expr = strings.ReplaceAll(expr, ",", "|")
	expr = strings.ReplaceAll(expr, " ", "")
	expr = strings.Trim(expr, `"'`)
	re, err := regexp.Compile("^(?:" + expr + ")$")
	if err != nil {
		return f, fmt.Errorf("%s is an invalid regex: %v", topic, err)
	}
	f.re = re
	return f, nil
}

func (f topicFilter) allowed(name string) bool {
	if f.excludeInternal && config.IsInternalTopic(name) {
		return false
	}
	return f.re == nil || f.re.MatchString(name)
}

// filterTopics returns the sorted names that pass f.
func filterTopics(all []string, f topicFilter) []string {
	var out []string
	for _, t := range all {
		if f.allowed(t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// ensureTopicExists is Kafka's check that a named topic matched something.
func ensureTopicExists(found []string, o *topicOptions) error {
	if o.hasTopic && !o.ifExists && len(found) == 0 {
		return fmt.Errorf("Topic '%s' does not exist as expected", o.topic)
	}
	return nil
}

const collisionWarning = "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both."

const partitionIncreaseWarning = "WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the messages will be affected"

// decodeUUID parses Kafka's base64url topic id.
func decodeUUID(s string) ([16]byte, error) {
	var id [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return id, err
	}
	if len(b) != 16 {
		return id, fmt.Errorf("topic id %q is not 16 bytes", s)
	}
	copy(id[:], b)
	return id, nil
}
