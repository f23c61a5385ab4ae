package purgatory

import (
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
)

func TestMetricsAndFuncs(t *testing.T) {
	p, c := fake()
	r := gometrics.NewRegistry()
	p.RegisterMetrics(r)
	p.RegisterMetrics(nil)
	size := r.Get("kafka.server.DelayedOperationPurgatory.PurgatorySize.delayedOperation=test").(gometrics.Gauge)
	num := r.Get("kafka.server.DelayedOperationPurgatory.NumDelayedOperations.delayedOperation=test").(gometrics.Gauge)

	ready := false
	var completed, expired int
	p.TryCompleteElseWatch(&Funcs{TryCompleteFunc: func() bool { return ready }, OnCompleteFunc: func() { completed++ }}, time.Minute, "a", "b")
	p.TryCompleteElseWatch(&Funcs{TryCompleteFunc: func() bool { return false }, OnExpirationFunc: func() { expired++ }}, time.Second, "a")
	if size.Value() != 3 || num.Value() != 2 {
		t.Fatalf("size %d num %d", size.Value(), num.Value())
	}
	ready = true
	p.CheckAndComplete("b")
	c.Advance(time.Second)
	if completed != 1 || expired != 1 || size.Value() != 0 || num.Value() != 0 {
		t.Fatalf("completed %d expired %d size %d num %d", completed, expired, size.Value(), num.Value())
	}
}
