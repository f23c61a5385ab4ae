package network

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Pipelined acks=all produce. Kafka mutes a connection while a request is
// in flight, so one connection's acks=all throughput is bounded by the
// replication round trip however many requests its client has sent. Here
// the WAIT of an acks=all Produce may overlap the next requests: once a
// Produce has appended its records and parked in the purgatory, its
// handler returns a DeferredResponse (Request.Defer) and the connection
// goes on reading. Everything else stays as in Kafka:
//
//   - Requests are handled one at a time, in order; only the wait overlaps.
//   - Responses are written strictly in request order: once a response is
//     deferred, every later response is queued behind it, and a connection
//     writer goroutine (writeLoop) writes the queue in order, each deferred
//     one when its wait has ended.
//   - While responses are queued only a Produce is handled; any other
//     request first waits until every queued response has been written (the
//     simplest rule that is obviously safe: a Fetch, a metadata change or a
//     SASL exchange then sees the connection exactly as Kafka's would).
//   - At most maxPendingResponses responses are queued; a further Produce
//     waits until the oldest has been written.
//   - A throttled response (Request.Throttle) or CloseAfterResponse waits
//     until the queue is written, then mutes or closes as before.
//
// What a deferred response may reference: the kept Produce and Fetch
// request structs and the kept frame are overwritten by the next request,
// which may now be read while the wait goes on. The response and its
// Waiter must therefore hold nothing of them (topic names are interned,
// never in the frame). The kept ProduceResponse moves with a queued
// response into its queue slot, and the next Produce gets a spare one
// (connScratch.keptProduce): a connection owns at most
// maxPendingResponses+1 of them.
//
// A closing connection (EOF, a bad request, the writer's write error,
// Shutdown) cancels the handlers' context first, so every wait still
// queued ends at once (Waiter.Wait returns the context's error and its
// response is dropped), and then stops the writer and waits for it. The
// records of a dropped response stay in the log unacknowledged, as when a
// Kafka client's connection breaks during an acks=all produce.

// maxPendingResponses bounds the responses one connection may have queued
// behind deferred ones: 5, the default of the Java producer's
// max.in.flight.requests.per.connection (and of franz-go's
// MaxProduceRequestsInflightPerBroker with idempotence), so such a client
// never waits for the broker to read its next request.
const maxPendingResponses = 5

// Waiter is the remaining part of a deferred response: the wait of a
// delayed operation (an acks=all produce's replication).
type Waiter interface {
	// Wait blocks until the operation has completed and then completes
	// the response it was deferred with. It must return once the handler's
	// context is done, with that context's error, having ended the
	// operation (the response is then not sent). It is called once, on
	// another goroutine than the handler's, and its caller keeps nothing
	// of the Waiter once it returned: the Waiter's owner may reuse it
	// from then on (the replica manager's delayed produces are pooled).
	Wait() error
}

// DeferredResponse is a response whose sending waits for Wait (see
// Request.Defer); the connection recognizes it and queues it.
type DeferredResponse struct {
	kmsg.Response
	wait Waiter
}

// Defer returns resp to be sent once w.Wait returned, letting the
// connection read and handle the next request meanwhile. Only a
// connection's Produce is deferred; for other requests (and requests not
// read from a connection) Defer waits here and returns resp, or w's
// error. resp and w must not reference r, its Body or its frame.
func (r *Request) Defer(resp kmsg.Response, w Waiter) (kmsg.Response, error) {
	if r.scratch == nil || r.Key != int16(kmsg.Produce) {
		if err := w.Wait(); err != nil {
			return nil, err
		}
		return resp, nil
	}
	d := &r.scratch.deferred
	*d = DeferredResponse{Response: resp, wait: w}
	return d, nil
}

// queued is one queued response. The serve goroutine fills it before
// sending it to the writer and reads it again only after the writer
// signalled it done (pipeline.written).
type queued struct {
	req  Request // the request's header fields (Body and scratch cleared)
	resp kmsg.Response
	wait Waiter // nil: resp is complete
	// kept is resp when it is the connection's kept ProduceResponse,
	// returned to the spares once written.
	kept *kmsg.ProduceResponse

	am                            *apiMetrics // nil: request metrics off
	frameLen                      int
	times                         requestTimes
	handled, returned, writeStart time.Time
}

// pipeline is a connection's response queue and its writer.
type pipeline struct {
	// Owned by the serve goroutine: slots[head], ... slots[head+n-1]
	// (mod maxPendingResponses) are queued, oldest first.
	slots   [maxPendingResponses]queued
	head, n int

	queue   chan *queued  // to the writer, in request order
	written chan struct{} // from the writer: the oldest queued slot is done
	stopped chan struct{} // closed when writeLoop returns
	// failed is set by the writer when a write failed or a wait ended with
	// the connection's context: the connection closes.
	failed atomic.Bool
}

// startPipeline creates c's pipeline and starts its writer, on the first
// response the connection queues.
func (c *conn) startPipeline(ctx context.Context, log *slog.Logger) *pipeline {
	p := &pipeline{
		queue:   make(chan *queued, maxPendingResponses),
		written: make(chan struct{}, maxPendingResponses),
		stopped: make(chan struct{}),
	}
	c.pipe = p
	go c.writeLoop(ctx, p, log)
	return p
}

// stopPipeline ends the writer after the handlers' context was cancelled
// (so every queued wait ends) and waits for it.
func (c *conn) stopPipeline() {
	if p := c.pipe; p != nil {
		close(p.queue)
		<-p.stopped
	}
}

