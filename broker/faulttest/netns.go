package faulttest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klassik/klassik/zkpaths/zkserver"
)

// Net is a private network for one Cluster, so that the links between
// brokers, ZooKeeper and the clients can be cut one by one:
//
//	root namespace (the test process)        "<name>-lan" namespace
//	  lo: 127.0.0.1 (ZooKeeper, the harness)
//	  <name>h veth: 10.213.S.1  (clients)  ----  bridge br0
//	                10.213.S.10 (ZooKeeper forwarder)  |
//	"<name>-b1" namespace: eth0 10.213.S.11 (broker 1) -+
//	"<name>-b2" namespace: eth0 10.213.S.12 (broker 2) -+
//	"<name>-b3" ...
//
// Each broker runs in its own network namespace (ip netns exec), so every
// packet it sends carries its own source address; brokers on 127.0.0.x
// aliases would not do, because the kernel gives every connection to a
// loopback address the source 127.0.0.1 unless the program binds its
// outgoing sockets. The bridge lives in a namespace of its own, not in the
// root one, because a root-namespace bridge is subject to the host's
// br_netfilter and FORWARD policy (Docker sets it to DROP). ZooKeeper stays
// the shared server on 127.0.0.1; the brokers reach it through a forwarder
// (zkserver.Proxy) in the test process listening on 10.213.S.10, so "cut from ZooKeeper" is
// a rule between two addresses.
//
// Cuts are iptables DROP rules in a chain the test owns
// (KLASSIK-<pid>-<n>, jumped to from INPUT and OUTPUT) inside the broker
// namespaces; the root namespace's tables are never touched. Everything is
// removed in t.Cleanup (the namespaces, and with them their rules and
// veths), and NewNet first sweeps what a killed test process left behind
// (namespaces and links named klk<pid>... of a pid that is gone).
//
// Delay and loss: the kernel the suite runs on may lack sch_netem (CI's
// does), so Degrade emulates them without it: each broker namespace DNATs
// its connections to the other brokers to per-broker forwarders in the
// test process, which delay every byte by the configured one-way delay in
// each direction, and an iptables statistic match drops the configured
// share of the packets on those connections (real loss, repaired by TCP
// retransmission). Net must be made with Degradable for that, so that the
// brokers' connections are routed through the forwarders from the start
// (DNAT binds only new connections).
type Net struct {
	t       testing.TB
	name    string // klk<pid>-<n>
	chain   string // KLASSIK-<pid>-<n>
	prefix  string // "10.213.S."
	hostIf  string
	lan     string
	brokers []string // namespace per broker index
	zk      *zkserver.Proxy

	// Degradable only: forwarder per broker index, towards its listener.
	degradable bool
	fwd        []*zkserver.Proxy

	// mu guards the following.
	mu    sync.Mutex
	ports []int // listener port per broker index, once known (Attach)
}

// netSeq numbers the networks of this test process and holds the subnets
// they use: parallel tests must not pick the same one between looking at
// the root namespace's addresses and adding theirs.
var netSeq struct {
	mu   sync.Mutex
	n    int
	used map[string]bool
}

// Endpoint is one end of a link: a broker (by index), ZooKeeper or the
// test's clients.
type Endpoint struct {
	kind   int // 0 broker, 1 ZooKeeper, 2 clients
	broker int
}

// BrokerEnd is broker index i as an end of a link.
func BrokerEnd(i int) Endpoint { return Endpoint{kind: 0, broker: i} }

// ZooKeeperEnd is ZooKeeper (the forwarder the brokers reach it through).
var ZooKeeperEnd = Endpoint{kind: 1}

// ClientsEnd is the test process's clients (producers, consumers, admin).
var ClientsEnd = Endpoint{kind: 2}

// NetTools checks that ip (iproute2) and iptables are installed and that
// the test may use them, with a message naming the package otherwise.
func NetTools() error {
	for _, tool := range []struct{ bin, pkg string }{{"ip", "iproute2"}, {"iptables", "iptables"}} {
		if _, err := exec.LookPath(tool.bin); err != nil {
			return fmt.Errorf("faulttest: %s not found: the network fault tests need it (apt-get install -y %s, or bin/klassik-install-deps.sh)", tool.bin, tool.pkg)
		}
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("faulttest: the network fault tests create network namespaces and iptables rules, which needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN); uid is %d", os.Geteuid())
	}
	return nil
}

