package storage

// Future logs and log-directory placement (Kafka's LogManager futureLogs,
// preferredLogDirs, replaceCurrentWithFutureLog, and the data behind
// DescribeLogDirs). AlterReplicaLogDirs moves a replica from one entry of
// log.dirs to another: a second, "future" log of the partition is created
// in the target directory as <topic>-<partition>.<uuid>-future, broker/replica's
// ReplicaAlterLogDirs mover copies the current log into it, and once both
// end at the same offset ReplaceCurrentWithFutureLog renames it to
// <topic>-<partition> and schedules the old directory for deletion. A
// -future directory found at start-up is loaded as the future log again,
// so the move resumes after a restart.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/broker/common"
)

// LogDirPartition is one partition log in a log directory
// (DescribeLogDirs).
type LogDirPartition struct {
	common.TopicPartition
	Size int64
	// OffsetLag is, for a current log, how far its log end is below its
	// high watermark (0 in practice); for a future log, how far it is
	// behind the current log's end.
	OffsetLag int64
	IsFuture  bool
}

// LogDirDescription is one entry of log.dirs as DescribeLogDirs reports it.
type LogDirDescription struct {
	Path string
	// Err is nil, or a kerr.KafkaStorageError wrap for an offline
	// directory (then Partitions is empty).
	Err        error
	Partitions []LogDirPartition
}

// logDirOfflineError is nil while d is usable, otherwise the error
// DescribeLogDirs and AlterReplicaLogDirs report (a kerr.KafkaStorageError
// wrap). Called without m.mu.
func (m *LogManager) logDirOfflineError(d *logDir) error {
	m.mu.Lock()
	off := m.isOfflineLocked(d)
	m.mu.Unlock()
	if off {
		return fmt.Errorf("%w: log directory %s is offline", kerr.KafkaStorageError, d.path)
	}
	return nil
}

// findLogDir returns the configured directory with the given absolute
// path; an unknown one is kerr.LogDirNotFound, an offline one
// kerr.KafkaStorageError (Kafka's LogManager.isLogDirOnline).
func (m *LogManager) findLogDir(path string) (*logDir, error) {
	for _, d := range m.dirs {
		if d.path == path {
			if err := m.logDirOfflineError(d); err != nil {
				return nil, err
			}
			return d, nil
		}
	}
	return nil, fmt.Errorf("%w: log dir %s is not found in the config", kerr.LogDirNotFound, path)
}

// CheckLogDir tells whether path is a configured, online log directory
// (kerr.LogDirNotFound / kerr.KafkaStorageError otherwise).
func (m *LogManager) CheckLogDir(path string) error {
	_, err := m.findLogDir(path)
	return err
}

// FutureDirName is the name of tp's future log directory with a fresh
// unique id: <topic>-<partition>.<32 hex digits>-future. A name longer
// than a file name may be is kerr.InvalidTopicException, as Kafka.
func FutureDirName(tp common.TopicPartition) (string, error) {
	name := uniqueDirName(tp, "-future")
	if len(name) > 255 {
		return "", fmt.Errorf("%w: the topic name is too long", kerr.InvalidTopicException)
	}
	return name, nil
}

// uniqueDirName is <topic>-<partition>.<uuid><suffix>.
func uniqueDirName(tp common.TopicPartition, suffix string) string {
	var u [16]byte
	rand.Read(u[:]) // crypto/rand.Read never fails
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return tp.String() + "." + hex.EncodeToString(u[:]) + suffix
}

// MaybeUpdatePreferredLogDir remembers dir as where tp's log is to be
// created, unless its current or future log already lives there (Kafka's
// maybeUpdatePreferredLogDir). The next GetOrCreateLog of a new log, or
// GetOrCreateFutureLog, uses it and forgets it.
func (m *LogManager) MaybeUpdatePreferredLogDir(tp common.TopicPartition, dir string) error {
	d, err := m.findLogDir(dir)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.logDirOf[tp] == d || m.futureDirOf[tp] == d {
		return nil
	}
	m.preferredDirs[tp] = d
	return nil
}

