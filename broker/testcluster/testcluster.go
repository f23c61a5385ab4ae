package testcluster

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// Main runs a test binary's tests with one shared ZooKeeper server, stopped
// at the end. Use it from the TestMain of every package that starts
// clusters:
//
//	func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }
func Main(m *testing.M) int { return zkserver.RunShared(m) }

// Options describe a cluster. The zero value is a 3-broker cluster without
// racks.
type Options struct {
	// Brokers is the number of brokers (default 3).
	Brokers int
	// FirstBrokerID is the id of broker 0 (default 1); broker i has id
	// FirstBrokerID+i.
	FirstBrokerID int32
	// Racks gives broker i the rack Racks[i] ("" or missing: none).
	Racks []string
	// SessionTimeout is zookeeper.session.timeout.ms (default 6s).
	SessionTimeout time.Duration
	// Overrides are server.properties keys applied to every broker.
	Overrides map[string]string
	// FixedStartIndex ≥ 0 makes topic creation's replica assignment
	// deterministic; nil keeps Kafka's random start.
	FixedStartIndex *int
	// ZKProxy puts a pausable TCP proxy (zkserver.Proxy) between each
	// broker and ZooKeeper, so tests can cut a broker off and expire its
	// session (PauseZK/ResumeZK).
	ZKProxy bool
	// BrokerOptions are passed to every broker.New.
	BrokerOptions []broker.Option
	// HTTP turns on each broker's klassik.http.listener on 127.0.0.1 and
	// a free port (kept over restarts); see HTTPAddr.
	HTTP bool
	// ExtraListeners are listener names (SSL, SASL_SSL, INTERNAL ...)
	// each broker binds beside PLAINTEXT, on 127.0.0.1 and a free port
	// kept over restarts (see ListenerAddr); their protocols come from
	// listener.security.protocol.map and their settings from Overrides.
	ExtraListeners []string
	// ZKConnect is the ZooKeeper connect string (with chroot) of the
	// cluster, for a test that runs its own ZooKeeper (a TLS port, secure
	// ACLs); default: the shared server with a fresh chroot. The test's
	// own session (ZK) uses it as given, so it names the plaintext port;
	// brokers may get another through Overrides["zookeeper.connect"].
	ZKConnect string
	// LogDirs is the number of log.dirs each broker gets (default 1):
	// <root>/broker-<id>/dir-<n>; see Cluster.LogDirs.
	LogDirs int
	// LogLevel of the brokers' logs, written to t.Log (default Warn; the
	// environment variable KLASSIK_TEST_LOG=debug|info overrides it).
	LogLevel slog.Level
}

// Interceptor may answer a request instead of the broker: handled=false
// passes it on unchanged.
type Interceptor func(ctx context.Context, req *network.Request) (resp kmsg.Response, handled bool, err error)

// Cluster is a real ZooKeeper chroot plus N in-process brokers on
// 127.0.0.1, stopped by t.Cleanup.
type Cluster struct {
	t         testing.TB
	opts      Options
	zkConnect string
	logs      *logSink

	// mu guards the following.
	mu     sync.Mutex
	nodes  []*node
	zk     *zkclient.Client
	closed bool
	direct map[string]kmsg.Requestor // by broker address, see Direct

	clients Clients
}

type node struct {
	idx   int
	id    int32
	props map[string]string
	port  int            // last bound port, reused on restart
	extra map[string]int // ExtraListeners' ports
	proxy *zkserver.Proxy
	b     *broker.Broker
	// intercept maps an API key to an Interceptor; read by the handler
	// wrapper on every request.
	intercept sync.Map
}

