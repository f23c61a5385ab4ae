package clitools_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

func produce(t *testing.T, c *testcluster.Cluster, topic string, partitions, perPartition int, tag string) {
	t.Helper()
	cl := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableIdempotentWrite())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // bounds a failure only
	defer cancel()
	var recs []*kgo.Record
	for p := 0; p < partitions; p++ {
		for i := 0; i < perPartition; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte(fmt.Sprintf("%s-%d-%d", tag, p, i))})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

type consumed struct {
	mu   sync.Mutex
	seen map[string]int // "p/offset" -> times
	by   map[string]int // consumer id -> count
}

func (c *consumed) add(id string, m clitools.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[fmt.Sprintf("%d/%d", m.Partition, m.Offset)]++
	c.by[id]++
}

func (c *consumed) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.seen {
		n += v
	}
	return n
}

// drain reads from zc until ctx ends, recording every message.
func drain(ctx context.Context, wg *sync.WaitGroup, zc *clitools.ZKConsumer, into *consumed) {
	defer wg.Done()
	for {
		m, err := zc.Next(ctx, 0)
		if err != nil {
			return
		}
		into.add(zc.ConsumerID(), m)
	}
}

func connect(t *testing.T, c *testcluster.Cluster) *zkclient.Client {
	t.Helper()
	z, err := zkclient.Connect(c.ZKConnect(), 6*time.Second)
	if err != nil {
		t.Fatalf("zk connect: %v", err)
	}
	t.Cleanup(z.Close)
	return z
}

