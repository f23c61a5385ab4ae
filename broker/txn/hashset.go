package txn

import (
	"slices"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/common/jvm"
)

// scalaHashSetOrder lists a decoded value's partitions in the order
// Kafka 2.8's dump tool prints them. Kafka (built with Scala 2.13) reads
// them into a scala.collection.mutable.HashSet, one topic's partitions
// at a time, and prints the set's iteration order: by bucket
// (improved hash & (table length - 1)), then by improved hash within a
// bucket, where improved hash = h ^ (h >>> 16) of TopicPartition's Java
// hashCode. Only the final table length matters; it starts at 16 and
// doubles when an element would reach 0.75 of it, or is raised at once
// by the size hint of a topic's partition set.
func scalaHashSetOrder(parts []common.TopicPartition) []common.TopicPartition {
	type elem struct {
		tp   common.TopicPartition
		hash int32
		seq  int
	}
	tableLen, count := 16, 0
	threshold := func() int { return int(float64(tableLen) * 0.75) }
	seen := map[common.TopicPartition]bool{}
	var elems []elem
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
		// sizeHint(k): grow to tableSizeFor((k+1)/0.75) if larger.
		if t := scalaTableSizeFor(int(float64(k+1) / 0.75)); t > tableLen {
			tableLen = t
		}
		for _, tp := range topicSet {
			// Sets of up to 4 elements are added one by one (with the
			// growth check); larger ones go straight in after the hint.
			if k <= 4 && count+1 >= threshold() {
				tableLen *= 2
			}
			if seen[tp] {
				continue
			}
			seen[tp] = true
			count++
			h := javaTopicPartitionHash(tp)
			h ^= int32(uint32(h) >> 16)
			elems = append(elems, elem{tp: tp, hash: h, seq: len(elems)})
		}
	}
	mask := int32(tableLen - 1)
	slices.SortStableFunc(elems, func(a, b elem) int {
		if ba, bb := a.hash&mask, b.hash&mask; ba != bb {
			return int(ba - bb)
		}
		switch {
		case a.hash < b.hash:
			return -1
		case a.hash > b.hash:
			return 1
		}
		return a.seq - b.seq
	})
	out := make([]common.TopicPartition, len(elems))
	for i, e := range elems {
		out[i] = e.tp
	}
	return out
}

// scalaTableSizeFor is Scala 2.13 mutable.HashSet's tableSizeFor.
func scalaTableSizeFor(capacity int) int {
	c := max(capacity-1, 4)
	hb := 1
	for hb*2 <= c {
		hb *= 2
	}
	return min(hb*2, 1<<30)
}

// javaTopicPartitionHash is org.apache.kafka.common.TopicPartition's
// hashCode: 31 * (31 + partition) + topic.hashCode(), in int32 arithmetic.
func javaTopicPartitionHash(tp common.TopicPartition) int32 {
	r := int32(31) + tp.Partition
	return 31*r + jvm.StringHashCode(tp.Topic)
}

// partitionFor is Kafka's Utils.abs(transactionalId.hashCode) % n, where
// abs maps Integer.MIN_VALUE to 0.
func partitionFor(id string, n int32) int32 {
	h := jvm.StringHashCode(id)
	switch {
	case h == -1<<31:
		h = 0
	case h < 0:
		h = -h
	}
	return h % n
}
