package jvm

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

type tp struct {
	topic     string
	partition int32
}

func tpHash(p tp) int32 { return TopicPartitionHashCode(p.topic, p.partition) }

func tpNames(ps []tp) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.topic+"-"+strconv.Itoa(int(p.partition)))
	}
	return strings.Join(out, ",")
}

// TestHashMapOrder pins the orders printed by OpenJDK 17's
// java.util.HashMap for the same insertions (a small Java program filled
// new HashMap<>(n) with log directories and new HashMap<>() with
// TopicPartitions, then a filtered copy, and printed keySet()), as
// kafka-log-dirs prints them.
func TestHashMapOrder(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/tmp/x/broker-1-0,/tmp/x/broker-1-1", "/tmp/x/broker-1-0,/tmp/x/broker-1-1"},
		{"/data/kafka-logs-1,/data/kafka-logs-2,/data/kafka-logs-3", "/data/kafka-logs-3,/data/kafka-logs-2,/data/kafka-logs-1"},
		{"/var/lib/kafka/a,/var/lib/kafka/b,/var/lib/kafka/c,/var/lib/kafka/d,/var/lib/kafka/e", "/var/lib/kafka/a,/var/lib/kafka/e,/var/lib/kafka/d,/var/lib/kafka/c,/var/lib/kafka/b"},
	} {
		dirs := strings.Split(tc.in, ",")
		got := HashMapOrder(dirs, len(dirs), StringHashCode)
		if strings.Join(got, ",") != tc.want {
			t.Errorf("dirs %s: got %v, want %s", tc.in, got, tc.want)
		}
	}
	var parts []tp
	for _, topic := range []string{"jbod", "orders", "__consumer_offsets", "t"} {
		for p := int32(0); p < 6; p++ {
			parts = append(parts, tp{topic, p})
		}
	}
	var kept []tp
	for _, p := range HashMapOrder(parts, -1, tpHash) {
		if p.topic != "t" {
			kept = append(kept, p)
		}
	}
	want := "__consumer_offsets-0,jbod-5,orders-0,jbod-3,orders-1,__consumer_offsets-5,jbod-4,orders-2,jbod-1,orders-3,__consumer_offsets-3,jbod-2,orders-4,__consumer_offsets-4,orders-5,__consumer_offsets-1,jbod-0,__consumer_offsets-2"
	if got := tpNames(HashMapOrder(kept, -1, tpHash)); got != want {
		t.Errorf("partitions: got %s\nwant %s", got, want)
	}
	small := []tp{{"resume", 0}, {"resume", 1}, {"resume", 2}, {"abc", 0}}
	if got := tpNames(HashMapOrder(small, -1, tpHash)); got != "resume-1,resume-2,abc-0,resume-0" {
		t.Errorf("small map: got %s", got)
	}
}

// TestHashMapOrderByBucket: by bucket of the final table, then insertion.
// Keys hashing to 99, 97, 98 in new HashMap<>(3), whose table is 4 long,
// put 99 (bucket 3) after 97 (1) and 98 (2); 32 and 16 share bucket 0 of
// the 4-slot table three keys grow a 1-slot map (new HashMap<>(0)) to, and
// keep insertion order.
func TestHashMapOrderByBucket(t *testing.T) {
	id := func(h int32) int32 { return h }
	if got := HashMapOrder([]int32{99, 97, 98}, 3, id); !slices.Equal(got, []int32{97, 98, 99}) {
		t.Fatalf("order %v", got)
	}
	if got := HashMapOrder([]int32{32, 16, 1}, 0, id); !slices.Equal(got, []int32{32, 16, 1}) {
		t.Fatalf("order %v", got)
	}
	for _, c := range []struct{ n, initial, want int }{
		{0, -1, 1}, {12, -1, 16}, {13, -1, 32}, {1, 0, 2}, {3, 0, 4}, {7, 0, 16}, {3, 3, 4}, {4, 3, 8}, {24, 32, 32}, {25, 32, 64},
	} {
		if got := hashMapCapacity(c.n, c.initial); got != c.want {
			t.Errorf("capacity after %d puts into HashMap(%d) = %d, want %d", c.n, c.initial, got, c.want)
		}
	}
}

// TestScalaHashTable: Scala 2.13's mutable tables sort a bucket by spread
// hash and grow from 16 before the put that would reach 0.75 of the
// length; sizeHint rounds (n+1)/0.75 up to a power of two.
func TestScalaHashTable(t *testing.T) {
	for _, c := range []struct{ hint, want int }{{0, 16}, {2, 16}, {11, 16}, {12, 32}, {20, 32}, {24, 64}} {
		tab := NewScalaHashTable()
		tab.SizeHint(c.hint)
		if tab.length != c.want {
			t.Errorf("SizeHint(%d): length %d, want %d", c.hint, tab.length, c.want)
		}
	}
	// 12 keys grow the table to 32 buckets before the 12th is put.
	tab := NewScalaHashTable()
	for i := 0; i < 13; i++ {
		tab.Add(StringHashCode(string(rune('a'+i)) + "x"))
		if want := 16 << b2i(i >= 11); tab.length != want {
			t.Fatalf("after %d puts: length %d, want %d", i+1, tab.length, want)
		}
	}
	order := tab.Order()
	if len(order) != 13 {
		t.Fatalf("order lost keys: %v", order)
	}
	for k := 1; k < len(order); k++ {
		a, b := tab.hashes[order[k-1]], tab.hashes[order[k]]
		if a&31 > b&31 || (a&31 == b&31 && a > b) {
			t.Fatalf("order %v not by (bucket, hash) at %d", order, k)
		}
	}
	// Partition keys of Kafka's assignment maps: 12 of them take 32
	// buckets, which puts "11" first (zkCli shows "11","0","1",...).
	var keys []string
	for p := 0; p < 12; p++ {
		keys = append(keys, strconv.Itoa(p))
	}
	if got := ScalaHashMapOrder(keys, StringHashCode); got[0] != "11" || len(got) != 12 {
		t.Errorf("partition keys: %v", got)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
