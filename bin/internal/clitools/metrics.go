package clitools

import (
	"fmt"
	"io"
	"slices"

	"github.com/klassik/klassik/broker/common/jvm"
)

// PrintMetrics is Kafka's ToolsUtils.printMetrics, which the perf tools'
// --print-metrics ends with: a blank line, a "Metric Name   Value" header,
// then every metric sorted by its "group:name:{tags}" name, padded to the
// longest name, with its value as Java's "%.3f".
func PrintMetrics(w io.Writer, values map[string]float64) {
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range values {
			if !yield(k) {
				return
			}
		}
	})
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	fmt.Fprintf(w, "\n%-*s   %s\n", width, "Metric Name", "Value")
	for _, n := range names {
		fmt.Fprintf(w, "%-*s : %s\n", width, n, jvm.FormatFixed(values[n], 3))
	}
}
