package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/testcluster/proc"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// findRepo is the checkout holding bin/: $KLASSIK_HOME (set by
// bin/klassik-bench.sh), else the one this binary was built into
// (<repo>/bin/.build/klassik-bench), else the one this source file is in.
func findRepo() (string, error) {
	ok := func(dir string) bool {
		_, err := os.Stat(filepath.Join(dir, "bin", "kafka-run-class.sh"))
		return err == nil
	}
	if d := os.Getenv("KLASSIK_HOME"); d != "" {
		if ok(d) {
			return d, nil
		}
		return "", fmt.Errorf("KLASSIK_HOME=%s holds no bin/kafka-run-class.sh", d)
	}
	if exe, err := os.Executable(); err == nil {
		if d := filepath.Dir(filepath.Dir(filepath.Dir(exe))); ok(d) {
			return d, nil
		}
	}
	return proc.RepoRoot()
}

// broker is one broker the figures are taken on: its label in the table,
// and its process id when known (CPU-seconds are read from /proc).
type broker struct {
	id    int32
	label string
	pid   int // 0: unknown
}

// cluster is what the Klassik side of each figure runs against: the
// driver's own ZooKeeper and three kafka-server processes, or an external
// cluster (--bootstrap-server, --broker-pids).
type cluster struct {
	seeds   []string
	brokers []broker // sorted by id (external: as Metadata lists them)
	pids    []broker // brokers whose CPU is read: ours, or --broker-pids
	dir     string   // our temporary directory (own cluster only)
	buildTo string   // where kafka-server was built (own cluster only)
	// httpAddrs are the brokers' klassik.http.listener addresses, by
	// index of brokers (own cluster only).
	httpAddrs []string
	zk        *zkserver.Server
	nodes     []*proc.Node
	admin     *kadm.Client
	raw       *kgo.Client
}

// ownBrokers is the size of the driver's own cluster: three, for RF=3.
const ownBrokers = 3

// brokerProps are the server.properties of the driver's brokers beyond
// id, listener, log dir and ZooKeeper: Kafka's defaults otherwise (no
// flush per message, page-cache writes), with automatic leader moves off
// so partitions stay where the driver put them.
var brokerProps = map[string]string{
	"auto.leader.rebalance.enable":     "false",
	"offsets.topic.replication.factor": "1",
	"offsets.topic.num.partitions":     "1",
	"zookeeper.session.timeout.ms":     "18000",
	"num.partitions":                   "1",
	"delete.topic.enable":              "true",
}

