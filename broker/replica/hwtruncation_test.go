package replica

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
)

// The old truncation protocol (inter.broker.protocol.version below
// 0.11.0-IV2, FetcherConfig.TruncateToHighWatermark): the two divergence
// scenarios of KIP-101 played with it, where they
// lose or diverge acknowledged data, beside the epoch-protocol versions in
// fetcher_test.go, where they do not.

// leaderRequests counts what the fetchers of a mini cluster send.
type leaderRequests struct {
	mu sync.Mutex
	// guards the following.
	offsetForLeaderEpoch int
	lastFetchedEpochs    []int32 // LastFetchedEpoch of every partition fetched
	// fetchGate, when set, holds every Fetch until it is closed: the test
	// decides when a follower may fetch again.
	fetchGate chan struct{}
}

type countingClient struct {
	LeaderClient
	n *leaderRequests
}

func (c countingClient) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	c.n.mu.Lock()
	gate := c.n.fetchGate
	switch r := req.(type) {
	case *kmsg.OffsetForLeaderEpochRequest:
		c.n.offsetForLeaderEpoch++
	case *kmsg.FetchRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				c.n.lastFetchedEpochs = append(c.n.lastFetchedEpochs, p.LastFetchedEpoch)
			}
		}
	}
	c.n.mu.Unlock()
	if _, fetch := req.(*kmsg.FetchRequest); fetch && gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return c.LeaderClient.Request(ctx, req)
}

// oldProtocol configures a broker as inter.broker.protocol.version=0.10.2
// does (config.ReplicaConfig: OffsetForLeaderEpoch and LastFetchedEpoch
// false) and counts its fetchers' requests in n.
func oldProtocol(n *leaderRequests) func(*Config) {
	return func(cfg *Config) {
		cfg.ReplicaFetch.TruncateToHighWatermark = true
		cfg.ReplicaFetch.NoLastFetchedEpoch = true
		dial := cfg.ReplicaFetch.Dial
		cfg.ReplicaFetch.Dial = func(ctx context.Context, host string, port int32) (LeaderClient, error) {
			c, err := dial(ctx, host, port)
			if err != nil {
				return nil, err
			}
			return countingClient{c, n}, nil
		}
	}
}

// checkNoEpochsAsked: the old protocol never sends OffsetForLeaderEpoch
// and never a last fetched epoch.
func checkNoEpochsAsked(t *testing.T, n *leaderRequests) {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.offsetForLeaderEpoch != 0 {
		t.Fatalf("%d OffsetForLeaderEpoch requests sent at an IBP below 0.11", n.offsetForLeaderEpoch)
	}
	if len(n.lastFetchedEpochs) == 0 {
		t.Fatal("no fetch was sent")
	}
	for _, e := range n.lastFetchedEpochs {
		if e != -1 {
			t.Fatalf("a fetch carried LastFetchedEpoch %d at an IBP below 2.7", e)
		}
	}
}

func waitTruncated(t *testing.T, c *miniCluster, id int32) {
	t.Helper()
	waitFor(t, "done truncating", func() bool {
		trunc, ok := c.broker(id).fetcher.Fetching()[common.TopicPartition{Topic: "t", Partition: 0}]
		return ok && !trunc
	})
}

// TestOldProtocolScenario1LosesAckedWrite checks KIP-101's first example under
// the old protocol: "B truncates to HW 1, dropping m1. A then dies before B
// re-fetches; the controller elects B … B's log is [m0]: the acknowledged
// m1 is gone. When A returns as follower it fetches at offset 2, gets
// OFFSET_OUT_OF_RANGE from B (LEO 1) and truncates to 1 — m1 is lost on
// every replica, and offset 1 will be reused for a different record."
func TestOldProtocolScenario1LosesAckedWrite(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() LogStore) {
		var n leaderRequests
		c := newMiniClusterWith(t, newStore, oldProtocol(&n), 1, 2)
		ab := scenario1UpToRestart(t, c)

		// Step 4: B restarts with HW 1 and follows A: it truncates to its HW.
		// Its fetches are held, so A can die "before B re-fetches".
		gate := make(chan struct{})
		n.mu.Lock()
		n.fetchGate = gate
		n.mu.Unlock()
		c.kill(2)
		c.start(2)
		c.lair(2, "t", 0, 1, 0, ab, ab)
		waitTruncated(t, c, 2)
		if _, vals := c.values(2, "t", 0); !slices.Equal(vals, []string{"m0"}) {
			t.Fatalf("B holds %v after truncating to its HW 1, want [m0]", vals)
		}
		// A dies before B fetches m1 again; B is elected from the ISR.
		c.kill(1)
		close(gate)
		c.lair(2, "t", 0, 2, 1, []int32{2}, ab)
		// A returns as follower: HW 2 keeps m1, the fetch at 2 is out of
		// range on B (LEO 1), A truncates to 1; offset 1 is reused.
		c.start(1)
		c.lair(1, "t", 0, 2, 1, []int32{2}, ab)
		waitFor(t, "A truncated to B's log end 1", func() bool { return c.log(1, "t", 0).LogEndOffset() == 1 })
		produceValues(t, c.broker(2), 1, "t", "m2")
		c.waitSame([]int32{2, 1}, "t", 2)
		for _, id := range ab {
			if offs, vals := c.values(id, "t", 0); !slices.Equal(vals, []string{"m0", "m2"}) || offs[1] != 1 {
				t.Fatalf("broker %d holds %v at %v; the acknowledged m1 must be gone and offset 1 reused by m2", id, vals, offs)
			}
		}
		checkNoEpochsAsked(t, &n)
	})
}

// TestOldProtocolScenario2Diverges checks KIP-101's second example under
// the old protocol: "A truncates to its HW 2 — i.e. keeps m1 — and fetches from
// offset 2. Offset 1 now holds m1 on A and m2 on B: the logs have diverged
// silently."
func TestOldProtocolScenario2Diverges(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() LogStore) {
		var n leaderRequests
		c, ab := newReplicatedPairWith(t, newStore, oldProtocol(&n), "m0", "m1")

		c.kill(1)
		c.kill(2)
		if err := c.log(2, "t", 0).TruncateTo(1); err != nil { // B's unflushed m1
			t.Fatal(err)
		}
		c.start(2)
		c.lair(2, "t", 0, 2, 1, []int32{2}, ab)
		produceValues(t, c.broker(2), -1, "t", "m2")

		c.start(1)
		c.lair(1, "t", 0, 2, 1, []int32{2}, ab)
		waitTruncated(t, c, 1)
		// A keeps fetching from offset 2 = B's log end: nothing comes, the
		// logs are the same length and differ at offset 1. A joins the ISR
		// (its log end reached the HW) and B's HW covers the divergence.
		waitFor(t, "A back in the ISR", func() bool {
			return slices.Contains(mustPartition(t, c.broker(2), common.TopicPartition{Topic: "t", Partition: 0}).State().ISR, 1)
		})
		if _, vals := c.values(1, "t", 0); !slices.Equal(vals, []string{"m0", "m1"}) {
			t.Fatalf("A holds %v, want [m0 m1] (HW truncation keeps m1)", vals)
		}
		if _, vals := c.values(2, "t", 0); !slices.Equal(vals, []string{"m0", "m2"}) {
			t.Fatalf("B holds %v, want [m0 m2]", vals)
		}
		if hw := c.log(2, "t", 0).HighWatermark(); hw != 2 {
			t.Fatalf("B's HW %d, want 2: offset 1 counts as committed on two different records", hw)
		}
		checkNoEpochsAsked(t, &n)
	})
}
