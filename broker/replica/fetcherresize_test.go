package replica

import (
	"fmt"
	"sync"
	"testing"
)

// Dynamic num.replica.fetchers (Kafka's resizeThreadPool): 1 → 4 → 1
// while acks=all producers run re-assigns every partition to the new
// fetcher ids without losing its fetch state, and every acknowledged
// record reaches the follower byte for byte.
func TestResizeFetcherPoolKeepsReplicating(t *testing.T) {
	c := newMiniCluster(t, nil, 1, 2)
	ab := []int32{1, 2}
	var topics []string
	for i := 0; i < 8; i++ {
		tp := fmt.Sprintf("t%d", i)
		topics = append(topics, tp)
		c.lairEach(ab, tp, 0, 1, 0, ab, ab)
	}
	f := c.broker(2).Fetchers()
	waitFor(t, "fetching every partition", func() bool { return len(f.Fetching()) == len(topics) })
	if n := f.FetcherThreads(); n != 1 {
		t.Fatalf("%d fetcher goroutines with num.replica.fetchers=1", n)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	counts := make([]int, len(topics))
	for i, tp := range topics {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				produceValues(t, c.broker(1), -1, tp, fmt.Sprintf("%s-%d", tp, n))
				counts[i] = n + 1
			}
		}()
	}
	waitFor(t, "records before the resize", func() bool { return c.log(2, "t7", 0).LogEndOffset() >= 5 })
	c.broker(2).ResizeFetcherPool(4)
	if f.NumFetchers() != 4 || f.FetcherThreads() < 2 {
		t.Fatalf("after resize to 4: %d fetchers configured, %d goroutines", f.NumFetchers(), f.FetcherThreads())
	}
	if len(f.Fetching()) != len(topics) {
		t.Fatalf("partitions lost in the resize: %v", f.Fetching())
	}
	waitFor(t, "records after the resize", func() bool { return c.log(2, "t7", 0).LogEndOffset() >= 15 })
	c.broker(2).ResizeFetcherPool(1)
	if n := f.FetcherThreads(); n != 1 {
		t.Fatalf("%d goroutines after resize to 1", n)
	}
	waitFor(t, "records after the second resize", func() bool { return c.log(2, "t7", 0).LogEndOffset() >= 25 })
	close(stop)
	wg.Wait()
	for i, tp := range topics {
		c.waitSame(ab, tp, int64(counts[i]))
		offs, vals := c.values(2, tp, 0)
		if len(offs) != counts[i] {
			t.Fatalf("%s: follower has %d records, %d acknowledged", tp, len(offs), counts[i])
		}
		for n, v := range vals {
			if v != fmt.Sprintf("%s-%d", tp, n) {
				t.Fatalf("%s offset %d: %q", tp, n, v)
			}
		}
	}
}
