package broker_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/testcluster"
)

var racks = []string{"a", "b", "c"}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// A 3-broker cluster on racks a, b, c: every broker is in Metadata with its
// rack, the controller named in Metadata is the one /controller names.
func TestClusterMetadataAndController(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Racks: racks})
	ctrl, ok := c.Controller()
	if !ok {
		t.Fatal("no /controller")
	}
	cl := c.Client()
	var resp *kmsg.MetadataResponse
	c.WaitFor(15*time.Second, "metadata with 3 brokers and the controller", func() bool {
		req := kmsg.NewPtrMetadataRequest()
		r, err := req.RequestWith(ctxT(t, 5*time.Second), cl)
		if err != nil {
			return false
		}
		resp = r
		return len(r.Brokers) == 3 && r.ControllerID == ctrl
	})
	var ids []int32
	for _, b := range resp.Brokers {
		ids = append(ids, b.NodeID)
		i := c.Index(b.NodeID)
		if b.Rack == nil || *b.Rack != racks[i] {
			t.Errorf("broker %d rack = %v, want %s", b.NodeID, b.Rack, racks[i])
		}
		if b.Host != "127.0.0.1" {
			t.Errorf("broker %d host %q", b.NodeID, b.Host)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if len(ids) != 3 || ids[0] != 1 || ids[2] != 3 {
		t.Fatalf("brokers %v", ids)
	}
	if resp.ClusterID == nil || *resp.ClusterID != c.Broker(0).ClusterID() {
		t.Fatalf("cluster id %v, want %s", resp.ClusterID, c.Broker(0).ClusterID())
	}
}
