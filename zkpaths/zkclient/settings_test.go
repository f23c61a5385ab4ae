package zkclient_test

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
	"github.com/klassik/klassik/zkpaths/zktest"
)

// zookeeper.connection.timeout.ms: "the max time that the client waits to
// establish a connection to ZooKeeper". Nothing listens on the port, so
// Connect gives up after the timeout with Kafka's
// ZooKeeperClientTimeoutException wording.
func TestConnectTimeoutWhenZooKeeperUnreachable(t *testing.T) {
	port, err := zkserver.FreePort()
	mustNoErr(t, err)
	const timeout = 700 * time.Millisecond
	start := time.Now()
	c, err := zkclient.Connect("127.0.0.1:"+strconv.Itoa(port)+"/kafka", 4*time.Second, zkclient.WithConnectTimeout(timeout))
	took := time.Since(start)
	if err == nil {
		c.Close()
		t.Fatal("connected to a port nothing listens on")
	}
	if !errors.Is(err, zkclient.ErrConnectionTimeout) || !strings.Contains(err.Error(), "timed out waiting for connection while in state CONNECTING") {
		t.Fatalf("err = %v, want ErrConnectionTimeout in state CONNECTING", err)
	}
	// The lower bound is exact (Connect polls its deadline); the upper one
	// only catches a wait that ignores the timeout (>= 10x slack).
	if took < timeout || took > 10*timeout {
		t.Fatalf("Connect gave up after %v, want about %v", took, timeout)
	}
	t.Logf("Connect gave up after %v (timeout %v): %v", took.Round(time.Millisecond), timeout, err)
}

// zookeeper.session.timeout.ms is what the client asks the server for; the
// server grants it when it lies within its bounds (2 to 20 ticks by
// default, tickTime 500ms here, maxSessionTimeout 30s), as "cons" shows.
func TestSessionTimeoutIsNegotiated(t *testing.T) {
	srv, err := zkserver.Shared()
	mustNoErr(t, err)
	for _, want := range []time.Duration{4 * time.Second, 7 * time.Second} {
		c, err := zkclient.Connect(srv.ConnectString(zkserver.Chroot(t)), want)
		mustNoErr(t, err)
		out, err := zkserver.FourLetterWord(srv.Addr(), "cons", 2*time.Second)
		mustNoErr(t, err)
		conns, err := zkserver.ParseCons(out)
		mustNoErr(t, err)
		found := false
		for _, cn := range conns {
			if cn.SessionID == c.SessionID() {
				found = true
				if cn.Timeout != want {
					t.Errorf("session 0x%x: negotiated timeout %v, want %v", cn.SessionID, cn.Timeout, want)
				}
			}
		}
		if !found {
			t.Errorf("session 0x%x not in cons:\n%s", c.SessionID(), out)
		}
		c.Close()
	}
}

// blockingConn holds every Get until release is closed and records how many
// Gets were in the Conn at once.
type blockingConn struct {
	*zktest.Conn
	release chan struct{}

	// mu guards the following.
	mu       sync.Mutex
	cur, max int
	entered  chan struct{}
}

func (b *blockingConn) Get(p string) ([]byte, *zk.Stat, error) {
	b.mu.Lock()
	b.cur++
	if b.cur > b.max {
		b.max = b.cur
	}
	b.mu.Unlock()
	b.entered <- struct{}{}
	<-b.release
	b.mu.Lock()
	b.cur--
	b.mu.Unlock()
	return b.Conn.Get(p)
}

// zookeeper.max.in.flight.requests: "the maximum number of unacknowledged
// requests the client will send to ZooKeeper before blocking" — across
// every goroutine of the client, not only within one batch.
func TestMaxInFlightRequestsBoundsEveryRequest(t *testing.T) {
	const limit, callers = 3, 12
	srv := zktest.NewServer()
	conn, events := srv.Connect()
	bc := &blockingConn{Conn: conn, release: make(chan struct{}), entered: make(chan struct{}, callers)}
	c, err := zkclient.New(bc, events, "", 6*time.Second, zkclient.WithMaxInFlightRequests(limit))
	mustNoErr(t, err)
	defer c.Close()
	var wg sync.WaitGroup
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, _ = c.Get("/zookeeper")
		}()
	}
	for i := 0; i < limit; i++ {
		select {
		case <-bc.entered:
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d requests reached the connection", i)
		}
	}
	close(bc.release)
	wg.Wait()
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if bc.max != limit {
		t.Fatalf("at most %d requests were in flight at once, want exactly %d", bc.max, limit)
	}
}
