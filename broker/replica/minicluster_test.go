package replica

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/metadata"
	"github.com/klassik/klassik/broker/storage"
)

// miniCluster wires replica managers together in-process: each broker's
// replica fetcher "dials" the leader's manager directly, so the fetcher,
// the leader's follower-fetch handling, ISR and HW run exactly as in a
// broker, without sockets or ZooKeeper. A broker can be taken down
// (requests to it fail) and brought back with the same logs.
type miniCluster struct {
	t *testing.T

	// mu guards the following.
	mu      sync.Mutex
	brokers map[int32]*Manager
	stores  map[int32]LogStore
	down    map[int32]bool
	mutate  func(*Config)
}

func newMiniCluster(t *testing.T, mutate func(*Config), ids ...int32) *miniCluster {
	return newMiniClusterWith(t, func() LogStore { return newMemStore() }, mutate, ids...)
}

// diskStore returns a LogStore over the real on-disk storage in a
// temporary directory; it survives a broker's "restart" like a page cache.
func diskStore(t *testing.T) func() LogStore {
	return func() LogStore {
		mc := storage.DefaultManagerConfig(t.TempDir())
		mc.Logger = quietLogger()
		lm, err := storage.NewLogManager(mc)
		if err != nil {
			t.Fatalf("log manager: %v", err)
		}
		t.Cleanup(func() { _ = lm.Shutdown() })
		return NewLogStore(lm)
	}
}

// forEachStore runs f against in-memory and on-disk logs.
func forEachStore(t *testing.T, f func(t *testing.T, newStore func() LogStore)) {
	t.Run("memory", func(t *testing.T) { f(t, func() LogStore { return newMemStore() }) })
	t.Run("disk", func(t *testing.T) { f(t, diskStore(t)) })
}

func newMiniClusterWith(t *testing.T, newStore func() LogStore, mutate func(*Config), ids ...int32) *miniCluster {
	c := &miniCluster{t: t, brokers: map[int32]*Manager{}, stores: map[int32]LogStore{}, down: map[int32]bool{}, mutate: mutate}
	for _, id := range ids {
		c.stores[id] = newStore()
		c.start(id)
	}
	t.Cleanup(func() {
		c.mu.Lock()
		ms := make([]*Manager, 0, len(c.brokers))
		for _, m := range c.brokers {
			ms = append(ms, m)
		}
		c.mu.Unlock()
		for _, m := range ms {
			m.Shutdown()
		}
	})
	return c
}

// start (re)creates broker id's manager over its existing logs.
func (c *miniCluster) start(id int32) *Manager {
	cfg := Config{
		BrokerID:          id,
		Logger:            quietLogger(),
		DisableSendfile:   true,
		ReplicaLagTimeMax: 10 * time.Second,
		ReplicaFetch: FetcherConfig{
			MaxWait: 20 * time.Millisecond,
			Backoff: 10 * time.Millisecond,
			Dial:    c.dial,
		},
	}
	if c.mutate != nil {
		c.mutate(&cfg)
	}
	m := New(cfg, c.stores[id], metadata.New(id, "test"))
	c.mu.Lock()
	c.brokers[id] = m
	c.down[id] = false
	c.mu.Unlock()
	return m
}

// kill stops broker id: its manager shuts down (fetchers stop) and requests
// to it fail until start is called again. Its logs stay.
func (c *miniCluster) kill(id int32) {
	c.mu.Lock()
	m := c.brokers[id]
	c.down[id] = true
	c.mu.Unlock()
	m.Shutdown()
}

func (c *miniCluster) broker(id int32) *Manager {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.brokers[id]
}

func (c *miniCluster) log(id int32, topic string, partition int32) Log {
	l, ok := c.stores[id].GetLog(common.TopicPartition{Topic: topic, Partition: partition})
	if !ok {
		return nil
	}
	return l
}

