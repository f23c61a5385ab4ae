package zkclient

import (
	"bufio"
	"crypto/tls"
	"net"
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
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func buffered(c net.Conn, err error) (net.Conn, error) {
	if err != nil {
		return nil, err
	}
	return &bufferedConn{Conn: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

// dialer returns the go-zookeeper Dialer: plain TCP, or TLS with the
// handshake bounded by the same connect timeout; reads are buffered
// (bufferedConn).
func dialer(cfg *tls.Config) zk.Dialer {
	if cfg == nil {
		return func(network, address string, timeout time.Duration) (net.Conn, error) {
			return buffered(net.DialTimeout(network, address, timeout))
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
		return buffered(tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, address, c))
	}
}