// Two classic consumers in one group split a 6-partition topic with the
// range assignment, each partition owned exactly once (ephemeral owner
// znodes), every record consumed once across both, offsets committed to
// /consumers/<g>/offsets; when one leaves, the other takes everything over
// from the committed offsets. OffsetFetch v0 reads the same offsets.
func TestClassicConsumersSplitPartitions(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // bounds a failure only
	defer cancel()
	clitest.CreateTopic(t, ctx, c, "classic", 6, 1)
	produce(t, c, "classic", 6, 10, "a")

	cfg := clitools.ZKConsumerDefaults("billing", "classic")
	cfg.AutoOffsetReset = "smallest"
	cfg.AutoCommitInterval = 200 * time.Millisecond
	cfg.RebalanceBackoff = 100 * time.Millisecond
	cfg.RebalanceMaxRetries = 20
	got := &consumed{seen: map[string]int{}, by: map[string]int{}}
	var wg sync.WaitGroup
	dctx, dcancel := context.WithCancel(ctx)
	defer func() { dcancel(); wg.Wait() }()

	start := func(id string) (*clitools.ZKConsumer, clitools.ZKConsumerConfig) {
		cfg := cfg
		cfg.ConsumerID = id
		zc, err := clitools.StartZKConsumer(connect(t, c), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return zc, cfg
	}
	a, cfgA := start("billing_hostA-1-aaaaaaaa")
	defer a.Close()
	b, cfgB := start("billing_hostB-1-bbbbbbbb")
	defer b.Close()
	wg.Add(2)
	go drain(dctx, &wg, a, got)
	go drain(dctx, &wg, b, got)

	zk := c.ZK()
	// Range assignment over the sorted ids: A (first) gets 0-2, B 3-5.
	want := map[int32]string{0: cfgA.ConsumerID + "-0", 1: cfgA.ConsumerID + "-0", 2: cfgA.ConsumerID + "-0",
		3: cfgB.ConsumerID + "-0", 4: cfgB.ConsumerID + "-0", 5: cfgB.ConsumerID + "-0"}
	var (
		owners map[int32]string
		err    error
	)
	c.WaitFor(30*time.Second, "both consumers own their ranges", func() bool {
		owners, err = clitools.DescribeOwners(zk, "billing", "classic")
		return err == nil && fmt.Sprint(owners) == fmt.Sprint(want)
	})
	c.WaitFor(30*time.Second, "all 60 records consumed", func() bool { return got.total() >= 60 })
	c.WaitFor(30*time.Second, "offsets committed for every partition", func() bool {
		for p := int32(0); p < 6; p++ {
			off, ok, err := zk.GetConsumerOffset("billing", "classic", p)
			if err != nil || !ok || off != 10 {
				return false
			}
		}
		return true
	})
	got.mu.Lock()
	for k, n := range got.seen {
		if n != 1 {
			t.Errorf("record %s consumed %d times", k, n)
		}
	}
	if len(got.seen) != 60 {
		t.Errorf("consumed %d distinct records, want 60", len(got.seen))
	}
	got.mu.Unlock()
	if fmt.Sprint(a.Owned()) != "map[classic:[0 1 2]]" || fmt.Sprint(b.Owned()) != "map[classic:[3 4 5]]" {
		t.Errorf("owned: A %v, B %v", a.Owned(), b.Owned())
	}
	// The registration JSON is the old consumer's.
	data, _, err := zk.Get(zkpaths.ConsumerIDPath("billing", cfgA.ConsumerID))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); !strings.HasPrefix(s, `{"version":1,"subscription":{"classic":1},"pattern":"static","timestamp":"`) {
		t.Errorf("registration %s", s)
	}

	// What a zkCli user sees.
	addr, chroot, _ := strings.Cut(c.ZKConnect(), "/")
	out, err := zkserver.ZkCliScript(addr, 60*time.Second,
		"ls /"+chroot+"/consumers/billing/ids",
		"ls /"+chroot+"/consumers/billing/owners/classic",
		"get /"+chroot+"/consumers/billing/owners/classic/4",
		"get /"+chroot+"/consumers/billing/offsets/classic/0")
	if err != nil {
		t.Fatalf("zkCli: %v", err)
	}
	for _, w := range []string{"[" + cfgA.ConsumerID + ", " + cfgB.ConsumerID + "]", "[0, 1, 2, 3, 4, 5]", cfgB.ConsumerID + "-0", "\n10"} {
		if !strings.Contains(out, w) {
			t.Errorf("zkCli output lacks %q:\n%s", w, out)
		}
	}

	// OffsetFetch v0 (the broker's ZooKeeper mapping) reads the same offsets.
	nc, err := network.Dial(ctx, c.Addr(0), "legacy", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Version, fetch.Group = 0, "billing"
	ft := kmsg.NewOffsetFetchRequestTopic()
	ft.Topic, ft.Partitions = "classic", []int32{0, 5}
	fetch.Topics = append(fetch.Topics, ft)
	kr, err := nc.Request(ctx, fetch)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range kr.(*kmsg.OffsetFetchResponse).Topics[0].Partitions {
		if p.ErrorCode != 0 || p.Offset != 10 {
			t.Errorf("OffsetFetch v0 partition %d: offset %d error %d", p.Partition, p.Offset, p.ErrorCode)
		}
	}

	// A leaves: B rebalances onto all six partitions and resumes from the
	// committed offsets, so new records are read once and old ones never
	// again.
	if err := a.Close(); err != nil {
		t.Fatalf("close A: %v", err)
	}
	if ok, _, _ := zk.Exists(zkpaths.ConsumerIDPath("billing", cfgA.ConsumerID)); ok {
		t.Error("A's registration survived Close")
	}
	c.WaitFor(30*time.Second, "B owns everything", func() bool { return fmt.Sprint(b.Owned()) == "map[classic:[0 1 2 3 4 5]]" })
	produce(t, c, "classic", 6, 1, "b")
	c.WaitFor(30*time.Second, "66 records consumed", func() bool { return got.total() >= 66 })
	if err := b.Close(); err != nil {
		t.Fatalf("close B: %v", err)
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	n := 0
	for k, v := range got.seen {
		n += v
		if v != 1 {
			t.Errorf("record %s consumed %d times", k, v)
		}
	}
	if n != 66 || len(got.seen) != 66 {
		t.Errorf("consumed %d (%d distinct), want 66", n, len(got.seen))
	}
	for p := int32(0); p < 6; p++ {
		if off, ok, err := zk.GetConsumerOffset("billing", "classic", p); err != nil || !ok || off != 11 {
			t.Errorf("partition %d committed %d %v %v, want 11", p, off, ok, err)
		}
	}
	if kids, err := zk.Children(zkpaths.ConsumerOwnersPath("billing", "classic")); err != nil || len(kids) != 0 {
		t.Errorf("owners left after both closed: %v %v", kids, err)
	}
}

// A consumer whose ZooKeeper session expires loses its registration and
// owner nodes (ephemeral); the other member takes every partition. When
// it reconnects with a new session it registers again and the group
// returns to the range split.
func TestClassicConsumerSessionExpiry(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // bounds a failure only
	defer cancel()
	clitest.CreateTopic(t, ctx, c, "exp", 4, 1)
	addr, chroot, _ := strings.Cut(c.ZKConnect(), "/")
	proxy, err := zkserver.NewProxy(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	zkA, err := zkclient.Connect(proxy.ConnectString("/"+chroot), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer zkA.Close()

	cfg := clitools.ZKConsumerDefaults("exp-group", "exp")
	cfg.RebalanceBackoff = 100 * time.Millisecond
	cfg.RebalanceMaxRetries = 20
	cfgA, cfgB := cfg, cfg
	cfgA.ConsumerID, cfgB.ConsumerID = "exp-group_a-1-00000000", "exp-group_b-1-00000000"
	a, err := clitools.StartZKConsumer(zkA, cfgA)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := clitools.StartZKConsumer(connect(t, c), cfgB)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	split := func() bool {
		return fmt.Sprint(a.Owned()) == "map[exp:[0 1]]" && fmt.Sprint(b.Owned()) == "map[exp:[2 3]]"
	}
	c.WaitFor(30*time.Second, "range split", split)

	proxy.Pause()
	zk := c.ZK()
	c.WaitFor(30*time.Second, "A's session expired and B owns everything", func() bool {
		ok, _, _ := zk.Exists(zkpaths.ConsumerIDPath("exp-group", cfgA.ConsumerID))
		owners, err := clitools.DescribeOwners(zk, "exp-group", "exp")
		return !ok && err == nil && fmt.Sprint(b.Owned()) == "map[exp:[0 1 2 3]]" &&
			owners[0] == cfgB.ConsumerID+"-0" && owners[3] == cfgB.ConsumerID+"-0"
	})
	proxy.Resume()
	c.WaitFor(30*time.Second, "A re-registered and the split is back", func() bool {
		owners, err := clitools.DescribeOwners(zk, "exp-group", "exp")
		return split() && err == nil && owners[0] == cfgA.ConsumerID+"-0" && owners[2] == cfgB.ConsumerID+"-0"
	})
}
