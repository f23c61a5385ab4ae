package network

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// conn is one client connection (Kafka's KafkaChannel plus its Processor
// duty). Its goroutine reads a request, runs the handler and writes the
// response before reading the next request: Kafka mutes a channel while a
// request is in flight, which is what keeps pipelined responses in order.
// The one exception is the wait of an acks=all Produce, which may overlap
// the next Produce requests (pipeline.go).
type conn struct {
	s  *Server
	nc net.Conn
	lc ListenerConfig
	id string
	ip netip.Addr // peer address, counted in the connection quotas

	// lastActive (UnixNano of the last request read) picks the least
	// recently used connection to close over max.connections; closing
	// marks one already chosen.
	lastActive atomic.Int64
	closing    atomic.Bool

	// Owned by the serve goroutine (and the handler it is calling).
	swName, swVersion string
	session           *Session
	times             requestTimes // of the request in flight, see LocalDone
	scratch           connScratch
	// cancel ends the handlers' context (also called by the writer).
	cancel context.CancelFunc
	// pipe queues responses behind deferred ones; nil until the first
	// (pipeline.go).
	pipe *pipeline
}

// errFrameSize is returned for a size prefix ≤ 0 or above the maximum.
var errFrameSize = errors.New("network: invalid request size")

// readFrame reads one size-prefixed frame. An invalid size closes the
// connection without reading the body.
func readFrame(r io.Reader, max int32) ([]byte, error) {
	var sz [4]byte
	if _, err := io.ReadFull(r, sz[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(sz[:]))
	if n <= 0 || n > max {
		return nil, fmt.Errorf("%w: %d (socket.request.max.bytes %d)", errFrameSize, n, max)
	}
	// A fresh buffer per frame: kmsg's decoded slices alias it and a
	// handler (or the log append) may keep them.
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// readFrameInto is readFrame into s's kept buffer (grown as needed; a
// frame above keptBufferMax gets a buffer of its own). kept reports
// whether the frame is in the kept buffer.
func readFrameInto(r io.Reader, max int32, s *connScratch) (frame []byte, kept bool, err error) {
	if _, err := io.ReadFull(r, s.size[:]); err != nil {
		return nil, false, err
	}
	n := int32(binary.BigEndian.Uint32(s.size[:]))
	if n <= 0 || n > max {
		return nil, false, fmt.Errorf("%w: %d (socket.request.max.bytes %d)", errFrameSize, n, max)
	}
	// The previous request is done with its frame (see bigFrame).
	s.releaseBigFrame()
	buf, kept := s.frame, true
	switch {
	case cap(buf) >= int(n):
	case int(n) > keptBufferMax:
		buf, kept = s.takeBigFrame(int(n)), false
	default:
		buf = make([]byte, n)
		s.frame = buf
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, false, err
	}
	return buf, kept, nil
}

// serve is the connection's goroutine: it serves one request at a time
// until the peer leaves, a request is bad or the server stops.
func (c *conn) serve() {
	defer c.s.wg.Done()
	defer c.s.removeConn(c)
	defer c.nc.Close()
	log := c.s.log.With("listener", c.lc.Name, "conn", c.id)

	ctx, cancel := context.WithCancel(c.s.ctx)
	defer cancel()
	c.cancel = cancel
	ctx = context.WithValue(ctx, requestTimesKey{}, &c.times)

	// Reads are buffered (pipelined small requests arrive together);
	// writes go straight to the socket so file pieces can use sendfile.
	br := bufio.NewReaderSize(c.nc, 16<<10)
	c.session = &Session{Authenticated: !isSASL(c.lc.SecurityProtocol), Principal: "User:ANONYMOUS"}
	if !c.tlsHandshake(ctx, log) {
		return
	}
	for c.serveOne(ctx, br, log) {
	}
	// Queued waits end with the context; then the writer stops.
	cancel()
	c.stopPipeline()
}

// serveOne reads one request, handles it and writes its response. It
// reports false when the connection must close.
func (c *conn) serveOne(ctx context.Context, br *bufio.Reader, log *slog.Logger) bool {
	frame, ok := c.readRequestFrame(br, log)
	if !ok {
		return false
	}
	received := time.Now()
	c.lastActive.Store(received.UnixNano())
	if c.session.RawSASL != nil {
		if err := c.rawSASL(frame); err != nil {
			log.Warn("closing connection after raw SASL token", "err", err)
			return false
		}
		return true
	}
	d, err := decodeRequestInto(frame, c.s.h.Versions, &c.scratch)
	if err != nil {
		log.Warn("closing connection on unparseable request", "err", err)
		return false
	}
	if !c.session.Authenticated && !allowedBeforeAuth(d.req.Key) {
		log.Warn("closing unauthenticated connection on a request other than ApiVersions or SASL", "api", kmsg.NameForKey(d.req.Key))
		return false
	}
	if s := c.session; s.Authenticated && !s.ExpiresAt.IsZero() && d.req.Key != int16(kmsg.SASLHandshake) && received.After(s.ExpiresAt) {
		log.Info("closing connection whose SASL session expired (connections.max.reauth.ms)", "api", kmsg.NameForKey(d.req.Key), "principal", s.Principal)
		return false
	}
	req := d.req
	req.Listener, req.SecurityProtocol = c.lc.Name, c.lc.SecurityProtocol
	req.RemoteAddr, req.ConnID, req.Received = c.nc.RemoteAddr(), c.id, received
	req.Size = len(frame)
	req.Session = c.session

	if c.pipe != nil && !c.beforeHandling(req) {
		return false
	}

	var am *apiMetrics
	var handled time.Time
	c.times = requestTimes{}
	if c.s.rm != nil {
		am = c.s.rm.forRequest(req)
		handled = time.Now()
	}
	resp, ok := c.dispatch(ctx, d, log)
	if !ok {
		return false
	}
	if resp == nil {
		if am != nil {
			now := time.Now()
			am.record(c.s.rm.reg, req, len(frame), &c.times, handled, now, now, now)
		}
		return c.muted(ctx, req) // e.g. acks=0 produce
	}
	_, deferred := resp.(*DeferredResponse)
	queued, ok := c.pending()
	if !ok {
		return false
	}
	if deferred || queued {
		// The writer sends it, after the responses queued before it.
		if !checkResponse(d, resp, log) {
			return false
		}
		return c.enqueue(ctx, req, resp, am, len(frame), handled, log)
	}
	var returned time.Time
	if am != nil {
		returned = time.Now()
	}
	if !checkResponse(d, resp, log) {
		return false
	}
	var writeStart time.Time
	if am != nil {
		writeStart = time.Now()
	}
	if err := c.write(req, resp); err != nil {
		log.Debug("write failed", "err", err)
		return false
	}
	if am != nil {
		am.record(c.s.rm.reg, req, len(frame), &c.times, handled, returned, writeStart, time.Now())
		am.recordErrors(c.s.rm.reg, resp)
	}
	if req.Key == int16(kmsg.Fetch) && req.scratch != nil {
		req.scratch.fetchKept.written()
	}
	if c.session.CloseAfterResponse {
		return c.closeAfterResponse(ctx, req, log)
	}
	if log.Enabled(ctx, slog.LevelDebug) {
		// Kafka's kafka.request.logger line.
		log.Debug("completed request", "api", kmsg.NameForKey(req.Key), "version", req.Version,
			"correlation_id", req.CorrelationID, "client_id", req.ClientIDOrEmpty(), "total_ms", time.Since(received).Milliseconds())
	}
	return c.muted(ctx, req)
}

// closeAfterResponse delays the close the handler asked for
// (Session.CloseAfterResponse) by connection.failed.authentication.delay.ms
// when the session failed to authenticate; it reports false.
func (c *conn) closeAfterResponse(ctx context.Context, req *Request, log *slog.Logger) bool {
	log.Debug("closing connection after the response, as the handler asked", "api", kmsg.NameForKey(req.Key))
	if d := c.s.cfg.FailedAuthenticationDelay; d > 0 && !c.session.Authenticated {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return false
}

// muted waits out a quota throttle the handler set (Request.Throttle)
// before the next request is read: Kafka mutes a throttled channel until
// both its response is sent and the throttle has ended. It reports false
// when the server stops meanwhile, and after connections.max.idle.ms when
// the throttle is longer: a connection muted that long is idle and goes,
// as Kafka's selector expires it.
func (c *conn) muted(ctx context.Context, req *Request) bool {
	d := time.Until(req.muteUntil)
	if d <= 0 {
		return true
	}
	idle := c.s.cfg.ConnectionsMaxIdle
	keep := idle <= 0 || d <= idle
	if !keep {
		d = idle
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return keep
	case <-ctx.Done():
		return false
	}
}

// readRequestFrame reads the next frame, allowing an idle peer
// connections.max.idle.ms and an unauthenticated one only a SASL-sized
// frame. It reports false (after logging why) when the connection must
// close.
func (c *conn) readRequestFrame(br *bufio.Reader, log *slog.Logger) ([]byte, bool) {
	_ = c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.ConnectionsMaxIdle))
	max := c.s.cfg.MaxRequestBytes
	if !c.session.Authenticated && max > c.s.cfg.SaslMaxReceiveBytes {
		max = c.s.cfg.SaslMaxReceiveBytes
	}
	frame, kept, err := readFrameInto(br, max, &c.scratch)
	if err != nil {
		switch {
		case errors.Is(err, errFrameSize):
			log.Warn("closing connection", "err", err)
		case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		case isTimeout(err):
			log.Debug("closing idle connection")
		default:
			log.Debug("read failed", "err", err)
		}
		return nil, false
	}
	if len(frame) < 2 || !reusesFrame(int16(binary.BigEndian.Uint16(frame))) || c.session.RawSASL != nil {
		// The kept buffer is overwritten by the next request and a
		// pooled one goes back to the pool: only Produce and Fetch are
		// done with their frame when their response is written (or
		// deferred). Other requests get a frame of their own.
		if kept {
			frame = bytes.Clone(frame)
		}
		c.scratch.keepBigFrame()
	}
	return frame, true
}

// dispatch answers ApiVersions itself and passes every other request to
// the Handler. It reports false when the handler failed and the
// connection must close.
func (c *conn) dispatch(ctx context.Context, d decoded, log *slog.Logger) (kmsg.Response, bool) {
	req := d.req
	switch {
	case d.fallback:
		log.Debug("ApiVersions version above our maximum, answering v0", "version", req.Version)
		return apiVersionsFallback(c.s.h), true
	case req.Key == int16(kmsg.ApiVersions):
		// Answered here rather than by the Handler: it is part of the
		// connection handshake, needs only the version table, and
		// records the client software on the connection.
		av := req.Body.(*kmsg.ApiVersionsRequest)
		r := ApiVersionsResponse(c.s.h, av)
		if r.ErrorCode == 0 && av.Version >= 3 {
			c.swName, c.swVersion = av.ClientSoftwareName, av.ClientSoftwareVersion
		}
		return r, true
	default:
		req.ClientSoftwareName, req.ClientSoftwareVersion = c.swName, c.swVersion
		resp, err := c.handle(ctx, req)
		if err != nil {
			log.Warn("closing connection on handler error", "api", kmsg.NameForKey(req.Key), "version", req.Version, "correlation_id", req.CorrelationID, "err", err)
			return nil, false
		}
		return resp, true
	}
}

// checkResponse makes sure the handler answered the request's API at its
// version, fixing the version of a response not yet encoded. It reports
// false when the response cannot be sent.
func checkResponse(d decoded, resp kmsg.Response, log *slog.Logger) bool {
	req := d.req
	if resp.Key() != req.Key {
		log.Error("handler returned a response for another api; closing", "api", kmsg.NameForKey(req.Key), "response_key", resp.Key())
		return false
	}
	if !d.fallback && resp.GetVersion() != req.Version {
		_, spliced := resp.(*SplicedResponse)
		_, encoded := resp.(*EncodedResponse)
		if spliced || encoded {
			// Already encoded at the wrong version.
			log.Error("spliced response has the wrong version; closing", "api", kmsg.NameForKey(req.Key), "version", req.Version, "response_version", resp.GetVersion())
			return false
		}
		log.Warn("handler response version differs from request; fixing", "api", kmsg.NameForKey(req.Key), "version", req.Version, "response_version", resp.GetVersion())
		resp.SetVersion(req.Version)
	}
	return true
}

// handle calls the Handler, turning a panic into an error so a bad request
// costs its connection, not the broker.
func (c *conn) handle(ctx context.Context, req *Request) (resp kmsg.Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.s.log.Error("handler panic", "api", kmsg.NameForKey(req.Key), "version", req.Version, "conn", c.id, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			resp, err = nil, fmt.Errorf("handler panic: %v", p)
		}
	}()
	return c.s.h.Handle(ctx, req)
}

