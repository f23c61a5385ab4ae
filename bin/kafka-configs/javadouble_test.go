package main

import (
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
