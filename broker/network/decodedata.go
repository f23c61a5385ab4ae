package network

import (
	"encoding/binary"
	"errors"
	"math"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The Produce and Fetch bodies a connection decodes into its kept structs
// (reuse.go) are decoded here rather than by kmsg's UnsafeReadFrom, which
// makes a new partition slice for every topic of every request. These
// decoders fill the same kmsg structs with exactly what UnsafeReadFrom
// fills for the same version and bytes (strings and records alias the
// body; unknown tagged fields are kept in UnknownTags) and fail on exactly
// the inputs it fails on, with its checks of array counts against the
// bytes left, but they take the topic and partition slices from pools the
// connection keeps: in steady state decoding allocates nothing.
// FuzzDecodeProduce and FuzzDecodeFetch hold them to kmsg.
//
// They know the versions kmsg v1.15.1 knows (Produce 0-13, Fetch 0-18;
// TestDecodersKnowKmsgVersions fails when kmsg adds one); a higher
// version goes to kmsg.

const (
	produceDecodedMax = 13
	fetchDecodedMax   = 18
)

// errBodyShort is the decoders' only error, returned where kmsg returns
// its "not enough data" error: the body ended early, or an array count
// exceeds what the bytes left could hold.
var errBodyShort = errors.New("not enough data")

// bodyReader reads a request body as kmsg's reader does: once a read
// runs past the end it stays failed, and every read then returns zero.
type bodyReader struct {
	b   []byte
	bad bool
}

func (r *bodyReader) fail() {
	r.bad = true
	r.b = nil
}

func (r *bodyReader) int8() int8 {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	v := int8(r.b[0])
	r.b = r.b[1:]
	return v
}

func (r *bodyReader) int16() int16 {
	if len(r.b) < 2 {
		r.fail()
		return 0
	}
	v := int16(binary.BigEndian.Uint16(r.b))
	r.b = r.b[2:]
	return v
}

func (r *bodyReader) int32() int32 {
	if len(r.b) < 4 {
		r.fail()
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.b))
	r.b = r.b[4:]
	return v
}

