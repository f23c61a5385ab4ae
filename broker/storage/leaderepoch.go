package storage

// LeaderEpochCache: leader epoch -> start offset history of a partition,
// persisted in leader-epoch-checkpoint (Kafka's LeaderEpochFileCache).
//
// When does the file change? A truncation (TruncateFromEnd,
// TruncateFromStart, Clear) writes it before it returns, as Kafka 2.8 does.
// A new epoch (Assign) is written later by the owning log's flusher, and
// always before the log's recovery point passes the new entry's start
// offset (Log.flush and flushRolled call Sync first). Kafka fsyncs the file
// on every new epoch, which made a LeaderAndIsr that bumps the epoch of
// thousands of partitions wait for thousands of fsyncs. The deferral is
// safe because an entry the file lacks after a crash is one of two kinds:
// it starts at or above the recovery point, so the log's recovery scans
// its batches again and assigns it from their partition leader epochs
// (the loader first drops the loaded entries from the recovery start, so
// a stale file cannot shadow them); or the epoch has no batch at all, and
// then it answers OffsetsForLeaderEpoch as the entry before it does (an
// epoch without batches ends where it starts), and the broker gets a newer
// epoch from the controller when it leads again.

import (
	"fmt"
	"os"
	"strconv"
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
	// kick, when set, asks the owning log's flusher to Sync soon; Assign
	// then leaves the file to it. Without it Assign writes the file itself.
	kick func()

	// writeMu serialises file writes, so an older snapshot never lands
	// after a newer one, and guards stopped. Taken before mu.
	writeMu sync.Mutex
	stopped bool // the log closed or detached: Sync writes nothing

	// mu guards the following.
	mu      sync.RWMutex
	entries []EpochEntry // strictly increasing in both columns
	version uint64       // counts changes of entries that the file must get
	written uint64       // the version the file holds
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
	if n := len(c.entries); n > 0 {
		last := c.entries[n-1]
		if last.Epoch == epoch && last.StartOffset <= startOffset {
			c.mu.Unlock()
			return nil
		}
	}
	n := len(c.entries)
	for n > 0 && (c.entries[n-1].Epoch >= epoch || c.entries[n-1].StartOffset >= startOffset) {
		n--
	}
	c.entries = append(c.entries[:n], EpochEntry{epoch, startOffset})
	c.version++
	c.mu.Unlock()
	if c.kick != nil {
		c.kick()
		return nil
	}
	return c.Sync()
}

// Sync writes the file if the cache changed since it was last written
// (tmp file, fsync, rename, directory fsync: a crash leaves the old or the
// new file, never a torn one).
func (c *LeaderEpochCache) Sync() error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.stopped {
		return nil
	}
	c.mu.RLock()
	v := c.version
	if v == c.written {
		c.mu.RUnlock()
		return nil
	}
	lines := make([]string, len(c.entries))
	for i, e := range c.entries {
		lines[i] = strconv.FormatInt(int64(e.Epoch), 10) + " " + strconv.FormatInt(e.StartOffset, 10)
	}
	c.mu.RUnlock()
	if err := writeCheckpointFile(c.path, lines); err != nil {
		return err
	}
	c.mu.Lock()
	c.written = v
	c.mu.Unlock()
	return nil
}

// stopWriting waits for a write in progress and makes later Syncs do
// nothing: the log closed, or its directory is about to be renamed or
// deleted.
func (c *LeaderEpochCache) stopWriting() {
	c.writeMu.Lock()
	c.stopped = true
	c.writeMu.Unlock()
}

// Unwritten reports whether the cache holds changes the file lacks.
func (c *LeaderEpochCache) Unwritten() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.version != c.written
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
	changed := c.truncateFromEndLocked(offset)
	if changed {
		c.version++
	}
	c.mu.Unlock()
	if !changed {
		return nil
	}
	return c.Sync()
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
	changed := c.truncateFromStartLocked(offset)
	if changed {
		c.version++
	}
	c.mu.Unlock()
	if !changed {
		return nil
	}
	return c.Sync()
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
	c.entries = nil
	c.version++
	c.mu.Unlock()
	return c.Sync()
}

// dropFromAtLoad drops, in memory, the loaded entries that start at or
// after offset, where the loader's recovery of unflushed segments begins:
// the recovery assigns them again from the batches it scans. A file
// written before the latest changes (see the top of this file) may
// hold entries there that the batches contradict, and recovery adds an
// epoch only above the latest one, so a stale entry left in place would
// hide the true ones.
func (c *LeaderEpochCache) dropFromAtLoad(offset int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.truncateFromEndLocked(offset)
}