// rawSASL passes one raw token to the handler's RawSASL and writes the
// reply as a bare size-prefixed frame.
func (c *conn) rawSASL(token []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.s.log.Error("raw SASL panic", "conn", c.id, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("raw SASL panic: %v", p)
		}
	}()
	reply, done, err := c.session.RawSASL(token)
	if err != nil {
		return err
	}
	if done {
		c.session.RawSASL = nil
	}
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.ConnectionsMaxIdle))
	buf := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(reply)), uint32(len(reply)))
	_, err = c.nc.Write(append(buf, reply...))
	return err
}

// write frames and sends one response.
func (c *conn) write(req *Request, resp kmsg.Response) error {
	// A peer that stops reading is treated like an idle one
	// (connections.max.idle.ms), so it cannot pin this goroutine.
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.ConnectionsMaxIdle))
	s := &c.scratch
	head := appendResponseHeader(s.head[:4], req.Key, req.CorrelationID, resp.IsFlexible())
	if fr, ok := resp.(*FileFetchResponse); ok {
		framed, err := fr.frameWith(&s.spl)
		if err != nil {
			return err
		}
		resp = framed
	}
	if sp, ok := resp.(*SplicedResponse); ok {
		binary.BigEndian.PutUint32(head, uint32(len(head)-4+sp.BodyLen()))
		return writeSpliced(c.nc, head, sp, &s.sw)
	}
	if er, ok := resp.(*EncodedResponse); ok {
		binary.BigEndian.PutUint32(head, uint32(len(head)-4+er.enc.Len()))
		return writeEncoded(c.nc, head, er, &s.sw)
	}
	buf := resp.AppendTo(append(s.wbuf[:0], head...))
	s.wbuf = keep(buf)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	_, err := c.nc.Write(buf)
	return err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
