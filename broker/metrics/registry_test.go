package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	gometrics "github.com/rcrowley/go-metrics"
)

func TestVersionedRegistryCountsChanges(t *testing.T) {
	r := NewVersionedRegistry()
	v0 := r.Version()
	c := gometrics.GetOrRegisterCounter("kafka.server.Test.A", r)
	if r.Version() == v0 {
		t.Fatal("registering a new metric did not move the version")
	}
	v1 := r.Version()
	if got := gometrics.GetOrRegisterCounter("kafka.server.Test.A", r); got != c || r.Version() != v1 {
		t.Fatalf("getting an existing metric changed it or the version (%d -> %d)", v1, r.Version())
	}
	if err := r.Register("kafka.server.Test.A", gometrics.NewCounter()); err == nil {
		t.Fatal("a duplicate name was registered")
	}
	m := gometrics.NewMeter()
	if err := r.Register("kafka.server.Test.B", m); err != nil {
		t.Fatal(err)
	}
	v2 := r.Version()
	r.Unregister("kafka.server.Test.B")
	if r.Version() == v2 || r.Get("kafka.server.Test.B") != nil {
		t.Fatal("unregistering did not remove the metric or move the version")
	}
	r.Unregister("kafka.server.Test.B") // absent: no change
	if n := len(r.GetAll()); n != 1 {
		t.Fatalf("GetAll has %d metrics, want 1", n)
	}
}

// TestScrapeSeesMetricsAddedAndRemoved: the collector skips walking an
// unchanged versioned registry, so a scrape after a change must still show
// the new metric and drop the removed one, with current values.
func TestScrapeSeesMetricsAddedAndRemoved(t *testing.T) {
	r := NewVersionedRegistry()
	g := gometrics.GetOrRegisterGauge("kafka.server.ReplicaManager.PartitionCount", r)
	g.Update(3)
	h := Handler(r)
	scrape := func() string {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Body.String()
	}
	if s := scrape(); !strings.Contains(s, "kafka_server_replicamanager_partitioncount 3") {
		t.Fatalf("first scrape lacks the gauge:\n%s", s)
	}
	g.Update(7)
	if s := scrape(); !strings.Contains(s, "kafka_server_replicamanager_partitioncount 7") {
		t.Fatalf("an unchanged registry's scrape shows a stale value:\n%s", s)
	}
	gometrics.GetOrRegisterGauge("kafka.server.ReplicaManager.LeaderCount", r).Update(2)
	r.Unregister("kafka.server.ReplicaManager.PartitionCount")
	s := scrape()
	if !strings.Contains(s, "kafka_server_replicamanager_leadercount 2") || strings.Contains(s, "partitioncount") {
		t.Fatalf("the scrape after a change does not show the new set of metrics:\n%s", s)
	}
}