// NewNet creates the network for brokers brokers. With degradable, the
// brokers' connections to each other go through delaying forwarders
// (Degrade). It fails the test if the tools are missing or a step fails.
func NewNet(t testing.TB, brokers int, degradable bool) *Net {
	t.Helper()
	if err := NetTools(); err != nil {
		t.Fatal(err)
	}
	sweepStaleNets(t)
	netSeq.mu.Lock()
	netSeq.n++
	seq := netSeq.n
	prefix := freeSubnet(t)
	if netSeq.used == nil {
		netSeq.used = map[string]bool{}
	}
	netSeq.used[prefix] = true
	netSeq.mu.Unlock()
	pid := os.Getpid()
	n := &Net{t: t, name: fmt.Sprintf("klk%d-%d", pid, seq), chain: fmt.Sprintf("KLASSIK-%d-%d", pid, seq),
		hostIf: fmt.Sprintf("klk%dh%d", pid, seq), degradable: degradable, prefix: prefix}
	n.lan = n.name + "-lan"
	t.Cleanup(n.close)

	n.ip("netns", "add", n.lan)
	n.nsRun(n.lan, "ip", "link", "set", "lo", "up")
	n.nsRun(n.lan, "ip", "link", "add", "br0", "type", "bridge")
	n.nsRun(n.lan, "ip", "link", "set", "br0", "up")
	// The test's side: clients at .1, the ZooKeeper forwarder at .10.
	n.ip("link", "add", n.hostIf, "type", "veth", "peer", "name", "uplink", "netns", n.lan)
	n.nsRun(n.lan, "ip", "link", "set", "uplink", "master", "br0")
	n.nsRun(n.lan, "ip", "link", "set", "uplink", "up")
	n.ip("addr", "add", n.prefix+"1/24", "dev", n.hostIf)
	n.ip("addr", "add", n.prefix+"10/24", "dev", n.hostIf)
	n.ip("link", "set", n.hostIf, "up")
	for i := 0; i < brokers; i++ {
		ns := fmt.Sprintf("%s-b%d", n.name, i+1)
		n.brokers = append(n.brokers, ns)
		n.ip("netns", "add", ns)
		port := fmt.Sprintf("p%d", i+1)
		n.ip("link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", port, "netns", n.lan)
		n.nsRun(n.lan, "ip", "link", "set", port, "master", "br0")
		n.nsRun(n.lan, "ip", "link", "set", port, "up")
		n.nsRun(ns, "ip", "link", "set", "lo", "up")
		n.nsRun(ns, "ip", "addr", "add", n.BrokerHost(i)+"/24", "dev", "eth0")
		n.nsRun(ns, "ip", "link", "set", "eth0", "up")
		n.nsRun(ns, "iptables", "-w", "-N", n.chain)
		n.nsRun(ns, "iptables", "-w", "-I", "INPUT", "-j", n.chain)
		n.nsRun(ns, "iptables", "-w", "-I", "OUTPUT", "-j", n.chain)
	}
	srv, err := zkserver.Shared()
	if err != nil {
		t.Fatalf("shared ZooKeeper server: %v", err)
	}
	n.zk, err = zkserver.NewProxyOn(n.ZKHost()+":0", srv.Addr())
	if err != nil {
		t.Fatalf("faulttest: ZooKeeper forwarder: %v", err)
	}
	// The bridge learns addresses within a moment; wait until each broker
	// namespace reaches the test's side.
	for i := range n.brokers {
		n.waitReach(i)
	}
	t.Logf("faulttest: network %s: clients %s1, ZooKeeper %s, brokers %s11..%d", n.name, n.prefix, n.zk.Addr(), n.prefix, 10+brokers)
	return n
}

// freeSubnet picks a 10.213.S.0/24 no interface of the root namespace has
// and no other Net of this process holds (netSeq.mu held).
func freeSubnet(t testing.TB) string {
	out, err := exec.Command("ip", "-4", "-o", "addr").CombinedOutput()
	if err != nil {
		t.Fatalf("faulttest: ip -4 addr: %v\n%s", err, out)
	}
	for s := 1; s < 255; s++ {
		p := "10.213." + strconv.Itoa(s) + "."
		if !netSeq.used[p] && !bytes.Contains(out, []byte(" "+p)) {
			return p
		}
	}
	t.Fatal("faulttest: no free subnet 10.213.S.0/24")
	return ""
}

