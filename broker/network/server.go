package network

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/klassik/klassik/broker/security"
	gometrics "github.com/rcrowley/go-metrics"
)

// ListenerConfig is one entry of Kafka's listeners /
// listener.security.protocol.map: name, bind host ("" = all interfaces),
// port (0 = ephemeral) and security protocol: PLAINTEXT, SSL,
// SASL_PLAINTEXT or SASL_SSL ("" means PLAINTEXT).
type ListenerConfig struct {
	Name             string
	Host             string
	Port             int
	SecurityProtocol string
	// TLS is required for SSL and SASL_SSL listeners and refused for the
	// others. File records are then copied through user space (sendfile
	// cannot encrypt).
	TLS *tls.Config
	// PrincipalMapper maps the client certificate of an SSL listener's
	// connection to its principal (ssl.principal.mapping.rules); nil is
	// Kafka's DEFAULT rule. See tlsHandshake.
	PrincipalMapper *security.SslPrincipalMapper
}

// Config is the narrow socket-server configuration.
type Config struct {
	Listeners []ListenerConfig
	// MaxRequestBytes is socket.request.max.bytes (0 → 104857600).
	MaxRequestBytes int32
	// SendBufferBytes / RecvBufferBytes are socket.send.buffer.bytes and
	// socket.receive.buffer.bytes; ≤ 0 keeps the OS default (Kafka's -1).
	SendBufferBytes, RecvBufferBytes int
	// ConnectionsMaxIdle is connections.max.idle.ms (0 → 10 minutes).
	ConnectionsMaxIdle time.Duration
	// SaslMaxReceiveBytes is sasl.server.max.receive.size, the largest
	// frame of a SASL connection before it authenticated (0 →
	// SaslMaxReceiveBytes).
	SaslMaxReceiveBytes int32
	// FailedAuthenticationDelay is connection.failed.authentication.delay.ms:
	// after answering a failed SASL handshake or authentication the
	// connection is closed this much later (Kafka's default 100 ms), so a
	// client retrying bad credentials is slowed down.
	FailedAuthenticationDelay time.Duration
	// ConnectionQuotas are the connection limits (connectionquotas.go);
	// nil means none. UpdateConnectionQuotas changes them live.
	ConnectionQuotas *ConnectionQuotaConfig

	Logger *slog.Logger
	// Metrics receives the server's metrics; nil disables them.
	Metrics gometrics.Registry
	// DisableRequestMetrics turns the per-request RequestMetrics off (for
	// measuring what they cost; not a broker config key).
	DisableRequestMetrics bool
}

// DefaultMaxRequestBytes is Kafka's socket.request.max.bytes default.
const DefaultMaxRequestBytes = 104857600

// DefaultConnectionsMaxIdle is Kafka's connections.max.idle.ms default.
const DefaultConnectionsMaxIdle = 10 * time.Minute

// Server is Kafka's SocketServer: it accepts connections on every listener
// and runs one goroutine per connection that reads a request, hands it to
// the Handler and writes the response before reading the next one.
type Server struct {
	cfg     Config
	h       Handler
	log     *slog.Logger
	ctx     context.Context // cancelled by Shutdown
	cancel  context.CancelFunc
	wg      sync.WaitGroup // acceptors and connections
	connSeq atomic.Int64

	mConns gometrics.Counter
	rm     *requestMetrics // nil: request metrics off
	quotas *connectionQuotas

	// reserveMu guards reserve, a descriptor held open so an acceptor
	// out of descriptors can still take the connection waiting in the
	// backlog and close it (rejectWithReserve).
	reserveMu sync.Mutex
	reserve   *os.File

	// mu guards the following.
	mu        sync.Mutex
	listeners map[string]net.Listener
	conns     map[*conn]struct{}
	started   bool
	closed    bool
}

// NewServer validates cfg and returns an unstarted server.
func NewServer(cfg Config, h Handler) (*Server, error) {
	if h == nil {
		return nil, errors.New("network: nil handler")
	}
	if len(cfg.Listeners) == 0 {
		return nil, errors.New("network: no listeners")
	}
	seen := map[string]bool{}
	for _, l := range cfg.Listeners {
		if l.Name == "" {
			return nil, errors.New("network: listener without a name")
		}
		if seen[l.Name] {
			return nil, fmt.Errorf("network: listener %q defined twice", l.Name)
		}
		if l.Port < 0 || l.Port > 65535 {
			return nil, fmt.Errorf("network: listener %q: port %d out of range", l.Name, l.Port)
		}
		switch l.SecurityProtocol {
		case "", "PLAINTEXT", "SASL_PLAINTEXT":
			if l.TLS != nil {
				return nil, fmt.Errorf("network: listener %q: TLS configured for %s", l.Name, l.SecurityProtocol)
			}
		case "SSL", "SASL_SSL":
			if l.TLS == nil {
				return nil, fmt.Errorf("network: listener %q: %s needs a TLS configuration (ssl.keystore.*)", l.Name, l.SecurityProtocol)
			}
		default:
			return nil, fmt.Errorf("network: listener %q: unknown security protocol %q", l.Name, l.SecurityProtocol)
		}
		seen[l.Name] = true
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.ConnectionsMaxIdle <= 0 {
		cfg.ConnectionsMaxIdle = DefaultConnectionsMaxIdle
	}
	if cfg.SaslMaxReceiveBytes <= 0 {
		cfg.SaslMaxReceiveBytes = SaslMaxReceiveBytes
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg: cfg, h: h, log: log.With("component", "socket-server"),
		ctx: ctx, cancel: cancel,
		listeners: map[string]net.Listener{},
		conns:     map[*conn]struct{}{},
		mConns:    gometrics.NilCounter{},
	}
	qc := UnlimitedConnections()
	if cfg.ConnectionQuotas != nil {
		qc = *cfg.ConnectionQuotas
	}
	var names []string
	for _, l := range cfg.Listeners {
		names = append(names, l.Name)
	}
	s.quotas = newConnectionQuotas(qc, names, s.log)
	if r := cfg.Metrics; r != nil {
		s.mConns = gometrics.GetOrRegisterCounter("kafka.server.socket-server-metrics.connection-count", r)
		if !cfg.DisableRequestMetrics {
			s.rm = newRequestMetrics(r, h)
		}
	}
	return s, nil
}

// Start binds every listener (all or nothing) and starts accepting.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return errors.New("network: server already started or shut down")
	}
	bound := map[string]net.Listener{}
	for _, lc := range s.cfg.Listeners {
		ln, err := net.Listen("tcp", net.JoinHostPort(lc.Host, strconv.Itoa(lc.Port)))
		if err != nil {
			for _, l := range bound {
				l.Close()
			}
			return fmt.Errorf("network: binding listener %s: %w", lc.Name, err)
		}
		if lc.TLS != nil {
			ln = tls.NewListener(ln, lc.TLS)
		}
		bound[lc.Name] = ln
	}
	s.listeners = bound
	s.started = true
	s.reserve, _ = os.Open(os.DevNull) // nil if none: acceptors then only back off
	for _, lc := range s.cfg.Listeners {
		ln := bound[lc.Name]
		s.log.Info("listening", "listener", lc.Name, "addr", ln.Addr().String(), "security_protocol", lc.SecurityProtocol)
		s.wg.Add(1)
		go s.acceptLoop(ln, lc)
	}
	return nil
}

