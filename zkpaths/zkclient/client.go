package zkclient

import (
	gometrics "github.com/rcrowley/go-metrics"

	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// Conn is the subset of *zk.Conn the Client uses. *zk.Conn implements it;
// zktest.Conn implements it in memory. Paths passed to a Conn are absolute
// (chroot already applied).
type Conn interface {
	Get(path string) ([]byte, *zk.Stat, error)
	GetW(path string) ([]byte, *zk.Stat, <-chan zk.Event, error)
	Exists(path string) (bool, *zk.Stat, error)
	ExistsW(path string) (bool, *zk.Stat, <-chan zk.Event, error)
	Children(path string) ([]string, *zk.Stat, error)
	ChildrenW(path string) ([]string, *zk.Stat, <-chan zk.Event, error)
	Create(path string, data []byte, flags int32, acl []zk.ACL) (string, error)
	Set(path string, data []byte, version int32) (*zk.Stat, error)
	Delete(path string, version int32) error
	Multi(ops ...interface{}) ([]zk.MultiResponse, error)
	GetACL(path string) ([]zk.ACL, *zk.Stat, error)
	SetACL(path string, acl []zk.ACL, version int32) (*zk.Stat, error)
	SessionID() int64
	State() zk.State
	Close()
}

var _ Conn = (*zk.Conn)(nil)

// Create modes (ZooKeeper CreateMode flags).
const (
	Persistent           int32 = 0
	Ephemeral            int32 = zk.FlagEphemeral
	PersistentSequential int32 = zk.FlagSequence
	EphemeralSequential  int32 = zk.FlagEphemeral | zk.FlagSequence
)

// DefaultSessionTimeout is Kafka 3.x's zookeeper.session.timeout.ms.
const DefaultSessionTimeout = 18 * time.Second

// Sentinel errors. ZooKeeper's own outcomes are returned as (wrapped)
// zk.ErrNoNode, zk.ErrNodeExists, zk.ErrBadVersion; match with errors.Is.
var (
	// ErrControllerMoved: a fenced write failed its /controller_epoch check,
	// or an election was lost. The caller must resign, not retry.
	ErrControllerMoved = errors.New("zkclient: controller moved")
	// ErrUndecodable: a znode exists but its content is not what Kafka
	// writes there (bad JSON, unknown version).
	ErrUndecodable = errors.New("zkclient: znode content cannot be decoded")
	// ErrConnectionTimeout: Connect had no session within the connect
	// timeout (zookeeper.connection.timeout.ms; Kafka's
	// ZooKeeperClientTimeoutException).
	ErrConnectionTimeout = errors.New("zkclient: timed out waiting for connection")
	// ErrClosed is returned by operations on a closed Client.
	ErrClosed = errors.New("zkclient: client closed")
	// ErrTopicExists: /brokers/topics/<t> already exists.
	ErrTopicExists = errors.New("zkclient: topic already exists")
	// ErrTopicMarkedForDeletion: /admin/delete_topics/<t> exists.
	ErrTopicMarkedForDeletion = errors.New("zkclient: topic is marked for deletion")
	// ErrTopicCollision: another topic differs only by '.' versus '_'.
	ErrTopicCollision = errors.New("zkclient: topic name collides with an existing topic")
	// ErrTopicNotFound: /brokers/topics/<t> does not exist.
	ErrTopicNotFound = errors.New("zkclient: topic does not exist")
	// ErrTopicAlreadyMarkedForDeletion: the deletion marker exists already.
	ErrTopicAlreadyMarkedForDeletion = errors.New("zkclient: topic is already marked for deletion")
	// ErrReassignmentInProgress: /admin/reassign_partitions exists.
	ErrReassignmentInProgress = errors.New("zkclient: a partition reassignment is already in progress")
	// ErrPreferredElectionInProgress: /admin/preferred_replica_election exists.
	ErrPreferredElectionInProgress = errors.New("zkclient: a preferred replica election is already in progress")
)

// Option configures a Client.
type Option func(*options)

type options struct {
	logger         *slog.Logger
	now            func() time.Time
	secureACLs     bool
	connectTimeout time.Duration
	maxInFlight    int
	auth           []authInfo  // auth.go
	tls            *tls.Config // tls.go; nil: plaintext
	metrics        gometrics.Registry
}

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithClock sets the clock used for registration and controller timestamps.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithConnectTimeout bounds how long Connect waits for the first session
// (default: the session timeout, like zookeeper.connection.timeout.ms).
func WithConnectTimeout(d time.Duration) Option { return func(o *options) { o.connectTimeout = d } }

// WithMaxInFlightRequests bounds how many requests are in flight at once,
// like Kafka's zookeeper.max.in.flight.requests (default 10): every request
// of the Client, from any goroutine, waits for one of n permits (Kafka's
// inFlightRequests semaphore), and a batch operation (reading or writing
// many partition states) runs at most n requests at once. With 1 a batch
// runs in partition order, which tests use for a deterministic sequence of
// writes.
func WithMaxInFlightRequests(n int) Option { return func(o *options) { o.maxInFlight = n } }

// Client is a typed ZooKeeper client for Kafka's znodes (KafkaZkClient plus
// the parts of ZooKeeperClient that manage sessions and watches).
type Client struct {
	conn           Conn
	chroot         string
	sessionTimeout time.Duration
	opts           options
	log            *slog.Logger
	metrics        sessionMetrics
	// inFlight holds one token per request in flight (capacity
	// opts.maxInFlight): zookeeper.max.in.flight.requests.
	inFlight chan struct{}

	events    <-chan zk.Event
	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	// noWait is closed by StopWaiting: requests no longer wait for a lost
	// connection.
	noWait     chan struct{}
	noWaitOnce sync.Once

	// mu guards the following.
	mu                  sync.Mutex
	sessionID           int64         // the session the Client currently knows
	sessionGen          uint64        // +1 on every new session
	sessionCh           chan struct{} // closed (and replaced) when sessionGen advances
	newSessionHandlers  map[int]func()
	expiryHandlers      map[int]func()
	expiryDoneFor       int64 // session id for which expiry handlers already ran
	nextHandlerID       int
	registeredSessionID int64 // session of the last successful RegisterBroker, -1 if none
	watches             map[int]*watch
	// closed is set by Close before it waits for the goroutines, so that
	// no goroutine is added to wg once the wait may have begun.
	closed bool
}

// ParseConnectString splits "host:port,host:port/chroot" into servers and
// chroot ("" if none). A chroot of "/" counts as none.
func ParseConnectString(connect string) (servers []string, chroot string, err error) {
	hosts := connect
	if i := strings.IndexByte(connect, '/'); i >= 0 {
		hosts, chroot = connect[:i], connect[i:]
		chroot = strings.TrimRight(chroot, "/")
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		servers = append(servers, h)
	}
	if len(servers) == 0 {
		return nil, "", fmt.Errorf("zkclient: no servers in connect string %q", connect)
	}
	if chroot != "" {
		for _, part := range strings.Split(chroot[1:], "/") {
			if part == "" || part == "." || part == ".." {
				return nil, "", fmt.Errorf("zkclient: bad chroot in connect string %q", connect)
			}
		}
	}
	return servers, chroot, nil
}

func buildOptions(sessionTimeout time.Duration, opts []Option) options {
	o := options{
		logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		now:    time.Now,
	}
	for _, f := range opts {
		f(&o)
	}
	if o.connectTimeout <= 0 {
		o.connectTimeout = sessionTimeout
	}
	if o.maxInFlight <= 0 {
		o.maxInFlight = defaultMaxInFlight
	}
	return o
}

// Connect opens a session to the ensemble named by connect
// ("host:port,host:port/chroot"), waits until the session is established,
// and creates the chroot (every level persistent, null data) if it is
// missing. sessionTimeout <= 0 means DefaultSessionTimeout.
func Connect(connect string, sessionTimeout time.Duration, opts ...Option) (*Client, error) {
	if sessionTimeout <= 0 {
		sessionTimeout = DefaultSessionTimeout
	}
	servers, chroot, err := ParseConnectString(connect)
	if err != nil {
		return nil, err
	}
	o := buildOptions(sessionTimeout, opts)
	if o.secureACLs && !o.authenticated() {
		return nil, ErrSecureACLsUnauthenticated
	}
	events := make(chan zk.Event, 64)
	cb := func(ev zk.Event) {
		if ev.Type != zk.EventSession {
			return
		}
		// Never block go-zookeeper's loop; the session goroutine also polls
		// the session id, so a dropped event is only a delay.
		select {
		case events <- ev:
		default:
		}
	}
	zc, _, err := zk.Connect(servers, sessionTimeout,
		zk.WithEventCallback(cb), zk.WithLogger(slogPrintf{o.logger}), zk.WithLogInfo(false),
		zk.WithMaxBufferSize(4<<20), zk.WithDialer(dialer(o.tls, handshakeTimeout(sessionTimeout, len(servers)))))
	if err != nil {
		return nil, fmt.Errorf("zkclient: connect %q: %w", connect, err)
	}
	deadline := time.Now().Add(o.connectTimeout)
	for zc.State() != zk.StateHasSession {
		if time.Now().After(deadline) {
			state := zc.State()
			zc.Close()
			return nil, fmt.Errorf("%w while in state %s (connecting to %q for %v)", ErrConnectionTimeout, stateName(state), connect, o.connectTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := addAuth(zc, o.auth); err != nil {
		zc.Close()
		return nil, err
	}
	c := newClient(zc, events, chroot, sessionTimeout, o)
	if chroot != "" {
		if err := c.ensureChroot(); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// New wraps an already connected Conn (for example a zktest.Conn). events
// must carry the session events of conn (zk.EventSession with StateExpired
// and StateHasSession); chroot may be "". The Client owns conn and closes it.
func New(conn Conn, events <-chan zk.Event, chroot string, sessionTimeout time.Duration, opts ...Option) (*Client, error) {
	if sessionTimeout <= 0 {
		sessionTimeout = DefaultSessionTimeout
	}
	chroot = strings.TrimRight(chroot, "/")
	c := newClient(conn, events, chroot, sessionTimeout, buildOptions(sessionTimeout, opts))
	if chroot != "" {
		if err := c.ensureChroot(); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

func newClient(conn Conn, events <-chan zk.Event, chroot string, sessionTimeout time.Duration, o options) *Client {
	c := &Client{
		conn:                conn,
		chroot:              chroot,
		sessionTimeout:      sessionTimeout,
		opts:                o,
		metrics:             newSessionMetrics(o.metrics),
		log:                 o.logger,
		inFlight:            make(chan struct{}, o.maxInFlight),
		events:              events,
		stop:                make(chan struct{}),
		noWait:              make(chan struct{}),
		sessionID:           conn.SessionID(),
		sessionCh:           make(chan struct{}),
		newSessionHandlers:  map[int]func(){},
		expiryHandlers:      map[int]func(){},
		registeredSessionID: -1,
		watches:             map[int]*watch{},
	}
	c.wg.Add(1)
	go c.sessionLoop()
	return c
}

func (c *Client) ensureChroot() error {
	// Work on absolute paths: the chroot itself is above our root.
	parts := strings.Split(c.chroot[1:], "/")
	p := ""
	for _, part := range parts {
		p += "/" + part
		err := c.retry(func() error {
			_, err := c.conn.Create(p, nil, 0, c.aclFor("/"))
			return err
		})
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("zkclient: create chroot %s: %w", c.chroot, err)
		}
	}
	return nil
}

// Close ends the session (removing our ephemeral nodes at once) and stops
// every goroutine of the Client. Safe to call more than once.
func (c *Client) Close() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		close(c.stop)
		c.conn.Close()
		c.wg.Wait()
	})
}

// StopWaiting makes every request that waits for a lost connection, and
// every later one that meets one, fail at once with an error matching
// ErrClosed (wrapping the connection error); requests on a live connection
// are unaffected. A broker calls it when its shutdown begins, so that
// neither controlled shutdown nor the components it stops (the controller's
// event loop, waiting in a request) wait for ZooKeeper to come back, which
// without a reachable server could be forever; Close ends the session
// afterwards. Safe to call more than once.
func (c *Client) StopWaiting() { c.noWaitOnce.Do(func() { close(c.noWait) }) }

// SessionID is the current ZooKeeper session id (0 while none).
func (c *Client) SessionID() int64 { return c.conn.SessionID() }

// Chroot returns the chroot prefix ("" if none).
func (c *Client) Chroot() string { return c.chroot }

// SessionTimeout returns the requested session timeout.
func (c *Client) SessionTimeout() time.Duration { return c.sessionTimeout }

// OnNewSession registers fn to run after a new session replaced an expired
// one (not for the first session). Kafka uses this to re-register the broker
// and re-elect. fn runs on the Client's session goroutine, after every
// OnSessionExpired handler for the old session; it may do ZooKeeper I/O but
// should hand long work to its own goroutine or queue.
func (c *Client) OnNewSession(fn func()) (cancel func()) {
	return c.addHandler(c.newSessionHandlers, fn)
}

// OnSessionExpired registers fn to run when the session has expired, before
// the OnNewSession handlers of the replacement session (Kafka's
// beforeInitializingSession: the controller resigns here). Ephemeral nodes of
// the old session are gone, watches are lost.
func (c *Client) OnSessionExpired(fn func()) (cancel func()) {
	return c.addHandler(c.expiryHandlers, fn)
}

// addHandler registers fn in handlers (one of the Client's handler maps)
// under a fresh id and returns the function that removes it again.
func (c *Client) addHandler(handlers map[int]func(), fn func()) (cancel func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.nextHandlerID
	c.nextHandlerID++
	handlers[id] = fn
	return func() {
		c.mu.Lock()
		delete(handlers, id)
		c.mu.Unlock()
	}
}

// sessionLoop is the Client's session goroutine: it notices expiry and new
// sessions (from events, and by polling the session id in case an event was
// dropped) and runs the handlers in order.
func (c *Client) sessionLoop() {
	defer c.wg.Done()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		expired := false
		select {
		case <-c.stop:
			return
		case ev, ok := <-c.events:
			if !ok {
				c.events = nil
				continue
			}
			expired = ev.State == zk.StateExpired
			c.metrics.sessionEvent(ev.State)
		case <-tick.C:
		}
		c.checkSession(expired)
	}
}

func (c *Client) checkSession(sawExpired bool) {
	c.mu.Lock()
	old := c.sessionID
	c.mu.Unlock()
	// An expiry event concerns the session we know only if the connection
	// no longer runs it (go-zookeeper zeroes the id before reporting); a
	// late event about a session we already replaced is ignored.
	if sawExpired && old != 0 && c.conn.SessionID() != old {
		c.runExpiry(old)
	}
	if c.conn.State() != zk.StateHasSession {
		return
	}
	sid := c.conn.SessionID()
	if sid == 0 || sid == old {
		return
	}
	if old != 0 {
		c.runExpiry(old)
	}
	c.mu.Lock()
	c.sessionID = sid
	c.sessionGen++
	close(c.sessionCh)
	c.sessionCh = make(chan struct{})
	handlers := sortedHandlers(c.newSessionHandlers)
	c.mu.Unlock()
	c.log.Info("zookeeper session established", "session_id", fmt.Sprintf("0x%x", sid), "previous_session_id", fmt.Sprintf("0x%x", old))
	for _, h := range handlers {
		h()
	}
}

func (c *Client) runExpiry(sid int64) {
	c.mu.Lock()
	if c.expiryDoneFor == sid {
		c.mu.Unlock()
		return
	}
	c.expiryDoneFor = sid
	handlers := sortedHandlers(c.expiryHandlers)
	c.mu.Unlock()
	c.metrics.expires.Mark(1)
	c.log.Warn("zookeeper session expired", "session_id", fmt.Sprintf("0x%x", sid))
	for _, h := range handlers {
		h()
	}
}

func sortedHandlers(m map[int]func()) []func() {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Ints(ids) // registration order
	out := make([]func(), len(ids))
	for i, id := range ids {
		out[i] = m[id]
	}
	return out
}

// sessionState returns the current session generation and a channel closed
// when it advances.
func (c *Client) sessionState() (uint64, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionGen, c.sessionCh
}

// retryable reports errors that mean "connection down, session maybe alive".
func retryable(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer)
}

// sessionExpiredError is what a request gets when the session it was begun
// under expired before it could be answered; it matches zk.ErrSessionExpired.
func sessionExpiredError(sid int64) error {
	return fmt.Errorf("zkclient: session 0x%x expired before the request was answered: %w", sid, zk.ErrSessionExpired)
}

// retry runs op, resending it after connection loss for as long as the
// session it was begun under lives, like Kafka's ZooKeeperClient, which
// keeps a request queued across reconnects and fails it only on session
// expiry or close. The request belongs to the session current when retry
// starts (or, if there is none at that moment, to the next one); once the
// connection runs another session, or none because go-zookeeper has learned
// that ours expired, the request fails with an error matching
// zk.ErrSessionExpired and is never sent on the new session, whose
// handlers (OnNewSession) redo what must be redone. There is no deadline:
// how long a session survives an outage is the server's decision, and
// go-zookeeper learns it on the first connection that gets an answer.
func (c *Client) retry(op func() error) error {
	sid := c.conn.SessionID()
	backoff := 20 * time.Millisecond
	for {
		select {
		case <-c.stop:
			return ErrClosed
		default:
		}
		switch cur := c.conn.SessionID(); {
		case sid == 0:
			sid = cur
		case cur != sid:
			return sessionExpiredError(sid)
		}
		// A permit per attempt, released before any backoff, so a request
		// waiting for the connection holds no permit while it sleeps.
		select {
		case c.inFlight <- struct{}{}:
		case <-c.stop:
			return ErrClosed
		}
		start := time.Now()
		err := op()
		<-c.inFlight
		c.metrics.requestDone(start)
		if err == nil || !retryable(err) {
			if errors.Is(err, zk.ErrClosing) {
				return ErrClosed
			}
			return err
		}
		if cur := c.conn.SessionID(); sid != 0 && cur != sid {
			return sessionExpiredError(sid)
		}
		t := time.NewTimer(backoff)
		select {
		case <-c.stop:
			t.Stop()
			return ErrClosed
		case <-c.noWait:
			t.Stop()
			return fmt.Errorf("%w (shutting down, not waiting for the connection): %w", ErrClosed, err)
		case <-t.C:
		}
		if backoff < 500*time.Millisecond {
			backoff *= 2
		}
	}
}

// abs maps a chroot-relative path to the server path.
func (c *Client) abs(path string) string {
	if c.chroot == "" {
		return path
	}
	if path == "/" {
		return c.chroot
	}
	return c.chroot + path
}

// rel strips the chroot from a server path.
func (c *Client) rel(path string) string {
	if c.chroot == "" {
		return path
	}
	p := strings.TrimPrefix(path, c.chroot)
	if p == "" {
		return "/"
	}
	return p
}

// stateName names a connection state as ZooKeeper's Java client does
// (CONNECTING, CONNECTED, AUTH_FAILED, ...), the words Kafka's
// ZooKeeperClientTimeoutException reports.
func stateName(s zk.State) string {
	switch s {
	case zk.StateDisconnected, zk.StateConnecting, zk.StateUnknown, zk.StateConnected:
		// go-zookeeper's Connected is a TCP connection still without a
		// session, which the Java client counts as CONNECTING.
		return "CONNECTING"
	case zk.StateHasSession:
		return "CONNECTED"
	case zk.StateAuthFailed:
		return "AUTH_FAILED"
	case zk.StateExpired:
		return "CLOSED"
	}
	return strings.ToUpper(strings.TrimPrefix(s.String(), "State"))
}

// slogPrintf adapts go-zookeeper's Printf logger to slog.
type slogPrintf struct{ l *slog.Logger }

func (s slogPrintf) Printf(format string, args ...interface{}) {
	s.l.Debug("zk: " + fmt.Sprintf(format, args...))
}
