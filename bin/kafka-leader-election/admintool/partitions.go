package admintool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/klassik/klassik/broker/common"
)

// SortPartitions sorts in place by topic, then partition, and returns tps.
func SortPartitions(tps []common.TopicPartition) []common.TopicPartition {
	slices.SortFunc(tps, common.TopicPartition.Compare)
	return tps
}

// JoinPartitions renders sorted partitions joined by sep ("t-0,t-1").
func JoinPartitions(tps []common.TopicPartition, sep string) string {
	s := make([]string, len(tps))
	for i, tp := range SortPartitions(slices.Clone(tps)) {
		s[i] = tp.String()
	}
	return strings.Join(s, sep)
}

// ErrNotJSON means the input is not a JSON document (Kafka's Json.parseFull
// returning None).
var ErrNotJSON = errors.New("admintool: not a JSON document")

// ErrNoPartitions means the document has no "partitions" field.
var ErrNoPartitions = errors.New("admintool: no partitions field")

// PartitionList is a parsed {"partitions":[{"topic":..,"partition":..}]}
// document, the input of the election tools.
type PartitionList struct {
	Partitions []common.TopicPartition // in file order, duplicates kept
	Duplicates []common.TopicPartition // partitions listed more than once, sorted
}

// ParsePartitionList reads the election tools' JSON file. Unknown fields are
// ignored, as Kafka's parser does; a missing or mistyped topic or partition
// is an error naming the entry.
func ParsePartitionList(data []byte) (PartitionList, error) {
	var doc map[string]json.RawMessage
	if err := decodeJSON(data, &doc); err != nil || doc == nil {
		return PartitionList{}, ErrNotJSON
	}
	raw, ok := doc["partitions"]
	if !ok {
		return PartitionList{}, ErrNoPartitions
	}
	var entries []map[string]json.RawMessage
	if err := decodeJSON(raw, &entries); err != nil {
		return PartitionList{}, fmt.Errorf("Expected JSON array of partitions, found %s", raw)
	}
	var out PartitionList
	seen := map[common.TopicPartition]int{}
	for i, e := range entries {
		var tp common.TopicPartition
		if err := field(e, "topic", &tp.Topic); err != nil {
			return PartitionList{}, fmt.Errorf("partition entry %d: %w", i, err)
		}
		if err := field(e, "partition", &tp.Partition); err != nil {
			return PartitionList{}, fmt.Errorf("partition entry %d: %w", i, err)
		}
		out.Partitions = append(out.Partitions, tp)
		seen[tp]++
		if seen[tp] == 2 {
			out.Duplicates = append(out.Duplicates, tp)
		}
	}
	SortPartitions(out.Duplicates)
	return out, nil
}

// field decodes one required member of a JSON object.
func field(obj map[string]json.RawMessage, name string, into any) error {
	raw, ok := obj[name]
	if !ok || string(raw) == "null" {
		return fmt.Errorf("No such field exists: `%s`", name)
	}
	if err := decodeJSON(raw, into); err != nil {
		return fmt.Errorf("Failed to read `%s`: %s is not a %s", name, raw, jsonKind(into))
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case *string:
		return "string"
	case *int32, *int64, *int:
		return "int"
	case *[]int32:
		return "array of ints"
	case *[]string:
		return "array of strings"
	}
	return "value"
}

// decodeJSON decodes exactly one JSON value (trailing garbage is an error).
func decodeJSON(data []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(into); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

// Field is the exported form of field for the tools' own document types.
func Field(obj map[string]json.RawMessage, name string, into any) error {
	return field(obj, name, into)
}

// DecodeJSON is the exported form of decodeJSON.
func DecodeJSON(data []byte, into any) error { return decodeJSON(data, into) }

// TopicPartitions is one topic's entry in a request that lists partitions
// per topic.
type TopicPartitions struct {
	Topic      string
	Partitions []int32
}

// GroupByTopic gathers tps per topic, topics in order of first appearance
// and partitions in the order given, as the Java admin client builds its
// per-topic request lists. The result is empty (not nil) for no partitions.
func GroupByTopic(tps []common.TopicPartition) []TopicPartitions {
	out := []TopicPartitions{}
	index := map[string]int{}
	for _, tp := range tps {
		i, ok := index[tp.Topic]
		if !ok {
			i = len(out)
			index[tp.Topic] = i
			out = append(out, TopicPartitions{Topic: tp.Topic})
		}
		out[i].Partitions = append(out[i].Partitions, tp.Partition)
	}
	return out
}
