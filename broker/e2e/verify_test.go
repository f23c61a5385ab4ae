package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/broker/testcluster/proc"
)

// consumed is one record a client read back.
type consumed struct {
	partition int32
	offset    int64
	value     string
}

// verifyExactlyOnce checks the suite's invariant over records read back: every
// "<prefix>-<i>" for i in [0,n) is present exactly once, nothing else is, and
// within each partition the sequence numbers i increase with the offset (one
// producer sent them in that order). Violations are reported by
// partition/offset.
func verifyExactlyOnce(t *testing.T, prefix string, n int, recs []consumed) {
	t.Helper()
	seen := make(map[int]consumed, n)
	var problems []string
	byPart := map[int32][]consumed{}
	for _, r := range recs {
		byPart[r.partition] = append(byPart[r.partition], r)
		i, ok := seqOf(prefix, r.value)
		if !ok || i < 0 || i >= n {
			problems = append(problems, fmt.Sprintf("unexpected record %q at partition %d offset %d", r.value, r.partition, r.offset))
			continue
		}
		if prev, dup := seen[i]; dup {
			problems = append(problems, fmt.Sprintf("duplicated %q at partition %d offset %d (first at partition %d offset %d)", r.value, r.partition, r.offset, prev.partition, prev.offset))
			continue
		}
		seen[i] = r
	}
	for i := 0; i < n; i++ {
		if _, ok := seen[i]; !ok {
			problems = append(problems, fmt.Sprintf("lost %s-%d", prefix, i))
		}
	}
	for p, rs := range byPart {
		sort.Slice(rs, func(a, b int) bool { return rs[a].offset < rs[b].offset })
		last := -1
		for _, r := range rs {
			i, ok := seqOf(prefix, r.value)
			if !ok {
				continue
			}
			if i < last {
				problems = append(problems, fmt.Sprintf("reordered: partition %d offset %d holds %s-%d after %s-%d", p, r.offset, prefix, i, prefix, last))
			}
			last = i
		}
	}
	if len(problems) > 0 {
		if len(problems) > 30 {
			problems = append(problems[:30], fmt.Sprintf("... and %d more", len(problems)-30))
		}
		t.Fatalf("%d records read back for %d produced; violations:\n  %s", len(recs), n, strings.Join(problems, "\n  "))
	}
	t.Logf("%s: all %d records read back exactly once, in order per partition, over %d partitions", prefix, n, len(byPart))
}

func seqOf(prefix, v string) (int, bool) {
	s, ok := strings.CutPrefix(v, prefix+"-")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	return i, err == nil
}

// parseLines parses "<partition> <offset> <value>" lines printed by a client.
func parseLines(t *testing.T, out []byte) []consumed {
	t.Helper()
	var recs []consumed
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 3)
		if len(f) != 3 {
			t.Fatalf("unparseable client output line %q", sc.Text())
		}
		p, err1 := strconv.Atoi(f[0])
		o, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("unparseable client output line %q", sc.Text())
		}
		recs = append(recs, consumed{partition: int32(p), offset: o, value: f[2]})
	}
	return recs
}

// consumeWithKgo reads n records of topic from the beginning with franz-go
// (no group) and returns them; a cross-check for clients whose own consumer
// needs a consumer group.
func consumeWithKgo(t *testing.T, c *testcluster.Cluster, topic string, n int) []consumed {
	t.Helper()
	cl := c.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	return pollRecords(t, cl, topic, n, nil)
}

// pollRecords polls cl, a consumer of topic, until n records arrived and
// returns them; if they do not arrive within 60s it runs diagnose (if set,
// to log what the brokers hold) and fails the test.
func pollRecords(t *testing.T, cl *kgo.Client, topic string, n int, diagnose func()) []consumed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var recs []consumed
	for len(recs) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			if diagnose != nil {
				diagnose()
			}
			t.Fatalf("read %d of %d records of %s before the deadline", len(recs), n, topic)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s-%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			recs = append(recs, consumed{partition: r.Partition, offset: r.Offset, value: string(r.Value)})
		})
	}
	return recs
}

// startCluster starts the suite's cluster: 3 brokers on racks a, b, c.
func startCluster(t *testing.T) *testcluster.Cluster {
	t.Helper()
	return testcluster.Start(t, testcluster.Options{Brokers: 3, Racks: []string{"a", "b", "c"}})
}

// createTopic creates a 6-partition, replication-factor-3 topic and waits
// until every partition has a leader known to every broker.
func createTopic(t *testing.T, c *testcluster.Cluster, topic string) {
	t.Helper()
	c.CreateTopic(topic, 6, 3, nil)
	c.WaitLeaders(30*time.Second, topic, 6)
}

// requireTool fails the test when an external client is missing.
func requireTool(t *testing.T, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is required by the client suite and was not found: %s (or run bin/klassik-install-deps.sh)", name, install)
	}
	return p
}

// requirePython fails the test unless Debian's python3 can import module.
func requirePython(t *testing.T, module, pkg string) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import "+module).Run(); err != nil {
		t.Fatalf("/usr/bin/python3 cannot import %s: apt-get install -y %s (or run bin/klassik-install-deps.sh)", module, pkg)
	}
}

// clientsDir is testdata/clients at the top of the repository.
func clientsDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "clients")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("testdata/clients not found: %v", err)
	}
	return dir
}

// run runs a command with a deadline and returns its stdout; it fails the
// test with stderr on a non-zero exit.
func run(t *testing.T, timeout time.Duration, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstderr:\n%s\nstdout (tail):\n%s", name, strings.Join(args, " "), err, tailLines(stderr.String()), tailLines(stdout.String()))
	}
	return stdout.Bytes()
}

// tailLines is the end of a process's output, for failure messages.
func tailLines(s string) string { return proc.TailString(s, 60) }

// collector gathers records from library callbacks.
type collector struct {
	mu   sync.Mutex
	recs []consumed
}

func (c *collector) add(r consumed) {
	c.mu.Lock()
	c.recs = append(c.recs, r)
	c.mu.Unlock()
}

func (c *collector) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.recs)
}

func (c *collector) all() []consumed {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]consumed(nil), c.recs...)
}

func fileExists(path string) error {
	_, err := os.Stat(path)
	return err
}