// Start starts the cluster and waits until every broker is registered and a
// controller is elected. It fails the test on any error.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Brokers <= 0 {
		opts.Brokers = 3
	}
	if opts.FirstBrokerID == 0 {
		opts.FirstBrokerID = 1
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = 6 * time.Second
	}
	if opts.LogLevel == 0 {
		opts.LogLevel = slog.LevelWarn
	}
	switch strings.ToLower(os.Getenv("KLASSIK_TEST_LOG")) {
	case "debug":
		opts.LogLevel = slog.LevelDebug
	case "info":
		opts.LogLevel = slog.LevelInfo
	}
	// The log dirs must outlive the brokers: TempDir's removal is a cleanup
	// too, and cleanups run last-registered first.
	root := t.TempDir()
	zkConnect := opts.ZKConnect
	if zkConnect == "" {
		zkConnect = zkserver.ConnectString(t)
	}
	c := &Cluster{t: t, opts: opts, zkConnect: zkConnect, logs: &logSink{t: t}}
	t.Cleanup(c.Close)
	for i := 0; i < opts.Brokers; i++ {
		id := opts.FirstBrokerID + int32(i)
		props := map[string]string{
			"broker.id":                            strconv.Itoa(int(id)),
			"listeners":                            "PLAINTEXT://127.0.0.1:0",
			"log.dirs":                             filepath.Join(root, "broker-"+strconv.Itoa(int(id))),
			"zookeeper.connect":                    c.zkConnect,
			"zookeeper.session.timeout.ms":         strconv.Itoa(int(opts.SessionTimeout / time.Millisecond)),
			"controlled.shutdown.retry.backoff.ms": "200",
			"controller.socket.timeout.ms":         "5000",
		}
		if opts.LogDirs > 1 {
			dirs := make([]string, opts.LogDirs)
			for d := range dirs {
				dirs[d] = filepath.Join(root, "broker-"+strconv.Itoa(int(id)), "dir-"+strconv.Itoa(d))
			}
			props["log.dirs"] = strings.Join(dirs, ",")
		}
		n := &node{idx: i, id: id, props: props}
		if opts.ZKProxy {
			srv, err := zkserver.Shared()
			if err != nil {
				t.Fatalf("testcluster: shared ZooKeeper: %v", err)
			}
			n.proxy, err = zkserver.NewProxy(srv.Addr())
			if err != nil {
				t.Fatalf("testcluster: ZooKeeper proxy: %v", err)
			}
			props["zookeeper.connect"] = n.proxy.Addr() + c.zkConnect[strings.Index(c.zkConnect, "/"):]
		}
		// The internal topics are refused while fewer brokers are alive
		// than their replication factor (as in Kafka), so a cluster of
		// fewer than three brokers gets factors it can meet, as Kafka's
		// single-broker config/server.properties sets them.
		for k, v := range internalTopicFactors(opts.Brokers) {
			props[k] = v
		}
		if i < len(opts.Racks) && opts.Racks[i] != "" {
			props["broker.rack"] = opts.Racks[i]
		}
		for k, v := range opts.Overrides {
			props[k] = v
		}
		if _, own := opts.Overrides["listeners"]; !own {
			// A port outside the ephemeral range, kept over restarts: a
			// client's source port can never take it while the broker is
			// down.
			port, err := zkserver.FreePort()
			if err != nil {
				t.Fatalf("testcluster: a port for broker %d: %v", id, err)
			}
			n.port = port
		}
		for _, name := range opts.ExtraListeners {
			port, err := zkserver.FreePort()
			if err != nil {
				t.Fatalf("testcluster: a %s port for broker %d: %v", name, id, err)
			}
			if n.extra == nil {
				n.extra = map[string]int{}
			}
			n.extra[name] = port
		}
		if opts.HTTP {
			port, err := zkserver.FreePort()
			if err != nil {
				t.Fatalf("testcluster: an HTTP port for broker %d: %v", id, err)
			}
			props["klassik.http.listener"] = "127.0.0.1:" + strconv.Itoa(port)
		}
		c.nodes = append(c.nodes, n)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(c.nodes))
	for i := range c.nodes {
		wg.Add(1)
		go func() { // one start per broker; joined below
			defer wg.Done()
			errs[i] = c.startNode(c.nodes[i])
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("testcluster: starting broker %d: %v", c.nodes[i].id, err)
		}
	}
	c.WaitFor(30*time.Second, "a controller and every broker registered", func() bool {
		_, ok := c.Controller()
		ids, err := c.ZK().GetBrokerIDs()
		return ok && err == nil && len(ids) == len(c.nodes)
	})
	return c
}

