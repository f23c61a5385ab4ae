package network

import (
	"encoding/binary"
	"fmt"
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Encoded is a response body encoded once to be sent many times (the api
// layer keeps Metadata answers this way). It is immutable and safe to
// share between connections; each request sends it through its own
// EncodedResponse, which carries that request's throttle_time_ms. The
// error codes of the response are counted once, at encoding, for the
// ErrorsPerSec meters.
type Encoded struct {
	key      int16
	version  int16
	flexible bool
	body     []byte
	// throttleAt is the offset of throttle_time_ms (an int32) in body,
	// -1 when the version has none.
	throttleAt int
	throttle   int32 // its value in body
	errs       []codeCount
}

type codeCount struct {
	code  int16
	count int64
}

// Encode encodes resp. throttleAt is where the response's version
// carries throttle_time_ms in the encoded body (-1: it has none); Encode
// checks that resp's throttle value is found there and fails otherwise, so
// a wrong offset cannot go unnoticed.
func Encode(resp kmsg.Response, throttleAt int) (*Encoded, error) {
	e := &Encoded{
		key: resp.Key(), version: resp.GetVersion(), flexible: resp.IsFlexible(),
		body: resp.AppendTo(nil), throttleAt: throttleAt,
	}
	if throttleAt >= 0 {
		tr, ok := resp.(kmsg.ThrottleResponse)
		if !ok {
			return nil, fmt.Errorf("network: encoding %s: no throttle_time_ms", kmsg.NameForKey(e.key))
		}
		ms, _ := tr.Throttle()
		if throttleAt+4 > len(e.body) || int32(binary.BigEndian.Uint32(e.body[throttleAt:])) != ms {
			return nil, fmt.Errorf("network: encoding %s v%d: throttle_time_ms is not at offset %d", kmsg.NameForKey(e.key), e.version, throttleAt)
		}
		e.throttle = ms
	}
	c := errorCounts{}
	countErrors(resp, &c)
	for i := 0; i < c.n; i++ {
		e.errs = append(e.errs, codeCount{c.codes[i], c.counts[i]})
	}
	e.errs = append(e.errs, c.more...)
	return e, nil
}

// Len is the length of the encoded body.
func (e *Encoded) Len() int { return len(e.body) }

// Response returns a response that sends e, with e's throttle until
// SetThrottle changes it.
func (e *Encoded) Response() *EncodedResponse {
	// The embedded response answers Key, GetVersion and IsFlexible; its
	// (empty) body is never encoded.
	r := kmsg.ResponseForKey(e.key) // e.key came from a kmsg response
	r.SetVersion(e.version)
	return &EncodedResponse{Response: r, enc: e, throttle: e.throttle}
}

// EncodedResponse is one request's answer from an Encoded body. The server
// writes the body as it is, with throttle_time_ms replaced by the
// request's throttle when that differs.
type EncodedResponse struct {
	kmsg.Response
	enc      *Encoded
	throttle int32
}

// Throttle returns the throttle time and whether the version has it
// (kmsg.ThrottleResponse).
func (r *EncodedResponse) Throttle() (int32, bool) { return r.throttle, r.enc.throttleAt >= 0 }

// SetThrottle sets the throttle_time_ms sent (kmsg.SetThrottleResponse);
// a version without it ignores it, as its encoding does.
func (r *EncodedResponse) SetThrottle(ms int32) {
	if r.enc.throttleAt >= 0 {
		r.throttle = ms
	}
}

// IsFlexible reports whether the encoded version is flexible.
func (r *EncodedResponse) IsFlexible() bool { return r.enc.flexible }

// AppendTo appends the body with this request's throttle.
func (r *EncodedResponse) AppendTo(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, r.enc.body...)
	if r.throttle != r.enc.throttle {
		binary.BigEndian.PutUint32(dst[start+r.enc.throttleAt:], uint32(r.throttle))
	}
	return dst
}

// bodyPieces returns the body as at most three slices, the throttle
// bytes taken from tb, without copying the shared body.
func (r *EncodedResponse) bodyPieces(tb *[4]byte, dst [][]byte) [][]byte {
	e := r.enc
	if r.throttle == e.throttle {
		return append(dst, e.body)
	}
	binary.BigEndian.PutUint32(tb[:], uint32(r.throttle))
	return append(dst, e.body[:e.throttleAt], tb[:], e.body[e.throttleAt+4:])
}

// writeEncoded writes head and r's body in one vectored write.
func writeEncoded(conn net.Conn, head []byte, r *EncodedResponse, w *splicedWriter) error {
	var tb [4]byte
	bufs := r.bodyPieces(&tb, append(w.back[:0], head))
	defer func() {
		clear(bufs[:cap(bufs)])
		w.back = bufs[:0]
		w.nb = nil
	}()
	w.nb = net.Buffers(bufs)
	_, err := w.nb.WriteTo(conn)
	return err
}
