package jvm

import (
	"math"
	"testing"
)

func TestStringHashCode(t *testing.T) {
	// Values printed by OpenJDK's "...".hashCode().
	for s, want := range map[string]int32{
		"":                   0,
		"a":                  97,
		"__consumer_offsets": -970371369,
		"my-group":           -1906497762,
		"héllo":              103094734,
		"😀":                  1772899,
	} {
		if got := StringHashCode(s); got != want {
			t.Errorf("StringHashCode(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestDoubleAndFloatToString(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{1048576, "1048576.0"}, {1.048576e7, "1.048576E7"}, {0.5, "0.5"}, {1e-3, "0.001"},
		{1e-4, "1.0E-4"}, {-2.5e10, "-2.5E10"}, {math.Copysign(0, -1), "-0.0"}, {0, "0.0"},
		{math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"}, {100, "100.0"},
	} {
		if got := DoubleToString(c.v); got != c.want {
			t.Errorf("DoubleToString(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	if got := FloatToString(0.1); got != "0.1" {
		t.Errorf("FloatToString(0.1) = %q, want 0.1", got)
	}
	if got := FloatToString(1.5e8); got != "1.5E8" {
		t.Errorf("FloatToString(1.5e8) = %q, want 1.5E8", got)
	}
}
