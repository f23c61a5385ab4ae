package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
)

func TestMain(m *testing.M) {
	code := clitest.Main(m)
	if producerErr == nil && producerBin != "" {
		os.RemoveAll(filepath.Dir(producerBin))
	}
	os.Exit(code)
}

var (
	producerOnce sync.Once
	producerBin  string
	producerErr  error
)

// buildProducer compiles bin/kafka-console-producer once per test binary,
// so that the round trip runs the real producer process.
func buildProducer(t *testing.T) string {
	t.Helper()
	producerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "klassik-console-producer")
		if err != nil {
			producerErr = err
			return
		}
		producerBin = filepath.Join(dir, "kafka-console-producer")
		out, err := exec.Command("go", "build", "-o", producerBin, "../kafka-console-producer").CombinedOutput()
		if err != nil {
			producerErr = err
			producerBin = string(out)
		}
	})
	if producerErr != nil {
		t.Fatalf("building kafka-console-producer (the Go toolchain must be on PATH): %v\n%s", producerErr, producerBin)
	}
	return producerBin
}

func consume(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return clitest.Run(t, run, args...)
}

func startCluster(t *testing.T) *testcluster.Cluster {
	return testcluster.Start(t, testcluster.Options{Brokers: 1, Overrides: map[string]string{
		"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1"}})
}

// The console producer (as a process, reading stdin) and the console
// consumer (in process) round-trip keyed records, and the consumer honours
// groups, partitions, offsets and timeouts with Kafka's output.
func TestConsoleRoundTrip(t *testing.T) {
	prod := buildProducer(t)
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // bounds a failure only
	defer cancel()
	clitest.CreateTopic(t, ctx, c, "rt", 1, 1)
	bs := strings.Join(c.Bootstrap(), ",")
	cmd := exec.CommandContext(ctx, prod, "--bootstrap-server", bs, "--topic", "rt", "--property", "parse.key=true",
		"--property", "key.separator=:", "--request-required-acks", "all", "--compression-codec")
	cmd.Stdin = strings.NewReader("k1:v1\nk2:v2\nk3:v3:with colon\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("producer: %v\n%s", err, out)
	}

	out, errOut, code := consume(t, "--bootstrap-server", bs, "--topic", "rt", "--from-beginning", "--max-messages", "3",
		"--property", "print.key=true", "--property", "print.partition=true", "--property", "print.offset=true")
	want := "Partition:0\tOffset:0\tk1\tv1\nPartition:0\tOffset:1\tk2\tv2\nPartition:0\tOffset:2\tk3\tv3:with colon\n"
	if code != 0 || out != want || !strings.HasSuffix(errOut, "Processed a total of 3 messages\n") {
		t.Fatalf("code %d\nstdout %q\nstderr %q", code, out, errOut)
	}

	// A named group commits what it printed: the next run continues.
	out, errOut, code = consume(t, "--bootstrap-server", bs, "--topic", "rt", "--group", "cg", "--from-beginning", "--max-messages", "2")
	if code != 0 || out != "v1\nv2\n" {
		t.Fatalf("first group run: %d %q %q", code, out, errOut)
	}
	out, errOut, code = consume(t, "--bootstrap-server", bs, "--topic", "rt", "--group", "cg", "--max-messages", "1")
	if code != 0 || out != "v3:with colon\n" {
		t.Fatalf("second group run: %d %q %q", code, out, errOut)
	}
	// Nothing left: --timeout-ms ends the run with Kafka's error line.
	out, errOut, code = consume(t, "--bootstrap-server", bs, "--topic", "rt", "--group", "cg", "--timeout-ms", "1500")
	if code != 0 || out != "" || !strings.Contains(errOut, "ERROR Error processing message, terminating consumer process:") ||
		!strings.Contains(errOut, "org.apache.kafka.common.errors.TimeoutException") || !strings.HasSuffix(errOut, "Processed a total of 0 messages\n") {
		t.Fatalf("timeout run: %d %q %q", code, out, errOut)
	}

	// --whitelist subscribes by pattern.
	out, _, code = consume(t, "--bootstrap-server", bs, "--whitelist", "r.*", "--from-beginning", "--max-messages", "3")
	if code != 0 || out != "v1\nv2\nv3:with colon\n" {
		t.Fatalf("whitelist run: %d %q", code, out)
	}

	// A signal (context end) stops a consumer that has no limit, with the
	// count line and exit status 0.
	// The signal comes once the three records were printed (a clock
	// would race the consumer on a loaded machine); the 2-minute bound only
	// ends a hung run.
	sctx, scancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer scancel()
	var sout, serr strings.Builder
	signalAfter := &linesThenCancel{w: &sout, n: 3, cancel: scancel}
	code = run(sctx, []string{"--bootstrap-server", bs, "--topic", "rt", "--partition", "0", "--offset", "earliest"}, signalAfter, &serr)
	if sctx.Err() == context.DeadlineExceeded {
		t.Fatalf("signal run: the three records were not printed within the bound: %q", sout.String())
	}
	if code != 0 || sout.String() != "v1\nv2\nv3:with colon\n" || !strings.HasSuffix(serr.String(), "Processed a total of 3 messages\n") {
		t.Fatalf("signal run: %d %q %q", code, sout.String(), serr.String())
	}

	// --partition/--offset reads without a group.
	out, _, code = consume(t, "--bootstrap-server", bs, "--topic", "rt", "--partition", "0", "--offset", "1", "--max-messages", "2",
		"--property", "print.timestamp=true")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "CreateTime:") || !strings.HasSuffix(lines[0], "\tv2") ||
		!strings.HasSuffix(lines[1], "\tv3:with colon") {
		t.Fatalf("partition run: %d %q", code, out)
	}
}