func (c *Cluster) startNode(n *node) error {
	props := make(map[string]string, len(n.props))
	for k, v := range n.props {
		props[k] = v
	}
	if n.port != 0 {
		props["listeners"] = "PLAINTEXT://127.0.0.1:" + strconv.Itoa(n.port)
		for _, name := range c.opts.ExtraListeners {
			props["listeners"] += "," + name + "://127.0.0.1:" + strconv.Itoa(n.extra[name])
		}
	}
	cfg, err := config.FromMap(props)
	if err != nil {
		return err
	}
	opts := []broker.Option{broker.WithHandlerWrapper(func(h network.Handler) network.Handler {
		return &interceptHandler{next: h, n: n}
	})}
	opts = append(opts, c.opts.BrokerOptions...)
	if c.opts.FixedStartIndex != nil {
		opts = append(opts, broker.WithFixedStartIndex(*c.opts.FixedStartIndex))
	}
	logger := slog.New(c.logs.handler(c.opts.LogLevel)).With("node", n.id)
	b, err := broker.New(cfg, logger, opts...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.Startup(ctx); err != nil {
		return err
	}
	if addr, ok := b.BoundAddr("PLAINTEXT").(*net.TCPAddr); ok {
		n.port = addr.Port
	}
	c.mu.Lock()
	n.b = b
	c.mu.Unlock()
	return nil
}

// Close stops every broker (cleanly), closes clients and the ZooKeeper
// session. Registered with t.Cleanup by Start.
func (c *Cluster) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	nodes := c.nodes
	zc := c.zk
	c.mu.Unlock()
	c.clients.Close()
	var wg sync.WaitGroup
	for _, n := range nodes {
		if b := n.b; b != nil {
			wg.Add(1)
			go func() { // stops one broker; joined below
				defer wg.Done()
				b.Kill() // fast: no controlled shutdown at test teardown
			}()
		}
	}
	wg.Wait()
	for _, n := range nodes {
		if n.proxy != nil {
			n.proxy.Close()
		}
	}
	if zc != nil {
		zc.Close()
	}
	c.logs.close()
}

// N is the number of brokers (running or not).
func (c *Cluster) N() int { return len(c.nodes) }

// Broker returns broker i (0-based), nil while it is stopped.
func (c *Cluster) Broker(i int) *broker.Broker {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[i].b
}

// BrokerID returns the id of broker i.
func (c *Cluster) BrokerID(i int) int32 { return c.nodes[i].id }

// Index returns the index of the broker with the given id, -1 if none.
func (c *Cluster) Index(id int32) int {
	for i, n := range c.nodes {
		if n.id == id {
			return i
		}
	}
	return -1
}

// Addr returns the PLAINTEXT address of broker i (also while it is stopped:
// the port is reused on restart).
func (c *Cluster) Addr(i int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.nodes[i].port))
}

// ListenerAddr returns the address of one of broker i's ExtraListeners.
func (c *Cluster) ListenerAddr(i int, listener string) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.nodes[i].extra[listener]))
}

// ListenerBootstrap returns the addresses of listener on the running
// brokers.
func (c *Cluster) ListenerBootstrap(listener string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, n := range c.nodes {
		if n.b != nil {
			out = append(out, net.JoinHostPort("127.0.0.1", strconv.Itoa(n.extra[listener])))
		}
	}
	return out
}

// HTTPAddr is broker i's klassik.http.listener address (host:port), ""
// when the cluster was started without Options.HTTP.
func (c *Cluster) HTTPAddr(i int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[i].props["klassik.http.listener"]
}

// Bootstrap returns the addresses of the running brokers.
func (c *Cluster) Bootstrap() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, n := range c.nodes {
		if n.b != nil {
			out = append(out, net.JoinHostPort("127.0.0.1", strconv.Itoa(n.port)))
		}
	}
	return out
}

// ZKConnect is the connect string of the cluster's chroot.
func (c *Cluster) ZKConnect() string { return c.zkConnect }

// ZK returns a ZooKeeper session of the test itself (not a broker's),
// opened on first use.
func (c *Cluster) ZK() *zkclient.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.zk == nil {
		zc, err := zkclient.Connect(c.zkConnect, 10*time.Second)
		if err != nil {
			c.t.Fatalf("testcluster: connecting to ZooKeeper: %v", err)
		}
		c.zk = zc
	}
	return c.zk
}

// Controller reads /controller: the id of the active controller.
func (c *Cluster) Controller() (int32, bool) {
	id, ok, err := c.ZK().GetController()
	if err != nil {
		return -1, false
	}
	return id, ok
}

// ControllerEpoch reads /controller_epoch.
func (c *Cluster) ControllerEpoch() int32 {
	epoch, _, _, err := c.ZK().GetControllerEpoch()
	if err != nil {
		c.t.Fatalf("testcluster: reading /controller_epoch: %v", err)
	}
	return epoch
}

// LogDirs returns broker i's log.dirs.
func (c *Cluster) LogDirs(i int) []string {
	return strings.Split(c.nodes[i].props["log.dirs"], ",")
}

