package main

// The iteration order of java.util.HashMap, which decides the order of
// log directories and partitions in Kafka's output: entries sit in the
// bucket (h ^ h>>>16) & (capacity-1) of their key's hashCode, buckets are
// walked in index order and a bucket keeps insertion order (resizes split
// buckets without reordering them). Buckets long enough to become trees
// (more than 8 colliding keys) are not modelled.

import (
	"sort"

	"github.com/klassik/klassik/broker/common/jvm"
)

// javaHashMapOrder returns items in the order a HashMap filled with them
// in the given order iterates; initialCapacity < 0 is the default
// constructor (16), otherwise new HashMap<>(initialCapacity).
func javaHashMapOrder[T any](items []T, initialCapacity int, hash func(T) int32) []T {
	capacity := javaFinalCapacity(len(items), initialCapacity)
	type entry struct {
		item   T
		bucket uint32
		seq    int
	}
	es := make([]entry, len(items))
	for i, it := range items {
		h := uint32(hash(it))
		es[i] = entry{it, (h ^ h>>16) & uint32(capacity-1), i}
	}
	sort.SliceStable(es, func(i, j int) bool { return es[i].bucket < es[j].bucket })
	out := make([]T, len(es))
	for i, e := range es {
		out[i] = e.item
	}
	return out
}

// javaFinalCapacity is a HashMap's table size after n insertions (Java 8+
// resize rules, load factor 0.75).
func javaFinalCapacity(n, initialCapacity int) int {
	if n == 0 {
		return 1
	}
	capacity, threshold := 16, 12
	if initialCapacity >= 0 {
		capacity = tableSizeFor(initialCapacity)
		threshold = int(float32(capacity) * 0.75)
	}
	for size := 1; size <= n; size++ {
		if size > threshold {
			old := capacity
			capacity *= 2
			if old >= 16 {
				threshold *= 2
			} else {
				threshold = int(float32(capacity) * 0.75)
			}
		}
	}
	return capacity
}

// tableSizeFor is HashMap.tableSizeFor: the smallest power of two >= c (1
// for 0).
func tableSizeFor(c int) int {
	n := 1
	for n < c {
		n *= 2
	}
	return n
}

// javaTopicPartitionHash is TopicPartition.hashCode.
func javaTopicPartitionHash(topic string, partition int32) int32 {
	return 31*(31+partition) + jvm.StringHashCode(topic)
}
