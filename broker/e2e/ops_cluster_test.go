package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestOpsBadConfigKey: a misspelt key in server.properties stops the broker
// at start-up with a message naming the key and a non-zero exit.
func TestOpsBadConfigKey(t *testing.T) {
	c := newOpsCluster(t, 1)
	data, err := os.ReadFile(c.props)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.props, append(data, []byte("log.retention.hourz=5\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	c.start(1)
	code := c.waitExit(1, 60*time.Second)
	out, _ := os.ReadFile(c.brokers[1].node.Output)
	if code == 0 {
		t.Errorf("broker with an unknown key exited 0:\n%s", out)
	}
	if !strings.Contains(string(out), "log.retention.hourz") {
		t.Errorf("start-up error does not name the key log.retention.hourz:\n%s", out)
	}
	// An unparsable value is named by its key too.
	if err := os.WriteFile(c.props, append(data, []byte("num.partitions=three\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(c.brokers[1].node.Output, 0); err != nil {
		t.Fatal(err)
	}
	c.start(1)
	code = c.waitExit(1, 60*time.Second)
	out, _ = os.ReadFile(c.brokers[1].node.Output)
	if code == 0 || !strings.Contains(string(out), "num.partitions") {
		t.Errorf("broker with num.partitions=three: exit %d, output:\n%s", code, out)
	}
	if ids, err := c.ZK().GetBrokerIDs(); err == nil && len(ids) > 0 {
		t.Errorf("a broker with a bad configuration registered: %v", ids)
	}
}

// TestOpsScriptedCluster drives a three-broker cluster started by
// bin/kafka-server-start.sh through the operator's scripts. The steps share
// the cluster and run in order; each one leaves every broker running.
func TestOpsScriptedCluster(t *testing.T) {
	c := newOpsCluster(t, 1, 2, 3)
	c.startAll()
	for _, id := range c.ids {
		exe, err := os.Readlink("/proc/" + strconv.Itoa(c.brokers[id].node.Process().Pid()) + "/exe")
		if err != nil || filepath.Base(exe) != "kafka-server" {
			t.Fatalf("pid of kafka-server-start.sh for broker %d is %q, not the broker (exec expected): %v", id, exe, err)
		}
	}
	opsTopicsCommands(t, c)
	opsZookeeperShell(t, c)
	opsDeleteTopic(t, c)
	opsKillBrokerRF1(t, c)
	opsControllerFailover(t, c)
	opsControlledShutdown(t, c)
	opsWholeClusterRestart(t, c)
}

// opsAParts is the partition count of ops-a once --alter --partitions 4 ran.
const opsAParts = 4

// describeLines returns the partition lines ("\tTopic: ...") of a
// --describe output, in order.
func describeLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "\tTopic: ") {
			lines = append(lines, l)
		}
	}
	return lines
}

func expectLines(t *testing.T, what, out string, want []string) {
	t.Helper()
	if got := describeLines(out); !slices.Equal(got, want) {
		t.Fatalf("%s: partition lines\n got: %q\nwant: %q\nfull output:\n%s", what, got, want, out)
	}
}

func opsTopicsCommands(t *testing.T, c *opsCluster) {
	t.Log("step: kafka-topics.sh in --bootstrap-server and --zookeeper modes")
	bs, zk := c.bootstrap(), c.zk

	out := c.mustTool("kafka-topics.sh", "--bootstrap-server", bs, "--create", "--topic", "ops-a", "--replica-assignment", "1:2:3,2:3:1,3:1:2")
	if out != "Created topic ops-a.\n" {
		t.Fatalf("create ops-a: %q", out)
	}
	out = c.mustTool("kafka-topics.sh", "--zookeeper", zk, "--create", "--topic", "ops-z", "--replica-assignment", "2,3")
	if out != "Created topic ops-z.\n" {
		t.Fatalf("create ops-z: %q", out)
	}
	c.waitFor(30*time.Second, "leaders of ops-a and ops-z", func() bool {
		for _, tp := range []common.TopicPartition{{Topic: "ops-a", Partition: 0}, {Topic: "ops-a", Partition: 1}, {Topic: "ops-a", Partition: 2}, {Topic: "ops-z", Partition: 0}, {Topic: "ops-z", Partition: 1}} {
			if s, ok := c.state(tp.Topic, tp.Partition); !ok || s.Leader < 0 {
				return false
			}
		}
		return true
	})

	for _, mode := range [][]string{{"--bootstrap-server", bs}, {"--zookeeper", zk}} {
		out = c.mustTool("kafka-topics.sh", append(mode, "--list")...)
		if !strings.Contains(out, "ops-a\nops-z\n") || strings.Contains(out, "ops-del") {
			t.Fatalf("%s --list: %q", mode[0], out)
		}
		out = c.mustTool("kafka-topics.sh", append(mode, "--describe", "--topic", "ops-a")...)
		expectLines(t, mode[0]+" --describe ops-a", out, []string{
			"\tTopic: ops-a\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3",
			"\tTopic: ops-a\tPartition: 1\tLeader: 2\tReplicas: 2,3,1\tIsr: 2,3,1",
			"\tTopic: ops-a\tPartition: 2\tLeader: 3\tReplicas: 3,1,2\tIsr: 3,1,2",
		})
		header := regexp.MustCompile(`(?m)^Topic: ops-a\t(TopicId: [A-Za-z0-9_-]{22}\t)?PartitionCount: 3\tReplicationFactor: 3\tConfigs: `)
		if !header.MatchString(out) {
			t.Fatalf("%s --describe ops-a: no header line in Kafka's format:\n%s", mode[0], out)
		}
		out = c.mustTool("kafka-topics.sh", append(mode, "--describe", "--topic", "ops-z")...)
		expectLines(t, mode[0]+" --describe ops-z", out, []string{
			"\tTopic: ops-z\tPartition: 0\tLeader: 2\tReplicas: 2\tIsr: 2",
			"\tTopic: ops-z\tPartition: 1\tLeader: 3\tReplicas: 3\tIsr: 3",
		})
	}

	// --alter --partitions in both modes.
	c.mustTool("kafka-topics.sh", "--bootstrap-server", bs, "--alter", "--topic", "ops-a", "--partitions", "4")
	out = c.mustTool("kafka-topics.sh", "--zookeeper", zk, "--alter", "--topic", "ops-z", "--partitions", "3")
	if !strings.Contains(out, "Adding partitions succeeded!") {
		t.Fatalf("--zookeeper --alter --partitions: %q", out)
	}
	c.waitFor(30*time.Second, "leaders of the new partitions", func() bool {
		a, ok1 := c.state("ops-a", 3)
		z, ok2 := c.state("ops-z", 2)
		return ok1 && ok2 && a.Leader >= 0 && z.Leader >= 0
	})
	for _, mode := range [][]string{{"--bootstrap-server", bs}, {"--zookeeper", zk}} {
		out = c.mustTool("kafka-topics.sh", append(mode, "--describe", "--topic", "ops-a")...)
		lines := describeLines(out)
		if len(lines) != opsAParts || !regexp.MustCompile(`^\tTopic: ops-a\tPartition: 3\tLeader: [123]\tReplicas: [123],[123],[123]\tIsr: [123],[123],[123]$`).MatchString(lines[3]) ||
			!strings.Contains(out, "PartitionCount: 4\tReplicationFactor: 3") {
			t.Fatalf("%s --describe ops-a after --alter --partitions 4:\n%s", mode[0], out)
		}
		out = c.mustTool("kafka-topics.sh", append(mode, "--describe", "--topic", "ops-z")...)
		if len(describeLines(out)) != 3 || !strings.Contains(out, "PartitionCount: 3\tReplicationFactor: 1") {
			t.Fatalf("%s --describe ops-z after --alter --partitions 3:\n%s", mode[0], out)
		}
	}
}

func opsZookeeperShell(t *testing.T, c *opsCluster) {
	t.Log("step: zookeeper-shell.sh get of a partition state znode")
	const p = "/brokers/topics/ops-a/partitions/0/state"
	raw, _, err := c.ZK().Get(p)
	if err != nil {
		t.Fatalf("get %s: %v", p, err)
	}
	out := c.mustTool("zookeeper-shell.sh", c.zk, "get", p)
	if out != string(raw)+"\n" {
		t.Fatalf("zookeeper-shell.sh get %s printed %q, the znode holds %q", p, out, raw)
	}
	kafkaJSON := regexp.MustCompile(`^\{"controller_epoch":\d+,"leader":1,"version":1,"leader_epoch":\d+,"isr":\[1,2,3\]\}\n$`)
	if !kafkaJSON.MatchString(out) {
		t.Fatalf("state znode is not Kafka's JSON: %q", out)
	}
}

func opsDeleteTopic(t *testing.T, c *opsCluster) {
	t.Log("step: kafka-topics.sh --delete")
	bs := c.bootstrap()
	c.mustTool("kafka-topics.sh", "--bootstrap-server", bs, "--create", "--topic", "ops-del", "--partitions", "2", "--replication-factor", "3")
	c.waitFor(30*time.Second, "ops-del partition folders on every broker", func() bool {
		return len(c.partitionDirs("ops-del")) == 6
	})
	produceN(t, c.client(kgo.RecordPartitioner(kgo.ManualPartitioner())), "ops-del", 0, "del", 10)
	out := c.mustTool("kafka-topics.sh", "--zookeeper", c.zk, "--delete", "--topic", "ops-del")
	if out != "Topic ops-del is marked for deletion.\nNote: This will have no impact if delete.topic.enable is not set to true.\n" {
		t.Fatalf("--zookeeper --delete: %q", out)
	}
	c.waitFor(60*time.Second, "ops-del gone from ZooKeeper", func() bool {
		ok, err := c.ZK().TopicExists("ops-del")
		if err != nil || ok {
			return false
		}
		ch, err := c.ZK().Children("/admin/delete_topics")
		return err == nil && !slices.Contains(ch, "ops-del")
	})
	c.waitFor(30*time.Second, "ops-del partition folders removed from the log dirs", func() bool {
		return len(c.partitionDirs("ops-del")) == 0
	})
	out = c.mustTool("kafka-topics.sh", "--bootstrap-server", bs, "--list")
	if strings.Contains(out, "ops-del") {
		t.Fatalf("--list after delete still shows ops-del: %q", out)
	}

	// The same through the Admin API (--bootstrap-server mode).
	c.mustTool("kafka-topics.sh", "--bootstrap-server", bs, "--create", "--topic", "ops-del2", "--partitions", "1", "--replication-factor", "2")
	c.waitFor(30*time.Second, "ops-del2 folders", func() bool { return len(c.partitionDirs("ops-del2")) == 2 })
	c.mustTool("kafka-topics.sh", "--bootstrap-server", bs, "--delete", "--topic", "ops-del2")
	c.waitFor(60*time.Second, "ops-del2 gone from ZooKeeper and the log dirs", func() bool {
		ok, err := c.ZK().TopicExists("ops-del2")
		return err == nil && !ok && len(c.partitionDirs("ops-del2")) == 0
	})
}

// produceN writes "<prefix>-<i>" for i in [0,n) to one partition, acks=all;
// cl must use kgo.ManualPartitioner so Record.Partition is honoured.
func produceN(t *testing.T, cl *kgo.Client, topic string, partition int32, prefix string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Partition: partition, Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("producing to %s-%d: %v", topic, partition, err)
	}
}