// StopBroker shuts broker i down cleanly (controlled shutdown included).
func (c *Cluster) StopBroker(i int) {
	if b := c.takeBroker(i); b != nil {
		b.Shutdown()
	}
}

// KillBroker stops broker i abruptly: its ZooKeeper session and listeners
// close at once, no controlled shutdown, no clean log shutdown marker.
func (c *Cluster) KillBroker(i int) {
	if b := c.takeBroker(i); b != nil {
		b.Kill()
	}
}

// takeBroker marks broker i as not running and returns the broker that
// was, if any, for the caller to stop.
func (c *Cluster) takeBroker(i int) *broker.Broker {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.nodes[i].b
	c.nodes[i].b = nil
	return b
}

// RestartBroker starts broker i again with the same id, log dirs and port.
func (c *Cluster) RestartBroker(i int) {
	c.t.Helper()
	c.mu.Lock()
	running := c.nodes[i].b != nil
	c.mu.Unlock()
	if running {
		c.StopBroker(i)
	}
	err := c.startNode(c.nodes[i])
	if err != nil && strings.Contains(err.Error(), "address already in use") {
		// Someone took the port meanwhile: take a new one; clients learn it
		// from the new registration through metadata.
		c.nodes[i].port = 0
		err = c.startNode(c.nodes[i])
	}
	if err != nil {
		c.t.Fatalf("testcluster: restarting broker %d: %v", c.nodes[i].id, err)
	}
}

// PauseZK cuts broker i off ZooKeeper (Options.ZKProxy): its connections
// drop and reconnects are refused, but its session stays open until the
// server expires it after zookeeper.session.timeout.ms.
func (c *Cluster) PauseZK(i int) {
	if c.nodes[i].proxy == nil {
		c.t.Fatal("testcluster: PauseZK needs Options.ZKProxy")
	}
	c.nodes[i].proxy.Pause()
}

// ResumeZK lets broker i reach ZooKeeper again.
func (c *Cluster) ResumeZK(i int) {
	if c.nodes[i].proxy == nil {
		c.t.Fatal("testcluster: ResumeZK needs Options.ZKProxy")
	}
	c.nodes[i].proxy.Resume()
}

// Intercept installs fn for API key on broker i (nil removes it).
func (c *Cluster) Intercept(i int, key int16, fn Interceptor) {
	if fn == nil {
		c.nodes[i].intercept.Delete(key)
		return
	}
	c.nodes[i].intercept.Store(key, fn)
}

// Client returns a kgo client seeded with the running brokers; closed at
// cleanup.
func (c *Cluster) Client(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	return c.clients.New(c.t, "testcluster", c.Bootstrap(), opts...)
}

// Direct returns a requestor that sends every request to broker i itself.
// Its client has broker i's address as its only seed, so a request needs
// neither kgo's routing (which would send ElectLeaders or CreateTopics to
// the controller) nor broker ids learnt from metadata: a kgo Broker(id)
// handle fails with "unknown broker" until the client's metadata lists the
// id, which a fresh client's may not yet. One client per address is kept
// until cleanup.
func (c *Cluster) Direct(i int) kmsg.Requestor {
	c.t.Helper()
	addr := c.Addr(i)
	c.mu.Lock()
	r, ok := c.direct[addr]
	c.mu.Unlock()
	if ok {
		return r
	}
	r = c.clients.New(c.t, "testcluster", []string{addr}).SeedBrokers()[0]
	c.mu.Lock()
	if c.direct == nil {
		c.direct = map[string]kmsg.Requestor{}
	}
	if prev, ok := c.direct[addr]; ok {
		r = prev
	} else {
		c.direct[addr] = r
	}
	c.mu.Unlock()
	return r
}

// Admin returns a kadm client over a new Client.
func (c *Cluster) Admin(opts ...kgo.Opt) *kadm.Client {
	return kadm.NewClient(c.Client(opts...))
}

// CreateTopic creates topic with the given partition count, replication
// factor and config overrides (nil for none) through the admin API,
// failing the test unless it is created within 60s.
func (c *Cluster) CreateTopic(topic string, partitions int32, rf int16, configs map[string]*string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if res, err := c.Admin().CreateTopic(ctx, partitions, rf, configs, topic); err != nil || res.Err != nil {
		c.t.Fatalf("testcluster: create topic %s: %v / %v", topic, err, res.Err)
	}
}

