package storage

// The open files of index writers. An index holds no file descriptor of
// its own: the mapping outlives the descriptor it was made from, so a
// segment costs one descriptor (its .log) and 10,000 replicas fit in the
// default limits. Entries are still written with pwrite (see
// writeEntryLocked), through a descriptor taken from this small
// process-wide cache, least recently used out first; an index whose
// descriptor was evicted opens its file again on its next write.

import (
	"container/list"
	"fmt"
	"os"
	"sync"
)

// maxIndexWriteFiles bounds the descriptors the cache holds: enough for
// every partition being written at once on a busy broker, small beside
// the 20,000 a broker may have open.
const maxIndexWriteFiles = 1024

type indexFile struct {
	owner   *mmapIndex
	f       *os.File
	refs    int  // writers using f now
	evicted bool // out of the cache: closed when refs drops to 0
	elem    *list.Element
}

type indexFileCache struct {
	mu    sync.Mutex
	max   int
	lru   *list.List // of *indexFile, most recent first
	files map[*mmapIndex]*indexFile
}

var indexFiles = &indexFileCache{max: maxIndexWriteFiles, lru: list.New(), files: map[*mmapIndex]*indexFile{}}

// acquire returns an open descriptor of x's file; release it after use.
// The caller holds x.mu, so x.path does not change meanwhile.
func (c *indexFileCache) acquire(x *mmapIndex) (*indexFile, error) {
	c.mu.Lock()
	if e, ok := c.files[x]; ok {
		e.refs++
		c.lru.MoveToFront(e.elem)
		c.mu.Unlock()
		return e, nil
	}
	c.mu.Unlock()
	f, err := os.OpenFile(x.path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("storage: open index %s: %w", x.path, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.files[x]; ok { // opened meanwhile (x.mu is held, so not by x)
		f.Close()
		e.refs++
		c.lru.MoveToFront(e.elem)
		return e, nil
	}
	e := &indexFile{owner: x, f: f, refs: 1}
	e.elem = c.lru.PushFront(e)
	c.files[x] = e
	for c.lru.Len() > c.max {
		c.evictLocked(c.lru.Back().Value.(*indexFile))
	}
	return e, nil
}

func (c *indexFileCache) release(e *indexFile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.refs--
	if e.evicted && e.refs == 0 {
		e.f.Close()
	}
}

// forget closes x's cached descriptor (x is closing, or its file is being
// replaced).
func (c *indexFileCache) forget(x *mmapIndex) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.files[x]; ok {
		c.evictLocked(e)
	}
}

func (c *indexFileCache) evictLocked(e *indexFile) {
	c.lru.Remove(e.elem)
	delete(c.files, e.owner)
	e.evicted = true
	if e.refs == 0 {
		e.f.Close()
	}
}

// open returns the number of descriptors the cache holds (tests).
func (c *indexFileCache) open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.files)
}
