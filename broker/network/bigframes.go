package network

import (
	"math/bits"
	"sync"
)

// A frame larger than keptBufferMax (a producer's request of several
// batches of up to 1 MiB each) is read into a buffer from a pool shared by
// all connections, not into a new one: a new buffer of megabytes per
// request is zeroed by the runtime and collected again, at the rate the
// data arrives. The buffer goes back to the pool when its connection reads
// its next request, the point at which the connection's kept buffer would
// be overwritten too: a Produce or Fetch is done with its frame by then
// (pipeline.go states what a deferred response may keep). The frame of
// any other request, which its handler may keep, is left to it
// (keepBigFrame). The pool keeps at most bigFramePoolBytes.

// bigFrameClasses are the pool's size classes: powers of two from just
// above keptBufferMax to 2 GiB (a frame's size is an int32).
const (
	bigFrameMinShift = 21 // 2 MiB; keptBufferMax is 1 MiB
	bigFrameClasses  = 31 - bigFrameMinShift + 1
)

// bigFramePoolBytes bounds the bytes the pool keeps while no connection
// uses them; a buffer returned beyond it is dropped.
const bigFramePoolBytes = 64 << 20

// bigFramePool is a free list per size class, shared by every connection
// of the process: a buffer put back is at once there for the next
// connection that needs one (the broker's tests rely on that to catch a
// frame given back too early).
var bigFramePool struct {
	mu    sync.Mutex
	free  [bigFrameClasses][]*[]byte
	bytes int // of the buffers in free
}

// bigFrameClass is the class whose buffers hold n bytes (n > keptBufferMax).
func bigFrameClass(n int) int {
	return max(bits.Len(uint(n-1)), bigFrameMinShift) - bigFrameMinShift
}

// takeBigFrame returns a buffer of at least n bytes (n > keptBufferMax)
// from the pool, or a new one, and remembers it as the current frame's; a
// frame of a class too large for the pool gets a buffer of its own.
func (s *connScratch) takeBigFrame(n int) []byte {
	c := bigFrameClass(n)
	if 1<<(c+bigFrameMinShift) > bigFramePoolBytes {
		// Never pooled: exactly the frame's size, the request's own.
		return make([]byte, n)
	}
	p := &bigFramePool
	p.mu.Lock()
	var b *[]byte
	if k := len(p.free[c]); k > 0 {
		b = p.free[c][k-1]
		p.free[c][k-1] = nil
		p.free[c] = p.free[c][:k-1]
		p.bytes -= cap(*b)
	}
	p.mu.Unlock()
	if b == nil {
		buf := make([]byte, 1<<(c+bigFrameMinShift))
		b = &buf
	}
	s.bigFrame = b
	return *b
}

// releaseBigFrame returns the current frame's pooled buffer, if any, to
// the pool: the request it held is done with it.
func (s *connScratch) releaseBigFrame() {
	if s.bigFrame == nil {
		return
	}
	b := s.bigFrame
	s.bigFrame = nil
	c := bigFrameClass(cap(*b))
	p := &bigFramePool
	p.mu.Lock()
	if p.bytes+cap(*b) <= bigFramePoolBytes {
		p.free[c] = append(p.free[c], b)
		p.bytes += cap(*b)
	}
	p.mu.Unlock()
}

// keepBigFrame leaves the current frame's pooled buffer, if any, to the
// request: it is not returned to the pool.
func (s *connScratch) keepBigFrame() { s.bigFrame = nil }
