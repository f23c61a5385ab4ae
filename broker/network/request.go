package network

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Request is one decoded request as handed to the Handler (Kafka's
// RequestChannel.Request). Body has its version set and is fully parsed.
// For Produce and Fetch the Request, its Body and the frame its byte
// fields point into belong to the connection and are overwritten by its
// next request: a Handler must not keep them past the writing of the
// response, nor past its return when it deferred the response
// (Request.Defer: the next request may then be read while the response
// waits). Strings in them may be kept: they never point into the frame.
type Request struct {
	Key           int16
	Version       int16
	CorrelationID int32
	// ClientID is nil for header v0 (ControlledShutdown v0) and for a null
	// client id on the wire; treat nil as "".
	ClientID *string
	Body     kmsg.Request

	// Listener is the listener name the connection arrived on
	// (e.g. "PLAINTEXT"), SecurityProtocol its protocol.
	Listener         string
	SecurityProtocol string
	RemoteAddr       net.Addr
	// ConnID identifies the connection like Kafka's connection id:
	// "localAddr-remoteAddr-index".
	ConnID   string
	Received time.Time
	// Size is the request's size on the wire without its size prefix
	// (header and body; Kafka's sizeInBytes, what producer_byte_rate
	// counts).
	Size int

	// ClientSoftwareName and ClientSoftwareVersion are what the client
	// reported in an ApiVersions v3+ request on this connection ("" until
	// then).
	ClientSoftwareName    string
	ClientSoftwareVersion string

	// Session is the connection's authentication state; the handler may
	// change it (only one request per connection is handled at a time).
	Session *Session

	// muteUntil is set by Throttle: the connection reads no further
	// request before it.
	muteUntil time.Time
	// scratch is the connection's, for a Produce or Fetch decoded into
	// it (nil otherwise).
	scratch *connScratch
}

// KeptProduceResponse returns a ProduceResponse the connection keeps for
// its Produce requests, to be filled and returned as this request's
// response (reset it first; its slices keep the capacity earlier
// responses gave them), or nil when r is not a connection's Produce.
func (r *Request) KeptProduceResponse() *kmsg.ProduceResponse {
	if r.scratch == nil || r.Key != int16(kmsg.Produce) {
		return nil
	}
	return r.scratch.keptProduce()
}

// Throttle mutes the connection for d from now (KIP-219, Kafka's
// ThrottledChannel): the response is sent at once, but the next request
// is read only after the throttle, so a client that ignores
// throttle_time_ms is slowed too. The longest of several calls counts.
func (r *Request) Throttle(d time.Duration) {
	if d <= 0 {
		return
	}
	if until := time.Now().Add(d); until.After(r.muteUntil) {
		r.muteUntil = until
	}
}

// Session is per-connection state shared by the network layer and the
// handler, for SASL authentication.
type Session struct {
	// Authenticated starts true on PLAINTEXT and SSL listeners. On
	// SASL_PLAINTEXT / SASL_SSL listeners it starts false and the handler
	// sets it once authentication succeeded; until then only ApiVersions,
	// SaslHandshake and SaslAuthenticate reach the handler, anything else
	// closes the connection, and frames are limited to
	// SaslMaxReceiveBytes (Kafka's sasl.server.max.receive.size).
	Authenticated bool
	// Principal is the authenticated principal, "User:ANONYMOUS" until a
	// handler sets another.
	Principal string
	// RawSASL, when a handler sets it (answering SaslHandshake v0), makes
	// the connection treat the following frames as raw SASL tokens
	// without a Kafka header, as kafka-python does: each token is passed
	// to RawSASL and its reply is sent back as a size-prefixed frame (an
	// empty reply is a zero-size frame). When it reports done the
	// connection returns to Kafka requests and RawSASL is cleared; an
	// error closes the connection.
	RawSASL func(token []byte) (reply []byte, done bool, err error)
	// CloseAfterResponse, when a handler sets it, closes the connection
	// once the current response is written (a failed SASL handshake or
	// authentication is answered, then the connection goes, as in Kafka).
	CloseAfterResponse bool
	// ExpiresAt is the end of the KIP-368 session lifetime
	// (connections.max.reauth.ms; zero = none): after it, any request but
	// SaslHandshake (which starts a re-authentication) closes the
	// connection.
	ExpiresAt time.Time
	// SASL is the handler's own exchange state of this connection (the
	// api layer's SASL code owns it; the network layer never reads it).
	SASL any
}

// SaslMaxReceiveBytes is the default bound of frames from unauthenticated
// SASL connections (Kafka's sasl.server.max.receive.size default;
// Config.SaslMaxReceiveBytes sets another).
const SaslMaxReceiveBytes = 524288

// isSASL reports whether a listener's security protocol uses SASL.
func isSASL(securityProtocol string) bool {
	return securityProtocol == "SASL_PLAINTEXT" || securityProtocol == "SASL_SSL"
}

// allowedBeforeAuth are the keys an unauthenticated SASL connection may
// send.
func allowedBeforeAuth(key int16) bool {
	return key == int16(kmsg.ApiVersions) || key == int16(kmsg.SASLHandshake) || key == int16(kmsg.SASLAuthenticate)
}

// ClientIDOrEmpty returns the client id, mapping null to "" as Kafka does.
func (r *Request) ClientIDOrEmpty() string {
	if r.ClientID == nil {
		return ""
	}
	return *r.ClientID
}

// Handler serves decoded requests (Kafka's KafkaApis). One connection calls
// Handle for one request at a time; different connections call it
// concurrently.
type Handler interface {
	// Handle returns the response body; nil means send no response (acks=0
	// produce); an error closes the connection. The response must have the
	// request's version (build it with req.Body.ResponseKind()). ctx is
	// cancelled when the connection closes or the server shuts down, so a
	// handler parked in purgatory must select on ctx.Done().
	Handle(ctx context.Context, req *Request) (kmsg.Response, error)
	// Versions reports the supported version range of an API key; ok=false
	// for keys the broker does not serve.
	Versions(key int16) (min, max int16, ok bool)
}

var (
	// ErrUnknownKey: the API key is not known to kmsg or not served.
	ErrUnknownKey = errors.New("network: unknown or unserved api key")
	// ErrUnsupportedVersion: the version is outside the advertised range.
	ErrUnsupportedVersion = errors.New("network: unsupported api version")
	// ErrMalformed: the header or body does not parse.
	ErrMalformed = errors.New("network: malformed request")
)

// decoded is the outcome of decoding one request frame.
type decoded struct {
	req *Request
	// fallback is set for an ApiVersions request whose version is above
	// our maximum: only Key, Version and CorrelationID are valid and the
	// body was not parsed; the answer is an ApiVersions v0 body with error
	// UNSUPPORTED_VERSION and our ApiVersions range (KIP-511).
	fallback bool
}

// tagReader is the minimal kmsg.TagReader over a byte slice; once it runs
// out of bytes it stays failed, so SkipTags stops.
type tagReader struct {
	b   []byte
	bad bool
}

func (r *tagReader) Ok() bool { return !r.bad }

func (r *tagReader) Uvarint() uint32 {
	var v uint32
	for i := 0; i < 5; i++ {
		if len(r.b) == 0 {
			r.bad = true
			return 0
		}
		c := r.b[0]
		r.b = r.b[1:]
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v
		}
	}
	r.bad = true // more than 5 bytes: overflow
	return 0
}