// The classic ZooKeeper consumer: offsets land in
// /consumers/<group>/offsets, --from-beginning refuses a group with
// offsets unless --delete-consumer-offsets, and a generated group is
// removed at exit.
func TestConsoleConsumerZooKeeperMode(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // bounds a failure only
	defer cancel()
	clitest.CreateTopic(t, ctx, c, "old", 2, 1)
	cl := c.Client()
	for _, v := range []string{"a", "b", "c", "d"} {
		if err := cl.ProduceSync(ctx, kgoRecord("old", v)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	zkArgs := []string{"--zookeeper", c.ZKConnect(), "--topic", "old", "--consumer-property", "rebalance.backoff.ms=100"}
	out, errOut, code := consume(t, append(zkArgs, "--group", "zg", "--from-beginning", "--max-messages", "4")...)
	if code != 0 || len(strings.Fields(out)) != 4 || !strings.Contains(errOut, "Using the ConsoleConsumer with old consumer is deprecated") ||
		!strings.HasSuffix(errOut, "Processed a total of 4 messages\n") {
		t.Fatalf("zk run: %d %q %q", code, out, errOut)
	}
	for _, v := range []string{"a", "b", "c", "d"} {
		if !strings.Contains(out, v+"\n") {
			t.Errorf("missing %s in %q", v, out)
		}
	}
	zk := c.ZK()
	var sum int64
	for p := int32(0); p < 2; p++ {
		off, ok, err := zk.GetConsumerOffset("zg", "old", p)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			sum += off
		}
	}
	if sum != 4 {
		t.Errorf("committed offsets sum to %d, want 4", sum)
	}
	if kids, _ := zk.Children(zkpaths.ConsumerIDsPath("zg")); len(kids) != 0 {
		t.Errorf("registration left behind: %v", kids)
	}

	_, errOut, code = consume(t, append(zkArgs, "--group", "zg", "--from-beginning")...)
	if code != 1 || !strings.Contains(errOut, "Found previous offset information for this group zg. Please use --delete-consumer-offsets to delete previous offsets metadata") {
		t.Fatalf("from-beginning with offsets: %d %q", code, errOut)
	}
	out, _, code = consume(t, append(zkArgs, "--group", "zg", "--from-beginning", "--delete-consumer-offsets", "--max-messages", "4")...)
	if code != 0 || len(strings.Fields(out)) != 4 {
		t.Fatalf("after delete-consumer-offsets: %d %q", code, out)
	}

	// Without --group: a generated console-consumer-<n> group, deleted on exit.
	out, _, code = consume(t, append(zkArgs, "--from-beginning", "--max-messages", "1")...)
	if code != 0 || len(strings.Fields(out)) != 1 {
		t.Fatalf("generated group run: %d %q", code, out)
	}
	groups, err := zk.Children(zkpaths.ConsumersPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		if strings.HasPrefix(g, "console-consumer-") {
			t.Errorf("generated group %s left in ZooKeeper", g)
		}
	}
}

// linesThenCancel writes to w and calls cancel once n lines were written:
// the test's "signal" after the consumer has printed what it must.
type linesThenCancel struct {
	w      io.Writer
	n      int
	cancel context.CancelFunc
}

func (l *linesThenCancel) Write(b []byte) (int, error) {
	n, err := l.w.Write(b)
	l.n -= bytes.Count(b[:n], []byte("\n"))
	if l.n <= 0 {
		l.cancel()
	}
	return n, err
}
