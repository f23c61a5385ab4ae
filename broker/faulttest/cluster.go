package faulttest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/broker/testcluster/proc"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// binaries is the directory Main built the commands into.
var binaries string

// Commands built by Main, by the name of their bin/ directory.
var commands = []string{"kafka-server", "kafka-topics", "kafka-reassign-partitions", "kafka-dump-log", "kafka-leader-election"}

// Main builds the broker and tool binaries once for the test binary, runs
// the tests against a shared real ZooKeeper and removes the binaries. Use it
// from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(faulttest.Main(m)) }
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "klassik-faulttest-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "faulttest: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := Build(dir); err != nil {
		fmt.Fprintf(os.Stderr, "faulttest: %v\n", err)
		return 1
	}
	binaries = dir
	return zkserver.RunShared(m)
}

// Build compiles the commands into dir with the go tool of the running
// toolchain.
func Build(dir string) error {
	var pkgs []string
	for _, c := range commands {
		pkgs = append(pkgs, "github.com/klassik/klassik/bin/"+c)
	}
	return proc.Build(dir, pkgs...)
}

// Bin returns the path of a built command ("kafka-topics", ...).
func Bin(name string) string { return filepath.Join(binaries, name) }

// Options configure a process cluster.
type Options struct {
	Brokers        int               // default 3; ids are 1..Brokers
	SessionTimeout time.Duration     // zookeeper.session.timeout.ms, default 6s
	Overrides      map[string]string // extra server.properties, applied last
	// NoFileLimit, if > 0, starts every broker with RLIMIT_NOFILE (soft
	// and hard) set to it, through util-linux's prlimit.
	NoFileLimit int
	// HTTP gives every broker a klassik.http.listener on a free loopback
	// port (Node.HTTPAddr), for /metrics and, with
	// klassik.http.pprof.enable, /debug/pprof.
	HTTP bool

	// Network placement, for the network fault cases (Net.Options fills
	// them); the zero values put every broker on 127.0.0.1 in the test's
	// own network namespace.
	Hosts  []string                // listener host per broker index (default 127.0.0.1)
	ZKAddr string                  // host:port the brokers reach ZooKeeper at (default the shared server's)
	Exec   func(id int32) []string // command prefix a broker's process is started with (e.g. ip netns exec)

	beforeStart func(*Cluster) // Net.Start: called once the nodes exist, before any process starts
	// ZooKeeper is the servers part of zookeeper.connect ("host:port,..."),
	// e.g. zkserver.SharedEnsemble(t).ConnectString(""); empty: the
	// package's shared standalone server. A fresh chroot per test is
	// appended either way; ZKAddr, if set, still overrides the address
	// the brokers are given.
	ZooKeeper string
}

// DefaultOverrides are the server.properties every fault scenario uses:
// min.insync.replicas 2 and short ISR and fetch timings, so a stuck follower
// leaves the ISR within seconds.
var DefaultOverrides = map[string]string{
	"min.insync.replicas":                  "2",
	"replica.lag.time.max.ms":              "3000",
	"replica.fetch.wait.max.ms":            "200",
	"replica.fetch.backoff.ms":             "200",
	"controlled.shutdown.retry.backoff.ms": "200",
	"controller.socket.timeout.ms":         "5000",
	"offsets.topic.replication.factor":     "3",
	"group.initial.rebalance.delay.ms":     "0",
	"unclean.leader.election.enable":       "false",
	"auto.leader.rebalance.enable":         "false",
}

// Cluster is N kafka-server processes on 127.0.0.1 sharing a real ZooKeeper
// (one chroot per test). Every process is killed in t.Cleanup.
type Cluster struct {
	t         testing.TB
	opts      Options
	zkConnect string
	root      string
	zk        *zkclient.Client
	nodes     []*Node
	clients   testcluster.Clients
}

// Node is one broker: its fixed id, port and directories, and the current
// process if any.
type Node struct {
	ID     int32
	Host   string // listener host (Options.Hosts), 127.0.0.1 by default
	Port   int
	LogDir string // log.dirs
	Props  string // server.properties path
	Output string // stdout+stderr of every process of this broker, appended
	// HTTPAddr is "host:port" of klassik.http.listener (Options.HTTP);
	// empty without it.
	HTTPAddr string
	cluster  *Cluster
	proc     proc.Node // the kafka-server processes, output to Output

	// mu guards the following.
	mu     sync.Mutex
	killed bool // the last process ended without a clean shutdown
}

