package zkpaths

import (
	"sort"
	"strconv"

	"github.com/klassik/klassik/broker/common/jvm"
)

// scalaMutableMapOrder orders keys as a Scala 2.13 mutable.HashMap filled
// with them in the given order iterates (jvm.ScalaHashMapOrder). Kafka's
// topic assignment writes its per-partition maps this way, so topics with
// more than 11 partitions list "11","0","1",... in zkCli.
func scalaMutableMapOrder(keys []string) []string {
	return jvm.ScalaHashMapOrder(keys, jvm.StringHashCode)
}

// javaPropertiesOrder approximates the iteration order of a
// java.util.Properties (a ConcurrentHashMap on JDK 9+) holding keys: 16
// buckets, doubled after an insertion brings the count to >= 3/4 of the size;
// bucket = spread(hash) & (size-1); ascending bucket index. Insertion order
// within a bucket is unknown to us, so ties are broken by key. Kafka writes
// /config/<type>/<name> maps in this order; no reader depends on it.
func javaPropertiesOrder(keys []string) []string {
	size := 16
	for count := 1; count <= len(keys); count++ {
		if float64(count) >= 0.75*float64(size) {
			size *= 2
		}
	}
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	bucket := func(k string) int {
		h := jvm.StringHashCode(k)
		g := (h ^ int32(uint32(h)>>16)) & 0x7fffffff
		return int(g) & (size - 1)
	}
	sort.SliceStable(sorted, func(i, j int) bool { return bucket(sorted[i]) < bucket(sorted[j]) })
	return sorted
}

// appendPartitionMap writes {"0":[1,2],...} in Scala mutable map order.
func appendPartitionMap(b []byte, m map[int32][]int32) []byte {
	keys := make([]string, 0, len(m))
	for p := range m {
		keys = append(keys, strconv.Itoa(int(p)))
	}
	sort.Strings(keys) // deterministic input; the order function decides (ties by key)
	o := newObj()
	for _, k := range scalaMutableMapOrder(keys) {
		p, _ := strconv.Atoi(k)
		o.ints(k, m[int32(p)])
	}
	return append(b, o.bytes()...)
}
