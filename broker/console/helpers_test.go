package console_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

// consoleCluster is a testcluster whose brokers serve their consoles, each
// on its own loopback HTTP server, published in /klassik/console/<id>.
type consoleCluster struct {
	*testcluster.Cluster
	urls []string
}

func startConsoleCluster(t *testing.T, opts testcluster.Options) *consoleCluster {
	t.Helper()
	c := testcluster.Start(t, opts)
	cc := &consoleCluster{Cluster: c}
	for i := 0; i < c.N(); i++ {
		b := c.Broker(i)
		srv := httptest.NewServer(b.Console())
		t.Cleanup(srv.Close)
		if err := b.PublishConsoleURL(srv.Listener.Addr()); err != nil {
			t.Fatalf("publishing broker %d's console: %v", b.BrokerID(), err)
		}
		cc.urls = append(cc.urls, srv.URL)
	}
	return cc
}

// get fetches path from broker i's console and decodes it into v.
func (c *consoleCluster) get(t *testing.T, i int, path string, v any) error {
	t.Helper()
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(c.urls[i] + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", path, resp.Status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: %w: %s", path, err, body)
	}
	return nil
}