// nextLogDirLocked is where a new log of tp goes: its preferred directory
// if one was set, otherwise the directory holding the fewest logs,
// current and future counted (Kafka's nextLogDirs). Must hold m.mu.
func (m *LogManager) nextLogDirLocked(tp common.TopicPartition) *logDir {
	if d, ok := m.preferredDirs[tp]; ok {
		return d
	}
	online := 0
	var only *logDir
	for _, d := range m.dirs {
		if !m.isOfflineLocked(d) {
			online++
			only = d
		}
	}
	if online <= 1 {
		// Nothing to balance: counting would cost a pass over every
		// log for each one created.
		return only
	}
	count := map[*logDir]int{}
	for _, c := range m.creating {
		count[c.dir]++
	}
	for _, d := range m.logDirOf {
		count[d]++
	}
	for _, d := range m.futureDirOf {
		count[d]++
	}
	var best *logDir
	for _, d := range m.dirs {
		if m.isOfflineLocked(d) {
			continue
		}
		if best == nil || count[d] < count[best] {
			best = d
		}
	}
	return best // nil: every directory is offline
}

// GetFutureLog returns tp's future log.
func (m *LogManager) GetFutureLog(tp common.TopicPartition) (*Log, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.futures[tp]
	return l, ok
}

// LogDirs returns the directories of tp's current and future logs ("" for
// none).
func (m *LogManager) LogDirs(tp common.TopicPartition) (current, future string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d := m.logDirOf[tp]; d != nil {
		current = d.path
	}
	if d := m.futureDirOf[tp]; d != nil {
		future = d.path
	}
	return current, future
}

// GetOrCreateFutureLog returns tp's future log in dir, creating it (empty)
// if tp has none; created tells which. It fails when tp has no current
// log, when dir is the current log's directory, and when a future log
// exists in another directory (the caller removes that one first).
func (m *LogManager) GetOrCreateFutureLog(tp common.TopicPartition, dir string, cfg LogConfig) (l *Log, created bool, err error) {
	d, err := m.findLogDir(dir)
	if err != nil {
		return nil, false, err
	}
	if err := cfg.validate(); err != nil {
		return nil, false, err
	}
	name, err := FutureDirName(tp)
	if err != nil {
		return nil, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shutdown {
		return nil, false, errors.New("storage: log manager is shut down")
	}
	cur := m.logDirOf[tp]
	switch {
	case cur == nil:
		return nil, false, fmt.Errorf("%w: no current log of %s", kerr.ReplicaNotAvailable, tp)
	case cur == d:
		return nil, false, fmt.Errorf("storage: %s is already in %s", tp, dir)
	}
	if f, ok := m.futures[tp]; ok {
		if m.futureDirOf[tp] != d {
			return nil, false, fmt.Errorf("storage: the future log of %s is in %s, not %s", tp, m.futureDirOf[tp].path, dir)
		}
		return f, false, nil
	}
	path := filepath.Join(d.path, name)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, false, fmt.Errorf("%w: create %s: %v", kerr.KafkaStorageError, path, err)
	}
	if err := syncDir(d.path); err != nil {
		return nil, false, err
	}
	l, err = loadLog(loadParams{dir: path, tp: tp, cfg: cfg, cleanShutdown: true, clock: m.clock, logger: m.logger, stats: m.stats})
	if err != nil {
		return nil, false, err
	}
	m.futures[tp] = l
	m.futureDirOf[tp] = d
	delete(m.preferredDirs, tp)
	m.logger.Info("created future log", "topic", tp.Topic, "partition", tp.Partition, "dir", path)
	return l, true, nil
}

