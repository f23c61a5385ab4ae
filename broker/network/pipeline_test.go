package network

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// pipeHandler serves Produce as the api layer does for acks=all: it fills
// the connection's kept ProduceResponse (partition and base offset = the
// correlation id, so a response that another request's handling overwrote
// shows) and, for acks=-1, defers it with a gate the test releases. Its
// Metadata requests note which gates had ended when they were handled.
type pipeHandler struct {
	testHandler
	throttle time.Duration // for every deferred produce, when set

	mu sync.Mutex
	// gates by correlation id, created on first use by either side.
	gates map[int32]*gate
	// handled receives each request's correlation id as its handling
	// starts, with the correlation ids whose waits had ended by then.
	handled chan handledReq
}

type handledReq struct {
	corr  int32
	ended map[int32]bool
	at    time.Time
}

// gate is a Waiter that returns when the test releases it or the
// request's context ends; ended receives its outcome.
type gate struct {
	ctx     context.Context
	resp    *kmsg.ProduceResponse
	corr    int32
	release chan struct{}
	ended   chan error
	done    bool // set under pipeHandler.mu once Wait returned
	h       *pipeHandler
}

func (g *gate) Wait() error {
	var err error
	select {
	case <-g.release:
		// What the replica manager fills in once the ISR has the
		// records.
		g.resp.Topics[0].Partitions[0].LogAppendTime = int64(g.corr)
	case <-g.ctx.Done():
		err = g.ctx.Err()
	}
	g.h.mu.Lock()
	g.done = true
	g.h.mu.Unlock()
	g.ended <- err
	return err
}

func newPipeHandler() *pipeHandler {
	return &pipeHandler{gates: map[int32]*gate{}, handled: make(chan handledReq, 64)}
}

func (h *pipeHandler) gate(corr int32) *gate {
	h.mu.Lock()
	defer h.mu.Unlock()
	g, ok := h.gates[corr]
	if !ok {
		g = &gate{corr: corr, release: make(chan struct{}), ended: make(chan error, 1), h: h}
		h.gates[corr] = g
	}
	return g
}

func (h *pipeHandler) note(corr int32) {
	h.mu.Lock()
	ended := map[int32]bool{}
	for c, g := range h.gates {
		if g.done {
			ended[c] = true
		}
	}
	h.mu.Unlock()
	h.handled <- handledReq{corr: corr, ended: ended, at: time.Now()}
}

func (h *pipeHandler) Handle(ctx context.Context, req *Request) (kmsg.Response, error) {
	h.note(req.CorrelationID)
	body, ok := req.Body.(*kmsg.ProduceRequest)
	if !ok {
		return h.testHandler.Handle(ctx, req)
	}
	resp := req.KeptProduceResponse()
	*resp = kmsg.ProduceResponse{Version: req.Version, Topics: resp.Topics[:0]}
	rt := kmsg.NewProduceResponseTopic()
	rt.Topic = body.Topics[0].Topic
	rp := kmsg.NewProduceResponseTopicPartition()
	rp.Partition, rp.BaseOffset, rp.LogAppendTime = req.CorrelationID, int64(req.CorrelationID), -1
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	if body.Acks != -1 {
		rp := &resp.Topics[0].Partitions[0]
		rp.LogAppendTime = int64(req.CorrelationID)
		return resp, nil
	}
	if h.throttle > 0 {
		req.Throttle(h.throttle)
	}
	g := h.gate(req.CorrelationID)
	g.ctx, g.resp = ctx, resp
	return req.Defer(resp, g)
}

func pipeProduce(acks int16) *kmsg.ProduceRequest {
	r := kmsg.NewPtrProduceRequest()
	r.Version, r.Acks, r.TimeoutMillis = 9, acks, 30000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "t"
	rt.Partitions = append(rt.Partitions, kmsg.NewProduceRequestTopicPartition())
	r.Topics = append(r.Topics, rt)
	return r
}

