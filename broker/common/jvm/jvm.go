// Package jvm reproduces what the JVM computes where Kafka's tools and
// brokers let it show: String.hashCode (which decides partitions of
// internal topics) and TopicPartition.hashCode; the iteration order of
// java.util.HashMap and Scala 2.13's mutable HashMap/HashSet that Kafka
// prints or writes (order.go); Double.toString / Float.toString and
// String.format's %.Nf (how Kafka prints a double, formatter.go). One copy
// serves the broker and every tool.
package jvm

import (
	"math"
	"strconv"
	"strings"
)

// StringHashCode is java.lang.String.hashCode: h = 31*h + c over the
// string's UTF-16 code units (a rune above the BMP counts as its two
// surrogates), in int32 arithmetic.
func StringHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// PartitionFor is the partition of an internal topic with n partitions
// that Kafka's group and transaction coordinators give key (a group id,
// a transactional id): Utils.abs(key.hashCode) % n. Utils.abs is |x|
// except that Integer.MIN_VALUE maps to 0; it is not the sign-bit mask
// (Utils.toPositive) of the producer's partitioner, which gives other
// partitions for negative hashes.
func PartitionFor(key string, n int32) int32 {
	h := StringHashCode(key)
	switch {
	case h == math.MinInt32:
		h = 0
	case h < 0:
		h = -h
	}
	return h % n
}

// DoubleToString is Double.toString: the shortest digits that identify
// the value, plain for 10^-3 <= |v| < 10^7 and d.dddE<n> otherwise, always
// with a digit after the point ("1.048576E7", "0.5", "-0.0", "NaN",
// "Infinity").
func DoubleToString(v float64) string { return FormatFloat(v, 64) }

// FloatToString is Float.toString (the shortest digits of a float32).
func FloatToString(v float32) string { return FormatFloat(float64(v), 32) }

// FormatFloat is Double.toString for bits 64 and Float.toString for bits
// 32 (v must then hold a float32 value).
func FormatFloat(v float64, bits int) string {
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
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	if v >= 1e-3 && v < 1e7 {
		s := strconv.FormatFloat(v, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return sign + s
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(v, 'e', -1, bits), "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return sign + mant + "E" + strconv.Itoa(e)
}