func (r *tagReader) Span(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.bad = true
		r.b = nil
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

// decodeRequest parses a request frame (without its size prefix). It never
// panics: a panic inside kmsg decoding is turned into ErrMalformed. The
// frame must not be reused afterwards: kmsg slices alias it.
func decodeRequest(frame []byte, versions func(int16) (int16, int16, bool)) (decoded, error) {
	return decodeRequestInto(frame, versions, nil)
}

// decodeRequestInto is decodeRequest with a connection's scratch (nil for
// none): a Produce or Fetch request is then decoded into the scratch's
// Request and body, which the next such request overwrites, and a client
// id equal to the previous one is not copied again.
func decodeRequestInto(frame []byte, versions func(int16) (int16, int16, bool), s *connScratch) (d decoded, err error) {
	defer func() {
		if p := recover(); p != nil {
			d, err = decoded{}, fmt.Errorf("%w: decoder panic: %v", ErrMalformed, p)
		}
	}()
	if len(frame) < 8 {
		return decoded{}, fmt.Errorf("%w: frame of %d bytes is shorter than a header", ErrMalformed, len(frame))
	}
	key := int16(binary.BigEndian.Uint16(frame[0:]))
	ver := int16(binary.BigEndian.Uint16(frame[2:]))
	corr := int32(binary.BigEndian.Uint32(frame[4:]))
	rest := frame[8:]

	reuse := s != nil && reusesFrame(key)
	var body kmsg.Request
	switch {
	case reuse && key == int16(kmsg.Produce):
		body = &s.produce
	case reuse:
		body = &s.fetch
	default:
		body = kmsg.RequestForKey(key)
	}
	if body == nil {
		return decoded{}, fmt.Errorf("%w: key %d", ErrUnknownKey, key)
	}
	min, max, ok := versions(key)
	if !ok {
		return decoded{}, fmt.Errorf("%w: key %d (%s)", ErrUnknownKey, key, kmsg.NameForKey(key))
	}
	var r *Request
	if reuse {
		r = &s.req
		*r = Request{Key: key, Version: ver, CorrelationID: corr, scratch: s}
	} else {
		r = &Request{Key: key, Version: ver, CorrelationID: corr}
	}

	// Header v0 (no client id) is used only by ControlledShutdown v0.
	if !(key == int16(kmsg.ControlledShutdown) && ver == 0) {
		if len(rest) < 2 {
			return decoded{}, fmt.Errorf("%w: truncated client id", ErrMalformed)
		}
		n := int16(binary.BigEndian.Uint16(rest))
		rest = rest[2:]
		switch {
		case n == -1:
		case n < -1 || int(n) > len(rest):
			return decoded{}, fmt.Errorf("%w: client id length %d", ErrMalformed, n)
		case s != nil:
			r.ClientID = sameBytes(&s.clientID, rest[:n])
			rest = rest[n:]
		default:
			id := string(rest[:n])
			r.ClientID = &id
			rest = rest[n:]
		}
	}

	if key == int16(kmsg.ApiVersions) && ver > max {
		return decoded{req: r, fallback: true}, nil
	}
	if ver < min || ver > max {
		return decoded{}, fmt.Errorf("%w: %s v%d outside %d-%d", ErrUnsupportedVersion, kmsg.NameForKey(key), ver, min, max)
	}
	body.SetVersion(ver)
	if body.IsFlexible() {
		var ok bool
		if rest, ok = skipHeaderTags(rest); !ok {
			return decoded{}, fmt.Errorf("%w: bad header tagged fields", ErrMalformed)
		}
	}
	if reuse {
		body, err = s.decodeReused(key, ver, rest)
	} else {
		err = body.ReadFrom(rest)
	}
	if err != nil {
		return decoded{}, fmt.Errorf("%w: %s v%d body: %v", ErrMalformed, kmsg.NameForKey(key), ver, err)
	}
	r.Body = body
	return decoded{req: r}, nil
}

// appendResponseHeader appends the response header for a response to key:
// the correlation id, plus an empty tagged-field section when the response
// is flexible, except for ApiVersions which always uses header v0 (KIP-511).
func appendResponseHeader(dst []byte, key int16, corr int32, flexible bool) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(corr))
	if flexible && key != int16(kmsg.ApiVersions) {
		dst = append(dst, 0)
	}
	return dst
}
