package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/klassik/klassik/broker/common"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

// tp is a topic partition ("t-0").
type tp = common.TopicPartition

// anyLogDir is the log_dirs entry meaning "wherever the broker puts it".
const anyLogDir = "any"

// replicaDir is one non-"any" log_dirs entry (Kafka's TopicPartitionReplica
// plus the target directory).
type replicaDir struct {
	Part   tp
	Broker int32
	Dir    string
}

// assignment maps partitions to replica lists.
type assignment map[tp][]int32

func (a assignment) sortedKeys() []tp {
	keys := make([]tp, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	return admintool.SortPartitions(keys)
}

// topics lists the distinct topics, sorted.
func (a assignment) topics() []string {
	seen := map[string]bool{}
	var out []string
	for k := range a {
		if !seen[k.Topic] {
			seen[k.Topic] = true
			out = append(out, k.Topic)
		}
	}
	slices.Sort(out)
	return out
}

// adminOperation is Kafka's AdminOperationException, adminFailed its
// AdminCommandFailedException: both end in "Error: <message>".
type adminOperation struct{ msg string }

func (e *adminOperation) Error() string { return e.msg }

type adminFailed struct{ msg string }

func (e *adminFailed) Error() string { return e.msg }

// formatAssignmentJSON is formatAsReassignmentJson: partitions sorted by
// topic and partition, every log dir "any". The key order is Kafka's.
func formatAssignmentJSON(a assignment) string {
	var b strings.Builder
	b.WriteString(`{"version":1,"partitions":[`)
	for i, k := range a.sortedKeys() {
		if i > 0 {
			b.WriteByte(',')
		}
		topic, _ := json.Marshal(k.Topic)
		fmt.Fprintf(&b, `{"topic":%s,"partition":%d,"replicas":[`, topic, k.Partition)
		reps := a[k]
		for j, r := range reps {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(int(r)))
		}
		b.WriteString(`],"log_dirs":[`)
		for j := range reps {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"any"`)
		}
		b.WriteString("]}")
	}
	b.WriteString("]}")
	return b.String()
}

// parseVersion reads the optional "version" member (default 1) and refuses
// every other version, as Kafka does.
func parseVersion(doc map[string]json.RawMessage) error {
	raw, ok := doc["version"]
	if !ok {
		return nil
	}
	var v int
	if err := admintool.DecodeJSON(raw, &v); err != nil {
		return &adminOperation{fmt.Sprintf("Failed to read `version`: %s is not an int", raw)}
	}
	if v != 1 {
		return &adminOperation{fmt.Sprintf("Not supported version field value %d", v)}
	}
	return nil
}

// parseTopicsData reads --topics-to-move-json-file:
// {"topics":[{"topic":"foo"},...],"version":1}, keeping duplicates.
func parseTopicsData(data []byte) ([]string, error) {
	var doc map[string]json.RawMessage
	if err := admintool.DecodeJSON(data, &doc); err != nil || doc == nil {
		return nil, &adminOperation{"The input string is not a valid JSON"}
	}
	if err := parseVersion(doc); err != nil {
		return nil, err
	}
	raw, ok := doc["topics"]
	if !ok {
		return nil, nil
	}
	var entries []map[string]json.RawMessage
	if err := admintool.DecodeJSON(raw, &entries); err != nil {
		return nil, &adminOperation{fmt.Sprintf("Expected JSON array of topics, found %s", raw)}
	}
	var out []string
	for _, e := range entries {
		var t string
		if err := admintool.Field(e, "topic", &t); err != nil {
			return nil, &adminOperation{err.Error()}
		}
		out = append(out, t)
	}
	return out, nil
}

// reassignmentEntry is one partition of a reassignment file, in file order.
type reassignmentEntry struct {
	Part     tp
	Replicas []int32
}

// parseReassignmentData is parsePartitionReassignmentData: the partitions
// in file order (duplicates kept, so callers can refuse them) and the
// replicas whose log_dirs entry is not "any".
func parseReassignmentData(data []byte) ([]reassignmentEntry, []replicaDir, error) {
	var doc map[string]json.RawMessage
	if err := admintool.DecodeJSON(data, &doc); err != nil || doc == nil {
		msg := "The input string is not a valid JSON"
		if err != nil {
			msg = err.Error()
		}
		return nil, nil, &adminOperation{msg}
	}
	if err := parseVersion(doc); err != nil {
		return nil, nil, err
	}
	raw, ok := doc["partitions"]
	if !ok {
		return nil, nil, nil
	}
	var entries []map[string]json.RawMessage
	if err := admintool.DecodeJSON(raw, &entries); err != nil {
		return nil, nil, &adminOperation{fmt.Sprintf("Expected JSON array of partitions, found %s", raw)}
	}
	var parts []reassignmentEntry
	var dirs []replicaDir
	for _, e := range entries {
		var en reassignmentEntry
		if err := admintool.Field(e, "topic", &en.Part.Topic); err != nil {
			return nil, nil, &adminOperation{err.Error()}
		}
		if err := admintool.Field(e, "partition", &en.Part.Partition); err != nil {
			return nil, nil, &adminOperation{err.Error()}
		}
		if err := admintool.Field(e, "replicas", &en.Replicas); err != nil {
			return nil, nil, &adminOperation{err.Error()}
		}
		if en.Replicas == nil {
			en.Replicas = []int32{}
		}
		logDirs := make([]string, len(en.Replicas))
		for i := range logDirs {
			logDirs[i] = anyLogDir
		}
		if _, ok := e["log_dirs"]; ok {
			logDirs = nil
			if err := admintool.Field(e, "log_dirs", &logDirs); err != nil {
				return nil, nil, &adminOperation{err.Error()}
			}
		}
		if len(logDirs) != len(en.Replicas) {
			return nil, nil, &adminFailed{fmt.Sprintf("Size of replicas list %s is different from size of log dirs list %s for partition %s",
				scalaList(en.Replicas), scalaStrings(logDirs), en.Part)}
		}
		for i, d := range logDirs {
			if d != anyLogDir {
				dirs = append(dirs, replicaDir{Part: en.Part, Broker: en.Replicas[i], Dir: d})
			}
		}
		parts = append(parts, en)
	}
	return parts, dirs, nil
}

// parseExecuteAssignmentArgs validates an --execute (or ZooKeeper) request.
func parseExecuteAssignmentArgs(data []byte) (assignment, []replicaDir, error) {
	parts, dirs, err := parseReassignmentData(data)
	if err != nil {
		return nil, nil, err
	}
	if len(parts) == 0 {
		return nil, nil, &adminFailed{"Partition reassignment list cannot be empty"}
	}
	for _, p := range parts {
		if len(p.Replicas) == 0 {
			return nil, nil, &adminFailed{"Partition replica list cannot be empty"}
		}
	}
	var dupParts []string
	count := map[tp]int{}
	for _, p := range parts {
		if count[p.Part]++; count[p.Part] == 2 {
			dupParts = append(dupParts, p.Part.String())
		}
	}
	if len(dupParts) > 0 {
		return nil, nil, &adminFailed{"Partition reassignment contains duplicate topic partitions: " + strings.Join(dupParts, ",")}
	}
	var dupMsgs []string
	for _, p := range parts {
		if d := duplicates(p.Replicas); len(d) > 0 {
			dupMsgs = append(dupMsgs, fmt.Sprintf("%s contains multiple entries for %s", p.Part, joinInts(d, ",")))
		}
	}
	if len(dupMsgs) > 0 {
		return nil, nil, &adminFailed{"Partition replica lists may not contain duplicate entries: " + strings.Join(dupMsgs, ". ")}
	}
	out := assignment{}
	for _, p := range parts {
		out[p.Part] = p.Replicas
	}
	return out, dirs, nil
}

// duplicates lists values occurring more than once, in first-repeat order.
func duplicates[T comparable](xs []T) []T {
	count := map[T]int{}
	var out []T
	for _, x := range xs {
		if count[x]++; count[x] == 2 {
			out = append(out, x)
		}
	}
	return out
}

func joinInts(xs []int32, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(int(x))
	}
	return strings.Join(s, sep)
}

// scalaList renders a Seq as Scala's List.toString: "List(1, 2)".
func scalaList(xs []int32) string { return "List(" + joinInts(xs, ", ") + ")" }

func scalaStrings(xs []string) string { return "List(" + strings.Join(xs, ", ") + ")" }

// readAssignmentFile reads --reassignment-json-file and parses it with
// parse (parseReassignmentData or parseExecuteAssignmentArgs). A file that
// moves a replica to a log directory fails with logDirs, the backend's
// answer to such a move.
func readAssignmentFile[T any](path string, parse func([]byte) (T, []replicaDir, error), logDirs error) (T, error) {
	var zero T
	data, err := readFile(path)
	if err != nil {
		return zero, err
	}
	parsed, dirs, err := parse(data)
	if err != nil {
		return zero, err
	}
	if len(dirs) > 0 {
		return zero, logDirs
	}
	return parsed, nil
}