var staleName = regexp.MustCompile(`^klk(\d+)[-h]`)

// sweepStaleNets deletes the namespaces and links of test processes that
// are gone (killed before their cleanup ran).
func sweepStaleNets(t testing.TB) {
	alive := func(pid int) bool {
		return pid == os.Getpid() || syscall.Kill(pid, 0) == nil
	}
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			if m := staleName.FindStringSubmatch(f[0]); m != nil {
				if pid, _ := strconv.Atoi(m[1]); !alive(pid) {
					t.Logf("faulttest: removing stale network namespace %s", f[0])
					_ = exec.Command("ip", "netns", "del", f[0]).Run()
				}
			}
		}
	}
	if out, err := exec.Command("ip", "-o", "link").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			name := strings.SplitN(strings.TrimSuffix(f[1], ":"), "@", 2)[0]
			if m := staleName.FindStringSubmatch(name); m != nil {
				if pid, _ := strconv.Atoi(m[1]); !alive(pid) {
					t.Logf("faulttest: removing stale link %s", name)
					_ = exec.Command("ip", "link", "del", name).Run()
				}
			}
		}
	}
}

func (n *Net) ip(args ...string) {
	n.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		n.t.Fatalf("faulttest: ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// nsRun runs a command inside namespace ns, failing the test on error.
func (n *Net) nsRun(ns string, args ...string) {
	n.t.Helper()
	if out, err := nsCommand(ns, args...).CombinedOutput(); err != nil {
		n.t.Fatalf("faulttest: in %s: %s: %v\n%s", ns, strings.Join(args, " "), err, out)
	}
}

func nsCommand(ns string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...)
}

func (n *Net) waitReach(i int) {
	n.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	probe := "exec 3<>/dev/tcp/" + n.ZKHost() + "/" + strconv.Itoa(n.zk.Port())
	for nsCommand(n.brokers[i], "bash", "-c", probe).Run() != nil {
		if time.Now().After(deadline) {
			n.t.Fatalf("faulttest: broker namespace %s cannot reach %s within 10s", n.brokers[i], n.zk.Addr())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// BrokerHost is broker index i's address, 10.213.S.(11+i).
func (n *Net) BrokerHost(i int) string { return n.prefix + strconv.Itoa(11+i) }

// ClientHost is the address the test's clients connect from.
func (n *Net) ClientHost() string { return n.prefix + "1" }

// ZKHost is the address of the ZooKeeper forwarder.
func (n *Net) ZKHost() string { return n.prefix + "10" }

// Options returns o placing the brokers on this network.
func (n *Net) Options(o Options) Options {
	o.Brokers = len(n.brokers)
	o.Hosts = nil
	for i := range n.brokers {
		o.Hosts = append(o.Hosts, n.BrokerHost(i))
	}
	o.ZKAddr = n.zk.Addr()
	o.Exec = func(id int32) []string { return []string{"ip", "netns", "exec", n.brokers[id-1]} }
	// Each broker serves /metrics on its own address (its namespace is
	// its own, so one port fits all), for ActiveControllers.
	ov := map[string]string{"klassik.http.listener": "0.0.0.0:" + strconv.Itoa(metricsPort)}
	for k, v := range o.Overrides {
		ov[k] = v
	}
	o.Overrides = ov
	return o
}

// metricsPort is the port of every broker's HTTP listener on a Net.
const metricsPort = 8081

// ActiveControllers reads kafka_controller_kafkacontroller_activecontrollercount
// from every broker's /metrics and returns the ids of the brokers whose
// controller module is active (Kafka's one-controller invariant: the sum
// over the cluster is 1).
func (n *Net) ActiveControllers() ([]int32, error) {
	var out []int32
	cl := http.Client{Timeout: 3 * time.Second}
	for i := range n.brokers {
		resp, err := cl.Get("http://" + net.JoinHostPort(n.BrokerHost(i), strconv.Itoa(metricsPort)) + "/metrics")
		if err != nil {
			return nil, fmt.Errorf("broker %d metrics: %w", i+1, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("broker %d metrics: %w", i+1, err)
		}
		found := false
		for _, line := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(line, "kafka_controller_kafkacontroller_activecontrollercount "); ok {
				found = true
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f >= 1 {
					out = append(out, int32(i+1))
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("broker %d metrics: no activecontrollercount", i+1)
		}
	}
	return out, nil
}

// Start starts a Cluster on this network (Options plus Start) and, for a
// degradable network, routes the brokers' connections to each other through
// the forwarders before the first broker starts.
func (n *Net) Start(o Options) *Cluster {
	n.t.Helper()
	o = n.Options(o)
	if n.degradable {
		// The listener ports are only known once the Cluster has made
		// its nodes, so Start calls back before it starts processes.
		o.beforeStart = n.routeThroughForwarders
	}
	c := Start(n.t, o)
	n.Attach(c)
	return c
}

// routeThroughForwarders starts one forwarder per broker (on the clients'
// address, towards that broker's listener) and DNATs, in every other
// broker's namespace, connections to that listener to the forwarder.
func (n *Net) routeThroughForwarders(c *Cluster) {
	n.t.Helper()
	for j := range n.brokers {
		f, err := zkserver.NewProxyOn(n.ClientHost()+":0", c.Node(j).Addr())
		if err != nil {
			n.t.Fatalf("faulttest: forwarder to broker %d: %v", j+1, err)
		}
		n.fwd = append(n.fwd, f)
	}
	for i, ns := range n.brokers {
		for j := range n.brokers {
			if i == j {
				continue
			}
			n.nsRun(ns, "iptables", "-w", "-t", "nat", "-A", "OUTPUT", "-p", "tcp", "-d", n.BrokerHost(j),
				"--dport", strconv.Itoa(c.Node(j).Port), "-j", "DNAT", "--to-destination", n.fwd[j].Addr())
		}
	}
}

// Cut drops every packet between a and b (both directions) until Heal. A
// broker end holds the rule in its namespace; a cut between ZooKeeper or
// the clients and a broker matches ZooKeeper's forwarder address, or the
// clients' address and the broker's listener port (the clients' address is
// also the source of the harness's own admin connections).
func (n *Net) Cut(a, b Endpoint) {
	n.t.Helper()
	if a.kind != 0 {
		a, b = b, a
	}
	if a.kind != 0 {
		n.t.Fatal("faulttest: Cut needs a broker at one end")
	}
	ns := n.brokers[a.broker]
	var in, out [][]string
	switch b.kind {
	case 0:
		peer := n.BrokerHost(b.broker)
		in = append(in, []string{"-s", peer})
		out = append(out, []string{"-d", peer})
		if n.degradable {
			// Connections between the two go through the forwarders (on
			// the clients' address): a's to b's, and b's to a's, which
			// is matched in b's namespace.
			n.dropForwarder(ns, b.broker)
			n.dropForwarder(n.brokers[b.broker], a.broker)
		}
	case 1:
		in = append(in, []string{"-s", n.ZKHost()})
		out = append(out, []string{"-d", n.ZKHost()})
	case 2:
		port := strconv.Itoa(n.port(a.broker))
		in = append(in, []string{"-s", n.ClientHost(), "-p", "tcp", "--dport", port})
		out = append(out, []string{"-d", n.ClientHost(), "-p", "tcp", "--sport", port})
	}
	for _, m := range in {
		n.nsRun(ns, append(append([]string{"iptables", "-w", "-A", n.chain}, m...), "-j", "DROP")...)
	}
	for _, m := range out {
		n.nsRun(ns, append(append([]string{"iptables", "-w", "-A", n.chain}, m...), "-j", "DROP")...)
	}
	n.t.Logf("faulttest: cut %s <-> %s", n.endName(a), n.endName(b))
}

// dropForwarder drops, in namespace ns, the traffic with the forwarder to
// broker index j.
func (n *Net) dropForwarder(ns string, j int) {
	n.t.Helper()
	port := strconv.Itoa(n.fwd[j].Port())
	n.nsRun(ns, "iptables", "-w", "-A", n.chain, "-d", n.ClientHost(), "-p", "tcp", "--dport", port, "-j", "DROP")
	n.nsRun(ns, "iptables", "-w", "-A", n.chain, "-s", n.ClientHost(), "-p", "tcp", "--sport", port, "-j", "DROP")
}

// Isolate cuts broker i from every other end listed.
func (n *Net) Isolate(i int, from ...Endpoint) {
	n.t.Helper()
	for _, e := range from {
		n.Cut(BrokerEnd(i), e)
	}
}

// Others lists every broker end but index i.
func (n *Net) Others(i int) []Endpoint {
	var out []Endpoint
	for j := range n.brokers {
		if j != i {
			out = append(out, BrokerEnd(j))
		}
	}
	return out
}

// port is broker index i's listener port, as learnt by Attach or
// routeThroughForwarders.
func (n *Net) port(i int) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if i >= len(n.ports) {
		n.t.Fatal("faulttest: Net does not know the cluster's ports: call Attach(cluster) first")
	}
	return n.ports[i]
}

// Attach tells the network the cluster's listener ports (Net.Start does
// it).
func (n *Net) Attach(c *Cluster) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ports = n.ports[:0]
	for j := range n.brokers {
		n.ports = append(n.ports, c.Node(j).Port)
	}
}

func (n *Net) endName(e Endpoint) string {
	switch e.kind {
	case 0:
		return fmt.Sprintf("broker %d (%s)", e.broker+1, n.BrokerHost(e.broker))
	case 1:
		return "ZooKeeper (" + n.zk.Addr() + ")"
	default:
		return "clients (" + n.ClientHost() + ")"
	}
}

// Heal removes every cut and degradation.
func (n *Net) Heal() {
	n.t.Helper()
	for _, ns := range n.brokers {
		n.nsRun(ns, "iptables", "-w", "-F", n.chain)
	}
	for _, f := range n.fwd {
		f.SetDelay(0)
	}
	n.t.Logf("faulttest: healed every link of %s", n.name)
}

// Degrade delays every byte between brokers by delay in each direction (so
// a round trip takes twice delay) and drops the share loss (0..1) of their
// packets, until Heal. The network must be degradable.
func (n *Net) Degrade(delay time.Duration, loss float64) {
	n.t.Helper()
	if !n.degradable || len(n.fwd) == 0 {
		n.t.Fatal("faulttest: Degrade needs NewNet(..., degradable=true) and Net.Start")
	}
	for _, f := range n.fwd {
		f.SetDelay(delay)
	}
	if loss > 0 {
		p := strconv.FormatFloat(loss, 'f', 4, 64)
		for _, ns := range n.brokers {
			// Every inter-broker connection has one end at a forwarder:
			// drop on the broker side of both directions.
			for _, f := range n.fwd {
				port := strconv.Itoa(f.Port())
				n.nsRun(ns, "iptables", "-w", "-A", n.chain, "-d", n.ClientHost(), "-p", "tcp", "--dport", port,
					"-m", "statistic", "--mode", "random", "--probability", p, "-j", "DROP")
				n.nsRun(ns, "iptables", "-w", "-A", n.chain, "-s", n.ClientHost(), "-p", "tcp", "--sport", port,
					"-m", "statistic", "--mode", "random", "--probability", p, "-j", "DROP")
			}
		}
	}
	n.t.Logf("faulttest: inter-broker links of %s degraded: %v one-way delay, %.1f%% packet loss", n.name, delay, loss*100)
}

// close removes the namespaces (their rules and veths with them) and the
// test's link, and stops the forwarders. The brokers must be gone first:
// Net.Start registers this cleanup before the Cluster's, so the Cluster's
// (which kills the processes) runs first.
func (n *Net) close() {
	if n.zk != nil {
		n.zk.Close()
	}
	for _, f := range n.fwd {
		f.Close()
	}
	for _, ns := range n.brokers {
		_ = nsCommand(ns, "iptables", "-w", "-F", n.chain).Run()
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
	if n.lan != "" {
		_ = exec.Command("ip", "netns", "del", n.lan).Run()
	}
	_ = exec.Command("ip", "link", "del", n.hostIf).Run()
	netSeq.mu.Lock()
	delete(netSeq.used, n.prefix)
	netSeq.mu.Unlock()
}
