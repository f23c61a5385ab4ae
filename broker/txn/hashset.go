package txn

import (
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/common/jvm"
)

// scalaHashSetOrder lists a decoded value's partitions in the order
// Kafka 2.8's dump tool prints them. Kafka (built with Scala 2.13) reads
// them into a scala.collection.mutable.HashSet, one topic's partitions
// at a time, and prints the set's iteration order (jvm.ScalaHashTable,
// keyed by TopicPartition's Java hashCode). Each topic's set raises the
// table at once by its size hint.
func scalaHashSetOrder(parts []common.TopicPartition) []common.TopicPartition {
	table := jvm.NewScalaHashTable()
	seen := map[common.TopicPartition]bool{}
	var elems []common.TopicPartition
	for i := 0; i < len(parts); {
		// One topic's partitions, as the record groups them, deduplicated
		// (Kafka builds a Set of them before adding).
		j := i
		topicSet := []common.TopicPartition{}
		inTopic := map[common.TopicPartition]bool{}
		for j < len(parts) && parts[j].Topic == parts[i].Topic {
			if !inTopic[parts[j]] {
				inTopic[parts[j]] = true
				topicSet = append(topicSet, parts[j])
			}
			j++
		}
		i = j
		k := len(topicSet)
		table.SizeHint(k)
		for _, tp := range topicSet {
			// Sets of up to 4 elements are added one by one (with the
			// growth check); larger ones go straight in after the hint.
			if k <= 4 {
				table.Grow()
			}
			if seen[tp] {
				continue
			}
			seen[tp] = true
			table.Insert(jvm.TopicPartitionHashCode(tp.Topic, tp.Partition))
			elems = append(elems, tp)
		}
	}
	out := make([]common.TopicPartition, 0, len(elems))
	for _, i := range table.Order() {
		out = append(out, elems[i])
	}
	return out
}
