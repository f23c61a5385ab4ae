package network

import (
	"context"
	"crypto/tls"
	"log/slog"
	"time"

	"github.com/klassik/klassik/broker/security"
)

// tlsHandshakeTimeout bounds the TLS handshake of an accepted connection
// (at most connections.max.idle.ms), so a peer that opens a socket and
// stays silent does not hold a goroutine longer than an idle one.
const tlsHandshakeTimeout = 30 * time.Second

// tlsHandshake completes the TLS handshake of an SSL or SASL_SSL
// connection before the first request and, on an SSL listener, sets the
// session's principal from the client certificate (Kafka's
// DefaultKafkaPrincipalBuilder: "User:" + the mapped RFC 2253 subject, or
// User:ANONYMOUS without a certificate). On SASL_SSL the principal is the
// SASL one, set later. It reports false when the connection must close: a
// failed handshake (untrusted or missing certificate when required) or a
// certificate no mapping rule accepts.
func (c *conn) tlsHandshake(ctx context.Context, log *slog.Logger) bool {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return true
	}
	timeout := tlsHandshakeTimeout
	if c.s.cfg.ConnectionsMaxIdle < timeout {
		timeout = c.s.cfg.ConnectionsMaxIdle
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		// Kafka logs failed TLS handshakes at INFO ("Failed
		// authentication with <address> (SSL handshake failed)").
		log.Info("failed authentication (SSL handshake failed)", "remote", c.nc.RemoteAddr().String(), "err", err)
		return false
	}
	if c.lc.SecurityProtocol != "SSL" {
		return true
	}
	peers := tc.ConnectionState().PeerCertificates
	if len(peers) == 0 {
		return true
	}
	m := c.lc.PrincipalMapper
	if m == nil {
		m = defaultPrincipalMapper
	}
	p, err := m.Principal(peers[0])
	if err != nil {
		log.Info("failed authentication (principal mapping)", "remote", c.nc.RemoteAddr().String(), "err", err)
		return false
	}
	c.session.Principal = p
	return true
}

var defaultPrincipalMapper = func() *security.SslPrincipalMapper {
	m, err := security.NewSslPrincipalMapper(security.DefaultSSLPrincipalMappingRules)
	if err != nil {
		panic(err)
	}
	return m
}()

// DialFunc opens an inter-broker Client (the replica fetchers, the
// controller's channel, the transaction marker sender and controlled
// shutdown all dial through one). timeout bounds the connect and
// handshakes and is the default request deadline.
type DialFunc func(ctx context.Context, addr, clientID string, timeout time.Duration) (*Client, error)

// InterBrokerDialer returns the DialFunc for the inter-broker listener's
// security protocol: plain TCP for PLAINTEXT and SASL_PLAINTEXT, TLS with
// cfg (the broker's trust store, and its key store as client
// certificate) for SSL and SASL_SSL. A SASL login runs after this dial
// (wrap the DialFunc).
func InterBrokerDialer(cfg *tls.Config) DialFunc {
	return func(ctx context.Context, addr, clientID string, timeout time.Duration) (*Client, error) {
		return DialTLS(ctx, addr, clientID, timeout, cfg)
	}
}

// PlainDialer dials plain TCP (PLAINTEXT listeners).
var PlainDialer DialFunc = Dial