// expectProduced reads the response to corr and checks it is corr's own.
func expectProduced(t *testing.T, c net.Conn, corr int32) {
	t.Helper()
	resp := readResp(t, c, pipeProduce(-1), corr).(*kmsg.ProduceResponse)
	p := resp.Topics[0].Partitions[0]
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || p.Partition != corr || p.BaseOffset != int64(corr) || p.LogAppendTime != int64(corr) {
		t.Fatalf("response %d: %+v", corr, resp.Topics)
	}
}

func nextHandled(t *testing.T, h *pipeHandler) handledReq {
	t.Helper()
	select {
	case r := <-h.handled:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no request handled within 10 s")
		return handledReq{}
	}
}

// TestPipelinedProduceInRequestOrder: while earlier acks=all produces wait,
// the next Produce requests of the connection are handled (here four
// deferred and one acks=1 with all four gates closed); the waits end in
// reverse order, yet the responses leave in request order, each its own
// (the kept ProduceResponse is not shared between queued responses), and
// each is counted in the request metrics once.
func TestPipelinedProduceInRequestOrder(t *testing.T) {
	reg := gometrics.NewRegistry()
	h := newPipeHandler()
	s := startServer(t, Config{MaxRequestBytes: 1 << 20, ConnectionsMaxIdle: time.Minute, Metrics: reg}, h)
	c := rawDial(t, s)
	for round := int32(0); round < 3; round++ { // again on the reused slots
		base := round * 10
		for i := int32(1); i <= 4; i++ {
			writeReq(t, c, pipeProduce(-1), base+i)
		}
		writeReq(t, c, pipeProduce(1), base+5)
		for i := int32(1); i <= 5; i++ {
			if r := nextHandled(t, h); r.corr != base+i || len(r.ended) != int(round)*4 {
				t.Fatalf("handled %d with %d waits ended; want %d handled while the 4 waits before it go on", r.corr, len(r.ended), base+i)
			}
		}
		for i := int32(4); i >= 1; i-- {
			close(h.gate(base + i).release)
		}
		for i := int32(1); i <= 5; i++ {
			expectProduced(t, c, base+i)
		}
	}
	expectServed(t, c, "after", 100, "a Metadata request after the pipelined produces")
	total := reg.Get("kafka.network.RequestMetrics.TotalTimeMs.request=Produce").(gometrics.Timer)
	if total.Count() != 15 {
		t.Fatalf("Produce TotalTimeMs counted %d requests, want 15", total.Count())
	}
}

// TestPipelineBound: a connection handles a sixth Produce only once the
// oldest of five waiting ones has been answered; a request other than
// Produce only once every earlier response is.
func TestPipelineBound(t *testing.T) {
	h := newPipeHandler()
	s := startServer(t, Config{MaxRequestBytes: 1 << 20, ConnectionsMaxIdle: time.Minute}, h)
	c := rawDial(t, s)
	for i := int32(1); i <= maxPendingResponses+1; i++ {
		writeReq(t, c, pipeProduce(-1), i)
	}
	for i := int32(1); i <= maxPendingResponses; i++ {
		if r := nextHandled(t, h); r.corr != i {
			t.Fatalf("handled %d, want %d", r.corr, i)
		}
	}
	close(h.gate(1).release)
	if r := nextHandled(t, h); r.corr != maxPendingResponses+1 || !r.ended[1] {
		t.Fatalf("request %d handled with waits %v ended; want %d after wait 1", r.corr, r.ended, maxPendingResponses+1)
	}
	expectProduced(t, c, 1)

	md := metadataReq(9, "md")
	writeReq(t, c, md, 50)
	for i := int32(2); i <= maxPendingResponses+1; i++ {
		close(h.gate(i).release)
	}
	if r := nextHandled(t, h); r.corr != 50 || len(r.ended) != maxPendingResponses+1 {
		t.Fatalf("Metadata handled with waits %v ended; want all %d", r.ended, maxPendingResponses+1)
	}
	for i := int32(2); i <= maxPendingResponses+1; i++ {
		expectProduced(t, c, i)
	}
	if resp := readResp(t, c, md, 50).(*kmsg.MetadataResponse); len(resp.Topics) != 1 || *resp.Topics[0].Topic != "md" {
		t.Fatalf("metadata response %+v", resp.Topics)
	}
}

