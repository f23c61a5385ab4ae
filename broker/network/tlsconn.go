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
