package e2e_test

// The operator's harness: brokers started as child processes by the real
// bin/kafka-server-start.sh, tools run through the real bin/*.sh scripts,
// all against a chroot of the shared ZooKeeper server. Nothing here links the
// broker into the test binary, so what is tested is the distribution as an
// operator runs it.
//
// Files: ops_harness_test.go (opsCluster: processes, tools, ZooKeeper
// reads), ops_cluster_test.go (the scenarios: kafka-topics.sh in both modes,
// zookeeper-shell.sh, kill -9 and unavailable partitions, controller
// failover bound, controlled shutdown on SIGTERM, whole-cluster restart,
// start-up refusal of a bad server.properties).
//
// Processes (a proc.Node per broker), tool runs and output tails go through
// broker/testcluster/proc, the process harness broker/faulttest uses too.
//
// Goroutines: one proc waiter per broker process (owns cmd.Wait, ends when
// the process exits; the cleanup SIGKILLs survivors by pid and waits for
// it), plus one short-lived build goroutine per tool in buildTools, joined
// there.
//
// Invariants: brokers listen on 127.0.0.1 ports chosen free at set-up and
// kept across restarts; tools are built once per test into a private
// KLASSIK_BUILD_DIR, so concurrent starts never race to build; every wait is
// a bounded poll.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/broker/testcluster/proc"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// opsSessionTimeout is zookeeper.session.timeout.ms of the process brokers.
const opsSessionTimeout = 6 * time.Second

// opsBroker is one broker: its fixed port and folders, and its processes
// (node.Output is the output file they all append to).
type opsBroker struct {
	id     int32
	port   int
	logDir string
	// extra holds additional "--override k=v" arguments for the next starts.
	extra []string

	node proc.Node
}

// opsCluster owns the broker processes and one waiter goroutine per process
// (ended by the process exit, which the cleanup forces with SIGKILL by pid).
type opsCluster struct {
	t       *testing.T
	repo    string
	build   string
	root    string
	props   string
	zk      string
	zc      *zkclient.Client
	brokers map[int32]*opsBroker
	ids     []int32
	clients testcluster.Clients
}

// repoRoot is the top of the repository.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := proc.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// buildTools builds the Go tools once through kafka-run-class.sh with
// KLASSIK_BUILD_ONLY, so later starts do not race each other to build.
func buildTools(t *testing.T, repo, build string, tools ...string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(tools))
	outs := make([]string, len(tools))
	for i, tool := range tools {
		wg.Add(1)
		go func() { // one build per tool; joined below
			defer wg.Done()
			var code int
			outs[i], code, errs[i] = proc.Run(5*time.Minute, []string{"KLASSIK_BUILD_DIR=" + build, "KLASSIK_BUILD_ONLY=1"},
				filepath.Join(repo, "bin", "kafka-run-class.sh"), tool)
			if errs[i] == nil && code != 0 {
				errs[i] = fmt.Errorf("exit status %d", code)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("building %s with kafka-run-class.sh: %v\n%s", tools[i], err, outs[i])
		}
	}
}

// newOpsCluster prepares (does not start) brokers ids in a fresh chroot.
func newOpsCluster(t *testing.T, ids ...int32) *opsCluster {
	t.Helper()
	repo := repoRoot(t)
	c := &opsCluster{t: t, repo: repo, build: t.TempDir(), root: t.TempDir(), brokers: map[int32]*opsBroker{}, ids: ids}
	c.zk = zkserver.ConnectString(t)
	buildTools(t, repo, c.build, "kafka-server", "kafka-topics", "kafka-leader-election")
	// The shared properties file, as an operator would keep it; per-broker
	// values come as --override on the command line.
	c.props = filepath.Join(c.root, "server.properties")
	props := strings.Join([]string{
		"# operator test cluster",
		"zookeeper.connect=" + c.zk,
		"zookeeper.session.timeout.ms=" + strconv.Itoa(int(opsSessionTimeout/time.Millisecond)),
		"controlled.shutdown.enable=true",
		"controlled.shutdown.retry.backoff.ms=200",
		"log.segment.delete.delay.ms=500",
		"offsets.topic.replication.factor=3",
		"offsets.topic.num.partitions=3",
		"group.initial.rebalance.delay.ms=0",
		"num.partitions=1",
		"",
	}, "\n")
	if err := os.WriteFile(c.props, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		port, err := zkserver.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		c.brokers[id] = &opsBroker{
			id:     id,
			port:   port,
			logDir: filepath.Join(c.root, fmt.Sprintf("kafka-logs-%d", id)),
			node:   proc.Node{Output: filepath.Join(c.root, fmt.Sprintf("server-%d.out", id))},
		}
	}
	t.Cleanup(c.close)
	return c
}

// close closes the clients, kills what is still running (by pid: our own
// children only) and closes the test's ZooKeeper session.
func (c *opsCluster) close() {
	c.clients.Close()
	for _, b := range c.brokers {
		b.node.Kill()
	}
	if c.zc != nil {
		c.zc.Close()
	}
	if c.t.Failed() {
		for _, id := range c.ids {
			c.t.Logf("output of broker %d (tail):\n%s", id, proc.Tail(c.brokers[id].node.Output, 40))
		}
	}
}

// ZK is the test's own ZooKeeper session on the cluster's chroot.
func (c *opsCluster) ZK() *zkclient.Client {
	if c.zc == nil {
		zc, err := zkclient.Connect(c.zk, 10*time.Second)
		if err != nil {
			c.t.Fatalf("connecting to ZooKeeper %s: %v", c.zk, err)
		}
		c.zc = zc
	}
	return c.zc
}