// TestPipelineThrottle: a throttled deferred response mutes the connection
// as any throttled response: the next request is handled only after the
// response was written and the throttle is over.
func TestPipelineThrottle(t *testing.T) {
	const throttle = 200 * time.Millisecond
	h := newPipeHandler()
	h.throttle = throttle
	s := startServer(t, Config{MaxRequestBytes: 1 << 20, ConnectionsMaxIdle: time.Minute}, h)
	c := rawDial(t, s)
	writeReq(t, c, pipeProduce(-1), 1)
	writeReq(t, c, pipeProduce(1), 2)
	first := nextHandled(t, h)
	close(h.gate(1).release)
	expectProduced(t, c, 1)
	second := nextHandled(t, h)
	if second.corr != 2 || !second.ended[1] || second.at.Sub(first.at) < throttle {
		t.Fatalf("request %d handled %v after the throttled one (waits ended %v); want 2 after the wait and ≥ %v", second.corr, second.at.Sub(first.at), second.ended, throttle)
	}
	expectProduced(t, c, 2)
}

// TestPipelineCloseEndsWaits: a connection that closes with responses
// waiting ends every wait (each Waiter sees the request's context end) and
// its writer; the server then shuts down, which waits for both.
func TestPipelineCloseEndsWaits(t *testing.T) {
	for _, how := range []string{"peer closes", "server shuts down", "bad request"} {
		t.Run(how, func(t *testing.T) {
			h := newPipeHandler()
			s := startServer(t, Config{MaxRequestBytes: 1 << 20, ConnectionsMaxIdle: time.Minute}, h)
			c := rawDial(t, s)
			for i := int32(1); i <= 3; i++ {
				writeReq(t, c, pipeProduce(-1), i)
			}
			writeReq(t, c, pipeProduce(1), 4)
			for i := int32(1); i <= 4; i++ {
				nextHandled(t, h)
			}
			switch how {
			case "peer closes":
				c.Close()
			case "server shuts down":
				s.Shutdown()
			case "bad request":
				if _, err := c.Write(frameBytes([]byte{0, 0, 0, 9, 0, 0, 0, 1})); err != nil {
					t.Fatal(err)
				}
			}
			for i := int32(1); i <= 3; i++ {
				select {
				case err := <-h.gate(i).ended:
					if !errors.Is(err, context.Canceled) {
						t.Fatalf("wait %d ended with %v, want the request context's end", i, err)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("wait %d did not end within 10 s of the close", i)
				}
			}
			if how == "bad request" {
				expectClosed(t, c)
			}
			s.Shutdown() // returns once the connection and its writer are gone
		})
	}
}

// TestDeferWithoutConnection: a request not read from a connection (a
// handler called directly) is not deferred: Defer waits and returns the
// response, or the wait's error.
func TestDeferWithoutConnection(t *testing.T) {
	h := newPipeHandler()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := &Request{Key: 0, Version: 9, CorrelationID: 7, Body: pipeProduce(-1)}
	g := h.gate(7)
	g.ctx, g.resp = ctx, kmsg.NewPtrProduceResponse()
	g.resp.Topics = []kmsg.ProduceResponseTopic{{Partitions: []kmsg.ProduceResponseTopicPartition{{}}}}
	close(g.release)
	resp, err := req.Defer(g.resp, g)
	if err != nil || resp != g.resp || g.resp.Topics[0].Partitions[0].LogAppendTime != 7 {
		t.Fatalf("Defer without a connection: %v, %v", resp, err)
	}
	g2 := h.gate(8)
	g2.ctx, g2.resp = ctx, g.resp
	cancel()
	if _, err := req.Defer(g2.resp, g2); !errors.Is(err, context.Canceled) {
		t.Fatalf("Defer of a cancelled wait: %v", err)
	}
}
