package e2e_test

// The README's first command, bin/klassik-quickstart.sh, run as a new user
// runs it: ZooKeeper on 127.0.0.1:2181, three brokers on 9092-9094, the
// topic demo; then the kcat produce and consume the script prints, and
// `bin/klassik-quickstart.sh stop`. The script uses the README's fixed
// ports and Kafka's quickstart paths (/tmp/zookeeper, /tmp/kafka-logs-N),
// so the test runs it in network, mount and PID namespaces of its own, with
// a fresh tmpfs over each of those paths: a cluster the developer may be
// running from the same paths, ports or checkout is neither seen nor
// touched (the stop scripts look for their processes in /proc), and
// whatever the script leaves running dies with the namespace. (The mount
// points are made in the machine's /tmp if missing, empty.)

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/testcluster/proc"
)

func TestQuickstart(t *testing.T) {
	repo := repoRoot(t)
	requireTool(t, "unshare", "apt-get install -y util-linux")
	requireTool(t, "kcat", "apt-get install -y kcat")
	requireTool(t, "nc", "apt-get install -y netcat-openbsd")
	build, logs := t.TempDir(), t.TempDir()
	buildTools(t, repo, build, "kafka-server", "kafka-topics")
	var mounts []string
	for _, d := range []string{"/tmp/zookeeper", "/tmp/kafka-logs-1", "/tmp/kafka-logs-1-b", "/tmp/kafka-logs-2", "/tmp/kafka-logs-2-b", "/tmp/kafka-logs-3", "/tmp/kafka-logs-3-b"} {
		mounts = append(mounts, fmt.Sprintf("mkdir -p %s && mount -t tmpfs tmpfs %s", d, d))
	}
	script := strings.Join([]string{
		"set -e",
		"ip link set lo up",
		strings.Join(mounts, "\n"),
		`cd "$0"`,
		"bin/klassik-quickstart.sh",
		"echo '--- produce'",
		"printf 'hello\\nfrom the quickstart\\n' | kcat -b 127.0.0.1:9092 -t demo -P -p 0 -X acks=all",
		"echo '--- consume'",
		"kcat -b 127.0.0.1:9092 -t demo -C -p 0 -o beginning -e -q",
		"echo '--- stop'",
		"bin/klassik-quickstart.sh stop",
		"echo '--- after stop'",
		// Only this namespace's processes are visible here. The names are
		// split so that this script's own command line does not match.
		`zk=QuorumPeer; for _ in $(seq 1 60); do pgrep -x kafka-server >/dev/null || pgrep -f "${zk}Main" >/dev/null || break; sleep 0.5; done`,
		`if pgrep -x kafka-server || pgrep -f "${zk}Main"; then echo 'still running'; fi`,
		"if nc -z 127.0.0.1 9092 || nc -z 127.0.0.1 2181; then echo 'still listening'; fi",
	}, "\n")
	env := []string{"KLASSIK_BUILD_DIR=" + build, "LOG_DIR=" + logs}
	began := time.Now()
	out, code, err := proc.Run(5*time.Minute, env, "unshare", "--net", "--mount", "--propagation", "private", "--pid", "--fork", "--mount-proc", "--", "bash", "-c", script, repo)
	if err != nil || code != 0 {
		t.Fatalf("quickstart: exit %d, %v\n%s\nZooKeeper's output (tail):\n%s", code, err, out, proc.Tail(filepath.Join(logs, "zookeeper.out"), 40))
	}
	t.Logf("quickstart, produce, consume and stop took %v\n%s", time.Since(began).Round(time.Millisecond), out)
	_, afterStart, ok := strings.Cut(out, "Klassik is up: ZooKeeper 127.0.0.1:2181, brokers 127.0.0.1:9092, :9093, :9094.")
	if !ok {
		t.Fatal("the script did not say the cluster is up")
	}
	if !strings.Contains(out, "Topic: demo\tPartition: 0\tLeader: ") || !strings.Contains(out, "PartitionCount: 6\tReplicationFactor: 3") {
		t.Errorf("no description of topic demo with 6 partitions, RF 3")
	}
	_, consumed, _ := strings.Cut(afterStart, "--- consume\n")
	consumed, _, _ = strings.Cut(consumed, "--- stop\n")
	if consumed != "hello\nfrom the quickstart\n" {
		t.Errorf("consumed %q, want the two records produced", consumed)
	}
	_, after, ok := strings.Cut(out, "--- after stop\n")
	if !ok {
		t.Fatal("the script did not reach the check after `stop`")
	}
	if strings.Contains(after, "still running") || strings.Contains(after, "still listening") {
		t.Errorf("a broker or ZooKeeper still runs 30 s after `stop`:\n%s", after)
	}
}