// Start writes a server.properties per broker and starts them all, then
// waits until every broker is registered and a controller is elected.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if binaries == "" {
		t.Fatal("faulttest: binaries not built: call faulttest.Main from TestMain")
	}
	if opts.Brokers <= 0 {
		opts.Brokers = 3
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = 6 * time.Second
	}
	zkConnect := opts.ZooKeeper + zkserver.Chroot(t)
	if opts.ZooKeeper == "" {
		zkConnect = zkserver.ConnectString(t)
	}
	c := &Cluster{t: t, opts: opts, zkConnect: zkConnect, root: t.TempDir()}
	t.Cleanup(c.close)
	zk, err := zkclient.Connect(c.zkConnect, 10*time.Second)
	if err != nil {
		t.Fatalf("faulttest: connecting to ZooKeeper %s: %v", c.zkConnect, err)
	}
	c.zk = zk
	for i := 0; i < opts.Brokers; i++ {
		c.nodes = append(c.nodes, c.newNode(int32(i+1)))
	}
	if opts.beforeStart != nil {
		opts.beforeStart(c)
	}
	for i := range c.nodes {
		c.startProcess(i)
	}
	for i := range c.nodes {
		c.waitRegistered(i)
	}
	c.WaitFor(30*time.Second, "a controller", func() bool {
		_, ok, err := c.zk.GetController()
		return ok && err == nil
	})
	return c
}

