package metrics

import (
	"bufio"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"
	gometrics "github.com/rcrowley/go-metrics"
)

// NewRegistry returns a Prometheus registry holding the broker's metrics
// (a Collector over reg) and the Go runtime and process collectors.
func NewRegistry(reg gometrics.Registry) *prometheus.Registry {
	r := runtimeRegistry()
	r.MustRegister(NewCollector(reg))
	return r
}

func runtimeRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector())
	r.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// Handler serves reg and the Go runtime and process metrics in the format
// the scraper negotiates (the Prometheus text format by default, written
// by text.go for the Kafka families; other formats through expfmt). The
// Kafka families come from a Collector's cache (see gatherLocked):
// scrapes are served one at a time, the next waiting for the previous
// encoding to finish (the HTTP server's write timeout bounds the wait).
func Handler(reg gometrics.Registry) http.Handler {
	return &handler{c: NewCollector(reg), runtime: runtimeRegistry()}
}

type handler struct {
	c       *Collector
	runtime *prometheus.Registry
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, err := h.runtime.Gather()
	if err != nil {
		http.Error(w, "gathering runtime metrics: "+err.Error(), http.StatusInternalServerError)
		return
	}
	format := expfmt.Negotiate(r.Header)
	w.Header().Set("Content-Type", string(format))
	enc := expfmt.NewEncoder(w, format)
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	if format.FormatType() == expfmt.TypeTextPlain {
		// The runtime families sort around the Kafka ones: go_ before
		// kafka_, process_ after.
		bw := bufio.NewWriterSize(w, 64<<10)
		enc := expfmt.NewEncoder(bw, format)
		i := 0
		for ; i < len(rt) && rt[i].GetName() < "kafka_"; i++ {
			if err := enc.Encode(rt[i]); err != nil {
				return
			}
		}
		if err := h.c.writeTextLocked(bw); err != nil {
			return
		}
		for ; i < len(rt); i++ {
			if err := enc.Encode(rt[i]); err != nil {
				return
			}
		}
		bw.Flush()
		return
	}
	for _, f := range mergeFamilies(h.c.gatherLocked(), rt) {
		if err := enc.Encode(f); err != nil {
			return // the client went away
		}
	}
	if cl, ok := enc.(expfmt.Closer); ok {
		cl.Close()
	}
}