// start runs bin/kafka-server-start.sh for broker id in the foreground (the
// script execs the broker, so the child's pid is the broker's).
func (c *opsCluster) start(id int32) {
	c.t.Helper()
	b := c.brokers[id]
	args := []string{c.props,
		"--override", "broker.id=" + strconv.Itoa(int(id)),
		"--override", "listeners=PLAINTEXT://127.0.0.1:" + strconv.Itoa(b.port),
		"--override", "log.dirs=" + b.logDir}
	for _, kv := range b.extra {
		args = append(args, "--override", kv)
	}
	// The broker dies with the test binary if the tests crash (proc's
	// process attributes).
	if err := b.node.Start(proc.Spec{Path: filepath.Join(c.repo, "bin", "kafka-server-start.sh"), Args: args,
		Env: []string{"KLASSIK_BUILD_DIR=" + c.build}}); err != nil {
		c.t.Fatalf("starting broker %d: %v", id, err)
	}
}

// startAll starts every broker and waits until all are registered and a
// controller is elected.
func (c *opsCluster) startAll() {
	c.t.Helper()
	for _, id := range c.ids {
		c.start(id)
	}
	c.waitRegistered(c.ids...)
}

// waitRegistered waits until /brokers/ids lists ids and /controller exists.
func (c *opsCluster) waitRegistered(ids ...int32) {
	c.t.Helper()
	c.waitFor(90*time.Second, fmt.Sprintf("brokers %v registered and a controller elected", ids), func() bool {
		for _, id := range ids {
			if b := c.brokers[id]; !b.node.Running() {
				c.t.Fatalf("broker %d exited with code %d during start-up", id, b.node.Process().ExitCode())
			}
		}
		live, err := c.ZK().GetBrokerIDs()
		if err != nil {
			return false
		}
		for _, id := range ids {
			if !slices.Contains(live, id) {
				return false
			}
		}
		_, ok, err := c.ZK().GetController()
		return err == nil && ok
	})
}

// signal sends sig to broker id's process.
func (c *opsCluster) signal(id int32, sig syscall.Signal) {
	c.t.Helper()
	if err := c.brokers[id].node.Signal(sig); err != nil {
		c.t.Fatalf("signalling broker %d: %v", id, err)
	}
}

// waitExit waits for broker id's process to exit and returns its exit code.
func (c *opsCluster) waitExit(id int32, timeout time.Duration) int {
	c.t.Helper()
	p := c.brokers[id].node.Process()
	if !p.Wait(timeout) {
		c.t.Fatalf("broker %d still running %v after the signal", id, timeout)
	}
	return p.ExitCode()
}

// addrs lists the listeners of the running brokers.
func (c *opsCluster) addrs() []string {
	var out []string
	for _, id := range c.ids {
		if b := c.brokers[id]; b.node.Running() {
			out = append(out, "127.0.0.1:"+strconv.Itoa(b.port))
		}
	}
	return out
}

// bootstrap is the --bootstrap-server value.
func (c *opsCluster) bootstrap() string { return strings.Join(c.addrs(), ",") }

// client is a franz-go client on the running brokers, closed at test end.
func (c *opsCluster) client(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	return c.clients.New(c.t, "ops", c.addrs(), opts...)
}

func (c *opsCluster) waitFor(timeout time.Duration, what string, cond func() bool) {
	c.t.Helper()
	if !testcluster.Poll(timeout, cond) {
		c.t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// state reads the state znode of topic/partition.
func (c *opsCluster) state(topic string, p int32) (zkpaths.LeaderAndIsr, bool) {
	c.t.Helper()
	s, ok, err := c.ZK().GetPartitionState(common.TopicPartition{Topic: topic, Partition: p})
	if err != nil {
		c.t.Fatalf("reading the state of %s-%d: %v", topic, p, err)
	}
	return s, ok
}

// allStates reads the state of every partition of every topic.
func (c *opsCluster) allStates() map[common.TopicPartition]zkpaths.LeaderAndIsr {
	c.t.Helper()
	topics, err := c.ZK().GetAllTopics()
	if err != nil {
		c.t.Fatalf("listing topics: %v", err)
	}
	out := map[common.TopicPartition]zkpaths.LeaderAndIsr{}
	for _, topic := range topics {
		parts, err := c.ZK().Children("/brokers/topics/" + topic + "/partitions")
		if err != nil {
			continue // being created or deleted
		}
		for _, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil {
				c.t.Fatalf("partition znode %q of %s", p, topic)
			}
			if s, ok := c.state(topic, int32(n)); ok {
				out[common.TopicPartition{Topic: topic, Partition: int32(n)}] = s
			}
		}
	}
	return out
}

// tool runs bin/<script> with args and returns its combined output and exit
// code, bounded by a deadline.
func (c *opsCluster) tool(script string, args ...string) (string, int) {
	c.t.Helper()
	out, code, err := proc.Run(2*time.Minute, []string{"KLASSIK_BUILD_DIR=" + c.build}, filepath.Join(c.repo, "bin", script), args...)
	if err != nil {
		c.t.Fatalf("%v:\n%s", err, out)
	}
	return out, code
}

// mustTool is tool failing the test on a non-zero exit.
func (c *opsCluster) mustTool(script string, args ...string) string {
	c.t.Helper()
	out, code := c.tool(script, args...)
	if code != 0 {
		c.t.Fatalf("%s %s exited %d:\n%s", script, strings.Join(args, " "), code, out)
	}
	return out
}

// partitionDirs lists the folders of topic's partitions (and their
// "-delete" renames) in every broker's log dir.
func (c *opsCluster) partitionDirs(topic string) []string {
	var out []string
	for _, id := range c.ids {
		entries, _ := os.ReadDir(c.brokers[id].logDir)
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), topic+"-") {
				out = append(out, fmt.Sprintf("broker %d: %s", id, e.Name()))
			}
		}
	}
	return out
}
