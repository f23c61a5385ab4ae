package network

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// throttlingHandler mutes the connection for 300 ms after a Metadata
// request for topic "throttle" (as the quota code does with
// Request.Throttle).
type throttlingHandler struct{ testHandler }

func (h *throttlingHandler) Handle(ctx context.Context, req *Request) (kmsg.Response, error) {
	if m, ok := req.Body.(*kmsg.MetadataRequest); ok && len(m.Topics) == 1 && m.Topics[0].Topic != nil && *m.Topics[0].Topic == "throttle" {
		req.Throttle(300 * time.Millisecond)
	}
	return h.testHandler.Handle(ctx, req)
}

// TestThrottleMutesAfterTheResponse: KIP-219 as Kafka's channel muting —
// the throttled request is answered at once, the request pipelined behind
// it is read only once the throttle is over, and the connection then
// serves as before.
func TestThrottleMutesAfterTheResponse(t *testing.T) {
	s := startServer(t, Config{MaxRequestBytes: 1 << 20, ConnectionsMaxIdle: time.Minute}, &throttlingHandler{})
	c := rawDial(t, s)
	start := time.Now()
	writeReq(t, c, metadataReq(9, "throttle"), 1)
	writeReq(t, c, metadataReq(9, "next"), 2)
	readResp(t, c, metadataReq(9, "throttle"), 1)
	first := time.Since(start)
	readResp(t, c, metadataReq(9, "next"), 2)
	second := time.Since(start)
	if second < 300*time.Millisecond {
		t.Fatalf("the request behind a 300 ms throttle was answered after %v", second)
	}
	if first >= second {
		t.Fatalf("the throttled request's response (%v) did not go out before the mute ended (%v)", first, second)
	}
	expectServed(t, c, "after", 3, "after the throttle")
}