// DeleteFutureLog removes tp's future log (a cancelled or redirected
// move, or the partition's deletion): the directory is renamed
// <topic>-<p>.<uuid>-delete and removed after file.delete.delay.ms.
func (m *LogManager) DeleteFutureLog(tp common.TopicPartition) error {
	m.mu.Lock()
	l, ok := m.futures[tp]
	if ok {
		delete(m.futures, tp)
		delete(m.futureDirOf, tp)
	}
	m.mu.Unlock()
	if !ok {
		return nil
	}
	return m.scheduleLogDeletion(l)
}

// scheduleLogDeletion detaches a log no map holds any more, renames its
// directory to -delete and queues it for removal.
func (m *LogManager) scheduleLogDeletion(l *Log) error {
	delay := l.Config().FileDeleteDelayMs
	l.detach()
	// FutureDirName refused names longer than 255 bytes, and -delete is
	// as long as -future.
	name := uniqueDirName(l.tp, "-delete")
	parent := filepath.Dir(l.dir)
	dst := filepath.Join(parent, name)
	if err := os.Rename(l.dir, dst); err != nil {
		return fmt.Errorf("storage: rename %s for deletion: %w", l.dir, err)
	}
	if err := syncDir(parent); err != nil {
		return err
	}
	m.mu.Lock()
	m.dirDeletes = append(m.dirDeletes, pendingDirDelete{path: dst, due: m.clock().Add(time.Duration(delay) * time.Millisecond), log: l})
	m.mu.Unlock()
	return nil
}

