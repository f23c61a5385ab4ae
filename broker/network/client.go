package network

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxResponseBytes bounds a response frame the client accepts, so a
// corrupted size prefix cannot make it allocate without limit.
const maxResponseBytes = 1 << 30

// A Client is a kmsg.Requestor, so typed helpers work with it:
// resp, err := req.RequestWith(ctx, client).
var _ kmsg.Requestor = (*Client)(nil)

// ErrClientClosed is returned by requests on a closed or broken client.
var ErrClientClosed = errors.New("network: client closed")

// Client is a blocking inter-broker connection (Kafka's NetworkClient used
// through NetworkClientUtils.sendAndReceive): one request in flight at a
// time, so requests reach the peer in call order. The controller's
// per-broker senders and the replica fetchers each own one Client. After
// any I/O error the connection is closed and every later call fails with
// ErrClientClosed: the owner dials a new Client (Kafka's reconnect).
type Client struct {
	addr     string
	clientID string
	timeout  time.Duration

	// mu guards the following; it is held for a whole round trip, which
	// is what serializes requests.
	mu     sync.Mutex
	nc     net.Conn
	br     *bufio.Reader
	corr   int32
	broken error
	wbuf   []byte // the last request frame's buffer, reused
}

// Dial connects to addr. timeout bounds the connect and is also the
// default deadline of each request whose context has none (Kafka's
// request.timeout.ms / controller.socket.timeout.ms).
func Dial(ctx context.Context, addr string, clientID string, timeout time.Duration) (*Client, error) {
	return DialTLS(ctx, addr, clientID, timeout, nil)
}

// DialTLS is Dial for SSL / SASL_SSL listeners; a nil cfg dials plain TCP.
// The TLS handshake is bounded by the same timeout.
func DialTLS(ctx context.Context, addr string, clientID string, timeout time.Duration, cfg *tls.Config) (*Client, error) {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	d := net.Dialer{Timeout: timeout}
	var nc net.Conn
	var err error
	if cfg != nil {
		td := tls.Dialer{NetDialer: &d, Config: cfg}
		hctx, cancel := context.WithTimeout(ctx, timeout)
		nc, err = td.DialContext(hctx, "tcp", addr)
		cancel()
	} else {
		nc, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("network: dialing %s: %w", addr, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	return &Client{addr: addr, clientID: clientID, timeout: timeout, nc: nc, br: bufio.NewReaderSize(nc, 64<<10)}, nil
}

// Addr is the address the client dialed.
func (c *Client) Addr() string { return c.addr }

// Close closes the connection. Safe to call more than once and
// concurrently with Request, which then fails.
func (c *Client) Close() error {
	// Closing the socket first unblocks a request holding mu.
	err := c.nc.Close()
	c.mu.Lock()
	if c.broken == nil {
		c.broken = ErrClientClosed
	}
	c.mu.Unlock()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Request sends req at the version the caller set (req.GetVersion()) and
// returns the decoded response of the same version. An acks=0 Produce
// returns (nil, nil) once written, as the peer sends nothing back.
func (c *Client) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	resp, _, err := c.RequestReusing(ctx, req, nil)
	return resp, err
}

// RequestReusing is Request reading the response frame into buf when it
// fits (a larger buffer is allocated otherwise) and returning the buffer
// used, for the caller to pass to its next call. The decoded response's
// byte fields (a Fetch response's records) alias that buffer, so the
// caller must be done with the response before it reuses the buffer. The
// replica fetcher uses it: every fetch response would otherwise be a fresh
// allocation of up to replica.fetch.response.max.bytes.
func (c *Client) RequestReusing(ctx context.Context, req kmsg.Request, buf []byte) (kmsg.Response, []byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return nil, buf, fmt.Errorf("%w: %v", ErrClientClosed, c.broken)
	}
	resp, buf, err := c.roundTrip(ctx, req, buf)
	if err != nil {
		c.broken = err
		c.nc.Close()
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return nil, buf, fmt.Errorf("network: %s to %s: %w", kmsg.NameForKey(req.Key()), c.addr, err)
	}
	return resp, buf, nil
}

func (c *Client) roundTrip(ctx context.Context, req kmsg.Request, buf []byte) (kmsg.Response, []byte, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(c.timeout)
	}
	_ = c.nc.SetDeadline(deadline)
	// Cancellation interrupts blocked I/O by moving the deadline to the
	// past; the connection is then broken and closed by Request.
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = c.nc.SetDeadline(time.Unix(1, 0))
		close(fired)
	})
	defer func() {
		// If the callback already started, wait for it: otherwise its
		// past deadline could land on the next request's I/O.
		if !stop() {
			<-fired
		}
	}()

	c.corr++
	corr := c.corr
	c.wbuf = appendRequestFrame(c.wbuf[:0], req, corr, c.clientID)
	_, err := c.nc.Write(c.wbuf)
	if cap(c.wbuf) > maxKeptRequestBuffer {
		c.wbuf = nil // a one-off large request (a big Produce) is not kept
	}
	if err != nil {
		return nil, buf, err
	}
	if p, ok := req.(*kmsg.ProduceRequest); ok && p.Acks == 0 {
		return nil, buf, nil
	}
	frame, err := readResponseFrameInto(c.br, buf)
	if err != nil {
		return nil, buf, err
	}
	resp, err := decodeResponse(frame, req, corr)
	return resp, frame[:0], err
}

