package replica

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klassik/klassik/broker/common"
)

// sessionCache is Kafka's FetchSessionCache (KIP-227): incremental fetch
// sessions keyed by a random positive id. A session remembers, per
// partition, what the client asked for last (fetch offset, max bytes,
// current leader epoch) and what the broker answered last (HW, LSO, log
// start), so that an incremental request lists only changed partitions and
// an incremental response only partitions with news.
type sessionCache struct {
	max   int // <= 0 disables sessions: every (0, 0) request is answered without one
	clock func() time.Time

	// mu guards the following.
	mu       sync.Mutex
	sessions map[int32]*fetchSession
}

// fetchSession is one session. Its own mutex is held for the whole fetch
// that uses it (clients have at most one fetch in flight per session), so
// the epoch check, the partition updates and the cached answers change
// together.
type fetchSession struct {
	id int32
	// lastUsed (unix nanoseconds) is read by eviction under the cache's
	// mutex without the session's, hence atomic.
	lastUsed atomic.Int64

	// mu guards the following.
	mu    sync.Mutex
	epoch int32 // next expected session epoch
	parts []*sessionPart
	index map[common.TopicPartition]*sessionPart
	moved []*sessionPart // moveToEndLocked's memory
}

type sessionPart struct {
	req fetchPart
	// Last values sent to the client; -2 = never sent (so the first answer
	// always includes the partition).
	hw, lso, logStart int64
}

func newSessionCache(max int, clock func() time.Time) *sessionCache {
	return &sessionCache{max: max, clock: clock, sessions: make(map[int32]*fetchSession)}
}

// create registers a new session holding parts, evicting the least recently
// used session when the cache is full. It returns nil when sessions are
// disabled.
func (c *sessionCache) create(parts []fetchPart) *fetchSession {
	if c.max <= 0 {
		return nil
	}
	s := &fetchSession{epoch: 1, index: make(map[common.TopicPartition]*sessionPart)}
	s.touch(c.clock())
	for _, p := range parts {
		s.upsertLocked(p)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sessions) >= c.max {
		var oldest *fetchSession
		for _, o := range c.sessions {
			if oldest == nil || o.lastUsed.Load() < oldest.lastUsed.Load() {
				oldest = o
			}
		}
		if oldest != nil {
			delete(c.sessions, oldest.id)
		}
	}
	for {
		id := rand.Int32()
		if id == 0 {
			continue
		}
		if _, taken := c.sessions[id]; !taken {
			s.id = id
			break
		}
	}
	c.sessions[s.id] = s
	return s
}

func (c *sessionCache) get(id int32) (*fetchSession, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sessions[id]
	return s, ok
}

func (c *sessionCache) remove(id int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sessions, id)
}

func (c *sessionCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sessions)
}

func (s *fetchSession) upsertLocked(p fetchPart) {
	if sp, ok := s.index[p.tp]; ok {
		sp.req = p
		return
	}
	sp := &sessionPart{req: p, hw: -2, lso: -2, logStart: -2}
	s.parts = append(s.parts, sp)
	s.index[p.tp] = sp
}

func (s *fetchSession) forgetLocked(tp common.TopicPartition) {
	if _, ok := s.index[tp]; !ok {
		return
	}
	delete(s.index, tp)
	kept := s.parts[:0]
	for _, sp := range s.parts {
		if sp.req.tp != tp {
			kept = append(kept, sp)
		}
	}
	s.parts = kept
}

// appendRequestsLocked appends the session's partitions, in its order,
// to out.
func (s *fetchSession) appendRequestsLocked(out []fetchPart) []fetchPart {
	for _, sp := range s.parts {
		out = append(out, sp.req)
	}
	return out
}

func (s *fetchSession) touch(now time.Time) { s.lastUsed.Store(now.UnixNano()) }

// moveToEndLocked moves the given partitions to the end of the session's
// order, keeping the relative order of both groups. Partitions that just
// returned data go last so that, under max_bytes, the others get their turn
// on the next incremental fetch (Kafka does the same in its session cache).
//
// returned[i] says whether s.parts[i] returned data: the fetch's partition
// list is the session's (appendRequestsLocked), made under the same lock.
func (s *fetchSession) moveToEndLocked(returned []bool) {
	back := s.moved[:0]
	front := 0
	for i, sp := range s.parts {
		if returned[i] {
			back = append(back, sp)
		} else {
			s.parts[front] = sp
			front++
		}
	}
	copy(s.parts[front:], back)
	clear(back)
	s.moved = back[:0]
}

// recordLocked remembers a read's HW, LSO and log start for tp and reports
// whether the response must carry the partition: always in a full fetch;
// in an incremental one only with an error, data, a diverging epoch or
// changed offsets (the log start counts from v5).
func (s *fetchSession) recordLocked(tp common.TopicPartition, r *partRead, incremental bool, version int16) bool {
	sp := s.index[tp]
	if sp == nil {
		return true
	}
	news := !incremental || r.code != 0 || r.size() > 0 || r.hasDivergingEpoch ||
		r.hw != sp.hw || r.lso != sp.lso || (version >= 5 && r.logStart != sp.logStart)
	sp.hw, sp.lso, sp.logStart = r.hw, r.lso, r.logStart
	return news
}