// ReplaceCurrentWithFutureLog makes tp's future log its current log
// (Kafka's replaceCurrentWithFutureLog). The caller guarantees that
// nothing writes either log meanwhile and that both end at the same
// offset (broker/replica holds the partition's write lock). The future
// log is closed, its directory renamed to <topic>-<partition> and opened
// again there with the current log's high watermark, leader epochs it
// lacks and topic id; the old directory is renamed -delete and removed
// after file.delete.delay.ms (reads already holding its files finish).
// It returns the new current log.
func (m *LogManager) ReplaceCurrentWithFutureLog(tp common.TopicPartition) (*Log, error) {
	m.mu.Lock()
	src, dst := m.logs[tp], m.futures[tp]
	dstDir := m.futureDirOf[tp]
	m.mu.Unlock()
	if src == nil {
		return nil, fmt.Errorf("%w: the current replica of %s is offline", kerr.KafkaStorageError, tp)
	}
	if dst == nil {
		return nil, fmt.Errorf("%w: the future replica of %s is offline", kerr.KafkaStorageError, tp)
	}
	if s, d := src.LogEndOffset(), dst.LogEndOffset(); s != d {
		return nil, fmt.Errorf("storage: future log of %s ends at %d, the current one at %d", tp, d, s)
	}
	cfg := src.Config()
	hw, logStart := src.HighWatermark(), dst.LogStartOffset()
	if err := dst.Close(); err != nil {
		return nil, err
	}
	newPath := filepath.Join(dstDir.path, tp.String())
	if err := os.Rename(dst.dir, newPath); err != nil {
		return nil, fmt.Errorf("%w: rename %s: %v", kerr.KafkaStorageError, dst.dir, err)
	}
	if err := syncDir(dstDir.path); err != nil {
		return nil, err
	}
	l, err := loadLog(loadParams{dir: newPath, tp: tp, cfg: cfg, recoveryPoint: dst.LogEndOffset(),
		logStartOffset: logStart, highWatermark: hw, cleanShutdown: true, clock: m.clock, logger: m.logger, stats: m.stats})
	if err != nil {
		return nil, err
	}
	// Epochs the leader assigned without writing a batch in them are not
	// in the copy; the copy's own entries come from its batches.
	latest := l.LeaderEpochs().LatestEpoch()
	for _, e := range src.LeaderEpochs().Entries() {
		if e.Epoch > latest {
			if err := l.LeaderEpochs().Assign(e.Epoch, e.StartOffset); err != nil {
				return nil, err
			}
		}
	}
	// The copy was loaded with its recovery point at its end: the epochs
	// just assigned go to the file now (see leaderepoch.go).
	if err := l.LeaderEpochs().Sync(); err != nil {
		return nil, err
	}
	if id, ok, _ := src.TopicID(); ok {
		if err := l.SetTopicID(id); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	if m.logs[tp] != src || m.futures[tp] != dst {
		m.mu.Unlock()
		l.closeNoFlush()
		return nil, fmt.Errorf("storage: %s changed during the log directory swap", tp)
	}
	m.logs[tp] = l
	m.logDirOf[tp] = dstDir
	delete(m.futures, tp)
	delete(m.futureDirOf, tp)
	m.mu.Unlock()
	m.unregisterLogMetrics(tp)
	m.registerLogMetrics(tp, l)
	err = m.scheduleLogDeletion(src)
	m.logger.Info("replaced the current log with the future log", "topic", tp.Topic, "partition", tp.Partition, "dir", newPath)
	return l, errors.Join(err, m.CheckpointRecoveryPoints(), m.CheckpointLogStartOffsets(), m.CheckpointHighWatermarks())
}

// DescribeLogDirs reports every configured log directory with the
// current and future logs in it that include selects (nil: all), as
// DescribeLogDirs answers.
func (m *LogManager) DescribeLogDirs(include func(common.TopicPartition) bool) []LogDirDescription {
	type entry struct {
		l      *Log
		d      *logDir
		future bool
	}
	m.mu.Lock()
	var all []entry
	for tp, l := range m.logs {
		all = append(all, entry{l, m.logDirOf[tp], false})
	}
	for tp, l := range m.futures {
		all = append(all, entry{l, m.futureDirOf[tp], true})
	}
	current := make(map[common.TopicPartition]*Log, len(m.logs))
	for tp, l := range m.logs {
		current[tp] = l
	}
	m.mu.Unlock()
	out := make([]LogDirDescription, 0, len(m.dirs))
	for _, d := range m.dirs {
		desc := LogDirDescription{Path: d.path, Err: m.logDirOfflineError(d)}
		if desc.Err == nil {
			for _, e := range all {
				if e.d != d || (include != nil && !include(e.l.tp)) {
					continue
				}
				p := LogDirPartition{TopicPartition: e.l.tp, Size: e.l.Size(), IsFuture: e.future, OffsetLag: -1}
				if cur := current[e.l.tp]; cur != nil {
					if e.future {
						p.OffsetLag = cur.LogEndOffset() - e.l.LogEndOffset()
					} else {
						p.OffsetLag = max(cur.HighWatermark()-cur.LogEndOffset(), 0)
					}
				}
				desc.Partitions = append(desc.Partitions, p)
			}
			sort.Slice(desc.Partitions, func(i, j int) bool {
				a, b := desc.Partitions[i], desc.Partitions[j]
				if a.Topic != b.Topic {
					return a.Topic < b.Topic
				}
				return a.Partition < b.Partition
			})
		}
		out = append(out, desc)
	}
	return out
}

// allLogsAndFutures returns every current and future log.
func (m *LogManager) allLogsAndFutures() []*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Log, 0, len(m.logs)+len(m.futures))
	for _, l := range m.logs {
		out = append(out, l)
	}
	for _, l := range m.futures {
		out = append(out, l)
	}
	return out
}

// noteTruncationLocked records that the log was cut back to offset, for a
// copy of it in progress (TakeTruncationFloor). Must hold l.mu.
func (l *Log) noteTruncationLocked(offset int64) {
	for {
		f := l.truncationFloor.Load()
		if f != 0 && f <= offset+1 {
			return
		}
		if l.truncationFloor.CompareAndSwap(f, offset+1) {
			return
		}
	}
}

// TakeTruncationFloor returns the lowest offset the log was truncated to
// since the previous call (ok false: none) and forgets it. A copy of the
// log (a future log being filled) cuts itself back to it, so records it
// copied before the truncation and the log then replaced do not survive.
func (l *Log) TakeTruncationFloor() (offset int64, ok bool) {
	f := l.truncationFloor.Swap(0)
	return f - 1, f != 0
}
