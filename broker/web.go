package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/klassik/klassik/broker/metrics"
)

// webBounds bound the HTTP listener (klassik.http.listener). It is
// read-only and meant to sit on a monitoring network: slow or idle clients
// cannot hold a connection or a goroutine for long.
type webBounds struct {
	readHeader, read, write, idle time.Duration
	maxHeaderBytes                int
	shutdown                      time.Duration // grace for in-flight requests on stop
}

var defaultWebBounds = webBounds{
	readHeader:     5 * time.Second,
	read:           10 * time.Second,
	write:          30 * time.Second, // a scrape of a large broker included
	idle:           60 * time.Second,
	maxHeaderBytes: 16 << 10,
	shutdown:       5 * time.Second,
}

// webServer is the broker's HTTP listener: /metrics (Prometheus) and the
// console at "/". Its goroutines are the accept loop (serve) and
// net/http's one per connection; stop ends them all.
type webServer struct {
	srv   *http.Server
	ln    net.Listener
	grace time.Duration
	done  chan struct{} // closed when the accept loop returned
}

// newWebMux routes /metrics to the Prometheus handler, /debug/pprof/ to
// Go's profiles when withPprof (klassik.http.pprof.enable) and everything
// else to console (404 when nil). Only GET and HEAD are served.
func newWebMux(metricsHandler, console http.Handler, withPprof bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", metricsHandler)
	if withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	if console != nil {
		mux.Handle("/", console)
	} else {
		mux.Handle("/", http.NotFoundHandler())
	}
	return readOnly(mux)
}

// readOnly answers 405 to anything but GET and HEAD.
func readOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// PasswordChecker verifies HTTP basic credentials
// (*security.PasswordVerifier: the SASL/PLAIN users of the JAAS
// configuration and the SCRAM credentials from /config/users).
type PasswordChecker interface {
	Verify(user, password string) bool
}

// basicAuth guards h (the console and its /api/v1 JSON) with HTTP basic
// authentication when klassik.http.auth=basic; /metrics stays open, as
// Kafka's JMX exporter is. A nil h is left alone (404 either way).
func basicAuth(h http.Handler, users PasswordChecker, log *slog.Logger) http.Handler {
	if h == nil {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || users == nil || !users.Verify(user, pass) {
			if ok {
				log.Info("http: failed basic authentication", "user", user, "remote", r.RemoteAddr)
			}
			w.Header().Set("WWW-Authenticate", `Basic realm="Klassik", charset="UTF-8"`)
			http.Error(w, "authentication required: a SASL/PLAIN or SCRAM user of the cluster (klassik.http.auth=basic)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// startWeb binds klassik.http.listener (nothing when empty) and serves.
func (b *Broker) startWeb() error {
	addr := b.cfg.HTTPListener
	if addr == "" {
		return nil
	}
	console := b.console
	if b.cfg.HTTPAuth == "basic" {
		console = basicAuth(console, b.passwords, b.logger)
	}
	w, err := startWebServer(addr, newWebMux(metrics.Handler(b.metrics), console, b.cfg.HTTPPprof), defaultWebBounds, b.logger)
	if err != nil {
		return fmt.Errorf("broker: klassik.http.listener: %w", err)
	}
	b.web = w
	b.logger.Info("http listener", "addr", w.ln.Addr().String())
	return nil
}

// startWebServer binds addr and serves h within bounds.
func startWebServer(addr string, h http.Handler, bounds webBounds, log *slog.Logger) (*webServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: bounds.readHeader,
		ReadTimeout:       bounds.read,
		WriteTimeout:      bounds.write,
		IdleTimeout:       bounds.idle,
		MaxHeaderBytes:    bounds.maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	w := &webServer{srv: srv, ln: ln, grace: bounds.shutdown, done: make(chan struct{})}
	go func() { // the accept loop; stop waits for it
		defer close(w.done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http listener stopped", "err", err)
		}
	}()
	return w, nil
}

// HTTPAddr is the bound address of klassik.http.listener (port 0
// resolved), or nil when it is off or not started.
func (b *Broker) HTTPAddr() net.Addr {
	if b.web == nil {
		return nil
	}
	return b.web.ln.Addr()
}

// stop shuts the server down gracefully (in-flight requests get
// the grace of its bounds), then closes what is left and waits for the accept
// loop.
func (w *webServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), w.grace)
	defer cancel()
	if err := w.srv.Shutdown(ctx); err != nil {
		w.srv.Close()
	}
	<-w.done
}
