package zkserver

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// Proxy is a TCP forwarder, in front of a ZooKeeper server or any other
// TCP listener. Pause cuts every connection and refuses new ones, so a
// client behind it loses contact with the server without closing its
// session; if the pause lasts longer than the session timeout the server
// expires the session, which is the reliable way to force a session expiry
// in tests. Resume lets the client reconnect. SetDelay delays every chunk
// forwarded by a one-way delay in each direction (the network fault tests
// emulate a slow link with it).
//
// One accept goroutine, and per connection two readers and two writers;
// Close ends them all and waits.
type Proxy struct {
	target string
	ln     net.Listener
	wg     sync.WaitGroup

	// delayMu guards the following.
	delayMu sync.Mutex
	delay   time.Duration

	// mu guards the following.
	mu     sync.Mutex
	paused bool
	closed bool
	conns  map[net.Conn]struct{}
}

// NewProxy listens on a free 127.0.0.1 port and forwards to target.
func NewProxy(target string) (*Proxy, error) { return NewProxyOn("127.0.0.1:0", target) }

// NewProxyOn listens on listen (host:port, port 0 for a free one) and
// forwards each connection to target.
func NewProxyOn(listen, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr is the proxy's listening "host:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port is the proxy's listening port.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// ConnectString is Addr plus chroot.
func (p *Proxy) ConnectString(chroot string) string { return p.Addr() + chroot }

// SetDelay sets the one-way delay of every chunk forwarded from now on
// (0, the default, forwards at once).
func (p *Proxy) SetDelay(d time.Duration) {
	p.delayMu.Lock()
	p.delay = d
	p.delayMu.Unlock()
}

func (p *Proxy) currentDelay() time.Duration {
	p.delayMu.Lock()
	defer p.delayMu.Unlock()
	return p.delay
}

// refusing reports whether new connections are to be dropped.
func (p *Proxy) refusing() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused || p.closed
}

// acceptLoop is the proxy's accept goroutine; Close stops it.
func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.refusing() {
			c.Close()
			continue
		}
		up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		// Paused or closed while dialling: drop both.
		p.mu.Lock()
		if p.paused || p.closed {
			p.mu.Unlock()
			c.Close()
			up.Close()
			continue
		}
		p.conns[c] = struct{}{}
		p.conns[up] = struct{}{}
		p.wg.Add(2)
		p.mu.Unlock()
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

type chunk struct {
	at   time.Time
	data []byte
}

// pipe copies src to dst, each chunk delayed by the current delay; the
// writer runs in a goroutine of its own so reading goes on during the
// delay. When either side fails or is closed both connections are closed.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	q := make(chan chunk, 256)
	done := make(chan struct{})
	go func() { // writer: ends when q is closed or a write fails
		defer close(done)
		for ch := range q {
			if wait := time.Until(ch.at.Add(p.currentDelay())); wait > 0 {
				time.Sleep(wait)
			}
			if _, err := dst.Write(ch.data); err != nil {
				src.Close()
				for range q {
				}
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			q <- chunk{at: time.Now(), data: append([]byte(nil), buf[:k]...)}
		}
		if err != nil {
			break
		}
	}
	close(q)
	<-done
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// Pause drops all connections and refuses new ones until Resume.
func (p *Proxy) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = true
	for c := range p.conns {
		c.Close()
	}
}

// Resume accepts connections again.
func (p *Proxy) Resume() {
	p.mu.Lock()
	p.paused = false
	p.mu.Unlock()
}

// Close stops the proxy, closes every connection and waits for its
// goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

// ExpireSession forces the server behind the proxy to expire sessionID: it
// pauses the proxy, polls the server's "dump" until the session is gone from
// its session tracker (one session timeout plus a tick, normally), then
// resumes so the client reconnects and learns of the expiry. The client must
// reach the server only through this proxy. For a standalone server.
func (p *Proxy) ExpireSession(sessionID int64, timeout time.Duration) error {
	p.Pause()
	defer p.Resume()
	deadline := time.Now().Add(timeout)
	for {
		alive, err := SessionAlive(p.target, sessionID)
		if err == nil && !alive {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("zkserver: session 0x%x still alive after %v (last error: %v)", sessionID, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// SessionAlive reports whether the server at addr still tracks sessionID,
// using the "dump" four-letter word (leader or standalone only).
func SessionAlive(addr string, sessionID int64) (bool, error) {
	out, err := FourLetterWord(addr, "dump", 2*time.Second)
	if err != nil {
		return false, err
	}
	if !strings.Contains(out, "SessionTracker dump") {
		return false, fmt.Errorf("zkserver: unexpected dump output %q", out)
	}
	want := fmt.Sprintf("0x%x", sessionID)
	for _, f := range strings.Fields(out) {
		if strings.TrimSuffix(f, ":") == want {
			return true, nil
		}
	}
	return false, nil
}
