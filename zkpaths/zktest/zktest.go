package zktest

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths/zkclient"
)

// errRuntimeInconsistency is what go-zookeeper reports for the ops of a
// failed multi that came after the failing op.
var errRuntimeInconsistency = errors.New("unknown error: -2")

type node struct {
	data     []byte   // nil = null data
	acl      []zk.ACL // stored as given; zktest does not enforce ACLs
	stat     zk.Stat
	children map[string]struct{}
}

func (n *node) clone() *node {
	c := *n
	c.children = make(map[string]struct{}, len(n.children))
	for k := range n.children {
		c.children[k] = struct{}{}
	}
	return &c
}

type watchType int

const (
	watchData  watchType = iota // GetW: fires on change and delete
	watchExist                  // ExistsW: fires on create, change and delete
	watchChild                  // ChildrenW: fires on child change and delete
)

type watchKey struct {
	path string
	typ  watchType
}

// Server is an in-memory ZooKeeper: a tree with data versions, czxid and
// friends, ephemeral nodes owned by sessions, sequential nodes numbered from
// the parent's cversion, one-shot watches and atomic multi with check ops.
// It is for unit tests of pure logic; behaviour that matters in production is
// also tested against the real server (zkserver).
type Server struct {
	now func() time.Time

	// mu guards the following.
	mu       sync.Mutex
	nodes    map[string]*node
	zxid     int64
	nextSess int64
	sessions map[int64]*Conn
	// persistent lists the persistent watchers by path; pending holds the
	// callbacks of the last commits, run by unlock once mu is released.
	persistent map[string][]*persistentWatch
	pending    []func()
	// recording is set by Record; log holds the committed transactions.
	recording bool
	log       []Txn
}

// persistentWatch is one watcher registered with WatchData or WatchChildren.
type persistentWatch struct {
	children bool
	fn       func()
	// dead is set by the watch's cancel; guarded by Server.mu.
	dead bool
}

// Op is one write of a committed transaction, as Record keeps it: Kind is
// "create", "set", "delete" or "check" (the version check of a multi).
type Op struct {
	Kind    string
	Path    string
	Data    []byte
	Version int32
}

// Txn is one committed transaction: a single write or a whole multi, with
// the session that made it (0 for the server's own helpers).
type Txn struct {
	Session int64
	Ops     []Op
}

// unlock releases mu and then runs the persistent-watch callbacks the
// commits made under it queued, in commit order, on the caller's goroutine.
func (s *Server) unlock() {
	fns := s.pending
	s.pending = nil
	s.mu.Unlock()
	for _, f := range fns {
		f()
	}
}

// NewServer returns an empty tree holding only "/" and "/zookeeper".
func NewServer() *Server {
	s := &Server{now: time.Now, nodes: map[string]*node{}, nextSess: 0x100000000, sessions: map[int64]*Conn{}, persistent: map[string][]*persistentWatch{}}
	s.nodes["/"] = &node{children: map[string]struct{}{}}
	s.nodes["/zookeeper"] = &node{children: map[string]struct{}{}}
	s.nodes["/"].children["zookeeper"] = struct{}{}
	return s
}

// Connect opens a session. The channel carries session events the way
// go-zookeeper's does (StateHasSession, StateExpired, StateDisconnected).
func (s *Server) Connect() (*Conn, <-chan zk.Event) {
	s.mu.Lock()
	defer s.unlock()
	c := &Conn{srv: s, events: make(chan zk.Event, 16), watches: map[watchKey][]chan zk.Event{}}
	s.newSessionLocked(c)
	return c, c.events
}

// NewClient connects a zkclient.Client to this server; chroot may be "".
func (s *Server) NewClient(chroot string, opts ...zkclient.Option) (*zkclient.Client, error) {
	c, ev := s.Connect()
	return zkclient.New(c, ev, chroot, 6*time.Second, opts...)
}