// bytesUpTo returns a log's batches below end (whole batches), for
// comparing replicas byte for byte.
func bytesUpTo(t *testing.T, l Log, end int64) []byte {
	t.Helper()
	start := l.LogStartOffset()
	if end <= start {
		return nil
	}
	recs, err := l.ReadRecords(start, 1<<30, end, true)
	if err != nil {
		t.Fatalf("reading [%d, %d): %v", start, end, err)
	}
	if recs == nil {
		return nil
	}
	b, err := recs.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (c *miniCluster) dial(_ context.Context, host string, port int32) (LeaderClient, error) {
	return &inprocClient{c: c, id: port}, nil
}

var errBrokerDown = errors.New("broker is down")

// inprocClient is a LeaderClient calling a manager directly.
type inprocClient struct {
	c  *miniCluster
	id int32
}

func (ic *inprocClient) Close() error { return nil }

func (ic *inprocClient) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	ic.c.mu.Lock()
	m, down := ic.c.brokers[ic.id], ic.c.down[ic.id]
	ic.c.mu.Unlock()
	if down || m == nil {
		return nil, errBrokerDown
	}
	switch r := req.(type) {
	case *kmsg.FetchRequest:
		resp, err := m.Fetch(ctx, r)
		if err != nil {
			return nil, err
		}
		// Round-trip through the wire format so the follower sees what a
		// network client would.
		out := kmsg.NewPtrFetchResponse()
		out.Version = r.Version
		if err := out.ReadFrom(resp.AppendTo(nil)); err != nil {
			return nil, err
		}
		return out, nil
	case *kmsg.OffsetForLeaderEpochRequest:
		return m.OffsetForLeaderEpoch(ctx, r), nil
	case *kmsg.ListOffsetsRequest:
		return m.ListOffsets(ctx, r), nil
	}
	return nil, fmt.Errorf("inproc: unsupported request %T", req)
}

// lair sends broker id a LeaderAndIsr for one partition; every other
// replica is a live leader candidate at "b<id>:<id>".
func (c *miniCluster) lair(id int32, topic string, partition, leader, epoch int32, isr, replicas []int32) {
	c.t.Helper()
	req := lairReq(1, topic, topicIDFor(topic), partition, leader, epoch, isr, replicas)
	for _, r := range replicas {
		ll := kmsg.NewLeaderAndISRRequestLiveLeader()
		ll.BrokerID = r
		ll.Host = "b" + strconv.Itoa(int(r))
		ll.Port = r
		req.LiveLeaders = append(req.LiveLeaders, ll)
	}
	if code := lairCode(c.t, c.broker(id).LeaderAndIsr(context.Background(), req)); code != 0 {
		c.t.Fatalf("LeaderAndIsr to %d for %s-%d epoch %d: code %d", id, topic, partition, epoch, code)
	}
}

// lairEach sends the same LeaderAndIsr to each of brokers, in that order,
// as the controller does to every replica of a partition.
func (c *miniCluster) lairEach(brokers []int32, topic string, partition, leader, epoch int32, isr, replicas []int32) {
	c.t.Helper()
	for _, id := range brokers {
		c.lair(id, topic, partition, leader, epoch, isr, replicas)
	}
}

// newSoloLeaderCluster starts brokers 1 and 2 on newStore with t-0 on
// broker 1 alone (leader, epoch 0), and returns the cluster and broker 1.
func newSoloLeaderCluster(t *testing.T, newStore func() LogStore) (*miniCluster, *Manager) {
	t.Helper()
	c := newMiniClusterWith(t, newStore, nil, 1, 2)
	c.lair(1, "t", 0, 1, 0, []int32{1}, []int32{1})
	return c, c.broker(1)
}

// newReplicatedPair starts brokers 1 and 2 on newStore with t-0 on both
// (leader 1, epoch 0), writes values with acks=all and waits until both
// logs hold them. It returns the cluster and the replica list {1, 2}.
func newReplicatedPair(t *testing.T, newStore func() LogStore, values ...string) (*miniCluster, []int32) {
	t.Helper()
	return newReplicatedPairWith(t, newStore, nil, values...)
}

// newReplicatedPairWith is newReplicatedPair with mutate applied to both
// brokers' configurations.
func newReplicatedPairWith(t *testing.T, newStore func() LogStore, mutate func(*Config), values ...string) (*miniCluster, []int32) {
	t.Helper()
	c := newMiniClusterWith(t, newStore, mutate, 1, 2)
	ab := []int32{1, 2}
	c.lairEach(ab, "t", 0, 1, 0, ab, ab)
	produceValues(t, c.broker(1), -1, "t", values...)
	c.waitSame(ab, "t", int64(len(values)))
	return c, ab
}

// addFollower2 is the LeaderAndIsr of a reassignment adding broker 2 as a
// follower of t-0: leader 1 in epoch 1, ISR still {1}, sent to both.
func (c *miniCluster) addFollower2() {
	c.t.Helper()
	c.lairEach([]int32{1, 2}, "t", 0, 1, 1, []int32{1}, []int32{1, 2})
}

// values returns the (offset, value) pairs of a replica's log.
func (c *miniCluster) values(id int32, topic string, partition int32) ([]int64, []string) {
	c.t.Helper()
	l := c.log(id, topic, partition)
	offs, vals, err := batchValues(bytesUpTo(c.t, l, l.LogEndOffset()))
	if err != nil {
		c.t.Fatal(err)
	}
	return offs, vals
}
