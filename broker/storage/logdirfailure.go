package storage

// Offline log directories (KIP-112; Kafka's LogDirFailureChannel and
// LogManager.handleLogDirFailure). An I/O error in a log directory — on
// append, roll, flush, read, index or checkpoint write — reports that
// directory once to the manager's failure channel. The broker's one
// failure-handler goroutine (broker/logdirfailure.go) takes it from there:
// the replica manager marks the directory's partitions offline, then
// HandleLogDirFailure closes their logs and forgets them, and the broker
// announces the failure in /log_dir_event_notification. The other
// directories keep working; when none is left the broker shuts down.
//
// Once its directory has failed, a Log answers every operation with
// kerr.KafkaStorageError (errOffline) instead of touching the disk again,
// so nothing is written past a failed write.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/broker/common"
)

// FaultOp names the storage operation a FaultHook is asked about.
type FaultOp string

// The operations a FaultHook can fail.
const (
	FaultAppend     FaultOp = "append"     // writing records to a segment's .log file
	FaultFlush      FaultOp = "flush"      // fsync of a segment
	FaultCheckpoint FaultOp = "checkpoint" // writing a checkpoint file (offsets, leader epochs)
)

// FaultHook decides whether a storage operation on path fails; a non-nil
// error is returned as the operation's I/O error.
type FaultHook func(op FaultOp, path string) error

// ShortWrite, returned by a FaultHook for FaultAppend, makes the append
// write only the first N bytes of its data before failing with Err: a
// write cut short mid-append by a failing disk, leaving a torn batch in
// the file.
type ShortWrite struct {
	N   int
	Err error
}

func (e *ShortWrite) Error() string { return fmt.Sprintf("short write of %d bytes: %v", e.N, e.Err) }
func (e *ShortWrite) Unwrap() error { return e.Err }

// faultHook is the test-only fault injection point: nil in production,
// where checking it costs one atomic load.
var faultHook atomic.Pointer[FaultHook]

// SetFaultHook installs h (nil removes it) and returns a function that
// restores the previous hook. For tests only: it is process-wide.
func SetFaultHook(h FaultHook) (restore func()) {
	var p *FaultHook
	if h != nil {
		p = &h
	}
	old := faultHook.Swap(p)
	return func() { faultHook.Store(old) }
}

// injectedFault asks the fault hook about op on path; the error it returns
// looks like the operating system's (an *fs.PathError).
func injectedFault(op FaultOp, path string) error {
	h := faultHook.Load()
	if h == nil {
		return nil
	}
	if err := (*h)(op, path); err != nil {
		return &fs.PathError{Op: string(op), Path: path, Err: err}
	}
	return nil
}

// IsIOError reports whether err comes from the file system (the errors
// Kafka sees as an IOException and answers by taking the directory
// offline); protocol outcomes and a closed log are not.
//
// Running out of descriptors or memory maps is not one
// (IsResourceExhausted, descriptors.go).
func IsIOError(err error) bool {
	if err == nil || errors.Is(err, ErrLogClosed) || IsResourceExhausted(err) {
		return false
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return false
	}
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	var errno syscall.Errno
	return errors.As(err, &pe) || errors.As(err, &le) || errors.As(err, &se) || errors.As(err, &errno)
}

// LogDirFailureChannel carries each failed log directory once to the one
// goroutine that handles it (Kafka's LogDirFailureChannel).
type LogDirFailureChannel struct {
	// mu guards the following.
	mu     sync.Mutex
	failed map[string]bool

	dirs chan string // capacity: the number of log dirs, so adding never blocks
}

func newLogDirFailureChannel(n int) *LogDirFailureChannel {
	return &LogDirFailureChannel{failed: map[string]bool{}, dirs: make(chan string, n)}
}

// maybeAdd queues dir unless it was queued before, and logs why.
func (c *LogDirFailureChannel) maybeAdd(m *LogManager, dir, msg string, err error) {
	c.mu.Lock()
	first := !c.failed[dir]
	c.failed[dir] = true
	c.mu.Unlock()
	if !first {
		return
	}
	m.logger.Error("log directory failed", "dir", dir, "what", msg, "err", err)
	c.dirs <- dir
}