func (s *Server) newSessionLocked(c *Conn) {
	s.nextSess++
	c.sessionID = s.nextSess
	c.state = zk.StateHasSession
	s.sessions[c.sessionID] = c
	c.sendEvent(zk.Event{Type: zk.EventSession, State: zk.StateConnected})
	c.sendEvent(zk.Event{Type: zk.EventSession, State: zk.StateHasSession})
}

// Expire expires conn's session as the real server does after a timeout:
// its ephemeral nodes are deleted (firing other sessions' watches), its
// watches end with EventNotWatching, it sees StateExpired, and then, like
// go-zookeeper reconnecting, it gets a new session (StateHasSession).
func (s *Server) Expire(c *Conn) {
	s.mu.Lock()
	defer s.unlock()
	if c.closed {
		return
	}
	s.endSessionLocked(c, zk.ErrSessionExpired)
	c.sendEvent(zk.Event{Type: zk.EventSession, State: zk.StateDisconnected})
	c.sendEvent(zk.Event{Type: zk.EventSession, State: zk.StateExpired})
	s.newSessionLocked(c)
}

// ExpireKeepingEphemerals is Expire, except that the old session's
// ephemeral nodes stay until Reap is called with its id: the server-side
// race of ZOOKEEPER-2985, where a client already has a new session while its
// previous session's ephemerals are still visible.
func (s *Server) ExpireKeepingEphemerals(c *Conn) (oldSessionID int64) {
	s.mu.Lock()
	defer s.unlock()
	if c.closed {
		return 0
	}
	old := c.sessionID
	delete(s.sessions, old)
	for k, chans := range c.watches {
		for _, ch := range chans {
			ch <- zk.Event{Type: zk.EventNotWatching, State: zk.StateDisconnected, Path: k.path, Err: zk.ErrSessionExpired}
			close(ch)
		}
	}
	c.watches = map[watchKey][]chan zk.Event{}
	c.sessionID = 0
	c.sendEvent(zk.Event{Type: zk.EventSession, State: zk.StateDisconnected})
	c.sendEvent(zk.Event{Type: zk.EventSession, State: zk.StateExpired})
	s.newSessionLocked(c)
	return old
}

// Reap deletes the ephemeral nodes still owned by sessionID.
func (s *Server) Reap(sessionID int64) {
	s.mu.Lock()
	defer s.unlock()
	s.deleteEphemeralsLocked(sessionID)
}

func (s *Server) deleteEphemeralsLocked(sessionID int64) {
	var eph []string
	for p, n := range s.nodes {
		if n.stat.EphemeralOwner == sessionID {
			eph = append(eph, p)
		}
	}
	sort.Strings(eph)
	for _, p := range eph {
		tx := s.begin()
		if tx.delete(p, -1) == nil {
			s.commit(tx)
		}
	}
}

// endSessionLocked removes the session's ephemerals and watches.
func (s *Server) endSessionLocked(c *Conn, err error) {
	delete(s.sessions, c.sessionID)
	s.deleteEphemeralsLocked(c.sessionID)
	for k, chans := range c.watches {
		for _, ch := range chans {
			ch <- zk.Event{Type: zk.EventNotWatching, State: zk.StateDisconnected, Path: k.path, Err: err}
			close(ch)
		}
	}
	c.watches = map[watchKey][]chan zk.Event{}
	c.sessionID = 0
}

// Get reads a node directly, outside any session (for assertions).
func (s *Server) Get(p string) (data []byte, stat zk.Stat, ok bool) {
	s.mu.Lock()
	defer s.unlock()
	n, ok := s.nodes[p]
	if !ok {
		return nil, zk.Stat{}, false
	}
	return append([]byte(nil), n.data...), n.stat, true
}