func (c *Cluster) newNode(id int32) *Node {
	c.t.Helper()
	port, err := zkserver.FreePort()
	if err != nil {
		c.t.Fatalf("faulttest: free port: %v", err)
	}
	host := "127.0.0.1"
	if i := int(id) - 1; i < len(c.opts.Hosts) && c.opts.Hosts[i] != "" {
		host = c.opts.Hosts[i]
	}
	zkConnect := c.zkConnect
	if c.opts.ZKAddr != "" {
		// Keep the test's chroot behind the other address.
		chroot := ""
		if j := strings.IndexByte(c.zkConnect, '/'); j >= 0 {
			chroot = c.zkConnect[j:]
		}
		zkConnect = c.opts.ZKAddr + chroot
	}
	dir := filepath.Join(c.root, "broker-"+strconv.Itoa(int(id)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.t.Fatal(err)
	}
	n := &Node{ID: id, Host: host, Port: port, LogDir: filepath.Join(dir, "logs"), Props: filepath.Join(dir, "server.properties"),
		Output: filepath.Join(dir, "server.out"), cluster: c}
	n.proc.Output = n.Output
	props := map[string]string{
		"broker.id":                    strconv.Itoa(int(id)),
		"listeners":                    "PLAINTEXT://" + net.JoinHostPort(host, strconv.Itoa(port)),
		"log.dirs":                     n.LogDir,
		"zookeeper.connect":            zkConnect,
		"zookeeper.session.timeout.ms": strconv.Itoa(int(c.opts.SessionTimeout / time.Millisecond)),
	}
	if c.opts.HTTP {
		hp, err := zkserver.FreePort()
		if err != nil {
			c.t.Fatalf("faulttest: free port: %v", err)
		}
		n.HTTPAddr = net.JoinHostPort(host, strconv.Itoa(hp))
		props["klassik.http.listener"] = n.HTTPAddr
	}
	for k, v := range DefaultOverrides {
		props[k] = v
	}
	for k, v := range c.opts.Overrides {
		props[k] = v
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "# broker %d of a faulttest cluster\n", id)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	if err := os.WriteFile(n.Props, []byte(b.String()), 0o644); err != nil {
		c.t.Fatal(err)
	}
	return n
}

// N is the number of brokers.
func (c *Cluster) N() int { return len(c.nodes) }

// Node returns broker index i (id i+1).
func (c *Cluster) Node(i int) *Node { return c.nodes[i] }

// Index returns the index of broker id.
func (c *Cluster) Index(id int32) int {
	for i, n := range c.nodes {
		if n.ID == id {
			return i
		}
	}
	c.t.Fatalf("faulttest: no broker %d", id)
	return -1
}

// ZKConnect is the connect string (with this test's chroot).
func (c *Cluster) ZKConnect() string { return c.zkConnect }

// ZK is the harness's own ZooKeeper session.
func (c *Cluster) ZK() *zkclient.Client { return c.zk }

// Bootstrap lists every broker's address (running or not).
func (c *Cluster) Bootstrap() []string {
	var s []string
	for _, n := range c.nodes {
		s = append(s, n.Addr())
	}
	return s
}

// Process is the broker's latest process (its pid, exit code and Done),
// nil before the first start.
func (n *Node) Process() *proc.Process { return n.proc.Process() }

// Addr is "host:port" of the broker's listener.
func (n *Node) Addr() string { return net.JoinHostPort(n.Host, strconv.Itoa(n.Port)) }

func (c *Cluster) startProcess(i int) {
	c.t.Helper()
	n := c.nodes[i]
	spec := proc.Spec{Path: Bin("kafka-server"), Args: []string{n.Props},
		Banner: fmt.Sprintf("faulttest: starting broker %d", n.ID)}
	if lim := c.opts.NoFileLimit; lim > 0 {
		prlimit, err := exec.LookPath("prlimit")
		if err != nil {
			c.t.Fatalf("faulttest: NoFileLimit needs prlimit (util-linux): %v", err)
		}
		spec.Args = append([]string{fmt.Sprintf("--nofile=%d:%d", lim, lim), "--", spec.Path}, spec.Args...)
		spec.Path = prlimit
	}
	if c.opts.Exec != nil {
		if pre := c.opts.Exec(n.ID); len(pre) > 0 {
			spec.Path, spec.Args = pre[0], append(append(pre[1:len(pre):len(pre)], spec.Path), spec.Args...)
		}
	}
	if err := n.proc.Start(spec); err != nil {
		c.t.Fatalf("faulttest: starting broker %d: %v", n.ID, err)
	}
	n.mu.Lock()
	n.killed = false
	n.mu.Unlock()
}

// waitRegistered waits until broker i is in /brokers/ids and accepts
// connections; a process that exits meanwhile fails the test with its
// output.
func (c *Cluster) waitRegistered(i int) {
	c.t.Helper()
	n := c.nodes[i]
	deadline := time.Now().Add(45 * time.Second)
	for {
		p := n.proc.Process()
		if p == nil {
			c.t.Fatalf("faulttest: broker %d not running", n.ID)
		}
		if !p.Running() {
			c.t.Fatalf("faulttest: broker %d exited during startup (%v):\n%s", n.ID, p.Err(), c.tail(n, 60))
		}
		ok, _, err := c.zk.Exists(zkpaths.BrokerIDPath(n.ID))
		if err == nil && ok {
			if conn, err := net.DialTimeout("tcp", n.Addr(), time.Second); err == nil {
				conn.Close()
				info, found, err := c.zk.GetBroker(n.ID)
				if err == nil && found && brokerInfoHasPort(info, n.Port) {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("faulttest: broker %d not registered within 45s:\n%s", n.ID, c.tail(n, 60))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func brokerInfoHasPort(info zkpaths.BrokerInfo, port int) bool {
	return strings.Contains(string(info.Encode()), ":"+strconv.Itoa(port))
}

// Running reports whether broker i has a live (possibly paused) process.
func (c *Cluster) Running(i int) bool {
	return c.nodes[i].proc.Running()
}

// Kill9 sends SIGKILL to broker i and waits for the process to exit.
func (c *Cluster) Kill9(i int) {
	c.t.Helper()
	c.signalAndWait(i, syscall.SIGKILL, 10*time.Second)
	c.t.Logf("faulttest: broker %d killed (SIGKILL)", c.nodes[i].ID)
}

// Stop sends SIGTERM to broker i (controlled shutdown) and waits for it to
// exit, failing the test if it does not exit within 60s.
func (c *Cluster) Stop(i int) {
	c.t.Helper()
	start := time.Now()
	c.signalAndWait(i, syscall.SIGTERM, 60*time.Second)
	c.t.Logf("faulttest: broker %d stopped (SIGTERM) in %v", c.nodes[i].ID, time.Since(start).Round(time.Millisecond))
}

func (c *Cluster) signalAndWait(i int, sig syscall.Signal, timeout time.Duration) {
	c.t.Helper()
	n, p := c.running(i)
	if sig == syscall.SIGTERM {
		// A paused process would never handle SIGTERM.
		_ = p.Signal(syscall.SIGCONT)
	}
	_ = p.Signal(sig)
	if !p.Wait(timeout) {
		p.Kill()
		c.t.Fatalf("faulttest: broker %d did not exit within %v of %v:\n%s", n.ID, timeout, sig, c.tail(n, 60))
	}
	n.mu.Lock()
	n.killed = sig == syscall.SIGKILL
	n.mu.Unlock()
}

// Pause stops broker i with SIGSTOP and returns resume, which continues it
// with SIGCONT (only the first call signals). A test that ends without
// calling resume has the broker continued at its cleanup.
func (c *Cluster) Pause(i int) (resume func()) {
	c.t.Helper()
	c.signal(i, syscall.SIGSTOP)
	var once sync.Once
	resume = func() {
		c.t.Helper()
		once.Do(func() { c.signal(i, syscall.SIGCONT) })
	}
	c.t.Cleanup(resume)
	return resume
}

// running returns broker i's node and its process, failing the test if it
// is not running.
func (c *Cluster) running(i int) (*Node, *proc.Process) {
	c.t.Helper()
	n := c.nodes[i]
	p := n.proc.Process()
	if p == nil || !p.Running() {
		c.t.Fatalf("faulttest: broker %d is not running", n.ID)
	}
	return n, p
}

func (c *Cluster) signal(i int, sig syscall.Signal) {
	c.t.Helper()
	n, p := c.running(i)
	if err := p.Signal(sig); err != nil {
		c.t.Fatalf("faulttest: %v to broker %d: %v", sig, n.ID, err)
	}
	c.t.Logf("faulttest: broker %d sent %v", n.ID, sig)
}

// Restart starts broker i again (after Kill9 or Stop) and waits until it is
// registered. After a SIGKILL the previous process's ephemeral
// /brokers/ids/<id> lives until its session expires, and a broker refuses to
// start while another session holds its id (as Kafka does), so Restart first
// waits for that node to go.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	n := c.nodes[i]
	n.mu.Lock()
	killed := n.killed
	n.mu.Unlock()
	running := n.proc.Running()
	if running {
		c.t.Fatalf("faulttest: broker %d is still running", n.ID)
	}
	if killed {
		c.WaitFor(c.opts.SessionTimeout+15*time.Second, fmt.Sprintf("broker %d's old session to expire", n.ID), func() bool {
			ok, _, err := c.zk.Exists(zkpaths.BrokerIDPath(n.ID))
			return err == nil && !ok
		})
	}
	c.startProcess(i)
	c.waitRegistered(i)
	c.t.Logf("faulttest: broker %d restarted", n.ID)
}

// Controller returns the current controller id from /controller.
func (c *Cluster) Controller() (int32, bool) {
	id, ok, err := c.zk.GetController()
	return id, ok && err == nil
}

// PartitionState reads the partition's state znode.
func (c *Cluster) PartitionState(topic string, p int32) (zkpaths.LeaderAndIsr, bool) {
	st, ok, err := c.zk.GetPartitionState(common.TopicPartition{Topic: topic, Partition: p})
	return st, ok && err == nil
}

// Assignment reads the topic's replica assignment from ZooKeeper.
func (c *Cluster) Assignment(topic string) map[int32][]int32 {
	c.t.Helper()
	a, err := c.zk.GetReplicaAssignment(topic)
	if err != nil {
		c.t.Fatalf("faulttest: assignment of %s: %v", topic, err)
	}
	return a
}

// Client returns a kgo client bootstrapped at every broker, closed in
// cleanup.
func (c *Cluster) Client(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	return c.clients.New(c.t, "faulttest", c.Bootstrap(), opts...)
}

// Admin returns a kadm client over a new Client.
func (c *Cluster) Admin() *kadm.Client { return kadm.NewClient(c.Client()) }

// CreateTopic creates a topic through kadm with the given replica
// assignment (partition -> replicas) and waits until every partition has a
// leader and its full ISR.
func (c *Cluster) CreateTopic(topic string, assignment map[int32][]int32, configs map[string]*string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := kadmCreateRequest(topic, assignment, configs)
	resp, err := req.RequestWith(ctx, c.Client())
	if err != nil {
		c.t.Fatalf("faulttest: CreateTopics %s: %v", topic, err)
	}
	for _, tr := range resp.Topics {
		if err := kerrCode(tr.ErrorCode); err != nil {
			c.t.Fatalf("faulttest: CreateTopics %s: %v", topic, err)
		}
	}
	c.WaitFullISR(topic, len(assignment), 30*time.Second)
}

// WaitFullISR waits until each of the topic's partitions has a live leader
// and an ISR equal to its assigned replicas.
func (c *Cluster) WaitFullISR(topic string, partitions int, timeout time.Duration) {
	c.t.Helper()
	c.WaitFor(timeout, topic+": every partition led with a full ISR", func() bool {
		a, err := c.zk.GetReplicaAssignment(topic)
		if err != nil || len(a) != partitions {
			return false
		}
		for p, replicas := range a {
			st, ok := c.PartitionState(topic, p)
			if !ok || st.Leader < 0 || !SameSet(st.ISR, replicas) {
				return false
			}
		}
		return true
	})
}

// SameSet reports whether a and b hold the same broker ids (each id once),
// in any order: a replica set or an ISR compared with another.
func SameSet(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[int32]bool{}
	for _, x := range a {
		m[x] = true
	}
	for _, x := range b {
		if !m[x] {
			return false
		}
	}
	return true
}

// WaitFor polls cond (testcluster.Poll) until it holds, failing the test
// after timeout with the brokers' output tails.
func (c *Cluster) WaitFor(timeout time.Duration, what string, cond func() bool) {
	c.t.Helper()
	if !testcluster.Poll(timeout, cond) {
		c.t.Fatalf("faulttest: timed out after %v waiting for %s\n%s", timeout, what, c.DumpState())
	}
}

// DumpState describes the controller and every broker's output tail, for
// failure messages.
func (c *Cluster) DumpState() string {
	var b strings.Builder
	if id, ok := c.Controller(); ok {
		fmt.Fprintf(&b, "controller: %d\n", id)
	} else {
		b.WriteString("controller: none\n")
	}
	for _, n := range c.nodes {
		fmt.Fprintf(&b, "--- broker %d (%s) output tail:\n%s\n", n.ID, n.Output, c.tail(n, 25))
	}
	return b.String()
}

// tail returns the last lines of a broker's output file.
func (c *Cluster) tail(n *Node, lines int) string { return proc.Tail(n.Output, lines) }

// RunTool runs a built command (e.g. "kafka-topics") and returns its
// combined output; a non-zero exit is returned as an error with the output.
func RunTool(timeout time.Duration, name string, args ...string) (string, error) {
	out, code, err := proc.Run(timeout, nil, Bin(name), args...)
	if err == nil && code != 0 {
		err = fmt.Errorf("exit status %d", code)
	}
	if err != nil {
		return out, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return out, nil
}

// close kills every broker process, closes clients and the ZooKeeper
// session; a failed test gets every broker's output tail logged.
func (c *Cluster) close() {
	c.clients.Close()
	if c.t.Failed() || os.Getenv("KLASSIK_FAULTTEST_LOGS") != "" {
		lines := 80
		if v, err := strconv.Atoi(os.Getenv("KLASSIK_FAULTTEST_LOGS")); err == nil && v > 0 {
			lines = v
		}
		for _, n := range c.nodes {
			c.t.Logf("--- broker %d output (%s), last lines:\n%s", n.ID, n.Output, c.tail(n, lines))
		}
	}
	for _, n := range c.nodes {
		n.proc.Kill()
	}
	if c.zk != nil {
		c.zk.Close()
	}
}
