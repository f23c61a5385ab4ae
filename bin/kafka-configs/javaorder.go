package main

import (
	"sort"
)

// The admin client hands ConfigCommand its quotas in java.util.HashMaps,
// and ConfigCommand prints them in those maps' iteration order with
// Double.toString values; these helpers reproduce both.

// hashMapOrder returns the indices of n keys with the given hashes, put in
// index order into a java.util.HashMap created with initialCapacity, in
// the map's iteration order: by bucket of the final table, keys of one
// bucket in insertion order (resizing keeps that order).
func hashMapOrder(hashes []int32, initialCapacity int) []int {
	capacity := 1
	for capacity < initialCapacity {
		capacity <<= 1
	}
	for len(hashes) > int(float64(capacity)*0.75) {
		capacity <<= 1
	}
	idx := make([]int, len(hashes))
	bucket := make([]uint32, len(hashes))
	for i, h := range hashes {
		idx[i] = i
		u := uint32(h)
		bucket[i] = (u ^ u>>16) & uint32(capacity-1)
	}
	sort.SliceStable(idx, func(a, b int) bool { return bucket[idx[a]] < bucket[idx[b]] })
	return idx
}