// Paths lists every node path under prefix (inclusive), sorted; useful to
// assert on the whole tree.
func (s *Server) Paths(prefix string) []string {
	s.mu.Lock()
	defer s.unlock()
	var out []string
	for p := range s.nodes {
		if p == prefix || strings.HasPrefix(p, strings.TrimSuffix(prefix, "/")+"/") {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// tx is a copy-on-write transaction over the tree; events are delivered on
// commit only.
type tx struct {
	s       *Server
	nodes   map[string]*node
	zxid    int64
	events  []zk.Event
	copied  map[string]bool
	session int64
	ops     []Op // the writes, for Record
}

func (s *Server) begin() *tx {
	m := make(map[string]*node, len(s.nodes))
	for k, v := range s.nodes {
		m[k] = v
	}
	return &tx{s: s, nodes: m, zxid: s.zxid + 1, copied: map[string]bool{}}
}

func (t *tx) mut(p string) *node {
	if !t.copied[p] {
		t.nodes[p] = t.nodes[p].clone()
		t.copied[p] = true
	}
	return t.nodes[p]
}

func (s *Server) commit(t *tx) {
	s.nodes = t.nodes
	s.zxid = t.zxid
	for _, ev := range t.events {
		s.fireLocked(ev)
	}
	s.firePersistentLocked(t.events)
	if s.recording && len(t.ops) > 0 {
		s.log = append(s.log, Txn{Session: t.session, Ops: t.ops})
	}
}

// firePersistentLocked queues, once per commit and in event order, every
// live persistent watcher the commit's events concern: data watchers of a
// created, changed or deleted node; children watchers of a node whose
// children changed or that was itself created or deleted.
func (s *Server) firePersistentLocked(events []zk.Event) {
	fired := map[*persistentWatch]bool{}
	for _, ev := range events {
		for _, w := range s.persistent[ev.Path] {
			if w.dead || fired[w] {
				continue
			}
			switch {
			case w.children && ev.Type == zk.EventNodeDataChanged:
				continue
			case !w.children && ev.Type == zk.EventNodeChildrenChanged:
				continue
			}
			fired[w] = true
			s.pending = append(s.pending, w.fn)
		}
	}
}

// WatchData registers a persistent watcher (ZooKeeper 3.6's persistent
// watch, as opposed to the one-shot watches of Conn): fn runs after every
// commit that creates, changes or deletes the node at p, once per commit,
// synchronously on the goroutine that made the change, after the server
// lock is released. Tests that need every change delivered before their
// next step use it instead of zkclient's asynchronous watches. cancel stops
// it.
func (s *Server) WatchData(p string, fn func()) (cancel func()) {
	return s.addPersistent(p, false, fn)
}

// WatchChildren is WatchData for the child list of p (and p's own creation
// or deletion).
func (s *Server) WatchChildren(p string, fn func()) (cancel func()) {
	return s.addPersistent(p, true, fn)
}

func (s *Server) addPersistent(p string, children bool, fn func()) func() {
	s.mu.Lock()
	defer s.unlock()
	w := &persistentWatch{children: children, fn: fn}
	s.persistent[p] = append(s.persistent[p], w)
	return func() {
		s.mu.Lock()
		defer s.unlock()
		w.dead = true
		ws := s.persistent[p]
		for i, x := range ws {
			if x == w {
				s.persistent[p] = append(ws[:i:i], ws[i+1:]...)
				break
			}
		}
	}
}

// Record starts keeping every committed transaction (see TakeRecord).
func (s *Server) Record() {
	s.mu.Lock()
	defer s.unlock()
	s.recording = true
}

// TakeRecord returns the transactions committed since the last call and
// forgets them.
func (s *Server) TakeRecord() []Txn {
	s.mu.Lock()
	defer s.unlock()
	out := s.log
	s.log = nil
	return out
}

// Multi applies ops atomically outside any session, with no watch firing
// in between: for example a node deleted and re-created "between two watch
// deliveries". Ops are as for Conn.Multi; ephemeral creates are refused.
func (s *Server) Multi(ops ...any) error {
	s.mu.Lock()
	defer s.unlock()
	t := s.begin()
	for _, op := range ops {
		var err error
		switch o := op.(type) {
		case *zk.CreateRequest:
			if o.Flags&zk.FlagEphemeral != 0 {
				return fmt.Errorf("zktest: server multi: ephemeral create of %s", o.Path)
			}
			_, err = t.create(o.Path, o.Data, o.Flags, 0)
		case *zk.SetDataRequest:
			_, err = t.set(o.Path, o.Data, o.Version)
		case *zk.DeleteRequest:
			err = t.delete(o.Path, o.Version)
		case *zk.CheckVersionRequest:
			err = t.check(o.Path, o.Version)
		default:
			return fmt.Errorf("zktest: unknown multi op %T", op)
		}
		if err != nil {
			return fmt.Errorf("zktest: server multi: %w", err)
		}
	}
	s.commit(t)
	return nil
}

func (t *tx) create(p string, data []byte, flags int32, owner int64) (string, error) {
	if err := validatePath(p, flags&zk.FlagSequence != 0); err != nil {
		return "", err
	}
	parent := path.Dir(p)
	pn, ok := t.nodes[parent]
	if !ok {
		return "", zk.ErrNoNode
	}
	if pn.stat.EphemeralOwner != 0 {
		return "", zk.ErrNoChildrenForEphemerals
	}
	if flags&zk.FlagSequence != 0 {
		p = fmt.Sprintf("%s%010d", p, pn.stat.Cversion)
	}
	if _, exists := t.nodes[p]; exists {
		return "", zk.ErrNodeExists
	}
	now := t.s.now().UnixMilli()
	n := &node{data: cloneData(data), children: map[string]struct{}{}}
	n.stat = zk.Stat{Czxid: t.zxid, Mzxid: t.zxid, Pzxid: t.zxid, Ctime: now, Mtime: now, DataLength: int32(len(data))}
	if flags&zk.FlagEphemeral != 0 {
		n.stat.EphemeralOwner = owner
	}
	t.nodes[p] = n
	t.copied[p] = true
	pm := t.mut(parent)
	pm.children[path.Base(p)] = struct{}{}
	pm.stat.Cversion++
	pm.stat.NumChildren = int32(len(pm.children))
	pm.stat.Pzxid = t.zxid
	t.events = append(t.events,
		zk.Event{Type: zk.EventNodeCreated, Path: p},
		zk.Event{Type: zk.EventNodeChildrenChanged, Path: parent})
	t.ops = append(t.ops, Op{Kind: "create", Path: p, Data: cloneData(data)})
	return p, nil
}

func (t *tx) set(p string, data []byte, version int32) (*zk.Stat, error) {
	n, ok := t.nodes[p]
	if !ok {
		return nil, zk.ErrNoNode
	}
	if version != -1 && version != n.stat.Version {
		return nil, zk.ErrBadVersion
	}
	m := t.mut(p)
	m.data = cloneData(data)
	m.stat.Version++
	m.stat.Mzxid = t.zxid
	m.stat.Mtime = t.s.now().UnixMilli()
	m.stat.DataLength = int32(len(data))
	st := m.stat
	t.events = append(t.events, zk.Event{Type: zk.EventNodeDataChanged, Path: p})
	t.ops = append(t.ops, Op{Kind: "set", Path: p, Data: cloneData(data), Version: version})
	return &st, nil
}

func (t *tx) delete(p string, version int32) error {
	if p == "/" {
		return zk.ErrBadArguments
	}
	n, ok := t.nodes[p]
	if !ok {
		return zk.ErrNoNode
	}
	if version != -1 && version != n.stat.Version {
		return zk.ErrBadVersion
	}
	if len(n.children) > 0 {
		return zk.ErrNotEmpty
	}
	delete(t.nodes, p)
	parent := path.Dir(p)
	pm := t.mut(parent)
	delete(pm.children, path.Base(p))
	// Like ZooKeeper 3.8, a delete does not bump the parent's cversion, so
	// the next sequential child continues from the creations only.
	pm.stat.NumChildren = int32(len(pm.children))
	pm.stat.Pzxid = t.zxid
	t.events = append(t.events,
		zk.Event{Type: zk.EventNodeDeleted, Path: p},
		zk.Event{Type: zk.EventNodeChildrenChanged, Path: parent})
	t.ops = append(t.ops, Op{Kind: "delete", Path: p, Version: version})
	return nil
}

func (t *tx) check(p string, version int32) error {
	n, ok := t.nodes[p]
	if !ok {
		return zk.ErrNoNode
	}
	if version != -1 && version != n.stat.Version {
		return zk.ErrBadVersion
	}
	t.ops = append(t.ops, Op{Kind: "check", Path: p, Version: version})
	return nil
}

// fireLocked delivers one event to every session's matching one-shot watches.
func (s *Server) fireLocked(ev zk.Event) {
	var types []watchType
	switch ev.Type {
	case zk.EventNodeCreated:
		types = []watchType{watchExist}
	case zk.EventNodeDataChanged:
		types = []watchType{watchExist, watchData}
	case zk.EventNodeChildrenChanged:
		types = []watchType{watchChild}
	case zk.EventNodeDeleted:
		types = []watchType{watchExist, watchData, watchChild}
	}
	ev.State = zk.StateHasSession
	for _, c := range s.sessions {
		for _, typ := range types {
			k := watchKey{ev.Path, typ}
			for _, ch := range c.watches[k] {
				ch <- ev
				close(ch)
			}
			delete(c.watches, k)
		}
	}
}

func cloneData(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func validatePath(p string, seq bool) error {
	if p == "" || p[0] != '/' {
		return zk.ErrInvalidPath
	}
	if p == "/" {
		return nil
	}
	if strings.HasSuffix(p, "/") && !seq {
		return zk.ErrInvalidPath
	}
	for _, part := range strings.Split(p[1:], "/") {
		if (part == "" && !seq) || part == "." || part == ".." {
			return zk.ErrInvalidPath
		}
	}
	return nil
}

// Conn is one client connection of the fake; it implements zkclient.Conn.
// After Expire it carries on with a new session, like go-zookeeper.
type Conn struct {
	srv    *Server
	events chan zk.Event

	// The following are guarded by srv.mu.
	sessionID    int64
	state        zk.State
	closed       bool
	disconnected bool
	watches      map[watchKey][]chan zk.Event
}

var _ zkclient.Conn = (*Conn)(nil)

func (c *Conn) sendEvent(ev zk.Event) {
	select {
	case c.events <- ev:
	default: // like go-zookeeper: never block; clients poll the session id
	}
}

// SetDisconnected simulates connection loss: while true every request fails
// with zk.ErrConnectionClosed (the session and its watches stay alive).
func (c *Conn) SetDisconnected(down bool) {
	c.srv.mu.Lock()
	defer c.srv.unlock()
	c.disconnected = down
	if down {
		c.state = zk.StateDisconnected
		c.sendEvent(zk.Event{Type: zk.EventSession, State: zk.StateDisconnected})
	} else if !c.closed {
		c.state = zk.StateHasSession
		c.sendEvent(zk.Event{Type: zk.EventSession, State: zk.StateHasSession})
	}
}

func (c *Conn) usable() error {
	if c.closed {
		return zk.ErrClosing
	}
	if c.disconnected {
		return zk.ErrConnectionClosed
	}
	return nil
}

func (c *Conn) addWatch(p string, typ watchType) <-chan zk.Event {
	ch := make(chan zk.Event, 1)
	k := watchKey{p, typ}
	c.watches[k] = append(c.watches[k], ch)
	return ch
}

// SessionID is the current session id.
func (c *Conn) SessionID() int64 {
	c.srv.mu.Lock()
	defer c.srv.unlock()
	return c.sessionID
}

// State is the connection state.
func (c *Conn) State() zk.State {
	c.srv.mu.Lock()
	defer c.srv.unlock()
	return c.state
}

// Close ends the session (ephemerals deleted, watches end).
func (c *Conn) Close() {
	c.srv.mu.Lock()
	defer c.srv.unlock()
	if c.closed {
		return
	}
	if c.sessionID != 0 {
		c.srv.endSessionLocked(c, zk.ErrClosing)
	}
	c.closed = true
	c.state = zk.StateDisconnected
}

// readNode reads the node at p on an usable session (zk.ErrNoNode if there
// is none) under the server lock: read copies what it needs from the node,
// and the node's Stat and, with watch set, a new watch of type typ on p are
// returned.
func (c *Conn) readNode(p string, watch bool, typ watchType, read func(n *node)) (*zk.Stat, <-chan zk.Event, error) {
	c.srv.mu.Lock()
	defer c.srv.unlock()
	if err := c.usable(); err != nil {
		return nil, nil, err
	}
	n, ok := c.srv.nodes[p]
	if !ok {
		return nil, nil, zk.ErrNoNode
	}
	read(n)
	var ch <-chan zk.Event
	if watch {
		ch = c.addWatch(p, typ)
	}
	st := n.stat
	return &st, ch, nil
}

func (c *Conn) get(p string, watch bool) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	var data []byte
	st, ch, err := c.readNode(p, watch, watchData, func(n *node) { data = cloneData(n.data) })
	return data, st, ch, err
}

// Get reads data and Stat.
func (c *Conn) Get(p string) ([]byte, *zk.Stat, error) {
	d, st, _, err := c.get(p, false)
	return d, st, err
}

// GetW reads and sets a data watch.
func (c *Conn) GetW(p string) ([]byte, *zk.Stat, <-chan zk.Event, error) { return c.get(p, true) }

func (c *Conn) exists(p string, watch bool) (bool, *zk.Stat, <-chan zk.Event, error) {
	c.srv.mu.Lock()
	defer c.srv.unlock()
	if err := c.usable(); err != nil {
		return false, nil, nil, err
	}
	var ch <-chan zk.Event
	if watch {
		ch = c.addWatch(p, watchExist)
	}
	n, ok := c.srv.nodes[p]
	if !ok {
		return false, &zk.Stat{}, ch, nil
	}
	st := n.stat
	return true, &st, ch, nil
}

// Exists reports existence.
func (c *Conn) Exists(p string) (bool, *zk.Stat, error) {
	ok, st, _, err := c.exists(p, false)
	return ok, st, err
}

// ExistsW reports existence and sets a watch firing on create/change/delete.
func (c *Conn) ExistsW(p string) (bool, *zk.Stat, <-chan zk.Event, error) { return c.exists(p, true) }

func (c *Conn) children(p string, watch bool) ([]string, *zk.Stat, <-chan zk.Event, error) {
	var kids []string
	st, ch, err := c.readNode(p, watch, watchChild, func(n *node) {
		kids = make([]string, 0, len(n.children))
		for k := range n.children {
			kids = append(kids, k)
		}
		sort.Strings(kids)
	})
	return kids, st, ch, err
}

// Children lists children.
func (c *Conn) Children(p string) ([]string, *zk.Stat, error) {
	k, st, _, err := c.children(p, false)
	return k, st, err
}

// ChildrenW lists children and sets a child watch.
func (c *Conn) ChildrenW(p string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	return c.children(p, true)
}

// Create creates a node; the ACL is stored (GetACL returns it) but not
// enforced.
func (c *Conn) Create(p string, data []byte, flags int32, acl []zk.ACL) (string, error) {
	var created string
	err := c.write(func(t *tx) (err error) {
		if len(acl) == 0 {
			return zk.ErrInvalidACL
		}
		created, err = t.create(p, data, flags, c.sessionID)
		if err == nil {
			t.mut(created).acl = slices.Clone(acl)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return created, nil
}

// write runs op in a transaction of this session and commits it if op
// succeeds; a failed op (or a session that is not usable) changes nothing.
func (c *Conn) write(op func(t *tx) error) error {
	c.srv.mu.Lock()
	defer c.srv.unlock()
	if err := c.usable(); err != nil {
		return err
	}
	t := c.srv.begin()
	t.session = c.sessionID
	if err := op(t); err != nil {
		return err
	}
	c.srv.commit(t)
	return nil
}

// Set writes data conditionally.
func (c *Conn) Set(p string, data []byte, version int32) (*zk.Stat, error) {
	var st *zk.Stat
	err := c.write(func(t *tx) (err error) {
		st, err = t.set(p, data, version)
		return err
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// GetACL returns the ACL a node was created or last set with.
func (c *Conn) GetACL(p string) ([]zk.ACL, *zk.Stat, error) {
	var acl []zk.ACL
	st, _, err := c.readNode(p, false, 0, func(n *node) { acl = slices.Clone(n.acl) })
	if err != nil {
		return nil, nil, err
	}
	return acl, st, nil
}

// SetACL replaces a node's ACL conditionally on its ACL version.
func (c *Conn) SetACL(p string, acl []zk.ACL, version int32) (*zk.Stat, error) {
	var st zk.Stat
	err := c.write(func(t *tx) error {
		n, ok := t.nodes[p]
		if !ok {
			return zk.ErrNoNode
		}
		if len(acl) == 0 {
			return zk.ErrInvalidACL
		}
		if version != -1 && version != n.stat.Aversion {
			return zk.ErrBadVersion
		}
		m := t.mut(p)
		m.acl = slices.Clone(acl)
		m.stat.Aversion++
		st = m.stat
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &st, nil
}

// Delete deletes conditionally.
func (c *Conn) Delete(p string, version int32) error {
	return c.write(func(t *tx) error { return t.delete(p, version) })
}

// Multi applies ops atomically with go-zookeeper's result conventions: on
// failure the failing op carries its error, earlier ops nil and later ops
// the runtime-inconsistency error, and nothing is applied.
func (c *Conn) Multi(ops ...interface{}) ([]zk.MultiResponse, error) {
	var res []zk.MultiResponse
	err := c.write(func(t *tx) error {
		var err error
		res, err = c.multiLocked(t, ops)
		return err
	})
	return res, err
}

// multiLocked applies ops to t; on failure it returns the responses to hand
// back with the failing op's error (nil responses for an op it does not know).
func (c *Conn) multiLocked(t *tx, ops []interface{}) ([]zk.MultiResponse, error) {
	res := make([]zk.MultiResponse, len(ops))
	var failed error
	for i, op := range ops {
		if failed != nil {
			res[i].Error = errRuntimeInconsistency
			continue
		}
		var err error
		switch o := op.(type) {
		case *zk.CreateRequest:
			res[i].String, err = t.create(o.Path, o.Data, o.Flags, c.sessionID)
			if err == nil {
				t.mut(res[i].String).acl = slices.Clone(o.Acl)
			}
		case *zk.SetDataRequest:
			res[i].Stat, err = t.set(o.Path, o.Data, o.Version)
		case *zk.DeleteRequest:
			err = t.delete(o.Path, o.Version)
		case *zk.CheckVersionRequest:
			err = t.check(o.Path, o.Version)
		default:
			return nil, fmt.Errorf("zktest: unknown multi op %T", op)
		}
		if err != nil {
			failed = err
			for j := 0; j < i; j++ {
				res[j] = zk.MultiResponse{}
			}
			res[i] = zk.MultiResponse{Error: err}
		}
	}
	if failed != nil {
		return res, failed
	}
	return res, nil
}
