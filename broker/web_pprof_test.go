package broker

import (
	"log/slog"

	"net/http"
	"strings"
	"testing"

	gometrics "github.com/rcrowley/go-metrics"

	"github.com/klassik/klassik/config"
)

// klassik.http.pprof.enable adds Go's profiles to the HTTP listener (for
// bin/klassik-bench.sh --profile); without it /debug/pprof/ is 404.
func TestWebPprofOnlyWhenEnabled(t *testing.T) {
	off := startTestWeb(t, nil)
	if code, _, _ := httpDo(t, http.MethodGet, "http://"+off.HTTPAddr().String()+"/debug/pprof/"); code != http.StatusNotFound {
		t.Errorf("GET /debug/pprof/ by default: %d, want 404", code)
	}
	if config.Defaults().HTTPPprof {
		t.Error("klassik.http.pprof.enable defaults to true")
	}
	cfg := config.Defaults()
	cfg.HTTPListener = "127.0.0.1:0"
	cfg.HTTPPprof = true
	on := &Broker{cfg: cfg, logger: slog.New(slog.DiscardHandler), metrics: gometrics.NewRegistry()}
	if err := on.startWeb(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(on.web.stop)
	base := "http://" + on.HTTPAddr().String()
	if code, body, _ := httpDo(t, http.MethodGet, base+"/debug/pprof/"); code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("GET /debug/pprof/ when enabled: %d", code)
	}
	if code, body, _ := httpDo(t, http.MethodGet, base+"/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.Contains(body, "goroutine profile:") {
		t.Errorf("GET /debug/pprof/goroutine: %d %.80q", code, body)
	}
}