// TopicConfig describes one config of topic through adm and returns its
// value ("<null>" for a null one) and source, failing t if the describe
// fails or does not list the key.
func TopicConfig(t testing.TB, adm *kadm.Client, topic, key string) (string, kmsg.ConfigSource) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatalf("testcluster: describe configs of %s: %v", topic, err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("testcluster: describe configs of %s: %v / %v", topic, err, rc.Err)
	}
	for _, cfg := range rc.Configs {
		if cfg.Key == key {
			if cfg.Value == nil {
				return "<null>", cfg.Source
			}
			return *cfg.Value, cfg.Source
		}
	}
	t.Fatalf("testcluster: config %s not described for %s", key, topic)
	return "", 0
}

// WaitLeaders waits until each of the topic's partitions 0..partitions-1
// has a leader in its state znode and every running broker's metadata
// cache holds that leader and leader epoch. A client may ask any broker
// for metadata, so a topic is ready for clients only once the controller's
// UpdateMetadata has reached them all.
func (c *Cluster) WaitLeaders(timeout time.Duration, topic string, partitions int32) {
	c.t.Helper()
	c.WaitFor(timeout, "a leader for every partition of "+topic+" known to every running broker", func() bool {
		for p := int32(0); p < partitions; p++ {
			s, ok := c.PartitionState(topic, p)
			if !ok || s.Leader < 0 {
				return false
			}
			for i := range c.nodes {
				b := c.Broker(i)
				if b == nil {
					continue
				}
				if m, ok := b.Metadata().Partition(topic, p); !ok || m.Leader != s.Leader || m.LeaderEpoch != s.LeaderEpoch {
					return false
				}
			}
		}
		return true
	})
}

// WaitFor polls cond every 50ms until it holds, failing the test after
// timeout with "timed out waiting for <what>".
func (c *Cluster) WaitFor(timeout time.Duration, what string, cond func() bool) {
	c.t.Helper()
	if !Poll(timeout, cond) {
		c.t.Fatalf("testcluster: timed out after %v waiting for %s", timeout, what)
	}
}

// Poll polls cond every 50ms until it holds or timeout elapses; it reports
// whether cond held.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// PartitionState reads the state znode of topic/partition.
func (c *Cluster) PartitionState(topic string, partition int32) (zkpaths.LeaderAndIsr, bool) {
	s, ok, err := c.ZK().GetPartitionState(common.TopicPartition{Topic: topic, Partition: partition})
	if err != nil {
		c.t.Fatalf("testcluster: reading the state of %s-%d: %v", topic, partition, err)
	}
	return s, ok
}

// interceptHandler consults the node's interceptors before the broker.
type interceptHandler struct {
	next network.Handler
	n    *node
}

func (h *interceptHandler) Handle(ctx context.Context, req *network.Request) (kmsg.Response, error) {
	if v, ok := h.n.intercept.Load(req.Key); ok {
		resp, handled, err := v.(Interceptor)(ctx, req)
		if handled {
			return resp, err
		}
	}
	return h.next.Handle(ctx, req)
}

func (h *interceptHandler) Versions(key int16) (int16, int16, bool) { return h.next.Versions(key) }

// logSink sends broker logs to t.Log until the cluster is closed (a log
// line after the test ended would panic).
type logSink struct {
	t      testing.TB
	mu     sync.Mutex
	closed atomic.Bool
}

func (s *logSink) close() { s.closed.Store(true) }

func (s *logSink) handler(level slog.Level) slog.Handler {
	return slog.NewTextHandler(sinkWriter{s}, &slog.HandlerOptions{Level: level})
}

type sinkWriter struct{ s *logSink }

func (w sinkWriter) Write(p []byte) (int, error) {
	if w.s.closed.Load() {
		return len(p), nil
	}
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if !w.s.closed.Load() {
		w.s.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// internalTopicFactors returns the replication settings of
// __consumer_offsets and __transaction_state for a cluster of n brokers:
// Kafka's defaults (3 replicas, min.insync.replicas 2) capped at n.
// Overrides still win.
func internalTopicFactors(n int) map[string]string {
	rf := min(3, max(n, 1))
	return map[string]string{
		"offsets.topic.replication.factor":         strconv.Itoa(rf),
		"transaction.state.log.replication.factor": strconv.Itoa(rf),
		"transaction.state.log.min.isr":            strconv.Itoa(min(2, rf)),
	}
}
