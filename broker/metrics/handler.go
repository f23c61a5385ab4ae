package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	gometrics "github.com/rcrowley/go-metrics"
)

// NewRegistry returns a Prometheus registry holding the broker's metrics
// (a Collector over reg) and the Go runtime and process collectors.
func NewRegistry(reg gometrics.Registry) *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(NewCollector(reg))
	r.MustRegister(collectors.NewGoCollector())
	r.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// Handler serves reg in the Prometheus text format (or the protobuf and
// OpenMetrics formats a scraper negotiates). At most two scrapes run at
// once; a third gets 503 at once instead of piling up.
func Handler(reg gometrics.Registry) http.Handler {
	return promhttp.HandlerFor(NewRegistry(reg), promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 2,
	})
}
