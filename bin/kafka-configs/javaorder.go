package main

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// The admin client hands ConfigCommand its quotas in java.util.HashMaps,
// and ConfigCommand prints them in those maps' iteration order with
// Double.toString values; these helpers reproduce both.

// javaStringHash is String.hashCode (over UTF-16 code units).
func javaStringHash(s string) int32 {
	var h int32
	for _, c := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(c)
	}
	return h
}

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

// javaDouble is Double.toString: plain decimals with at least one
// fraction digit in [1e-3, 1e7), else computerized scientific notation
// ("1.048576E7").
func javaDouble(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	case v == 0:
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(v); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(v, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
