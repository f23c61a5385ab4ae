package main

import (
	"slices"
	"testing"

	"github.com/klassik/klassik/broker/common/jvm"
)

// TestJavaDouble: Double.toString's forms.
func TestJavaDouble(t *testing.T) {
	for v, want := range map[float64]string{
		1024: "1024.0", 10485760: "1.048576E7", 1e7: "1.0E7", 9999999: "9999999.0", 12.5: "12.5",
		0.001: "0.001", 0.0001: "1.0E-4", 0: "0.0", -3: "-3.0", 2147483647: "2.147483647E9",
	} {
		if got := jvm.DoubleToString(v); got != want {
			t.Errorf("%v: %s, want %s", v, got, want)
		}
	}
}

// TestHashMapOrder: java.util.HashMap iteration order, by bucket of the
// final table then insertion: "a".."c" hash to 97..99, so a table of 4
// (initial capacity 3) puts c (99&3=3) after a (1) and b (2); colliding
// keys keep insertion order.
func TestHashMapOrder(t *testing.T) {
	if got := hashMapOrder([]int32{99, 97, 98}, 3); !slices.Equal(got, []int{1, 2, 0}) {
		t.Fatalf("order %v", got)
	}
	// 32 and 16 share bucket 0 of the 4-slot table three keys grow a
	// 1-slot map to; insertion order holds.
	if got := hashMapOrder([]int32{32, 16, 1}, 0); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("order %v", got)
	}
	if jvm.StringHashCode("user") != 3599307 {
		t.Fatalf("hash %d", jvm.StringHashCode("user"))
	}
}