// Failures is the channel of failed directories, each sent once. Exactly
// one goroutine (the broker's failure handler) receives from it and calls
// HandleLogDirFailure for each directory.
func (m *LogManager) Failures() <-chan string { return m.failures.dirs }

// dirFailure is what a Log needs to report its directory's failure.
type dirFailure struct {
	m   *LogManager
	dir *logDir
}

// attachLog makes l report I/O errors as a failure of d and leave its new
// leader epochs to the manager's writer of checkpoint files
// (epochwriter.go). Called before the log is shared.
func (m *LogManager) attachLog(l *Log, d *logDir) {
	l.failure = &dirFailure{m: m, dir: d}
	l.epochs.kick = func() { m.epochWriter.add(l) }
}

// errOffline is what a Log whose directory failed answers.
func (l *Log) errOffline() error {
	return fmt.Errorf("%w: log directory of %s is offline", kerr.KafkaStorageError, l.tp)
}

// ioFailed checks err after an operation: an I/O error marks the log
// failed (every later operation answers errOffline) and reports its
// directory; the error is returned as is. A log without a manager
// (OpenLog) only remembers the failure.
func (l *Log) ioFailed(op string, err error) error {
	if IsResourceExhausted(err) {
		return resourceError(op+" on "+l.tp.String(), err)
	}
	if !IsIOError(err) {
		return err
	}
	l.dirFailed.Store(true)
	if f := l.failure; f != nil {
		f.m.failures.maybeAdd(f.m, f.dir.path, fmt.Sprintf("%s on %s", op, l.tp), err)
	}
	return err
}

// resourceError is err (out of descriptors or maps) as
// KAFKA_STORAGE_ERROR for the one operation: the directory stays online
// (see IsResourceExhausted).
func resourceError(what string, err error) error {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return err
	}
	return fmt.Errorf("%w: %s: %w", kerr.KafkaStorageError, what, err)
}

// reportDirFailure reports an I/O error in a directory-level file (an
// offset checkpoint) of d.
func (m *LogManager) reportDirFailure(d *logDir, what string, err error) {
	if IsIOError(err) {
		m.failures.maybeAdd(m, d.path, what, err)
	}
}

// isOfflineLocked reports whether d failed. Must hold m.mu.
func (m *LogManager) isOfflineLocked(d *logDir) bool { return m.offline[d] }

// IsOffline reports whether the log directory dir (as configured in
// log.dirs) is offline (DescribeLogDirs answers KAFKA_STORAGE_ERROR for
// it). A directory that is not configured is not offline.
func (m *LogManager) IsOffline(dir string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, d := range m.dirs {
		if d.path == dir {
			return m.offline[d]
		}
	}
	return false
}

// OfflineDirs returns the offline log directories in log.dirs order.
func (m *LogManager) OfflineDirs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, d := range m.dirs {
		if m.offline[d] {
			out = append(out, d.path)
		}
	}
	return out
}

// LiveDirs returns the online log directories in log.dirs order.
func (m *LogManager) LiveDirs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, d := range m.dirs {
		if !m.offline[d] {
			out = append(out, d.path)
		}
	}
	return out
}

// LogDirOf returns the log directory (an entry of log.dirs) holding tp's
// log.
func (m *LogManager) LogDirOf(tp common.TopicPartition) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.logDirOf[tp]
	if !ok {
		return "", false
	}
	return d.path, true
}