// startCluster builds kafka-server (without the race detector), starts a
// ZooKeeper and three brokers on free loopback ports, and waits until all
// are registered and a controller is elected. Each broker serves
// klassik.http.listener with klassik.http.pprof.enable (its allocation
// count and profiles; the listener is on loopback, and the routes cost
// nothing until asked).
func startCluster(ctx context.Context, repo string, log io.Writer) (*cluster, error) {
	c := &cluster{}
	ok := false
	defer func() {
		if !ok {
			c.close()
		}
	}()
	c.buildTo = os.Getenv("KLASSIK_BUILD_DIR")
	if c.buildTo == "" {
		c.buildTo = filepath.Join(repo, "bin", ".build")
	}
	fmt.Fprintf(log, "klassik-bench: building bin/kafka-server (no race detector)\n")
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "bin", "kafka-run-class.sh"), "kafka-server")
	cmd.Env = append(withoutEnv(os.Environ(), "KLASSIK_RACE_TOOLS"), "KLASSIK_BUILD_ONLY=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building bin/kafka-server: %v\n%s", err, out)
	}
	dir, err := os.MkdirTemp("", "klassik-bench-")
	if err != nil {
		return nil, err
	}
	c.dir = dir
	zk, err := zkserver.Start(zkserver.Options{Dir: filepath.Join(dir, "zookeeper")})
	if err != nil {
		return nil, fmt.Errorf("starting ZooKeeper: %w", err)
	}
	c.zk = zk
	zkc, err := zkclient.Connect(zk.Addr(), 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connecting to ZooKeeper %s: %w", zk.Addr(), err)
	}
	defer zkc.Close()
	for i := 1; i <= ownBrokers; i++ {
		port, err := zkserver.FreePort()
		if err != nil {
			return nil, err
		}
		bdir := filepath.Join(dir, "broker-"+strconv.Itoa(i))
		if err := os.MkdirAll(bdir, 0o755); err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		props := map[string]string{
			"broker.id":         strconv.Itoa(i),
			"listeners":         "PLAINTEXT://" + addr,
			"log.dirs":          filepath.Join(bdir, "logs"),
			"zookeeper.connect": zk.Addr(),
		}
		for k, v := range brokerProps {
			props[k] = v
		}
		hp, err := zkserver.FreePort()
		if err != nil {
			return nil, err
		}
		props["klassik.http.listener"] = "127.0.0.1:" + strconv.Itoa(hp)
		c.httpAddrs = append(c.httpAddrs, props["klassik.http.listener"])
		props["klassik.http.pprof.enable"] = "true"
		file := filepath.Join(bdir, "server.properties")
		if err := os.WriteFile(file, []byte(propsText(props)), 0o644); err != nil {
			return nil, err
		}
		n := &proc.Node{Output: filepath.Join(bdir, "server.out")}
		if err := n.Start(proc.Spec{Path: filepath.Join(c.buildTo, "kafka-server"), Args: []string{file},
			Banner: "klassik-bench broker " + strconv.Itoa(i)}); err != nil {
			return nil, fmt.Errorf("starting broker %d: %w", i, err)
		}
		c.nodes = append(c.nodes, n)
		c.seeds = append(c.seeds, addr)
		b := broker{id: int32(i), label: "broker " + strconv.Itoa(i), pid: n.Process().Pid()}
		c.brokers = append(c.brokers, b)
		c.pids = append(c.pids, b)
	}
	deadline := time.Now().Add(60 * time.Second)
	for i, b := range c.brokers {
		for {
			if !c.nodes[i].Running() {
				return nil, fmt.Errorf("broker %d exited during start-up:\n%s", b.id, proc.Tail(c.nodes[i].Output, 40))
			}
			reg, _, err := zkc.Exists(zkpaths.BrokerIDPath(b.id))
			if err == nil && reg {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return nil, fmt.Errorf("broker %d not registered within 60 s:\n%s", b.id, proc.Tail(c.nodes[i].Output, 40))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for {
		if _, found, err := zkc.GetController(); err == nil && found {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("no controller elected within 60 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := c.connect(); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "klassik-bench: ZooKeeper %s, brokers %s (pids %s) in %s\n", zk.Addr(), strings.Join(c.seeds, ", "), c.pidList(), dir)
	ok = true
	return c, nil
}

// externalCluster measures a running cluster: its brokers come from
// Metadata, the processes to read CPU from are the given pids.
func externalCluster(seeds []string, pids []int) (*cluster, error) {
	c := &cluster{seeds: seeds}
	if err := c.connect(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	md, err := c.admin.BrokerMetadata(ctx)
	if err != nil {
		c.close()
		return nil, fmt.Errorf("metadata from %s: %w", strings.Join(seeds, ","), err)
	}
	for _, b := range md.Brokers {
		c.brokers = append(c.brokers, broker{id: b.NodeID, label: "broker " + strconv.Itoa(int(b.NodeID))})
	}
	sort.Slice(c.brokers, func(i, j int) bool { return c.brokers[i].id < c.brokers[j].id })
	for _, pid := range pids {
		c.pids = append(c.pids, broker{label: "pid " + strconv.Itoa(pid), pid: pid})
	}
	return c, nil
}

func (c *cluster) connect() error {
	raw, err := kgo.NewClient(kgo.SeedBrokers(c.seeds...))
	if err != nil {
		return err
	}
	c.raw = raw
	c.admin = kadm.NewClient(raw)
	return nil
}

func (c *cluster) pidList() string {
	var s []string
	for _, b := range c.pids {
		s = append(s, strconv.Itoa(b.pid))
	}
	return strings.Join(s, ",")
}

// close kills what the driver started and removes its directory.
func (c *cluster) close() {
	if c.raw != nil {
		c.raw.Close()
	}
	for _, n := range c.nodes {
		n.Kill()
	}
	if c.zk != nil {
		_ = c.zk.Kill()
	}
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
}

// createTopic creates a topic with an explicit assignment (partition ->
// replicas, the first the leader) and waits until every partition has its
// leader and its full ISR in Metadata.
func (c *cluster) createTopic(ctx context.Context, topic string, assignment [][]int32, configs map[string]string) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = topic
	rt.NumPartitions, rt.ReplicationFactor = -1, -1
	for p, rs := range assignment {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition = int32(p)
		ra.Replicas = rs
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	}
	keys := make([]string, 0, len(configs))
	for k := range configs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cf := kmsg.NewCreateTopicsRequestTopicConfig()
		cf.Name, cf.Value = k, kmsg.StringPtr(configs[k])
		rt.Configs = append(rt.Configs, cf)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, c.raw)
	if err != nil {
		return fmt.Errorf("creating %s: %w", topic, err)
	}
	if len(resp.Topics) != 1 {
		return fmt.Errorf("creating %s: %d topics in the answer", topic, len(resp.Topics))
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		return fmt.Errorf("creating %s: %w", topic, err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		tds, err := c.admin.ListTopics(ctx, topic)
		if err == nil {
			td := tds[topic]
			ready := td.Err == nil && len(td.Partitions) == len(assignment)
			for _, pd := range td.Partitions {
				if pd.Err != nil || pd.Leader < 0 || len(pd.ISR) != len(assignment[pd.Partition]) {
					ready = false
				}
			}
			if ready {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("topic %s: not every partition led with a full ISR within 60 s", topic)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// deleteTopics removes the topics of a run so the next one starts from
// the same disk and page-cache state (best effort).
func (c *cluster) deleteTopics(ctx context.Context, topics ...string) {
	_, _ = c.admin.DeleteTopics(ctx, topics...)
}

// onOneBroker assigns n partitions, RF=1, to the cluster's first broker.
func (c *cluster) onOneBroker(n int) [][]int32 {
	a := make([][]int32, n)
	for p := range a {
		a[p] = []int32{c.brokers[0].id}
	}
	return a
}

// roundRobin assigns n partitions with rf replicas, rotating the leader
// over the first rf brokers' ids, so each leads some.
func (c *cluster) roundRobin(n, rf int) [][]int32 {
	a := make([][]int32, n)
	for p := range a {
		for r := 0; r < rf; r++ {
			a[p] = append(a[p], c.brokers[(p+r)%len(c.brokers)].id)
		}
	}
	return a
}

func propsText(props map[string]string) string {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# a broker of bin/klassik-bench.sh\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	return b.String()
}

func withoutEnv(env []string, key string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, key+"=") {
			out = append(out, e)
		}
	}
	return out
}