func (r *bodyReader) int64() int64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := int64(binary.BigEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

func (r *bodyReader) uuid() (u [16]byte) {
	copy(u[:], r.span(16))
	return u
}

// uvarint reads an unsigned varint of at most 32 bits: at most five
// bytes, the fifth below 0x10.
func (r *bodyReader) uvarint() uint32 {
	var v uint32
	for i := 0; i < len(r.b) && i < 5; i++ {
		c := r.b[i]
		if i == 4 {
			if c > 0x0f {
				break
			}
		} else if c >= 0x80 {
			v |= uint32(c&0x7f) << (7 * i)
			continue
		}
		r.b = r.b[i+1:]
		return v | uint32(c)<<(7*i)
	}
	r.fail()
	return 0
}

// span returns the next n bytes (capacity n, aliasing the body).
func (r *bodyReader) span(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.fail()
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

// alias returns b's bytes as a string without copying them.
func alias(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// length reads a string or bytes length: a uvarint of length+1 when
// flexible (0 is null), else an int16 for strings or int32 for bytes.
func (r *bodyReader) length(flexible, bytes bool) int {
	switch {
	case flexible:
		return int(r.uvarint()) - 1
	case bytes:
		return int(r.int32())
	default:
		return int(r.int16())
	}
}

// string reads a non-nullable string; a null one is an error.
func (r *bodyReader) string(flexible bool) string {
	return alias(r.span(r.length(flexible, false)))
}

// nullableString reads a nullable string into *into and returns into,
// or nil for null, so that a non-null string costs no allocation.
func (r *bodyReader) nullableString(flexible bool, into *string) *string {
	n := r.length(flexible, false)
	if n < 0 {
		return nil
	}
	*into = alias(r.span(n))
	return into
}

// nullableBytes reads nullable bytes (any negative length is null).
func (r *bodyReader) nullableBytes(flexible bool) []byte {
	n := r.length(flexible, true)
	if n < 0 {
		return nil
	}
	return r.span(n)
}

// arrayLen reads an array count (a uvarint of count+1 when flexible, else
// an int32). A negative count is an empty array, as kmsg has it; a count
// above the bytes left fails.
func (r *bodyReader) arrayLen(flexible bool) int32 {
	var n int32
	if flexible {
		n = int32(r.uvarint()) - 1 // wraps as kmsg's does
	} else {
		n = r.int32()
	}
	if r.bad {
		return 0
	}
	if int(n) > len(r.b) {
		r.fail()
		return 0
	}
	return n
}

// fits is kmsg's check of an array count against the bytes left: each
// element takes at least min bytes. It fails the reader when not.
func (r *bodyReader) fits(n int32, min int) bool {
	if r.bad || int64(n)*int64(min) > int64(len(r.b)) {
		r.fail()
		return false
	}
	return true
}

// tags reads a tagged-field section none of whose fields we know into
// *dst, replacing what it held.
func (r *bodyReader) tags(dst *kmsg.Tags) {
	*dst = kmsg.Tags{}
	for n := r.uvarint(); n > 0 && !r.bad; n-- {
		key := r.uvarint()
		r.unknownTag(dst, key)
	}
}

// unknownTag reads the size and value of a tagged field whose key was
// read and keeps it in dst.
func (r *bodyReader) unknownTag(dst *kmsg.Tags, key uint32) {
	v := r.span(int(r.uvarint()))
	if !r.bad {
		dst.Set(key, v)
	}
}

// tagValue reads the size of a known tagged field whose key was read and
// returns a reader over its value; bytes its decoder leaves are ignored,
// as kmsg ignores them.
func (r *bodyReader) tagValue() bodyReader {
	return bodyReader{b: r.span(int(r.uvarint()))}
}

// pool is a slice a connection keeps for the elements of one kind of
// array in a request body; take hands out its pieces.
type pool[T any] struct{ s []T }

// reset makes the whole pool available for a new request, zeroing what
// the last one used so nothing of it stays reachable.
func (p *pool[T]) reset() {
	clear(p.s)
	p.s = p.s[:0]
}

// take returns n > 0 elements (their capacity n, so an append to one
// topic's slice cannot reach the next one's), not zeroed. When the pool
// lacks room it is replaced by one twice as large (at least n, at most
// keptFetchPartitionsMax elements); what was handed out of the old one
// stays valid. More than keptFetchPartitionsMax elements are made for
// this request only. n is bounded by the body's length (fits).
func take[T any](p *pool[T], n int) []T {
	if n > cap(p.s)-len(p.s) {
		if n > keptFetchPartitionsMax {
			return make([]T, n)
		}
		c := max(2*cap(p.s), n, 8)
		p.s = make([]T, 0, min(c, keptFetchPartitionsMax))
	}
	i := len(p.s)
	p.s = p.s[:i+n]
	return p.s[i : i+n : i+n]
}

// produceDecoder is what a connection keeps for decoding Produce bodies.
type produceDecoder struct {
	topics pool[kmsg.ProduceRequestTopic]
	parts  pool[kmsg.ProduceRequestTopicPartition]
	txnID  string // what TransactionID points to
}

// decode decodes a Produce body of version ver into p, as
// p.UnsafeReadFrom would into a fresh struct.
func (d *produceDecoder) decode(p *kmsg.ProduceRequest, ver int16, body []byte) error {
	d.topics.reset()
	d.parts.reset()
	d.txnID = ""
	if ver > produceDecodedMax {
		*p = kmsg.ProduceRequest{Version: ver}
		return p.UnsafeReadFrom(body)
	}
	*p = kmsg.ProduceRequest{Version: ver, TimeoutMillis: 15000} // kmsg's Default
	flexible := ver >= 9
	r := bodyReader{b: body}
	if ver >= 3 {
		p.TransactionID = r.nullableString(flexible, &d.txnID)
	}
	p.Acks = r.int16()
	p.TimeoutMillis = r.int32()
	n := r.arrayLen(flexible)
	if !r.fits(n, 2) || ver >= 13 && !r.fits(n, 18) {
		return errBodyShort
	}
	if n > 0 {
		p.Topics = take(&d.topics, int(n))
	}
	for i := range p.Topics {
		t := &p.Topics[i]
		*t = kmsg.ProduceRequestTopic{}
		if ver >= 0 && ver <= 12 {
			t.Topic = r.string(flexible)
		}
		if ver >= 13 {
			t.TopicID = r.uuid()
		}
		n := r.arrayLen(flexible)
		if !r.fits(n, 6) {
			return errBodyShort
		}
		if n > 0 {
			t.Partitions = take(&d.parts, int(n))
		}
		for j := range t.Partitions {
			tp := &t.Partitions[j]
			*tp = kmsg.ProduceRequestTopicPartition{}
			tp.Partition = r.int32()
			tp.Records = r.nullableBytes(flexible)
			if flexible {
				r.tags(&tp.UnknownTags)
			}
		}
		if flexible {
			r.tags(&t.UnknownTags)
		}
	}
	if flexible {
		r.tags(&p.UnknownTags)
	}
	if r.bad {
		return errBodyShort
	}
	return nil
}

// fetchDecoder is what a connection keeps for decoding Fetch bodies.
type fetchDecoder struct {
	topics         pool[kmsg.FetchRequestTopic]
	parts          pool[kmsg.FetchRequestTopicPartition]
	forgotten      pool[kmsg.FetchRequestForgottenTopic]
	forgottenParts pool[int32]
	clusterID      string // what ClusterID points to
}

// decode decodes a Fetch body of version ver into f, as f.UnsafeReadFrom
// would into a fresh struct.
func (d *fetchDecoder) decode(f *kmsg.FetchRequest, ver int16, body []byte) error {
	d.topics.reset()
	d.parts.reset()
	d.forgotten.reset()
	d.forgottenParts.reset()
	d.clusterID = ""
	if ver > fetchDecodedMax {
		*f = kmsg.FetchRequest{Version: ver}
		return f.UnsafeReadFrom(body)
	}
	*f = kmsg.FetchRequest{ // kmsg's Default
		Version:      ver,
		ReplicaID:    -1,
		ReplicaState: kmsg.FetchRequestReplicaState{ID: -1, Epoch: -1},
		MaxBytes:     math.MaxInt32,
		SessionEpoch: -1,
	}
	flexible := ver >= 12
	r := bodyReader{b: body}
	if ver >= 0 && ver <= 14 {
		f.ReplicaID = r.int32()
	}
	f.MaxWaitMillis = r.int32()
	f.MinBytes = r.int32()
	if ver >= 3 {
		f.MaxBytes = r.int32()
	}
	if ver >= 4 {
		f.IsolationLevel = r.int8()
	}
	if ver >= 7 {
		f.SessionID = r.int32()
		f.SessionEpoch = r.int32()
	}
	n := r.arrayLen(flexible)
	if !r.fits(n, 2) || ver >= 13 && !r.fits(n, 18) {
		return errBodyShort
	}
	if n > 0 {
		f.Topics = take(&d.topics, int(n))
	}
	for i := range f.Topics {
		t := &f.Topics[i]
		*t = kmsg.FetchRequestTopic{}
		if ver >= 0 && ver <= 12 {
			t.Topic = r.string(flexible)
		}
		if ver >= 13 {
			t.TopicID = r.uuid()
		}
		n := r.arrayLen(flexible)
		if !r.fits(n, 16) || ver >= 12 && !r.fits(n, 32) {
			return errBodyShort
		}
		if n > 0 {
			t.Partitions = take(&d.parts, int(n))
		}
		for j := range t.Partitions {
			tp := &t.Partitions[j]
			if !d.fetchPartition(&r, tp, ver) {
				return errBodyShort
			}
		}
		if flexible {
			r.tags(&t.UnknownTags)
		}
	}
	if ver >= 7 {
		n := r.arrayLen(flexible)
		if !r.fits(n, 2) || ver >= 13 && !r.fits(n, 18) {
			return errBodyShort
		}
		if n > 0 {
			f.ForgottenTopics = take(&d.forgotten, int(n))
		}
		for i := range f.ForgottenTopics {
			t := &f.ForgottenTopics[i]
			*t = kmsg.FetchRequestForgottenTopic{}
			if ver <= 12 {
				t.Topic = r.string(flexible)
			}
			if ver >= 13 {
				t.TopicID = r.uuid()
			}
			n := r.arrayLen(flexible)
			if !r.fits(n, 4) {
				return errBodyShort
			}
			if n > 0 {
				t.Partitions = take(&d.forgottenParts, int(n))
			}
			for j := range t.Partitions {
				t.Partitions[j] = r.int32()
			}
			if flexible {
				r.tags(&t.UnknownTags)
			}
		}
	}
	if ver >= 11 {
		f.Rack = r.string(flexible)
	}
	if flexible {
		// Tag 0 is ClusterID, tag 1 ReplicaState; a repeated tag
		// replaces the earlier one.
		for n := r.uvarint(); n > 0 && !r.bad; n-- {
			switch key := r.uvarint(); key {
			case 0:
				v := r.tagValue()
				f.ClusterID = v.nullableString(true, &d.clusterID)
				if v.bad {
					return errBodyShort
				}
			case 1:
				v := r.tagValue()
				rs := &f.ReplicaState
				rs.ID = v.int32()
				rs.Epoch = v.int64()
				v.tags(&rs.UnknownTags)
				if v.bad {
					return errBodyShort
				}
			default:
				r.unknownTag(&f.UnknownTags, key)
			}
		}
	}
	if r.bad {
		return errBodyShort
	}
	return nil
}

// fetchPartition reads one partition of a Fetch topic into tp, replacing
// all it held; false when the body is short or a tagged field is.
func (d *fetchDecoder) fetchPartition(r *bodyReader, tp *kmsg.FetchRequestTopicPartition, ver int16) bool {
	*tp = kmsg.FetchRequestTopicPartition{ // kmsg's Default
		CurrentLeaderEpoch: -1,
		LastFetchedEpoch:   -1,
		LogStartOffset:     -1,
		HighWatermark:      math.MaxInt64,
	}
	tp.Partition = r.int32()
	if ver >= 9 {
		tp.CurrentLeaderEpoch = r.int32()
	}
	tp.FetchOffset = r.int64()
	if ver >= 12 {
		tp.LastFetchedEpoch = r.int32()
	}
	if ver >= 5 {
		tp.LogStartOffset = r.int64()
	}
	tp.PartitionMaxBytes = r.int32()
	if ver < 12 {
		return !r.bad
	}
	// Tag 0 is ReplicaDirectoryID, tag 1 HighWatermark. Kafka defines
	// them from v15 and v17, kmsg reads them at every flexible version,
	// and so do we; the broker reads neither.
	for n := r.uvarint(); n > 0 && !r.bad; n-- {
		switch key := r.uvarint(); key {
		case 0:
			v := r.tagValue()
			tp.ReplicaDirectoryID = v.uuid()
			if v.bad {
				return false
			}
		case 1:
			v := r.tagValue()
			tp.HighWatermark = v.int64()
			if v.bad {
				return false
			}
		default:
			r.unknownTag(&tp.UnknownTags, key)
		}
	}
	return !r.bad
}
