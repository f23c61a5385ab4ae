package testcluster

import (
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Clients are the kgo clients a harness handed out, closed together when
// the harness tears its cluster down (before the brokers go, so no client
// retries against a stopped broker). The zero value is ready to use; every
// harness keeps one (Cluster here, broker/faulttest's process cluster and
// broker/e2e's operator cluster).
type Clients struct {
	// mu guards the following.
	mu   sync.Mutex
	list []*kgo.Client
}

// New returns a client seeded with seeds and the options, failing t if it
// cannot be made; prefix names the harness in that failure.
func (cs *Clients) New(t testing.TB, prefix string, seeds []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...)...)
	if err != nil {
		t.Fatalf("%s: kgo client: %v", prefix, err)
	}
	cs.mu.Lock()
	cs.list = append(cs.list, cl)
	cs.mu.Unlock()
	return cl
}

// Close closes every client handed out so far.
func (cs *Clients) Close() {
	cs.mu.Lock()
	list := cs.list
	cs.list = nil
	cs.mu.Unlock()
	for _, cl := range list {
		cl.Close()
	}
}