// HandleLogDirFailure takes dir offline (Kafka's
// LogManager.handleLogDirFailure): no new log is placed in it, and the
// partitions whose logs live there are passed to beforeClose (the replica
// manager marks them offline and stops using them) and then closed without
// touching the disk and forgotten, so the checkpoints of the remaining
// directories no longer list them and the failed directory's checkpoints
// are not written again. It returns those partitions and whether any
// directory is still online (none: the broker must shut down). A
// directory already offline, or not configured, returns nothing.
func (m *LogManager) HandleLogDirFailure(dir string, beforeClose func([]common.TopicPartition)) (offline []common.TopicPartition, anyOnline bool) {
	m.mu.Lock()
	var d *logDir
	for _, ld := range m.dirs {
		if ld.path == dir {
			d = ld
		}
	}
	if d == nil || m.offline[d] {
		anyOnline = m.anyOnlineLocked()
		m.mu.Unlock()
		return nil, anyOnline
	}
	m.offline[d] = true
	anyOnline = m.anyOnlineLocked()
	for tp, ld := range m.logDirOf {
		if ld == d {
			offline = append(offline, tp)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(offline, common.TopicPartition.Compare)
	m.logger.Warn("stopping serving logs in dir", "dir", dir, "partitions", len(offline))

	if beforeClose != nil {
		beforeClose(offline)
	}
	// A cleaner pass on one of these logs fails on the closed log and
	// the log is not picked again: it left the manager's map.
	m.mu.Lock()
	var logs, futures []*Log
	for _, tp := range offline {
		if l, ok := m.logs[tp]; ok && m.logDirOf[tp] == d {
			logs = append(logs, l)
			delete(m.logs, tp)
			delete(m.logDirOf, tp)
		}
	}
	// Future logs (AlterReplicaLogDirs) in the directory go too; their
	// movers see the closed log and give up.
	for tp, fd := range m.futureDirOf {
		if fd == d {
			futures = append(futures, m.futures[tp])
			delete(m.futures, tp)
			delete(m.futureDirOf, tp)
		}
	}
	// Segments of deleted partitions in this directory are released with
	// their logs; their directories stay for the next start-up.
	keep := m.dirDeletes[:0]
	var dropped []pendingDirDelete
	for _, pd := range m.dirDeletes {
		if isUnder(pd.path, d.path) {
			dropped = append(dropped, pd)
		} else {
			keep = append(keep, pd)
		}
	}
	m.dirDeletes = keep
	m.mu.Unlock()
	for _, tp := range offline {
		m.unregisterLogMetrics(tp)
	}
	for _, l := range logs {
		l.dirFailed.Store(true)
		if err := l.closeNoFlush(); err != nil {
			m.logger.Debug("closing a log of a failed directory", "dir", dir, "err", err)
		}
	}
	for _, l := range futures {
		l.closeNoFlush()
	}
	for _, pd := range dropped {
		if pd.log != nil {
			pd.log.releaseFiles()
		}
	}
	// The directory's lock is released: the process no longer uses it.
	if d.lock != nil {
		syscall.Flock(int(d.lock.Fd()), syscall.LOCK_UN)
		d.lock.Close()
		d.lock = nil
	}
	m.logger.Warn("logs are offline due to failure on log directory", "dir", dir, "partitions", offline)
	if !anyOnline {
		m.logger.Error("shutdown broker because all log dirs have failed", "log_dirs", m.Dirs())
	}
	return offline, anyOnline
}

func (m *LogManager) anyOnlineLocked() bool {
	for _, d := range m.dirs {
		if !m.offline[d] {
			return true
		}
	}
	return false
}

func isUnder(path, dir string) bool {
	return len(path) > len(dir) && path[:len(dir)] == dir && os.IsPathSeparator(path[len(dir)])
}

// startOffline decides, during NewLogManager, whether err (locking or
// loading d) takes d offline instead of failing the start-up, as Kafka
// starts with a directory it cannot read offline: an I/O error does; a
// directory locked by another process, a malformed checkpoint or a
// malformed partition directory name does not. Logs already loaded from d
// are dropped and d is reported to the failure channel.
func (m *LogManager) startOffline(d *logDir, err error) bool {
	if errors.Is(err, ErrLogDirLocked) || !IsIOError(err) {
		return false
	}
	if !slices.Contains(m.dirs, d) {
		m.dirs = append(m.dirs, d)
	}
	m.offline[d] = true
	for tp, ld := range m.logDirOf {
		if ld == d {
			m.logs[tp].closeNoFlush()
			delete(m.logs, tp)
			delete(m.logDirOf, tp)
		}
	}
	for tp, ld := range m.futureDirOf {
		if ld == d {
			m.futures[tp].closeNoFlush()
			delete(m.futures, tp)
			delete(m.futureDirOf, tp)
		}
	}
	if d.lock != nil {
		syscall.Flock(int(d.lock.Fd()), syscall.LOCK_UN)
		d.lock.Close()
		d.lock = nil
	}
	m.failures.maybeAdd(m, d.path, "start-up", err)
	return true
}
