package network

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Every new connection asks ApiVersions, so its answer costs a fixed
// number of allocations (the response and its key list) whatever the
// number of keys, and lists exactly the keys the handler serves.
func TestApiVersionsResponseAllocations(t *testing.T) {
	h := &testHandler{}
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kgo", "1.0"
	resp := ApiVersionsResponse(h, req)
	if len(resp.ApiKeys) != len(testVersions) {
		t.Fatalf("%d keys, want %d: %+v", len(resp.ApiKeys), len(testVersions), resp.ApiKeys)
	}
	for i, k := range resp.ApiKeys {
		want, ok := testVersions[k.ApiKey]
		if !ok || k.MinVersion != want[0] || k.MaxVersion != want[1] || i > 0 && k.ApiKey <= resp.ApiKeys[i-1].ApiKey {
			t.Fatalf("key %d: %+v, want ascending keys with ranges %v", i, k, testVersions)
		}
	}
	// The response and its key list; the bound leaves room for the
	// software-name regexp's matcher, which comes from a sync.Pool that
	// the race detector empties at random. One per key was 98.
	if n := testing.AllocsPerRun(100, func() { ApiVersionsResponse(h, req) }); n > 4 {
		t.Fatalf("ApiVersionsResponse: %.2f allocations, want at most 4", n)
	}
}