// reap releases the slots the writer is done with, without blocking. It
// reports false when the connection must close.
func (c *conn) reap() bool {
	p := c.pipe
	for p.n > 0 {
		select {
		case <-p.written:
			c.release()
		default:
			return !p.failed.Load()
		}
	}
	return !p.failed.Load()
}

// awaitWritten waits until at most n responses are queued. It reports
// false when the connection must close.
func (c *conn) awaitWritten(n int) bool {
	p := c.pipe
	for p.n > n {
		<-p.written
		c.release()
	}
	return !p.failed.Load()
}

// release frees the oldest slot, which the writer is done with.
func (c *conn) release() {
	p := c.pipe
	q := &p.slots[p.head]
	if q.kept != nil {
		c.scratch.spareProduce(q.kept)
	}
	*q = queued{}
	p.head = (p.head + 1) % maxPendingResponses
	p.n--
}

// pending reports whether responses are queued (after reaping the written
// ones); false with ok=false when the connection must close.
func (c *conn) pending() (queued, ok bool) {
	if c.pipe == nil || c.pipe.n == 0 {
		return false, true
	}
	if !c.reap() {
		return false, false
	}
	return c.pipe.n > 0, true
}

// beforeHandling applies the queue's rules to req before it is handled:
// a request other than Produce waits until every queued response is
// written, a Produce until there is room in the queue. It reports false
// when the connection must close.
func (c *conn) beforeHandling(req *Request) bool {
	q, ok := c.pending()
	switch {
	case !ok:
		return false
	case !q:
		return true
	case req.Key != int16(kmsg.Produce):
		return c.awaitWritten(0)
	default:
		return c.awaitWritten(maxPendingResponses - 1)
	}
}

// enqueue queues resp (deferred, or behind deferred ones) for the writer.
// It reports false when the connection must close.
func (c *conn) enqueue(ctx context.Context, req *Request, resp kmsg.Response, am *apiMetrics, frameLen int, handled time.Time, log *slog.Logger) bool {
	p := c.pipe
	if p == nil {
		p = c.startPipeline(ctx, log)
	}
	if p.n == maxPendingResponses { // beforeHandling made room; never here
		panic("network: response queue overflow")
	}
	q := &p.slots[(p.head+p.n)%maxPendingResponses]
	q.req = *req
	q.req.Body, q.req.scratch = nil, nil
	q.resp = resp
	if d, ok := resp.(*DeferredResponse); ok {
		q.resp, q.wait = d.Response, d.wait
		*d = DeferredResponse{}
	}
	if pr, ok := q.resp.(*kmsg.ProduceResponse); ok && pr == c.scratch.produceResp {
		q.kept, c.scratch.produceResp = pr, nil
	}
	q.am, q.frameLen, q.times, q.handled = am, frameLen, c.times, handled
	if am != nil && q.wait == nil {
		q.returned = time.Now()
	}
	p.n++
	p.queue <- q

	if !req.muteUntil.IsZero() || c.session.CloseAfterResponse {
		// Muted or closing once this response is sent: wait for it.
		if !c.awaitWritten(0) {
			return false
		}
		if c.session.CloseAfterResponse {
			return c.closeAfterResponse(ctx, req, log)
		}
		return c.muted(ctx, req)
	}
	return true
}

// writeLoop is the connection's writer goroutine (owned by serve, which
// stops it with stopPipeline): it writes the queued responses in order,
// each after its wait.
func (c *conn) writeLoop(ctx context.Context, p *pipeline, log *slog.Logger) {
	defer close(p.stopped)
	for q := range p.queue {
		c.writeQueued(ctx, p, q, log)
		p.written <- struct{}{}
	}
}

// writeQueued ends q's wait and writes its response unless the connection
// failed. A write error or a panic closes the connection: the socket is
// closed, which ends serve's read, and the context cancelled, which ends
// the waits still queued.
func (c *conn) writeQueued(ctx context.Context, p *pipeline, q *queued, log *slog.Logger) {
	fail := func() {
		p.failed.Store(true)
		c.cancel()
		_ = c.nc.Close()
	}
	defer func() {
		if r := recover(); r != nil {
			c.s.log.Error("panic writing a queued response", "api", kmsg.NameForKey(q.req.Key), "conn", c.id, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			fail()
		}
	}()
	if q.wait != nil {
		err := q.wait.Wait()
		q.wait = nil
		if err != nil {
			// The connection is closing (its context ended).
			fail()
			return
		}
		if q.am != nil {
			q.returned = time.Now()
		}
	}
	if p.failed.Load() {
		return
	}
	if q.am != nil {
		q.writeStart = time.Now()
	}
	if err := c.write(&q.req, q.resp); err != nil {
		log.Debug("write failed", "err", err)
		fail()
		return
	}
	if am := q.am; am != nil {
		am.record(c.s.rm.reg, &q.req, q.frameLen, &q.times, q.handled, q.returned, q.writeStart, time.Now())
		am.recordErrors(c.s.rm.reg, q.resp)
	}
	if log.Enabled(ctx, slog.LevelDebug) {
		log.Debug("completed request", "api", kmsg.NameForKey(q.req.Key), "version", q.req.Version,
			"correlation_id", q.req.CorrelationID, "client_id", q.req.ClientIDOrEmpty(), "total_ms", time.Since(q.req.Received).Milliseconds())
	}
}