// readAll reads partitions of topic from the start until n records arrived.
func readAll(t *testing.T, c *opsCluster, topic string, partitions []int32, n int) []consumed {
	t.Helper()
	offs := map[int32]kgo.Offset{}
	for _, p := range partitions {
		offs[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs()...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offs}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	return pollRecords(t, cl, topic, n, func() {
		for _, p := range partitions {
			for _, d := range c.partitionDirs(fmt.Sprintf("%s-%d", topic, p)) {
				t.Logf("log dir %s", d)
			}
			for _, id := range c.ids {
				segs, _ := filepath.Glob(filepath.Join(c.brokers[id].logDir, fmt.Sprintf("%s-%d", topic, p), "*.log"))
				for _, seg := range segs {
					out, _ := c.tool("kafka-dump-log.sh", "--files", seg)
					t.Logf("broker %d, kafka-dump-log.sh --files %s:\n%s", id, seg, tailLines(out))
				}
			}
		}
	})
}

// opsKillBrokerRF1: kill -9 of the broker holding ops-z's single replica of
// partition 0; the tools report it unavailable (Leader: none), the RF=3
// topic under-replicated; after a restart it comes back with its data.
func opsKillBrokerRF1(t *testing.T, c *opsCluster) {
	t.Log("step: kill -9 a broker; --under-replicated-partitions and --unavailable-partitions")
	const victim = 2
	if s, _ := c.state("ops-z", 0); s.Leader != victim {
		t.Fatalf("ops-z-0 is led by %d, expected %d", s.Leader, victim)
	}
	produceN(t, c.client(kgo.RecordPartitioner(kgo.ManualPartitioner())), "ops-z", 0, "rf1", 50)
	if ctrl, _, _ := c.ZK().GetController(); ctrl == victim {
		t.Logf("broker %d is also the controller", victim)
	}
	c.signal(victim, syscall.SIGKILL)
	c.waitExit(victim, 10*time.Second)
	c.waitFor(opsSessionTimeout+20*time.Second, "ops-z-0 leaderless and ops-a's ISRs without the killed broker", func() bool {
		z, _ := c.state("ops-z", 0)
		if z.Leader != -1 {
			return false
		}
		for p := int32(0); p < opsAParts; p++ {
			a, _ := c.state("ops-a", p)
			if a.Leader == victim || a.Leader < 0 || slices.Contains(a.ISR, victim) {
				return false
			}
		}
		return true
	})
	bs := c.bootstrap()
	for _, mode := range [][]string{{"--bootstrap-server", bs}, {"--zookeeper", c.zk}} {
		out := c.mustTool("kafka-topics.sh", append(mode, "--describe", "--unavailable-partitions", "--topic", "ops-z")...)
		expectLines(t, mode[0]+" --unavailable-partitions", out, []string{
			"\tTopic: ops-z\tPartition: 0\tLeader: none\tReplicas: 2\tIsr: 2",
		})
		out = c.mustTool("kafka-topics.sh", append(mode, "--describe", "--under-replicated-partitions", "--topic", "ops-a")...)
		lines := describeLines(out)
		if len(lines) != opsAParts {
			t.Fatalf("%s --under-replicated-partitions: want every partition of ops-a:\n%s", mode[0], out)
		}
		for _, l := range lines {
			if strings.Contains(l, "Leader: 2") || strings.Contains(l, "Leader: none") || strings.Contains(strings.SplitN(l, "Isr: ", 2)[1], "2") {
				t.Fatalf("%s --under-replicated-partitions line %q", mode[0], l)
			}
		}
	}
	c.start(victim)
	c.waitRegistered(victim)
	c.waitFor(60*time.Second, "ops-z-0 led by its only replica again and ops-a's ISRs full", func() bool {
		if z, _ := c.state("ops-z", 0); z.Leader != victim {
			return false
		}
		for p := int32(0); p < opsAParts; p++ {
			if a, _ := c.state("ops-a", p); len(a.ISR) != 3 {
				return false
			}
		}
		return true
	})
	verifyExactlyOnce(t, "rf1", 50, readAll(t, c, "ops-z", []int32{0}, 50))
	out := c.mustTool("kafka-topics.sh", "--bootstrap-server", c.bootstrap(), "--describe", "--unavailable-partitions")
	if len(describeLines(out)) != 0 {
		t.Fatalf("--unavailable-partitions after the restart:\n%s", out)
	}
}

// opsControllerFailover: kill -9 of the controller; another broker takes
// over with /controller_epoch + 1 once the old session expires (normally
// within zookeeper.session.timeout.ms + 2 s; the time is logged).
func opsControllerFailover(t *testing.T, c *opsCluster) {
	t.Log("step: kill -9 the controller")
	old, ok, err := c.ZK().GetController()
	if err != nil || !ok {
		t.Fatalf("no controller: %v", err)
	}
	epoch, _, _, err := c.ZK().GetControllerEpoch()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c.signal(old, syscall.SIGKILL)
	bound := opsSessionTimeout + 2*time.Second
	var next, nextEpoch int32
	c.waitFor(bound+10*time.Second, "a new controller", func() bool {
		id, ok, err := c.ZK().GetController()
		if err != nil || !ok || id == old {
			return false
		}
		e, _, _, err := c.ZK().GetControllerEpoch()
		if err != nil || e == epoch {
			return false
		}
		next, nextEpoch = id, e
		return true
	})
	took := time.Since(start)
	t.Logf("controller %d (epoch %d) killed; broker %d is controller with epoch %d after %v", old, epoch, next, nextEpoch, took)
	if nextEpoch != epoch+1 {
		t.Errorf("/controller_epoch went from %d to %d, want +1", epoch, nextEpoch)
	}
	// How long the failover takes is the session timeout plus the
	// machine's scheduling delay, so it is reported, not judged: the
	// verdict is the new controller with the next epoch, found before the
	// deadline of the wait above.
	if took > bound {
		t.Logf("failover took %v, more than zookeeper.session.timeout.ms + 2s = %v (a loaded machine)", took, bound)
	}
	c.waitExit(old, 10*time.Second)
	restartRejoined(c, old)
}

// restartRejoined starts broker id again, waits for its registration and
// then for every ISR of ops-a to be full (with a leader) again.
func restartRejoined(c *opsCluster, id int32) {
	c.t.Helper()
	c.start(id)
	c.waitRegistered(id)
	c.waitFor(60*time.Second, "ops-a's ISRs full again", func() bool {
		for p := int32(0); p < opsAParts; p++ {
			if a, _ := c.state("ops-a", p); len(a.ISR) != 3 || a.Leader < 0 {
				return false
			}
		}
		return true
	})
}

// opsControlledShutdown: SIGTERM to the pid kafka-server-start.sh left is a
// controlled shutdown: leaderships of replicated partitions move away while
// the broker still runs, then it deregisters, writes .kafka_cleanshutdown
// and exits 0. Done for a broker that is not the controller, then for the
// controller itself.
func opsControlledShutdown(t *testing.T, c *opsCluster) {
	t.Log("step: SIGTERM is a controlled shutdown")
	ctrl, _, err := c.ZK().GetController()
	if err != nil {
		t.Fatal(err)
	}
	// ops-a-<n-1> prefers broker n (--replica-assignment 1:2:3,2:3:1,3:1:2).
	victim := int32(1)
	if ctrl == 1 {
		victim = 2
	}
	preferred := victim - 1
	opsControlledShutdownOf(t, c, victim, preferred, true)
	// The check above tells the two apart: the same broker with
	// controlled.shutdown.enable=false is moved only after it is gone.
	c.signal(victim, syscall.SIGTERM)
	c.waitExit(victim, 60*time.Second)
	c.brokers[victim].extra = []string{"controlled.shutdown.enable=false"}
	restartRejoined(c, victim)
	c.brokers[victim].extra = nil
	opsControlledShutdownOf(t, c, victim, preferred, false)
	c.waitFor(30*time.Second, "a controller", func() bool {
		_, ok, err := c.ZK().GetController()
		return err == nil && ok
	})
	ctrl, _, err = c.ZK().GetController()
	if err != nil {
		t.Fatal(err)
	}
	preferred = ctrl - 1
	t.Logf("now the controller, broker %d", ctrl)
	opsControlledShutdownOf(t, c, ctrl, preferred, true)
}

// replicated reports whether topic has more than one replica per partition
// in this suite (ops-z was created with replication factor 1).
func replicated(topic string) bool { return topic != "ops-z" }

// watchOrder sets one-shot watches on the given state znodes (data) and
// on dir (children) in a session of its own, and returns a function that
// yields the paths (relative to the chroot) of the watch events seen so
// far, in the order ZooKeeper delivered them.
func watchOrder(t *testing.T, c *opsCluster, states []common.TopicPartition, dir string) func() []string {
	t.Helper()
	server, chroot, _ := strings.Cut(c.zk, "/")
	chroot = "/" + chroot
	var mu sync.Mutex
	var events []string
	conn, _, err := zk.Connect([]string{server}, 10*time.Second, zk.WithLogInfo(false), zk.WithEventCallback(func(ev zk.Event) {
		if ev.Type == zk.EventSession || ev.Type == zk.EventNotWatching {
			return
		}
		mu.Lock()
		events = append(events, strings.TrimPrefix(ev.Path, chroot))
		mu.Unlock()
	}))
	if err != nil {
		t.Fatalf("connecting to ZooKeeper: %v", err)
	}
	t.Cleanup(conn.Close)
	for _, tp := range states {
		if _, _, _, err := conn.GetW(chroot + fmt.Sprintf("/brokers/topics/%s/partitions/%d/state", tp.Topic, tp.Partition)); err != nil {
			t.Fatalf("watching the state of %s-%d: %v", tp.Topic, tp.Partition, err)
		}
	}
	if _, _, _, err := conn.ChildrenW(chroot + dir); err != nil {
		t.Fatalf("watching %s: %v", dir, err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(events)
	}
}

// opsControlledShutdownOf stops victim with SIGTERM (after making it lead
// ops-a-<preferred> when preferred >= 0) and checks the outcome: with
// controlled set, every replicated partition it led moved before it
// deregistered; without, they moved after. It restarts victim at the end.
func opsControlledShutdownOf(t *testing.T, c *opsCluster, victim int32, preferred int32, controlled bool) {
	leads := func() bool {
		for p := int32(0); p < opsAParts; p++ {
			if a, _ := c.state("ops-a", p); a.Leader == victim && len(a.ISR) == 3 {
				return true
			}
		}
		return false
	}
	if !leads() && preferred >= 0 {
		// A preferred election puts the victim back on the partition
		// whose first replica it is.
		c.mustTool("kafka-leader-election.sh", "--bootstrap-server", c.bootstrap(), "--election-type", "preferred", "--topic", "ops-a", "--partition", strconv.Itoa(int(preferred)))
		c.waitFor(30*time.Second, fmt.Sprintf("broker %d leading ops-a-%d after the preferred election", victim, preferred), leads)
	}
	b := c.brokers[victim]
	var led []common.TopicPartition
	for tp, s := range c.allStates() {
		if s.Leader == victim && replicated(tp.Topic) {
			led = append(led, tp)
		}
	}
	if len(led) == 0 {
		t.Fatalf("broker %d led nothing before SIGTERM", victim)
	}
	// ZooKeeper delivers the watch events of one session in the order of
	// the changes. Watch the state znodes the victim leads and
	// /brokers/ids: with a controlled shutdown every state znode changes
	// (leadership moved) before the broker's registration goes away; a
	// broker that merely died is moved after it.
	order := watchOrder(t, c, led, "/brokers/ids")
	c.signal(victim, syscall.SIGTERM)
	code := c.waitExit(victim, 60*time.Second)
	if code != 0 {
		t.Errorf("broker %d exited %d after SIGTERM, want 0", victim, code)
	}
	c.waitFor(30*time.Second, fmt.Sprintf("/brokers/ids/%d removed", victim), func() bool {
		ok, _, err := c.ZK().Exists(fmt.Sprintf("/brokers/ids/%d", victim))
		return err == nil && !ok
	})
	var events []string
	c.waitFor(30*time.Second, "the watch event of /brokers/ids", func() bool {
		events = order()
		return slices.Contains(events, "/brokers/ids")
	})
	deregistered := slices.Index(events, "/brokers/ids")
	if !controlled {
		c.waitFor(30*time.Second, "leaderships moved after the broker died", func() bool {
			for _, tp := range led {
				if s, _ := c.state(tp.Topic, tp.Partition); s.Leader == victim {
					return false
				}
			}
			return true
		})
		events = order()
	}
	for _, tp := range led {
		p := fmt.Sprintf("/brokers/topics/%s/partitions/%d/state", tp.Topic, tp.Partition)
		i := slices.Index(events, p)
		switch {
		case controlled && (i < 0 || i > deregistered):
			t.Errorf("%s-%d (led by broker %d before SIGTERM) did not change before the broker deregistered: no controlled shutdown (events in order: %v)", tp.Topic, tp.Partition, victim, events)
		case !controlled && (i < 0 || i < deregistered):
			t.Errorf("with controlled.shutdown.enable=false, %s-%d was expected to move only after broker %d deregistered (events in order: %v)", tp.Topic, tp.Partition, victim, events)
		}
	}
	t.Logf("broker %d led %v before SIGTERM (controlled shutdown %v); watch events in order: %v", victim, led, controlled, events)
	for tp, s := range c.allStates() {
		if !replicated(tp.Topic) {
			// Nothing can take over a single replica; Kafka leaves it to
			// the controller's broker-failure handling.
			continue
		}
		if s.Leader == victim {
			t.Errorf("%s-%d still led by the stopped broker %d: %+v", tp.Topic, tp.Partition, victim, s)
		}
		if slices.Contains(s.ISR, victim) {
			// A new leader may re-add the shutting-down broker, which
			// follows it until it stops (Kafka before KIP-841 does the
			// same); the controller removes it once the broker is gone.
			t.Logf("%s-%d ISR %v still holds broker %d right after it exited", tp.Topic, tp.Partition, s.ISR, victim)
		}
	}
	c.waitFor(30*time.Second, fmt.Sprintf("broker %d out of every ISR", victim), func() bool {
		for tp, s := range c.allStates() {
			if replicated(tp.Topic) && slices.Contains(s.ISR, victim) {
				return false
			}
		}
		return true
	})
	if _, err := os.Stat(filepath.Join(b.logDir, ".kafka_cleanshutdown")); err != nil {
		t.Errorf("no .kafka_cleanshutdown in %s: %v", b.logDir, err)
	}
	restartRejoined(c, victim)
}

// opsWholeClusterRestart: SIGTERM every broker, start them all again; topic
// configs, data and committed group offsets survive.
func opsWholeClusterRestart(t *testing.T, c *opsCluster) {
	t.Log("step: whole-cluster restart")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := c.client()
	adm := kadm.NewClient(cl)
	resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("123456789")},
		{Op: kadm.SetConfig, Name: "max.message.bytes", Value: kadm.StringPtr("2000000")},
	}, "ops-a")
	if err == nil {
		for _, r := range resp {
			if r.Err != nil {
				err = fmt.Errorf("%s: %w (%s)", r.Name, r.Err, r.ErrMessage)
			}
		}
	}
	if err != nil {
		t.Fatalf("IncrementalAlterConfigs on ops-a: %v", err)
	}
	const n = 300
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: "ops-a", Partition: int32(i % opsAParts), Value: []byte(fmt.Sprintf("restart-%d", i))}
	}
	if err := c.client(kgo.RecordPartitioner(kgo.ManualPartitioner())).ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("producing to ops-a: %v", err)
	}
	commit := kadm.Offsets{}
	for p := int32(0); p < opsAParts; p++ {
		commit.Add(kadm.Offset{Topic: "ops-a", Partition: p, At: int64(10 + p), LeaderEpoch: -1, Metadata: "ops"})
	}
	var cresp kadm.OffsetResponses
	c.waitFor(60*time.Second, "the group coordinator to accept the commit", func() bool {
		cresp, err = adm.CommitOffsets(ctx, "ops-group", commit)
		return err == nil && cresp.Error() == nil
	})

	// SIGTERM all at once, as kafka-server-stop.sh does.
	for _, id := range c.ids {
		c.signal(id, syscall.SIGTERM)
	}
	for _, id := range c.ids {
		if code := c.waitExit(id, 90*time.Second); code != 0 {
			t.Errorf("broker %d exited %d after SIGTERM", id, code)
		}
	}
	c.startAll()
	c.waitFor(60*time.Second, "leaders of ops-a after the restart", func() bool {
		for p := int32(0); p < opsAParts; p++ {
			if a, _ := c.state("ops-a", p); a.Leader < 0 {
				return false
			}
		}
		return true
	})

	adm2 := kadm.NewClient(c.client())
	rcs, err := adm2.DescribeTopicConfigs(ctx, "ops-a")
	if err != nil || len(rcs) != 1 || rcs[0].Err != nil {
		t.Fatalf("DescribeConfigs ops-a after the restart: %v %+v", err, rcs)
	}
	got := map[string]string{}
	for _, cfg := range rcs[0].Configs {
		got[cfg.Key] = cfg.MaybeValue()
	}
	if got["retention.ms"] != "123456789" || got["max.message.bytes"] != "2000000" {
		t.Errorf("topic configs after the restart: retention.ms=%q max.message.bytes=%q", got["retention.ms"], got["max.message.bytes"])
	}
	verifyExactlyOnce(t, "restart", n, readAll(t, c, "ops-a", []int32{0, 1, 2, 3}, n))
	var fetched kadm.OffsetResponses
	c.waitFor(60*time.Second, "the committed offsets of ops-group", func() bool {
		fetched, err = adm2.FetchOffsets(ctx, "ops-group")
		return err == nil && fetched.Error() == nil
	})
	for p := int32(0); p < opsAParts; p++ {
		o, ok := fetched.Lookup("ops-a", p)
		if !ok || o.At != int64(10+p) || o.Metadata != "ops" {
			t.Errorf("committed offset of ops-group on ops-a-%d after the restart: %+v (found %v), want %d", p, o, ok, 10+p)
		}
	}
	for _, mode := range [][]string{{"--bootstrap-server", c.bootstrap()}, {"--zookeeper", c.zk}} {
		out := c.mustTool("kafka-topics.sh", append(mode, "--describe", "--topic", "ops-a")...)
		if !regexp.MustCompile(`(?m)^Topic: ops-a\t.*\tConfigs: .*\bretention\.ms=123456789\b`).MatchString(out) ||
			!strings.Contains(out, "max.message.bytes=2000000") || len(describeLines(out)) != opsAParts {
			t.Errorf("%s --describe ops-a after the restart does not show the topic configs:\n%s", mode[0], out)
		}
	}
	out := c.mustTool("kafka-topics.sh", "--zookeeper", c.zk, "--list")
	if !strings.Contains(out, "ops-a\n") || !strings.Contains(out, "ops-z\n") {
		t.Errorf("--list after the restart: %q", out)
	}
}
