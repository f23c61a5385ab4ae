package api

// Encoded Metadata answers. A Metadata answer of a large cluster (10,000
// partitions: ~500 KB) costs milliseconds of CPU and as much garbage to
// build and encode, and clients ask the same question over and over
// between two metadata changes. metadataAnswers keeps the encoded bytes
// of the answers of the metadata cache's current generation and sends
// them again (network.EncodedResponse) without building kmsg structs.
//
// When an answer is reused (handleMetadata): only without an authorizer.
// With one, the answer depends on the principal (topics hidden or
// refused, topic_authorized_operations) and on ACLs that change without a
// new metadata generation, so those requests take the building path every
// time. Without an authorizer the answer is that of the metadata cache
// alone whenever the cache holds every topic the request names
// (metadata.Pinned.Determines): then no auto-creation can happen and no
// "being created" mark is read. A request naming a topic the cache lacks
// is built, as before.
//
// What an answer depends on, all in the key or the generation: the
// snapshot of the cache (Pinned.Generation: every UpdateMetadata makes a
// new one) and the cluster id; the request's version, the listener it
// arrived on, its topic list exactly as sent (null, empty, names and ids
// in order: order and duplicates shape the answer),
// allow_auto_topic_creation, include_cluster_authorized_operations and
// include_topic_authorized_operations. throttle_time_ms is not: each
// request gets its own EncodedResponse whose throttle the request quota
// sets (the bytes in the cache are never written).
//
// Memory: only the newest generation's answers are kept (a newer
// generation drops them all), at most metadataAnswersMaxEntries of them
// and metadataAnswersMaxBytes of bodies and keys, least recently used
// dropped first. Requests asking the same missing answer at once wait for
// the first one to build it.

import (
	"context"
	"encoding/binary"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/metadata"
	"github.com/klassik/klassik/broker/network"
)

const (
	metadataAnswersMaxEntries = 64
	metadataAnswersMaxBytes   = 16 << 20
	// An answer (body and key) larger than this is built every time.
	metadataAnswerMaxBytes = metadataAnswersMaxBytes / 4
)

// pinnableMetadata is the part of *metadata.Cache the answer cache needs;
// a MetadataView without it builds every answer.
type pinnableMetadata interface {
	Pin() metadata.Pinned
}

type metadataAnswers struct {
	// mu guards the following.
	mu      sync.Mutex
	gen     uint64
	cluster string
	entries map[string]*metadataAnswer
	bytes   int
	tick    uint64
}

type metadataAnswer struct {
	key   string
	ready chan struct{} // closed once enc is set (nil: building failed)
	enc   *network.Encoded
	used  uint64 // mu's tick at the last use
	size  int
}

// cachedMetadata answers req from an encoded answer of the current
// generation, building and keeping it if needed. ok is false when the
// request must be built by the caller (see the file comment).
func (a *Apis) cachedMetadata(ctx context.Context, req *kmsg.MetadataRequest, listener string) (resp kmsg.Response, ok bool) {
	pm, ok := a.meta.(pinnableMetadata)
	if !ok {
		return nil, false
	}
	p := pm.Pin()
	if !p.Determines(req) {
		return nil, false
	}
	key := metadataAnswerKey(req, listener)
	if len(key) > metadataAnswerMaxBytes {
		return nil, false
	}
	e, build := a.metaAnswers.lookup(p, key)
	if e == nil {
		return nil, false // an older generation than the cache's
	}
	if build {
		enc := a.buildMetadataAnswer(e, p, req, listener)
		if enc == nil {
			return nil, false
		}
		return enc.Response(), true
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil, false
	}
	if e.enc == nil {
		return nil, false
	}
	return e.enc.Response(), true
}

// buildMetadataAnswer encodes the pinned state's answer and publishes it
// as e's (also when building panics, so no request waits forever); nil if
// it cannot be encoded for reuse (logged: the caller builds it again).
func (a *Apis) buildMetadataAnswer(e *metadataAnswer, p metadata.Pinned, req *kmsg.MetadataRequest, listener string) (enc *network.Encoded) {
	defer func() { a.metaAnswers.finish(e, enc) }()
	resp := p.MetadataResponse(req, listener)
	throttleAt := -1
	if req.Version >= 3 {
		throttleAt = 0 // v3+: throttle_time_ms is the first field
	}
	enc, err := network.Encode(resp, throttleAt)
	if err != nil {
		enc = nil
		a.logger.Error("cannot keep Metadata answer", "version", req.Version, "err", err)
		return nil
	}
	return enc
}

// lookup returns key's entry of p's generation, and build true when the
// caller must build it (then it must call finish). A nil entry: p is
// older than the kept generation.
func (m *metadataAnswers) lookup(p metadata.Pinned, key string) (e *metadataAnswer, build bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch gen := p.Generation(); {
	case m.entries == nil || gen > m.gen || gen == m.gen && p.ClusterID() != m.cluster:
		m.gen, m.cluster = gen, p.ClusterID()
		m.entries = map[string]*metadataAnswer{}
		m.bytes = 0
	case gen < m.gen:
		return nil, false
	}
	m.tick++
	if e := m.entries[key]; e != nil {
		e.used = m.tick
		return e, false
	}
	e = &metadataAnswer{key: key, ready: make(chan struct{}), used: m.tick}
	m.entries[key] = e
	return e, true
}

// finish publishes e's answer (nil: none; the entry is dropped) and keeps
// the cache within its bounds.
func (m *metadataAnswers) finish(e *metadataAnswer, enc *network.Encoded) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e.enc = enc
	close(e.ready)
	if m.entries[e.key] != e {
		return // dropped by a newer generation meanwhile
	}
	if enc == nil || len(e.key)+enc.Len() > metadataAnswerMaxBytes {
		delete(m.entries, e.key)
		return
	}
	e.size = len(e.key) + enc.Len()
	m.bytes += e.size
	for len(m.entries) > metadataAnswersMaxEntries || m.bytes > metadataAnswersMaxBytes {
		var old *metadataAnswer
		for _, x := range m.entries {
			if x != e && x.enc != nil && (old == nil || x.used < old.used) {
				old = x
			}
		}
		if old == nil {
			break // only answers still being built besides e
		}
		delete(m.entries, old.key)
		m.bytes -= old.size
	}
}

// metadataAnswerKey encodes everything of req and the listener that shapes
// the answer of a given metadata generation.
func metadataAnswerKey(req *kmsg.MetadataRequest, listener string) string {
	b := make([]byte, 0, 16+len(listener)+len(req.Topics)*24)
	b = binary.BigEndian.AppendUint16(b, uint16(req.Version))
	var flags byte
	if req.Topics == nil {
		flags |= 1
	}
	if req.AllowAutoTopicCreation {
		flags |= 2
	}
	if req.IncludeClusterAuthorizedOperations {
		flags |= 4
	}
	if req.IncludeTopicAuthorizedOperations {
		flags |= 8
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(len(listener)))
	b = append(b, listener...)
	for _, t := range req.Topics {
		b = append(b, t.TopicID[:]...)
		if t.Topic == nil {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(len(*t.Topic)))
		b = append(b, *t.Topic...)
	}
	return string(b)
}
