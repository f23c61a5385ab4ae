package replica

import (
	"fmt"
)

// ResizeFetcherPool is Kafka's AbstractFetcherManager.resizeThreadPool
// (dynamic num.replica.fetchers): every partition is re-assigned with the
// new count (hash(partition) mod n per source broker, as AddPartitions
// does), keeping its fetch state (leader epoch, truncating or fetching,
// back-off); the fetch offset is the follower log's end, so nothing is
// fetched twice or skipped. The fetcher goroutines are stopped before
// their partitions move, so a response in flight cannot be applied by the
// old goroutine while the new one fetches.
func (m *Manager) ResizeFetcherPool(n int) {
	if m.fetcher != nil {
		m.fetcher.Resize(n)
	}
}

// NumFetchers is the num.replica.fetchers in force.
func (f *FetcherManager) NumFetchers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.numFetchers
}

// Resize changes the number of fetchers per source broker; see
// Manager.ResizeFetcherPool.
func (f *FetcherManager) Resize(n int) {
	if n <= 0 {
		n = 1
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	cur := f.numFetchers
	f.log.Info(fmt.Sprintf("Resizing fetcher thread pool size from %d to %d", cur, n))
	if n == cur {
		return
	}
	f.numFetchers = n
	old := f.threads
	f.threads = make(map[fetcherKey]*fetcherThread)
	// Callers of the fetcher manager wait on f.mu meanwhile; a goroutine
	// never takes f.mu, so stopping them here cannot deadlock.
	for _, t := range old {
		t.stop()
	}
	for k, t := range old {
		t.mu.Lock()
		parts := t.parts
		t.parts = nil
		t.mu.Unlock()
		for tp, s := range parts {
			key := fetcherKey{k.leader, k.host, k.port, fetcherID(tp, n)}
			nt := f.threads[key]
			if nt == nil {
				nt = newFetcherThread(f, key)
				f.threads[key] = nt
				nt.start()
			}
			nt.mu.Lock()
			nt.parts[tp] = s
			nt.mu.Unlock()
			select {
			case nt.wake <- struct{}{}:
			default:
			}
		}
	}
}

// FetcherThreads is the number of fetcher goroutines running (tests).
func (f *FetcherManager) FetcherThreads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.threads)
}

// Fetchers is the replica fetcher manager (nil without Config.ReplicaFetch).
func (m *Manager) Fetchers() *FetcherManager { return m.fetcher }
