package jvm

import (
	"slices"
	"sort"
)

// The iteration order of the hash tables Kafka prints or writes from.
// Both Java's java.util.HashMap and Scala 2.13's mutable.HashMap/HashSet
// put a key with hashCode h in bucket spread(h) & (table length - 1), with
// spread(h) = h ^ (h >>> 16), and walk the buckets in index order; only
// the final table length matters, because a resize splits buckets without
// reordering them. They differ within a bucket (Java keeps insertion
// order, Scala sorts by spread hash) and in when the table grows. Buckets
// long enough for Java to make them trees (more than 8 colliding keys) are
// not modelled.

// spread is HashMap.hash / Scala's improveHash: h ^ (h >>> 16).
func spread(h int32) int32 { return h ^ int32(uint32(h)>>16) }

// TopicPartitionHashCode is org.apache.kafka.common.TopicPartition's
// hashCode: 31 * (31 + partition) + topic.hashCode(), in int32 arithmetic.
func TopicPartitionHashCode(topic string, partition int32) int32 {
	return 31*(31+partition) + StringHashCode(topic)
}

// HashMapOrder returns items in the order a java.util.HashMap, filled with
// them (distinct keys) in the given order, iterates; hashCode gives each
// item's key hash. initialCapacity < 0 is the default constructor (16),
// otherwise new HashMap<>(initialCapacity).
func HashMapOrder[T any](items []T, initialCapacity int, hashCode func(T) int32) []T {
	mask := uint32(hashMapCapacity(len(items), initialCapacity) - 1)
	bucket := make([]uint32, len(items))
	idx := make([]int, len(items))
	for i, it := range items {
		idx[i] = i
		bucket[i] = uint32(spread(hashCode(it))) & mask
	}
	sort.SliceStable(idx, func(a, b int) bool { return bucket[idx[a]] < bucket[idx[b]] })
	out := make([]T, len(items))
	for i, j := range idx {
		out[i] = items[j]
	}
	return out
}

// hashMapCapacity is a java.util.HashMap's table length after n
// insertions (Java 8+: tableSizeFor of the initial capacity, doubled
// whenever the size exceeds 0.75 of it).
func hashMapCapacity(n, initialCapacity int) int {
	if n == 0 {
		return 1
	}
	capacity, threshold := 16, 12
	if initialCapacity >= 0 {
		capacity = 1 // HashMap.tableSizeFor: the smallest power of two >= c
		for capacity < initialCapacity {
			capacity *= 2
		}
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

// ScalaHashTable follows the table of a Scala 2.13 mutable.HashMap or
// mutable.HashSet being filled, for its iteration order: 16 buckets to
// start, load factor 0.75, each bucket sorted by spread hash. Callers
// replay the operations Kafka performs (Add for put/addOne of a new key;
// SizeHint, Grow and Insert where Kafka adds a whole collection), keeping
// track of duplicates themselves.
type ScalaHashTable struct {
	length int
	hashes []int32 // spread hash per inserted element
}

// NewScalaHashTable is an empty table of the default length (16).
func NewScalaHashTable() *ScalaHashTable { return &ScalaHashTable{length: 16} }

// SizeHint is sizeHint(n): the table grows at once to
// tableSizeFor((n+1)/0.75) if that is longer.
func (t *ScalaHashTable) SizeHint(n int) {
	c := max(int(float64(n+1)/0.75)-1, 4)
	hb := 1
	for hb*2 <= c {
		hb *= 2
	}
	if l := min(hb*2, 1<<30); l > t.length {
		t.length = l
	}
}

// Grow is the check put and addOne make before adding (even a key already
// present): the table doubles when one more element would reach 0.75 of
// its length.
func (t *ScalaHashTable) Grow() {
	if len(t.hashes)+1 >= int(float64(t.length)*0.75) {
		t.length *= 2
	}
}

// Insert adds an element with hashCode h, without the growth check.
func (t *ScalaHashTable) Insert(h int32) { t.hashes = append(t.hashes, spread(h)) }

// Add is put / addOne of a key not yet present: Grow, then Insert.
func (t *ScalaHashTable) Add(h int32) {
	t.Grow()
	t.Insert(h)
}

// Order returns the insertion indexes of the elements in iteration order:
// by bucket, then by spread hash, then (equal hashes) by insertion.
func (t *ScalaHashTable) Order() []int {
	mask := int32(t.length - 1)
	idx := make([]int, len(t.hashes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ha, hb := t.hashes[a], t.hashes[b]
		if ba, bb := ha&mask, hb&mask; ba != bb {
			return int(ba - bb)
		}
		switch {
		case ha < hb:
			return -1
		case ha > hb:
			return 1
		}
		return 0
	})
	return idx
}

// ScalaHashMapOrder returns items (distinct keys) in the iteration order
// of a Scala 2.13 mutable.HashMap or HashSet they were put into one by
// one; hashCode gives each item's key hash.
func ScalaHashMapOrder[T any](items []T, hashCode func(T) int32) []T {
	t := NewScalaHashTable()
	for _, it := range items {
		t.Add(hashCode(it))
	}
	out := make([]T, 0, len(items))
	for _, i := range t.Order() {
		out = append(out, items[i])
	}
	return out
}
