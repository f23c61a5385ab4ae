package network

import (
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Produce and Fetch, the requests that carry the data, are decoded into
// structs the connection keeps from one request to the next, out of a
// frame buffer it keeps too, and their responses are encoded into a kept
// buffer: in steady state the request path allocates nothing per batch
// produced or partition fetched. This is safe because a connection handles
// one request at a time and drops everything about it once the response
// is written, or once its handler returned a deferred response
// (pipeline.go; the Handler contract on Request says so). Every other API
// gets fresh structs and a frame of its own, as handlers of the control
// plane may keep what they are given.

// keptBufferMax bounds the frame and response buffers a connection keeps
// between requests; a larger request or response gets a buffer of its own
// that is dropped afterwards.
const keptBufferMax = 1 << 20

// reusesFrame reports whether requests of key are decoded into the
// connection's kept structs (and may use its kept frame buffer).
func reusesFrame(key int16) bool {
	return key == int16(kmsg.Produce) || key == int16(kmsg.Fetch)
}

// connScratch is what one connection reuses across requests; owned by its
// serve goroutine.
type connScratch struct {
	size  [4]byte
	frame []byte // the kept frame buffer
	// bigFrame is the pooled buffer of the current request's frame when
	// it is larger than keptBufferMax (nil otherwise); see bigframes.go.
	bigFrame *[]byte
	wbuf     []byte // the kept response buffer

	req     Request
	produce kmsg.ProduceRequest
	fetch   kmsg.FetchRequest
	// The pools the two are decoded into (decodedata.go).
	produceDec produceDecoder
	fetchDec   fetchDecoder
	// produceResp is the ProduceResponse handed to the next Produce (nil:
	// take a spare or make one); a response queued behind a deferred one
	// takes it along, and it returns to spares once written (pipeline.go).
	produceResp *kmsg.ProduceResponse
	spares      [maxPendingResponses + 1]*kmsg.ProduceResponse
	nSpares     int
	deferred    DeferredResponse // what Request.Defer returns
	fetchKept   FetchScratch     // what Request.KeptFetch returns

	// The last client id, transactional id and rack seen, handed out
	// again while the peer repeats them.
	clientID, txnID, clusterID *string
	rack                       string

	head [16]byte // a response's size and header
	spl  splicer
	sw   splicedWriter
}

// keptProduce returns the ProduceResponse for the Produce being handled.
func (s *connScratch) keptProduce() *kmsg.ProduceResponse {
	if s.produceResp == nil {
		if s.nSpares > 0 {
			s.nSpares--
			s.produceResp, s.spares[s.nSpares] = s.spares[s.nSpares], nil
		} else {
			s.produceResp = new(kmsg.ProduceResponse)
		}
	}
	return s.produceResp
}

// spareProduce takes back a ProduceResponse that was written. There is
// always room: keptProduce makes one only when none is spare and the
// current one is queued, so a connection has at most
// maxPendingResponses+1.
func (s *connScratch) spareProduce(r *kmsg.ProduceResponse) {
	if s.nSpares < len(s.spares) {
		s.spares[s.nSpares] = r
		s.nSpares++
	}
}

// sameString returns *last when it equals v, else a copy of v (stored in
// *last); v may point into a frame.
func sameString(last **string, v string) *string {
	if *last != nil && **last == v {
		return *last
	}
	s := strings.Clone(v)
	*last = &s
	return *last
}

// sameBytes is sameString for bytes of a frame.
func sameBytes(last **string, b []byte) *string {
	if *last != nil && **last == string(b) {
		return *last
	}
	s := string(b)
	*last = &s
	return *last
}

// decodeReused decodes a Produce or Fetch body (whose version is set on
// the kept struct) from rest into that struct, reusing the memory its last
// decoding used (decodedata.go), then replaces every string, which still
// points into the frame, with one that does not: topic names from the
// intern table, the transactional id, cluster id and rack from the last
// request's when unchanged. Byte fields (records) stay in the frame, which
// the connection keeps until the response is written.
func (s *connScratch) decodeReused(key, ver int16, rest []byte) (kmsg.Request, error) {
	if key == int16(kmsg.Produce) {
		p := &s.produce
		if err := s.produceDec.decode(p, ver, rest); err != nil {
			return nil, err
		}
		if p.TransactionID != nil {
			p.TransactionID = sameString(&s.txnID, *p.TransactionID)
		}
		for i := range p.Topics {
			p.Topics[i].Topic = internTopic(p.Topics[i].Topic)
		}
		return p, nil
	}
	f := &s.fetch
	if err := s.fetchDec.decode(f, ver, rest); err != nil {
		return nil, err
	}
	if f.ClusterID != nil {
		f.ClusterID = sameString(&s.clusterID, *f.ClusterID)
	}
	if f.Rack != "" {
		if f.Rack != s.rack {
			s.rack = strings.Clone(f.Rack)
		}
		f.Rack = s.rack
	}
	for i := range f.Topics {
		f.Topics[i].Topic = internTopic(f.Topics[i].Topic)
	}
	for i := range f.ForgottenTopics {
		f.ForgottenTopics[i].Topic = internTopic(f.ForgottenTopics[i].Topic)
	}
	return f, nil
}

// keep returns buf to be kept as a connection buffer, or nil when it is
// too large to keep.
func keep(buf []byte) []byte {
	if cap(buf) > keptBufferMax {
		return nil
	}
	return buf
}

// internMax bounds the topic intern table: names beyond it (a peer
// sending made-up topics) are copied per request instead.
const internMax = 1 << 16

var interned struct {
	mu    sync.RWMutex
	names map[string]string
}

// internTopic returns a string equal to name that does not share name's
// memory (name may point into a frame buffer), the same one for every
// request naming that topic.
func internTopic(name string) string {
	interned.mu.RLock()
	s, ok := interned.names[name]
	interned.mu.RUnlock()
	if ok {
		return s
	}
	s = strings.Clone(name)
	interned.mu.Lock()
	defer interned.mu.Unlock()
	if t, ok := interned.names[s]; ok {
		return t
	}
	if interned.names == nil {
		interned.names = make(map[string]string)
	}
	if len(interned.names) < internMax {
		interned.names[s] = s
	}
	return s
}

// skipHeaderTags skips a request header's tagged fields (a uvarint count,
// then per field a uvarint tag and a uvarint size followed by that many
// bytes); ok is false when b ends early.
func skipHeaderTags(b []byte) (rest []byte, ok bool) {
	uvarint := func() (uint32, bool) {
		var v uint32
		for i := 0; i < 5; i++ {
			if len(b) == 0 {
				return 0, false
			}
			c := b[0]
			b = b[1:]
			v |= uint32(c&0x7f) << (7 * i)
			if c&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	n, ok := uvarint()
	if !ok {
		return nil, false
	}
	for ; n > 0; n-- {
		if _, ok := uvarint(); !ok {
			return nil, false
		}
		size, ok := uvarint()
		if !ok || int(size) > len(b) {
			return nil, false
		}
		b = b[size:]
	}
	return b, true
}
