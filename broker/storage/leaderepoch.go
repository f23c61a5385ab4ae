package storage

// LeaderEpochCache: leader epoch -> start offset history of a partition,
// persisted in leader-epoch-checkpoint (Kafka's LeaderEpochFileCache).

import (
	"fmt"
	"os"
	"sync"
)

const leaderEpochCheckpointFile = "leader-epoch-checkpoint"

// EpochEntry is one line of leader-epoch-checkpoint.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// LeaderEpochCache is safe for concurrent use.
type LeaderEpochCache struct {
	path string
	leo  func() int64 // log end offset, for EndOffsetFor of the latest epoch

	// mu guards the following.
	mu      sync.RWMutex
	entries []EpochEntry // strictly increasing in both columns
}

// loadLeaderEpochCache reads path (a missing file is an empty cache).
func loadLeaderEpochCache(path string, leo func() int64) (*LeaderEpochCache, error) {
	c := &LeaderEpochCache{path: path, leo: leo}
	lines, err := readCheckpointFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for i, ln := range lines {
		var e EpochEntry
		if len(ln) != 2 {
			return nil, fmt.Errorf("storage: %s line %d: want 2 fields, got %d", path, i+3, len(ln))
		}
		ep, err1 := parseInt(ln[0], 32)
		off, err2 := parseInt(ln[1], 64)
		if err1 != nil || err2 != nil || ep < 0 || off < 0 {
			return nil, fmt.Errorf("storage: %s line %d: malformed entry %q", path, i+3, ln)
		}
		e.Epoch, e.StartOffset = int32(ep), off
		if n := len(c.entries); n > 0 && (c.entries[n-1].Epoch >= e.Epoch || c.entries[n-1].StartOffset > e.StartOffset) {
			return nil, fmt.Errorf("storage: %s line %d: entries not increasing", path, i+3)
		}
		c.entries = append(c.entries, e)
	}
	return c, nil
}

// Entries returns a copy of the cache.
func (c *LeaderEpochCache) Entries() []EpochEntry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]EpochEntry(nil), c.entries...)
}

// Assign records that epoch starts at startOffset. A new entry is stored
// only if epoch differs from the latest or starts earlier; trailing
// entries with an epoch or start offset at or above the new one are
// dropped first, so both columns stay strictly increasing.
func (c *LeaderEpochCache) Assign(epoch int32, startOffset int64) error {
	if epoch < 0 || startOffset < 0 {
		return fmt.Errorf("storage: invalid leader epoch assignment %d at %d", epoch, startOffset)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.entries); n > 0 {
		last := c.entries[n-1]
		if last.Epoch == epoch && last.StartOffset <= startOffset {
			return nil
		}
	}
	n := len(c.entries)
	for n > 0 && (c.entries[n-1].Epoch >= epoch || c.entries[n-1].StartOffset >= startOffset) {
		n--
	}
	c.entries = append(c.entries[:n], EpochEntry{epoch, startOffset})
	return c.flushLocked()
}

// LatestEpoch returns the latest epoch or -1.
func (c *LeaderEpochCache) LatestEpoch() int32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.entries) == 0 {
		return -1
	}
	return c.entries[len(c.entries)-1].Epoch
}

// EpochForOffset returns the epoch covering offset, or -1.
func (c *LeaderEpochCache) EpochForOffset(offset int64) int32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ep := int32(-1)
	for _, e := range c.entries {
		if e.StartOffset > offset {
			break
		}
		ep = e.Epoch
	}
	return ep
}

// EndOffsetFor answers OffsetForLeaderEpoch: the largest epoch <= the
// requested one and the end offset of that epoch (the start offset of the
// next larger epoch, or the log end offset for the latest). (-1, -1) when
// the requested epoch is unknown or newer than every stored epoch.
func (c *LeaderEpochCache) EndOffsetFor(requested int32) (epoch int32, endOffset int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if requested < 0 || len(c.entries) == 0 {
		return -1, -1
	}
	if c.entries[len(c.entries)-1].Epoch == requested {
		return requested, c.leo()
	}
	higher := -1
	for i, e := range c.entries {
		if e.Epoch > requested {
			higher = i
			break
		}
	}
	if higher < 0 {
		return -1, -1
	}
	if higher == 0 {
		return requested, c.entries[0].StartOffset
	}
	return c.entries[higher-1].Epoch, c.entries[higher].StartOffset
}

// TruncateFromEnd drops entries starting at or after offset.
func (c *LeaderEpochCache) TruncateFromEnd(offset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.truncateFromEndLocked(offset) {
		return nil
	}
	return c.flushLocked()
}

func (c *LeaderEpochCache) truncateFromEndLocked(offset int64) (changed bool) {
	n := len(c.entries)
	for n > 0 && c.entries[n-1].StartOffset >= offset {
		n--
	}
	if n == len(c.entries) {
		return false
	}
	c.entries = c.entries[:n]
	return true
}

// TruncateFromStart drops entries starting at or before offset and
// re-inserts the last dropped epoch at offset.
func (c *LeaderEpochCache) TruncateFromStart(offset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.truncateFromStartLocked(offset) {
		return nil
	}
	return c.flushLocked()
}

func (c *LeaderEpochCache) truncateFromStartLocked(offset int64) (changed bool) {
	i := 0
	for i < len(c.entries) && c.entries[i].StartOffset <= offset {
		i++
	}
	if i == 0 {
		return false
	}
	last := c.entries[i-1]
	if last.StartOffset == offset && i == 1 {
		return false
	}
	rest := append([]EpochEntry{{last.Epoch, offset}}, c.entries[i:]...)
	c.entries = rest
	return true
}

// truncateAtLoad fits the entries read from the checkpoint to the log
// just loaded, [logStart, logEnd), as TruncateFromEnd(logEnd) then
// TruncateFromStart(logStart), without rewriting the file. The file may
// keep entries past the log end or before its start; that is safe
// because every load applies this same truncation before anything reads
// the entries, and the next change of the cache (an epoch assigned by an
// append or a new leadership, a truncation) writes the whole cache. An
// empty log's entry (epoch, 0) is past its end at every start, so
// rewriting here cost one checkpoint write (file and directory fsyncs)
// per empty log per start.
func (c *LeaderEpochCache) truncateAtLoad(logStart, logEnd int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.truncateFromEndLocked(logEnd)
	c.truncateFromStartLocked(logStart)
}

// Clear removes every entry.
func (c *LeaderEpochCache) Clear() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
	return c.flushLocked()
}

func (c *LeaderEpochCache) flushLocked() error {
	lines := make([]string, len(c.entries))
	for i, e := range c.entries {
		lines[i] = fmt.Sprintf("%d %d", e.Epoch, e.StartOffset)
	}
	return writeCheckpointFile(c.path, lines)
}
