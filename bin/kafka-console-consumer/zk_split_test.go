package main

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// Two console consumers started with --zookeeper in one group split the
// partitions through /consumers/<group>/owners, and a zkCli user sees both
// ids, both owners and offsets that rise as records are consumed.
func TestConsoleConsumerZooKeeperTwoInstancesSplit(t *testing.T) {
	c := startCluster(t)
	// The deadline only bounds a failure: the JVM zkCli runs and the waits
	// below share it, and on a loaded machine they take far longer than
	// the consumers' own work.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	clitest.CreateTopic(t, ctx, c, "split", 2, 1)
	const group = "zsplit"
	args := []string{"--zookeeper", c.ZKConnect(), "--topic", "split", "--group", group, "--max-messages", "6",
		"--consumer-property", "rebalance.backoff.ms=100", "--consumer-property", "auto.commit.interval.ms=100"}
	type result struct {
		out, errOut string
		code        int
	}
	results := make([]result, 2)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() { // one console consumer each; joined below or on cancel
			defer wg.Done()
			var out, errOut strings.Builder
			code := run(ctx, args, &out, &errOut)
			results[i] = result{out.String(), errOut.String(), code}
		}()
	}
	defer func() { cancel(); wg.Wait() }()

	zk := c.ZK()
	var owners map[int32]string
	c.WaitFor(30*time.Second, "each instance owns one partition", func() bool {
		var err error
		owners, err = clitools.DescribeOwners(zk, group, "split")
		return err == nil && owners[0] != "" && owners[1] != "" && owners[0] != owners[1]
	})
	prod := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableIdempotentWrite())
	produce := func(from, to int) {
		for p := int32(0); p < 2; p++ {
			for i := from; i < to; i++ {
				r := &kgo.Record{Topic: "split", Partition: p, Value: []byte(fmt.Sprintf("p%d-%d", p, i))}
				if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
					t.Fatalf("produce: %v", err)
				}
			}
		}
	}
	committed := func(want int64) func() bool {
		return func() bool {
			for p := int32(0); p < 2; p++ {
				off, ok, err := zk.GetConsumerOffset(group, "split", p)
				if err != nil || !ok || off != want {
					return false
				}
			}
			return true
		}
	}
	addr, chroot, _ := strings.Cut(c.ZKConnect(), "/")
	zkCli := func() string {
		out, err := zkserver.ZkCliScript(addr, 60*time.Second,
			"ls /"+chroot+"/consumers/"+group+"/ids",
			"get /"+chroot+"/consumers/"+group+"/owners/split/0",
			"get /"+chroot+"/consumers/"+group+"/owners/split/1",
			"get /"+chroot+"/consumers/"+group+"/offsets/split/0",
			"get /"+chroot+"/consumers/"+group+"/offsets/split/1")
		if err != nil {
			t.Fatalf("zkCli: %v", err)
		}
		return out
	}

	produce(0, 3)
	c.WaitFor(30*time.Second, "offsets 3 committed on both partitions", committed(3))
	first := zkCli()
	// Owner values are <consumer id>-<thread>; the ids node lists both
	// consumer ids.
	ids := []string{strings.TrimSuffix(owners[0], "-0"), strings.TrimSuffix(owners[1], "-0")}
	sort.Strings(ids)
	for _, w := range []string{"[" + ids[0] + ", " + ids[1] + "]", "\n" + owners[0] + "\n", "\n" + owners[1] + "\n"} {
		if !strings.Contains(first, w) {
			t.Errorf("zkCli lacks %q:\n%s", w, first)
		}
	}
	if n := len(regexp.MustCompile(`(?m)^3$`).FindAllString(first, -1)); n != 2 {
		t.Errorf("zkCli shows offset 3 %d times, want 2:\n%s", n, first)
	}

	produce(3, 6)
	c.WaitFor(30*time.Second, "offsets 6 committed on both partitions", committed(6))
	second := zkCli()
	if n := len(regexp.MustCompile(`(?m)^6$`).FindAllString(second, -1)); n != 2 {
		t.Errorf("zkCli shows offset 6 %d times after more records, want 2:\n%s", n, second)
	}

	// Both stop after six messages: each printed exactly one partition's
	// records, in order.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }() // joined by the select below
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("console consumers did not stop after --max-messages 6")
	}
	seen := map[string]bool{}
	for i, r := range results {
		if r.code != 0 || !strings.HasSuffix(r.errOut, "Processed a total of 6 messages\n") {
			t.Fatalf("instance %d: exit %d, stderr %q", i, r.code, r.errOut)
		}
		lines := strings.Fields(r.out)
		if len(lines) != 6 {
			t.Fatalf("instance %d printed %q", i, r.out)
		}
		prefix := lines[0][:3]
		for j, l := range lines {
			if l != fmt.Sprintf("%s%d", prefix, j) {
				t.Errorf("instance %d line %d = %q, want %s%d (one partition, in order)", i, j, l, prefix, j)
			}
			seen[l] = true
		}
	}
	if len(seen) != 12 {
		t.Errorf("the two instances printed %d distinct records, want 12 (no partition read twice)", len(seen))
	}
}
