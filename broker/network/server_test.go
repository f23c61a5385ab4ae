package network

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common/hextest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A hand-written ApiVersions v3 request (flexible, header v2) is answered
// with response header v0 and the full table.
func TestApiVersionsV3Bytes(t *testing.T) {
	s := startServer(t, Config{}, &testHandler{})
	c := rawDial(t, s)
	if _, err := c.Write(hextest.Decode(t, "00000015 0012 0003 00000001 000163 00 046b676f 04312e30 00")); err != nil {
		t.Fatal(err)
	}
	frame, err := readResponseFrame(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.BigEndian.Uint32(frame); got != 1 {
		t.Fatalf("correlation id %d", got)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 3
	// Header v0: the body starts right after the correlation id.
	if err := resp.ReadFrom(frame[4:]); err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 {
		t.Fatalf("error code %d", resp.ErrorCode)
	}
	var keys []int16
	for _, k := range resp.ApiKeys {
		keys = append(keys, k.ApiKey)
		want := testVersions[k.ApiKey]
		if k.MinVersion != want[0] || k.MaxVersion != want[1] {
			t.Errorf("key %d: %d-%d, want %v", k.ApiKey, k.MinVersion, k.MaxVersion, want)
		}
	}
	if want := []int16{0, 1, 3, 7, 18}; !slicesEqual(keys, want) {
		t.Fatalf("keys %v, want %v (ascending, only served keys)", keys, want)
	}
}

func slicesEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// "If the ApiVersions request version is higher than the broker's max …
// respond with a version 0 body and response header v0 … Keep the
// connection open" (KIP-511, as Kafka does), byte for byte.
func TestApiVersionsFallbackBytes(t *testing.T) {
	s := startServer(t, Config{}, &testHandler{})
	c := rawDial(t, s)
	// ApiVersions v127, correlation 1, client id "c", header tags, and a
	// body we must not parse.
	req := frameBytes(hextest.Decode(t, "0012 007f 00000001 000163 00 ffffffff deadbeef"))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	want := hextest.Decode(t, "00000010 00000001 0023 00000001 0012 0000 0003")
	got := make([]byte, len(want))
	if _, err := ioReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("fallback bytes\n got %x\nwant %x", got, want)
	}
	// Same connection, supported version: answered normally.
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "t", "1"
	resp := roundTrip(t, c, av, 2).(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 || len(resp.ApiKeys) != len(testVersions) {
		t.Fatalf("retry: error %d, %d keys", resp.ErrorCode, len(resp.ApiKeys))
	}
}

// ApiVersions v3 with a software name that breaks Kafka's pattern gets
// INVALID_REQUEST and no keys.
func TestApiVersionsInvalidSoftwareName(t *testing.T) {
	s := startServer(t, Config{}, &testHandler{})
	c := rawDial(t, s)
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "bad name!", "1"
	resp := roundTrip(t, c, av, 9).(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != kerr.InvalidRequest.Code || len(resp.ApiKeys) != 0 {
		t.Fatalf("error %d keys %d", resp.ErrorCode, len(resp.ApiKeys))
	}
	// v0 (no software fields) still works on the same connection.
	av0 := kmsg.NewPtrApiVersionsRequest()
	if r := roundTrip(t, c, av0, 10).(*kmsg.ApiVersionsResponse); r.ErrorCode != 0 || len(r.ApiKeys) == 0 {
		t.Fatalf("v0: %+v", r)
	}
}

// franz-go starts at ApiVersions v4, gets the fallback, retries at v3 and
// then uses Metadata v12.
func TestKgoHandshake(t *testing.T) {
	s := startServer(t, Config{}, &testHandler{})
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrOf(s)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := metadataReq(12, "a", "b")
	kresp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if kresp.Version != 12 || len(kresp.Topics) != 2 || *kresp.Topics[1].Topic != "b" {
		t.Fatalf("metadata response %+v", kresp)
	}
}

func TestClientApiVersions(t *testing.T) {
	s := startServer(t, Config{}, &testHandler{})
	ctx := context.Background()
	cl := dialClient(t, s)
	got, err := cl.ApiVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(testVersions) || got[3] != [2]int16{0, 12} {
		t.Fatalf("versions %v", got)
	}
}

// Against a peer whose ApiVersions maximum is 2, the client's v3 gets the
// fallback and the client retries at v2.
func TestClientApiVersionsFallback(t *testing.T) {
	h := &testHandler{versions: map[int16][2]int16{18: {0, 2}, 3: {0, 8}}}
	s := startServer(t, Config{}, h)
	ctx := context.Background()
	cl := dialClient(t, s)
	got, err := cl.ApiVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got[18] != [2]int16{0, 2} || got[3] != [2]int16{0, 8} {
		t.Fatalf("versions %v", got)
	}
}

func TestOversizeAndBadSizeFramesClose(t *testing.T) {
	s := startServer(t, Config{MaxRequestBytes: 1024}, &testHandler{})
	for _, size := range []int32{1025, 1 << 30, -1, 0} {
		c := rawDial(t, s)
		if _, err := c.Write(binary.BigEndian.AppendUint32(nil, uint32(size))); err != nil {
			t.Fatal(err)
		}
		expectClosed(t, c)
	}
	// A request of exactly the maximum is read (and closed only because
	// its body is garbage); a normal request still works.
	expectServed(t, rawDial(t, s), "x", 1, "no topic echoed")
}

func TestUnknownKeyAndVersionClose(t *testing.T) {
	s := startServer(t, Config{}, &testHandler{})
	cases := map[string][]byte{
		"key not in kmsg":       frameBytes(hextest.Decode(t, "00c8 0000 00000001 ffff")),
		"key not served (Vote)": frameBytes(hextest.Decode(t, "0034 0000 00000001 ffff 00")),
		"metadata v13":          appendRequestFrame(nil, metadataReq(13), 1, "c"),
		"fetch v3 below min":    appendRequestFrame(nil, &kmsg.FetchRequest{Version: 3}, 1, "c"),
		"short header":          frameBytes(hextest.Decode(t, "0003 0001")),
		"bad client id length":  frameBytes(hextest.Decode(t, "0003 0001 00000001 0010 61")),
	}
	for name, frame := range cases {
		t.Run(name, func(t *testing.T) {
			c := rawDial(t, s)
			if _, err := c.Write(frame); err != nil {
				t.Fatal(err)
			}
			expectClosed(t, c)
		})
	}
}

func TestMalformedBodyClosesOnlyThatConnection(t *testing.T) {
	s := startServer(t, Config{}, &testHandler{})
	good := rawDial(t, s)
	r := metadataReq(1, "x")
	roundTrip(t, good, r, 1)

	bad := rawDial(t, s)
	// Metadata v1: topics array claims 1000 entries, none present.
	if _, err := bad.Write(frameBytes(hextest.Decode(t, "0003 0001 00000001 0001 63 000003e8"))); err != nil {
		t.Fatal(err)
	}
	expectClosed(t, bad)

	expectServed(t, good, "x", 2, "good connection broken")
}

// Pipelined requests (kafka-python sends ApiVersions v0 and Metadata v0
// back to back) are answered in order.
func TestPipelinedInOrder(t *testing.T) {
	s := startServer(t, Config{}, &testHandler{})
	c := rawDial(t, s)
	var buf []byte
	av := kmsg.NewPtrApiVersionsRequest()
	buf = appendRequestFrame(buf, av, 1, "kafka-python")
	reqs := []*kmsg.MetadataRequest{}
	for i := 0; i < 50; i++ {
		r := metadataReq(int16(i%13), "t"+string(rune('a'+i%26)))
		reqs = append(reqs, r)
		buf = appendRequestFrame(buf, r, int32(i+2), "kafka-python")
	}
	if _, err := c.Write(buf); err != nil {
		t.Fatal(err)
	}
	if r := readResp(t, c, av, 1).(*kmsg.ApiVersionsResponse); r.ErrorCode != 0 {
		t.Fatal(r.ErrorCode)
	}
	for i, r := range reqs {
		resp := readResp(t, c, r, int32(i+2)).(*kmsg.MetadataResponse)
		if resp.Version != r.Version || len(resp.Topics) != 1 || *resp.Topics[0].Topic != *r.Topics[0].Topic {
			t.Fatalf("response %d out of order: %+v", i, resp)
		}
	}
}

func TestHandlerPanicClosesConnectionServerSurvives(t *testing.T) {
	s := startServer(t, Config{}, &testHandler{})
	c := rawDial(t, s)
	writeReq(t, c, metadataReq(1, "panic"), 1)
	expectClosed(t, c)

	expectServed(t, rawDial(t, s), "ok", 1, "server did not answer after a panic")
}

func TestHandlerErrorAndNoResponse(t *testing.T) {
	s := startServer(t, Config{}, &testHandler{})
	c := rawDial(t, s)
	// nil response: nothing is written; the next request is answered
	// with its own correlation id.
	writeReq(t, c, metadataReq(1, "silent"), 1)
	r := metadataReq(1, "x")
	roundTrip(t, c, r, 2)

	writeReq(t, c, metadataReq(1, "error"), 3)
	expectClosed(t, c)
}

func TestIdleConnectionClosed(t *testing.T) {
	s := startServer(t, Config{ConnectionsMaxIdle: 100 * time.Millisecond}, &testHandler{})
	c := rawDial(t, s)
	expectClosed(t, c)
}

// Shutdown closes connections, cancels a handler parked on its context and
// waits for every goroutine.
func TestShutdownUnblocksHandlers(t *testing.T) {
	h := &testHandler{blocked: make(chan struct{}, 1)}
	s, err := NewServer(Config{Listeners: []ListenerConfig{{Name: "PLAINTEXT", Host: "127.0.0.1"}}}, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	c := rawDial(t, s)
	writeReq(t, c, metadataReq(1, "block"), 1)
	select {
	case <-h.blocked:
	case <-time.After(5 * time.Second):
		t.Fatal("handler not called")
	}
	done := make(chan struct{})
	go func() { s.Shutdown(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown hung")
	}
	expectClosed(t, c)
	s.Shutdown() // idempotent
	if err := s.Start(); err == nil {
		t.Fatal("Start after Shutdown succeeded")
	}
}

func TestTwoListenersAndConfigValidation(t *testing.T) {
	s := startServer(t, Config{Listeners: []ListenerConfig{
		{Name: "PLAINTEXT", Host: "127.0.0.1", SecurityProtocol: "PLAINTEXT"},
		{Name: "REPLICATION", Host: "127.0.0.1", SecurityProtocol: "PLAINTEXT"},
	}}, &testHandler{})
	a, b := s.BoundAddr("PLAINTEXT"), s.BoundAddr("REPLICATION")
	if a == nil || b == nil || a.String() == b.String() {
		t.Fatalf("addrs %v %v", a, b)
	}
	if s.BoundAddr("NOPE") != nil {
		t.Fatal("unknown listener has an address")
	}
	for _, cfg := range []Config{
		{},
		{Listeners: []ListenerConfig{{Name: ""}}},
		{Listeners: []ListenerConfig{{Name: "A"}, {Name: "A"}}},
		{Listeners: []ListenerConfig{{Name: "A", Port: 70000}}},
	} {
		if _, err := NewServer(cfg, &testHandler{}); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
}

// The listener name reaches the handler, and requests on different
// connections run concurrently.
func TestRequestMetadataFields(t *testing.T) {
	var mu sync.Mutex
	var seen []*Request
	h := handlerFunc{versions: testVersions, fn: func(ctx context.Context, req *Request) (kmsg.Response, error) {
		mu.Lock()
		seen = append(seen, req)
		mu.Unlock()
		return req.Body.ResponseKind(), nil
	}}
	s := startServer(t, Config{}, h)
	c := rawDial(t, s)
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "kgo", "1.2.3"
	roundTrip(t, c, av, 1)
	r := metadataReq(12)
	roundTrip(t, c, r, 2)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 {
		t.Fatalf("handler saw %d requests (ApiVersions must not reach it)", len(seen))
	}
	q := seen[0]
	if q.Listener != "PLAINTEXT" || q.SecurityProtocol != "PLAINTEXT" || q.ClientIDOrEmpty() != "test" ||
		q.CorrelationID != 2 || q.Key != 3 || q.Version != 12 || q.ConnID == "" || q.RemoteAddr == nil ||
		q.ClientSoftwareName != "kgo" || q.ClientSoftwareVersion != "1.2.3" || q.Received.IsZero() {
		t.Fatalf("request fields %+v", q)
	}
}

type handlerFunc struct {
	versions map[int16][2]int16
	fn       func(ctx context.Context, req *Request) (kmsg.Response, error)
}

func (h handlerFunc) Versions(key int16) (int16, int16, bool) {
	r, ok := h.versions[key]
	return r[0], r[1], ok
}

func (h handlerFunc) Handle(ctx context.Context, req *Request) (kmsg.Response, error) {
	return h.fn(ctx, req)
}

// ControlledShutdown v0 uses request header v0 (no client id); the client
// writes it and the server parses it.
func TestControlledShutdownV0Header(t *testing.T) {
	s := startServer(t, Config{}, &testHandler{})
	ctx := context.Background()
	cl := dialClient(t, s)
	for _, v := range []int16{0, 1, 2, 3} {
		req := kmsg.NewPtrControlledShutdownRequest()
		req.Version = v
		req.BrokerID = 7
		resp, err := cl.Request(ctx, req)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if resp.GetVersion() != v {
			t.Fatalf("v%d: response version %d", v, resp.GetVersion())
		}
	}
	frame := appendRequestFrame(nil, &kmsg.ControlledShutdownRequest{Version: 0, BrokerID: 7}, 5, "ignored")
	if want := hextest.Decode(t, "0000000c 0007 0000 00000005 00000007"); !bytes.Equal(frame, want) {
		t.Fatalf("v0 frame %x, want %x", frame, want)
	}
}

// A client whose context is cancelled mid-request fails with the
// cancellation (not its own request timeout, which is far longer than the
// test may take) and is then unusable.
func TestClientCancelAndClose(t *testing.T) {
	h := &testHandler{blocked: make(chan struct{}, 1)}
	cl := dialClientAs(t, startServer(t, Config{}, h), "broker-1", 10*time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-h.blocked; cancel() }()
	if _, err := cl.Request(ctx, metadataReq(1, "block")); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request answered %v, want context.Canceled", err)
	}
	if _, err := cl.Request(context.Background(), metadataReq(1, "x")); err == nil {
		t.Fatal("broken client still usable")
	}
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Dial(context.Background(), "127.0.0.1:1", "x", time.Second); err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
}

func TestClientTimeout(t *testing.T) {
	h := &testHandler{blocked: make(chan struct{}, 1)}
	cl := dialClientAs(t, startServer(t, Config{}, h), "broker-1", 200*time.Millisecond)
	if _, err := cl.Request(context.Background(), metadataReq(1, "block")); err == nil {
		t.Fatal("request past the timeout succeeded")
	}
}

// A cancellation racing with a successful round trip must not leak a past
// deadline into the next request on the same client.
func TestClientCancelRaceDoesNotPoisonNextRequest(t *testing.T) {
	s := startServer(t, Config{}, &testHandler{})
	dial := func() *Client { return dialClientAs(t, s, "race", 5*time.Second) }
	cl := dial()
	for i := 0; i < 200; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		go cancel()
		if _, err := cl.Request(ctx, metadataReq(1, "x")); err != nil {
			cl.Close()
			cl = dial() // cancelled mid-flight: the client is broken, as documented
			continue
		}
		if _, err := cl.Request(context.Background(), metadataReq(1, "y")); err != nil {
			t.Fatalf("iteration %d: request after a raced cancel failed: %v", i, err)
		}
	}
}

// TestClientRequestReusing: fetch responses read into the caller's buffer
// decode to the records the server sent, a buffer too small for the next
// response is replaced by a larger one, a large enough one is used as it
// is.
func TestClientRequestReusing(t *testing.T) {
	sizes := []int{100, 50_000, 20, 70_000}
	var served int
	h := &testHandler{fetch: func(_ context.Context, req *Request) (kmsg.Response, error) {
		body := req.Body.(*kmsg.FetchRequest)
		resp := body.ResponseKind().(*kmsg.FetchResponse)
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = "t"
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.RecordBatches = bytes.Repeat([]byte{byte('a' + served)}, sizes[served])
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		served++
		return resp, nil
	}}
	s := startServer(t, Config{}, h)
	cl := dialClient(t, s)
	var buf []byte
	for i, n := range sizes {
		req := kmsg.NewPtrFetchRequest()
		req.Version = 12
		before := cap(buf)
		raw, next, err := cl.RequestReusing(context.Background(), req, buf)
		if err != nil {
			t.Fatalf("fetch %d: %v", i, err)
		}
		got := raw.(*kmsg.FetchResponse).Topics[0].Partitions[0].RecordBatches
		if want := bytes.Repeat([]byte{byte('a' + i)}, n); !bytes.Equal(got, want) {
			t.Fatalf("fetch %d: %d record bytes, want %d bytes of %q", i, len(got), n, rune('a'+i))
		}
		if len(next) != 0 || cap(next) < n {
			t.Fatalf("fetch %d: returned buffer len %d cap %d, want empty with room for %d", i, len(next), cap(next), n)
		}
		if before >= n+64 && &next[:1][0] != &buf[:1][0] {
			t.Fatalf("fetch %d: a buffer of %d bytes was replaced for a response of %d", i, before, n)
		}
		buf = next
	}
}
