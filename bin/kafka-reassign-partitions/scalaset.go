package main

import "slices"

// Kafka's tool prints sets (the brokers and topics whose throttles it
// clears) with mkString(","), so the order is the iteration order of a
// Scala 2.13 immutable Set: up to four elements keep the order they were
// added in (Set1..Set4); from five on the set is a CHAMP hash trie, which
// iterates a node's own elements by their 5-bit hash fragment, then its
// sub-nodes (fragments shared by several elements) in fragment order, depth
// first, with the hash of an element being scala.collection.Hashing.improve
// of its hashCode (the int itself, Java's String.hashCode).

// scalaSetOrder returns elems without duplicates in the iteration order of
// the Scala Set built by adding them in order.
func scalaSetOrder[T comparable](elems []T, hashCode func(T) int32) []T {
	var uniq []T
	for _, e := range elems {
		if !slices.Contains(uniq, e) {
			uniq = append(uniq, e)
		}
	}
	if len(uniq) <= 4 {
		return uniq
	}
	hashes := make(map[T]uint32, len(uniq))
	for _, e := range uniq {
		hashes[e] = improveHash(hashCode(e))
	}
	return champOrder(uniq, hashes, 0)
}

func champOrder[T comparable](elems []T, hashes map[T]uint32, shift uint) []T {
	if shift >= 32 {
		return elems // full hash collision: insertion order
	}
	groups := map[uint32][]T{}
	for _, e := range elems {
		f := hashes[e] >> shift & 31
		groups[f] = append(groups[f], e)
	}
	var out []T
	var sub []uint32
	for f := uint32(0); f < 32; f++ {
		switch g := groups[f]; {
		case len(g) == 1:
			out = append(out, g[0])
		case len(g) > 1:
			sub = append(sub, f)
		}
	}
	for _, f := range sub {
		out = append(out, champOrder(groups[f], hashes, shift+5)...)
	}
	return out
}

// improveHash is scala.collection.Hashing.improve.
func improveHash(h int32) uint32 {
	x := uint32(h)
	x += ^(x << 9)
	x ^= x >> 14
	x += x << 4
	return x ^ x>>10
}

func int32Hash(i int32) int32 { return i }
