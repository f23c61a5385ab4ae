package zkclient_test

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
	"github.com/klassik/klassik/zkpaths/zktest"
)

func TestMain(m *testing.M) { os.Exit(zkserver.RunShared(m)) }

// sessionTimeout for tests: the server's tickTime is 500ms, so 2s is valid
// and keeps forced expiry fast.
const sessionTimeout = 2 * time.Second

// backend abstracts "a ZooKeeper ensemble with one chroot for this test":
// the same suite runs on the real server and on zktest, so the fake is
// checked against the real thing.
type backend interface {
	// client opens a new session.
	client(t *testing.T) *zkclient.Client
	// expire forces the session of c to expire and waits until c has a new
	// session.
	expire(t *testing.T, c *zkclient.Client)
}

func forEachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	t.Run("real", func(t *testing.T) { f(t, newRealBackend(t)) })
	t.Run("fake", func(t *testing.T) { f(t, newFakeBackend(t)) })
}

// readyClient is a new client of b with the top-level paths created.
func readyClient(t *testing.T, b backend) *zkclient.Client {
	t.Helper()
	c := b.client(t)
	mustNoErr(t, c.EnsureTopLevelPaths())
	return c
}

// byClient maps each client a backend made to what the backend cuts or
// expires it by (a proxy, a fake connection); tests use it from several
// goroutines.
type byClient[V any] struct {
	mu sync.Mutex
	m  map[*zkclient.Client]V
}

func (b *byClient[V]) put(c *zkclient.Client, v V) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[*zkclient.Client]V{}
	}
	b.m[c] = v
}

func (b *byClient[V]) get(c *zkclient.Client) V {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m[c]
}

type realBackend struct {
	srv    *zkserver.Server
	chroot string
	admin  *zkclient.Client // no chroot, direct to the server

	proxies byClient[*zkserver.Proxy]
}

func newRealBackend(t *testing.T) *realBackend {
	srv, err := zkserver.Shared()
	if err != nil {
		t.Fatalf("ZooKeeper server: %v", err)
	}
	admin, err := zkclient.Connect(srv.ConnectString(""), sessionTimeout)
	if err != nil {
		t.Fatalf("admin connect: %v", err)
	}
	t.Cleanup(admin.Close)
	return &realBackend{srv: srv, chroot: zkserver.Chroot(t), admin: admin}
}

func (b *realBackend) client(t *testing.T) *zkclient.Client {
	t.Helper()
	p, err := zkserver.NewProxy(b.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c, err := zkclient.Connect(p.ConnectString(b.chroot), sessionTimeout)
	if err != nil {
		p.Close()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close(); p.Close() })
	b.proxies.put(c, p)
	return c
}

// expire cuts the client off at its proxy until the server has dropped the
// session, then lets it reconnect, which makes go-zookeeper learn of the
// expiry and open a new session.
func (b *realBackend) expire(t *testing.T, c *zkclient.Client) {
	t.Helper()
	expireSession(t, c, 15*time.Second, func(id int64) error { return b.proxies.get(c).ExpireSession(id, 15*time.Second) })
}

type fakeBackend struct {
	srv   *zktest.Server
	conns byClient[*zktest.Conn]
}

func newFakeBackend(t *testing.T) *fakeBackend {
	return &fakeBackend{srv: zktest.NewServer()}
}

func (b *fakeBackend) client(t *testing.T) *zkclient.Client {
	t.Helper()
	conn, ev := b.srv.Connect()
	c, err := zkclient.New(conn, ev, "/chroot", sessionTimeout)
	if err != nil {
		t.Fatalf("fake client: %v", err)
	}
	t.Cleanup(c.Close)
	b.conns.put(c, conn)
	return c
}

func (b *fakeBackend) expire(t *testing.T, c *zkclient.Client) {
	t.Helper()
	expireSession(t, c, 5*time.Second, func(int64) error { b.srv.Expire(b.conns.get(c)); return nil })
}

// expireSession ends c's current session with end and waits, up to
// within, until c runs on a new one.
func expireSession(t *testing.T, c *zkclient.Client, within time.Duration, end func(session int64) error) {
	t.Helper()
	old := c.SessionID()
	if err := end(old); err != nil {
		t.Fatal(err)
	}
	waitFor(t, within, "a new session", func() bool {
		s := c.SessionID()
		return s != 0 && s != old
	})
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// counter counts callback invocations; callbacks only increment, as real
// consumers only enqueue.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) inc() { c.mu.Lock(); c.n++; c.mu.Unlock() }
func (c *counter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func mustNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func isZk(err, target error) bool { return errors.Is(err, target) }

var _ = zk.ErrNoNode

func golden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../testdata/znodes/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// createState creates one partition state znode through the batch call.
func createState(c *zkclient.Client, epochZkVersion int32, tp common.TopicPartition, s zkpaths.LeaderAndIsr) (int32, error) {
	res, err := c.CreatePartitionStates(epochZkVersion, map[common.TopicPartition]zkpaths.LeaderAndIsr{tp: s})
	if err != nil {
		return 0, err
	}
	return res[tp].ZkVersion, res[tp].Err
}

// updateState writes one partition state znode through the batch call.
func updateState(c *zkclient.Client, epochZkVersion int32, tp common.TopicPartition, s zkpaths.LeaderAndIsr) (int32, error) {
	res, err := c.UpdatePartitionStates(epochZkVersion, map[common.TopicPartition]zkpaths.LeaderAndIsr{tp: s})
	if err != nil {
		return 0, err
	}
	return res[tp].ZkVersion, res[tp].Err
}