// BoundAddr returns the bound address of a listener (useful with port 0),
// or nil if the listener is unknown or not started.
func (s *Server) BoundAddr(listener string) net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ln, ok := s.listeners[listener]; ok {
		return ln.Addr()
	}
	return nil
}

// Shutdown closes the listeners and every connection, cancels the context
// handed to in-flight handlers, and waits for all goroutines to end.
// Safe to call more than once.
func (s *Server) Shutdown() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		s.cancel()
		s.quotas.close()
		for _, ln := range s.listeners {
			ln.Close()
		}
		for c := range s.conns {
			c.nc.Close()
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.reserveMu.Lock()
	if s.reserve != nil {
		s.reserve.Close()
		s.reserve = nil
	}
	s.reserveMu.Unlock()
}

// isOutOfDescriptors reports whether an accept failed because the
// process (EMFILE) or the system (ENFILE) has no descriptor left.
func isOutOfDescriptors(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// rejectWithReserve handles an accept that failed for want of a
// descriptor. Left alone, the connection stays in the listen backlog, its
// client waits, and new ones pile up behind it until descriptors free up.
// Instead the acceptor closes its reserve descriptor, accepts the waiting
// connection with it, closes that at once (the client sees the close
// and retries, as after Kafka's max.connections) and takes the reserve
// again. It reports false when it has no reserve or the retry did not
// work; the caller then backs off.
func (s *Server) rejectWithReserve(ln net.Listener, lc ListenerConfig) bool {
	s.reserveMu.Lock()
	defer s.reserveMu.Unlock()
	if s.reserve == nil {
		return false
	}
	s.reserve.Close()
	s.reserve = nil
	nc, err := ln.Accept()
	if err == nil {
		s.log.Warn("out of file descriptors: closing a new connection", "listener", lc.Name,
			"remote", nc.RemoteAddr().String())
		nc.Close()
	}
	s.reserve, _ = os.Open(os.DevNull)
	return err == nil && s.reserve != nil
}

// acceptLoop is the Acceptor of one listener; it ends when the listener is
// closed by Shutdown.
func (s *Server) acceptLoop(ln net.Listener, lc ListenerConfig) {
	defer s.wg.Done()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			if isOutOfDescriptors(err) && s.rejectWithReserve(ln, lc) {
				continue
			}
			// Other temporary failures, or no reserve descriptor:
			// back off briefly instead of spinning, like net/http,
			// and try again; the acceptor never gives up.
			if backoff == 0 {
				backoff = 5 * time.Millisecond
			} else if backoff < time.Second {
				backoff *= 2
			}
			s.log.Warn("accept failed", "listener", lc.Name, "err", err)
			select {
			case <-time.After(backoff):
			case <-s.ctx.Done():
				return
			}
			continue
		}
		backoff = 0
		ip := remoteIP(nc)
		if !s.admit(nc, lc, ip) {
			continue
		}
		if tc, ok := tcpConn(nc); ok {
			_ = tc.SetNoDelay(true)
			if s.cfg.SendBufferBytes > 0 {
				_ = tc.SetWriteBuffer(s.cfg.SendBufferBytes)
			}
			if s.cfg.RecvBufferBytes > 0 {
				_ = tc.SetReadBuffer(s.cfg.RecvBufferBytes)
			}
		}
		c := &conn{
			s: s, nc: nc, lc: lc, ip: ip,
			id: fmt.Sprintf("%s-%s-%d", nc.LocalAddr(), nc.RemoteAddr(), s.connSeq.Add(1)),
		}
		c.lastActive.Store(time.Now().UnixNano())
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			s.quotas.dec(lc.Name, ip)
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		s.mConns.Inc(1)
		go c.serve()
		s.closeExcessConnections()
	}
}

func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.quotas.dec(c.lc.Name, c.ip)
	s.mConns.Dec(1)
}
