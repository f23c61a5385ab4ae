package metrics

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	gometrics "github.com/rcrowley/go-metrics"
)

// The text the handler writes for the Kafka families is byte for byte
// what expfmt writes for the same families, also after names come and go
// and for help texts and label values that need escaping.
func TestTextMatchesExpfmt(t *testing.T) {
	r := brokerShapedRegistry(200, 5)
	c := NewCollector(r)
	compare := func(what string) {
		t.Helper()
		c.mu.Lock()
		defer c.mu.Unlock()
		var want bytes.Buffer
		for _, f := range c.gatherLocked() {
			if _, err := expfmt.MetricFamilyToText(&want, f); err != nil {
				t.Fatal(err)
			}
		}
		var got bytes.Buffer
		bw := bufio.NewWriter(&got)
		if err := c.writeTextLocked(bw); err != nil {
			t.Fatal(err)
		}
		bw.Flush()
		if got.String() != want.String() {
			g, w := strings.Split(got.String(), "\n"), strings.Split(want.String(), "\n")
			for i := range min(len(g), len(w)) {
				if g[i] != w[i] {
					t.Fatalf("%s: line %d:\n got %q\nwant %q", what, i, g[i], w[i])
				}
			}
			t.Fatalf("%s: %d lines, want %d", what, len(g), len(w))
		}
	}
	compare("first scrape")
	gometrics.GetOrRegisterMeter(`kafka.server.BrokerTopicMetrics.MessagesInPerSec.topic=a"b\c`, r).Mark(3)
	r.Unregister("kafka.log.Log.Size.topic=topic-1.partition=1")
	compare("after a name came and one went")
	compare("unchanged")
}