// maxKeptRequestBuffer bounds the request buffer a Client keeps between
// requests.
const maxKeptRequestBuffer = 64 << 10

// appendRequestFrame appends a full request frame: size, header (v0 for
// ControlledShutdown v0, v2 for flexible versions, else v1) and body.
// kmsg's RequestFormatter is not used because it drops the body of
// ControlledShutdown v0.
func appendRequestFrame(dst []byte, req kmsg.Request, corr int32, clientID string) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.Key()))
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.GetVersion()))
	dst = binary.BigEndian.AppendUint32(dst, uint32(corr))
	if !(req.Key() == int16(kmsg.ControlledShutdown) && req.GetVersion() == 0) {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(clientID)))
		dst = append(dst, clientID...)
		if req.IsFlexible() {
			dst = append(dst, 0) // no header tags
		}
	}
	dst = req.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

func readResponseFrame(r io.Reader) ([]byte, error) {
	return readResponseFrameInto(r, nil)
}

// readResponseFrameInto reads one response frame (without its size) into
// buf when it has the capacity, else into a new buffer.
func readResponseFrameInto(r io.Reader, buf []byte) ([]byte, error) {
	var sz [4]byte
	if _, err := io.ReadFull(r, sz[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(sz[:]))
	if n < 4 || n > maxResponseBytes {
		return nil, fmt.Errorf("invalid response size %d", n)
	}
	if cap(buf) >= int(n) {
		buf = buf[:n]
	} else {
		buf = make([]byte, n)
	}
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// decodeResponse parses a response frame (without size) to req. An
// ApiVersions answer with UNSUPPORTED_VERSION is decoded as v0, the
// KIP-511 fallback format.
func decodeResponse(frame []byte, req kmsg.Request, corr int32) (resp kmsg.Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("response decoder panic: %v", p)
		}
	}()
	if got := int32(binary.BigEndian.Uint32(frame)); got != corr {
		return nil, fmt.Errorf("correlation id %d, expected %d", got, corr)
	}
	body := frame[4:]
	resp = req.ResponseKind()
	if req.Key() == int16(kmsg.ApiVersions) {
		if len(body) >= 2 && int16(binary.BigEndian.Uint16(body)) == kerr.UnsupportedVersion.Code {
			resp.SetVersion(0)
		}
	} else if resp.IsFlexible() {
		tr := &tagReader{b: body}
		kmsg.SkipTags(tr)
		if tr.bad {
			return nil, errors.New("bad response header tags")
		}
		body = tr.b
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decoding %s v%d response: %w", kmsg.NameForKey(req.Key()), resp.GetVersion(), err)
	}
	return resp, nil
}

// ClientApiVersionsMax is the ApiVersions version the client asks with
// first (Kafka 3.4's maximum).
const ClientApiVersionsMax = 3

// ApiVersions asks the peer which versions it serves, retrying once at the
// version the peer names if it answers with the KIP-511 fallback. The map
// is key → {min, max}.
func (c *Client) ApiVersions(ctx context.Context) (map[int16][2]int16, error) {
	ver := int16(ClientApiVersionsMax)
	for attempt := 0; attempt < 2; attempt++ {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = ver
		req.ClientSoftwareName, req.ClientSoftwareVersion = "klassik", "1.0"
		kresp, err := c.Request(ctx, req)
		if err != nil {
			return nil, err
		}
		resp := kresp.(*kmsg.ApiVersionsResponse)
		if resp.ErrorCode == kerr.UnsupportedVersion.Code {
			next := int16(0)
			for _, k := range resp.ApiKeys {
				if k.ApiKey == int16(kmsg.ApiVersions) {
					next = min(k.MaxVersion, ver-1)
				}
			}
			ver = max(next, 0)
			continue
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return nil, fmt.Errorf("network: ApiVersions to %s: %w", c.addr, err)
		}
		out := make(map[int16][2]int16, len(resp.ApiKeys))
		for _, k := range resp.ApiKeys {
			out[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
		}
		return out, nil
	}
	return nil, fmt.Errorf("network: ApiVersions to %s: %w", c.addr, kerr.UnsupportedVersion)
}
