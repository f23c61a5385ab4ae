package zkclient

import (
	"bufio"
	"crypto/tls"
	"net"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// TLS to ZooKeeper (KIP-515: zookeeper.ssl.client.enable). ZooKeeper serves
// TLS on its secureClientPort (Netty); go-zookeeper dials through a Dialer,
// so the Client wraps each connection in crypto/tls. With a client
// certificate and the server's X509AuthenticationProvider the session is
// authenticated as "x509:<subject DN>" from the handshake on, and secure
// ACLs (acl.go) name that identity.
//
// The *tls.Config comes from the zookeeper.ssl.* keys (broker/security
// builds it: keystores, protocols, cipher suites, hostname verification).

// WithTLS dials every ZooKeeper server with TLS configured by cfg (cloned
// per connection; an empty ServerName is set to the host dialled, so the
// server certificate is checked against that name unless cfg disables it).
func WithTLS(cfg *tls.Config) Option { return func(o *options) { o.tls = cfg } }

// bufferedConn reads the connection through a buffer: go-zookeeper reads
// each response with two reads (length, then body), so with many requests
// in flight the buffer turns a read system call per response into one per
// burst of responses. Only go-zookeeper's receive loop reads, one read at a
// time, so the buffer needs no lock; deadlines apply to the underlying
// connection as before.
//
// It also bounds the connect handshake. go-zookeeper waits for the answer
// to its connect request for ten times its read timeout (10 x 2/3 of the
// session timeout: 67 s at 10 s), so a server that accepted the TCP
// connection but does not answer (a member that is stopped, starting or
// wedged) keeps the client from trying again for that long, and a session
// the server would still have revalidated expires meanwhile; the client
// then learns of the expiry a minute late. Like ZooKeeper's Java client
// (ClientCnxn's connect timeout, the session timeout divided by the number
// of servers), every deadline go-zookeeper sets before the first byte of
// the answer arrives is cut to handshake; once the connection has answered,
// deadlines pass through unchanged (the receive loop's own read timeout).
type bufferedConn struct {
	net.Conn
	r         *bufio.Reader
	handshake time.Duration
	// answered is set by the first read that returns data (atomic: once
	// the session runs, the send goroutine sets write deadlines while the
	// receive goroutine reads).
	answered atomic.Bool
}

func (c *bufferedConn) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.answered.Store(true)
	}
	return n, err
}

// bound cuts a deadline set during the handshake to the handshake timeout.
func (c *bufferedConn) bound(t time.Time) time.Time {
	if c.handshake <= 0 || c.answered.Load() || t.IsZero() {
		return t
	}
	if limit := time.Now().Add(c.handshake); t.After(limit) {
		return limit
	}
	return t
}

func (c *bufferedConn) SetDeadline(t time.Time) error { return c.Conn.SetDeadline(c.bound(t)) }

func (c *bufferedConn) SetReadDeadline(t time.Time) error {
	return c.Conn.SetReadDeadline(c.bound(t))
}

func (c *bufferedConn) SetWriteDeadline(t time.Time) error {
	return c.Conn.SetWriteDeadline(c.bound(t))
}

func buffered(c net.Conn, err error, handshake time.Duration) (net.Conn, error) {
	if err != nil {
		return nil, err
	}
	return &bufferedConn{Conn: c, r: bufio.NewReaderSize(c, 64<<10), handshake: handshake}, nil
}

// handshakeTimeout is how long one server may take to answer the connect
// request: the session timeout divided by the number of servers, as
// ZooKeeper's Java client does, and at least a second.
func handshakeTimeout(sessionTimeout time.Duration, servers int) time.Duration {
	d := sessionTimeout / time.Duration(max(servers, 1))
	return max(d, time.Second)
}

// dialer returns the go-zookeeper Dialer: plain TCP, or TLS with the
// handshake bounded by the same connect timeout; reads are buffered and the
// ZooKeeper connect handshake is bounded by handshake (bufferedConn).
func dialer(cfg *tls.Config, handshake time.Duration) zk.Dialer {
	if cfg == nil {
		return func(network, address string, timeout time.Duration) (net.Conn, error) {
			c, err := net.DialTimeout(network, address, timeout)
			return buffered(c, err, handshake)
		}
	}
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		c := cfg.Clone()
		if c.ServerName == "" {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			c.ServerName = host
		}
		tc, err := tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, address, c)
		if err != nil {
			return nil, err
		}
		return buffered(tc, nil, handshake)
	}
}
