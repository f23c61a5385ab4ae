package broker

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"

	"github.com/klassik/klassik/config"
)

// startTestWeb starts only the HTTP listener of a broker that is not
// otherwise started, on a free port.
func startTestWeb(t *testing.T, console http.Handler) *Broker {
	t.Helper()
	cfg := config.Defaults()
	cfg.HTTPListener = "127.0.0.1:0"
	b := &Broker{cfg: cfg, logger: slog.New(slog.DiscardHandler), metrics: gometrics.NewRegistry(), console: console}
	gometrics.GetOrRegisterMeter("kafka.server.BrokerTopicMetrics.MessagesInPerSec", b.metrics).Mark(3)
	if err := b.startWeb(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b.web != nil {
			b.web.stop()
		}
	})
	return b
}

func httpDo(t *testing.T, method, url string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

// The listener is read-only: GET and HEAD are served, anything else is
// 405 with an Allow header; a path other than /metrics is 404 without a
// console and the console's answer with one.
func TestWebReadOnlyAndRoutes(t *testing.T) {
	b := startTestWeb(t, nil)
	base := "http://" + b.HTTPAddr().String()

	code, body, _ := httpDo(t, http.MethodGet, base+"/metrics")
	if code != http.StatusOK || !strings.Contains(body, "kafka_server_brokertopicmetrics_messagesin_total 3") {
		t.Fatalf("GET /metrics: %d\n%s", code, body)
	}
	if code, _, _ := httpDo(t, http.MethodHead, base+"/metrics"); code != http.StatusOK {
		t.Errorf("HEAD /metrics: %d", code)
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		code, _, h := httpDo(t, m, base+"/metrics")
		if code != http.StatusMethodNotAllowed || h.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s /metrics: %d, Allow %q; want 405, GET, HEAD", m, code, h.Get("Allow"))
		}
	}
	for _, p := range []string{"/", "/api/v1/cluster", "/metricsx"} {
		if code, _, _ := httpDo(t, http.MethodGet, base+p); code != http.StatusNotFound {
			t.Errorf("GET %s without a console: %d, want 404", p, code)
		}
	}

	withConsole := startTestWeb(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "console "+r.URL.Path)
	}))
	base = "http://" + withConsole.HTTPAddr().String()
	if code, body, _ := httpDo(t, http.MethodGet, base+"/api/v1/cluster"); code != http.StatusOK || body != "console /api/v1/cluster" {
		t.Errorf("GET /api/v1/cluster with a console: %d %q", code, body)
	}
	if code, _, _ := httpDo(t, http.MethodPost, base+"/api/v1/cluster"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST to the console: %d, want 405", code)
	}
	if code, body, _ := httpDo(t, http.MethodGet, base+"/metrics"); code != http.StatusOK || !strings.Contains(body, "go_goroutines") {
		t.Errorf("GET /metrics with a console: %d", code)
	}
}

// The server is bounded: header, read, write and idle timeouts and a
// header size limit; a client that opens a connection and sends nothing
// is dropped after the header timeout; stop closes the listener and ends
// the accept loop.
func TestWebBounds(t *testing.T) {
	b := startTestWeb(t, nil)
	srv := b.web.srv
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 || srv.MaxHeaderBytes <= 0 {
		t.Fatalf("unbounded server: header %v read %v write %v idle %v max header %d",
			srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout, srv.MaxHeaderBytes)
	}
	if srv.ReadHeaderTimeout > 10*time.Second || srv.WriteTimeout > time.Minute || srv.IdleTimeout > 2*time.Minute {
		t.Errorf("timeouts too long: header %v write %v idle %v", srv.ReadHeaderTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}

	// An oversized header is refused (431).
	req, _ := http.NewRequest(http.MethodGet, "http://"+b.HTTPAddr().String()+"/metrics", nil)
	req.Header.Set("X-Big", strings.Repeat("x", 2*defaultWebBounds.maxHeaderBytes))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("oversized header: %d, want 431", resp.StatusCode)
	}

	// A silent client is disconnected by the header timeout.
	short := defaultWebBounds
	short.readHeader = 200 * time.Millisecond
	sw, err := startWebServer("127.0.0.1:0", http.NotFoundHandler(), short, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer sw.stop()
	conn, err := net.Dial("tcp", sw.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		// net/http may answer 408 before closing; then the next read ends.
		if _, err := io.ReadAll(conn); err != nil {
			t.Fatalf("silent client not disconnected: %v", err)
		}
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("silent client still connected after 5 s")
	}

	addr := b.HTTPAddr().String()
	b.web.stop()
	select {
	case <-b.web.done:
	default:
		t.Fatal("accept loop still running after stop")
	}
	b.web = nil
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("listener still accepting after stop")
	}
}

// klassik.http.listener is validated as host:port.
func TestHTTPListenerConfig(t *testing.T) {
	for _, tc := range []struct {
		v  string
		ok bool
	}{{"", true}, {"127.0.0.1:8081", true}, {":0", true}, {"[::1]:9000", true}, {"localhost", false}, {"127.0.0.1:http", false}, {"127.0.0.1:70000", false}} {
		_, err := config.FromMap(map[string]string{"zookeeper.connect": "127.0.0.1:2181", "klassik.http.listener": tc.v})
		if (err == nil) != tc.ok {
			t.Errorf("klassik.http.listener=%q: err %v, want ok=%v", tc.v, err, tc.ok)
		}
	}
}
