// Package common holds the value types every layer of the broker, the
// controller and the tools share (Kafka's org.apache.kafka.common). It
// imports nothing of Klassik, so any package may depend on it.
package common

import (
	"strconv"
	"strings"
)

// TopicPartition names one partition of a topic. It is comparable, so it
// keys maps; String is Kafka's "topic-partition", the name of the
// partition's log directory.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

// Compare orders by topic, then partition, for slices.SortFunc.
func (tp TopicPartition) Compare(o TopicPartition) int {
	if c := strings.Compare(tp.Topic, o.Topic); c != 0 {
		return c
	}
	switch {
	case tp.Partition < o.Partition:
		return -1
	case tp.Partition > o.Partition:
		return 1
	}
	return 0
}
