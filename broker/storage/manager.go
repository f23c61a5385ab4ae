package storage

// LogManager: every partition log of a broker across log.dirs (Kafka's
// LogManager): directory locking, loading with recovery, placement of new
// logs, the retention / checkpoint / deletion schedule, clean shutdown.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/broker/common"
)

// ErrLogDirLocked means another process holds a log directory's .lock.
var ErrLogDirLocked = errors.New("storage: log directory is locked by another process")

var deleteDirPattern = regexp.MustCompile(`^(\S+)-(\S+)\.(\S+)-(delete|future)$`)

// logDir is one entry of log.dirs.
type logDir struct {
	path string
	lock *os.File
	// entries makes new entries of the directory (partition
	// directories) durable, one fsync for all callers at a time.
	entries *dirSyncer
}

// pendingDirDelete is a partition directory renamed to -delete.
type pendingDirDelete struct {
	path string
	due  time.Time
	log  *Log // detached log whose files are closed at removal; nil at startup
}

// LogManager owns all logs of a broker.
type LogManager struct {
	cfg    ManagerConfig
	clock  func() time.Time
	logger *slog.Logger
	dirs   []*logDir

	// mu guards the following. Never held while calling into a Log's
	// blocking operations other than Close during shutdown (see LOCKS.md).
	mu          sync.Mutex
	logs        map[common.TopicPartition]*Log
	logDirOf    map[common.TopicPartition]*logDir
	dirDeletes  []pendingDirDelete
	started     bool
	shutdown    bool
	cleaner     *Cleaner   // nil unless log.cleaner.enable
	stats       *logStats  // shared by the logs (metrics.go)
	checkpoints sync.Mutex // serialises checkpoint file writes
	// Future logs of replicas moving between log dirs and the directories
	// AlterReplicaLogDirs chose for logs not created yet (futurelog.go).
	futures       map[common.TopicPartition]*Log
	futureDirOf   map[common.TopicPartition]*logDir
	preferredDirs map[common.TopicPartition]*logDir
	// Logs being created by GetOrCreateLog without mu.
	creating map[common.TopicPartition]*creation

	offline  map[*logDir]bool      // failed directories (logdirfailure.go); guarded by mu
	failures *LogDirFailureChannel // failed directories, each once

	stop chan struct{}
	wg   sync.WaitGroup

	epochWriter epochWriter // leader-epoch-checkpoint files (epochwriter.go)

	// loadMu guards logs, logDirOf, futures, futureDirOf and dirDeletes
	// while NewLogManager's directory loaders run concurrently (before the
	// manager is shared; mu is not used then).
	loadMu sync.Mutex
}

// NewLogManager locks every directory and loads the logs in it (recovering
// after an unclean shutdown).
func NewLogManager(cfg ManagerConfig) (*LogManager, error) {
	if len(cfg.Dirs) == 0 {
		return nil, errors.New("storage: no log.dirs configured")
	}
	if err := cfg.Defaults.validate(); err != nil {
		return nil, err
	}
	m := &LogManager{cfg: cfg, clock: cfg.Clock, logger: cfg.Logger,
		logs: map[common.TopicPartition]*Log{}, logDirOf: map[common.TopicPartition]*logDir{}, stop: make(chan struct{}),
		stats: newLogStats(cfg.Metrics), offline: map[*logDir]bool{}, failures: newLogDirFailureChannel(len(cfg.Dirs)),
		futures: map[common.TopicPartition]*Log{}, futureDirOf: map[common.TopicPartition]*logDir{},
		preferredDirs: map[common.TopicPartition]*logDir{}, creating: map[common.TopicPartition]*creation{}}
	if m.clock == nil {
		m.clock = time.Now
	}
	if m.logger == nil {
		m.logger = slog.Default()
	}
	// Zero intervals mean "not set": use Kafka's defaults.
	def := DefaultManagerConfig()
	for _, f := range []struct {
		v *int64
		d int64
	}{
		{&m.cfg.RetentionCheckIntervalMs, def.RetentionCheckIntervalMs},
		{&m.cfg.FlushCheckpointIntervalMs, def.FlushCheckpointIntervalMs},
		{&m.cfg.FlushStartOffsetCheckpointIntervalMs, def.FlushStartOffsetCheckpointIntervalMs},
		{&m.cfg.HighWatermarkCheckpointIntervalMs, def.HighWatermarkCheckpointIntervalMs},
		{&m.cfg.FlushSchedulerIntervalMs, def.FlushSchedulerIntervalMs},
		{&m.cfg.ProducerIDExpirationCheckIntervalMs, def.ProducerIDExpirationCheckIntervalMs},
	} {
		if *f.v == 0 {
			*f.v = f.d
		}
	}
	if m.cfg.RecoveryThreadsPerDataDir < 1 {
		m.cfg.RecoveryThreadsPerDataDir = 1
	}
	for _, d := range cfg.Dirs {
		ld, err := lockLogDir(d)
		if err != nil {
			if m.startOffline(&logDir{path: d, entries: newDirSyncer(d)}, err) {
				continue
			}
			m.unlockAll()
			return nil, err
		}
		m.dirs = append(m.dirs, ld)
	}
	// Every directory loads at once, each with its own
	// num.recovery.threads.per.data.dir workers, as Kafka's loadLogs
	// does; a directory that fails goes offline (or fails the start)
	// once all are done.
	loadErrs := make([]error, len(m.dirs))
	var loading sync.WaitGroup
	for i, d := range m.dirs {
		if m.isOfflineLocked(d) {
			continue
		}
		loading.Add(1)
		go func() { // loader of one directory: owned and joined here
			defer loading.Done()
			loadErrs[i] = m.loadDir(d)
		}()
	}
	loading.Wait()
	for i, d := range m.dirs[:len(loadErrs)] {
		if err := loadErrs[i]; err != nil && !m.startOffline(d, err) {
			for _, l := range m.allLogsAndFutures() {
				l.closeNoFlush()
			}
			m.unlockAll()
			return nil, err
		}
	}
	if !m.anyOnlineLocked() {
		m.unlockAll()
		return nil, fmt.Errorf("storage: every log directory in %v failed at start-up", cfg.Dirs)
	}
	m.registerManagerMetrics()
	return m, nil
}

func lockLogDir(path string) (*logDir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("storage: create log dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(path, lockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("storage: open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrLogDirLocked, path, err)
	}
	return &logDir{path: path, lock: f, entries: newDirSyncer(path)}, nil
}

func (m *LogManager) unlockAll() {
	for _, d := range m.dirs {
		if d.lock != nil {
			syscall.Flock(int(d.lock.Fd()), syscall.LOCK_UN)
			d.lock.Close()
			d.lock = nil
		}
	}
}

// ParseTopicPartitionName parses "<topic>-<partition>" (split at the last
// '-'), also accepting the -delete / -future forms.
func ParseTopicPartitionName(name string) (tp common.TopicPartition, suffix string, err error) {
	base := name
	if strings.HasSuffix(name, "-delete") || strings.HasSuffix(name, "-future") {
		mm := deleteDirPattern.FindStringSubmatch(name)
		if mm == nil {
			return tp, "", fmt.Errorf("storage: directory %q is not in the form of topic-partition.uniqueId-delete|future", name)
		}
		base = mm[1] + "-" + mm[2]
		suffix = mm[4]
	}
	i := strings.LastIndexByte(base, '-')
	if i <= 0 || i == len(base)-1 {
		return tp, "", fmt.Errorf("storage: directory %q is not in the form of topic-partition", name)
	}
	p, perr := strconv.ParseInt(base[i+1:], 10, 32)
	if perr != nil || p < 0 {
		return tp, "", fmt.Errorf("storage: directory %q is not in the form of topic-partition", name)
	}
	return common.TopicPartition{Topic: base[:i], Partition: int32(p)}, suffix, nil
}

// loadDir loads one log directory: it notes and deletes the clean
// shutdown marker, reads the recovery-point, log-start-offset and
// replication-offset checkpoints (a malformed one takes the directory
// offline), and loads every partition directory with
// num.recovery.threads.per.data.dir workers.
func (m *LogManager) loadDir(d *logDir) error {
	clean, err := takeCleanShutdownMarker(d.path)
	if err != nil {
		return err
	}
	os.Remove(filepath.Join(d.path, metaPropertiesFile+checkpointTmpSuffix))
	var cps [3]map[common.TopicPartition]int64
	for i, name := range []string{recoveryPointCheckpointFile, logStartOffsetCheckpointFile, replicationOffsetCheckpoint} {
		if cps[i], err = ReadOffsetCheckpoint(filepath.Join(d.path, name)); err != nil {
			return fmt.Errorf("storage: log dir %s offline: %w", d.path, err)
		}
	}
	rps, lss, hws := cps[0], cps[1], cps[2]
	jobs, err := m.partitionDirs(d)
	if err != nil {
		return err
	}
	var (
		wg        sync.WaitGroup
		mu        = &m.loadMu
		firstErr  error
		work      = make(chan loadJob)
		recovered int
		start     = time.Now()
	)
	for i := 0; i < m.cfg.RecoveryThreadsPerDataDir; i++ {
		wg.Add(1)
		go func() { // recovery worker: owned by loadDir, ends when work closes
			defer wg.Done()
			for j := range work {
				l, err := loadLog(loadParams{dir: j.path, tp: j.tp, cfg: m.cfg.Defaults,
					recoveryPoint: rps[j.tp], logStartOffset: lss[j.tp], highWatermark: hws[j.tp],
					cleanShutdown: clean, clock: m.clock, logger: m.logger, stats: m.stats})
				mu.Lock()
				if l != nil {
					recovered += l.recoveredAtLoad
				}
				if err == nil && (j.future && m.futures[j.tp] != nil || !j.future && m.logs[j.tp] != nil) {
					l.closeNoFlush()
					err = fmt.Errorf("storage: duplicate log directories for %s", j.tp)
				}
				if err != nil {
					if firstErr == nil {
						firstErr = fmt.Errorf("storage: load %s: %w", j.path, err)
					}
				} else if j.future {
					m.futures[j.tp] = l
					m.futureDirOf[j.tp] = d
				} else {
					m.attachLog(l, d)
					m.logs[j.tp] = l
					m.logDirOf[j.tp] = d
					m.registerLogMetrics(j.tp, l)
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	m.logger.Info("loaded log directory", "dir", d.path, "logs", len(jobs), "clean_shutdown", clean,
		"recovered_segments", recovered, "recovery_threads", m.cfg.RecoveryThreadsPerDataDir,
		"elapsed_ms", time.Since(start).Milliseconds())
	return firstErr
}

// takeCleanShutdownMarker reports whether the directory was shut down
// cleanly (.kafka_cleanshutdown exists) and deletes the marker, so a crash
// from now on is seen as unclean.
func takeCleanShutdownMarker(dir string) (bool, error) {
	path := filepath.Join(dir, cleanShutdownFile)
	if _, err := os.Stat(path); err != nil {
		return false, nil
	}
	if err := os.Remove(path); err != nil {
		return false, fmt.Errorf("storage: remove %s: %w", path, err)
	}
	return true, syncDir(dir)
}

// loadJob is one partition directory to load.
type loadJob struct {
	tp     common.TopicPartition
	path   string
	future bool // a -future directory: the future log of a move in progress
}

// partitionDirs lists the partition directories of d to load. A
// directory marked -delete is queued for deletion; a -future one is the
// future log of an AlterReplicaLogDirs move and is loaded as such (the
// move resumes once the partition is back, futurelog.go).
func (m *LogManager) partitionDirs(d *logDir) ([]loadJob, error) {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return nil, fmt.Errorf("storage: list %s: %w", d.path, err)
	}
	var jobs []loadJob
	m.loadMu.Lock()
	defer m.loadMu.Unlock()
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		tp, suffix, err := ParseTopicPartitionName(e.Name())
		if err != nil {
			return nil, err
		}
		path := filepath.Join(d.path, e.Name())
		switch suffix {
		case "delete":
			m.dirDeletes = append(m.dirDeletes, pendingDirDelete{path: path, due: m.clock()})
			continue
		case "future":
			if _, dup := m.futures[tp]; dup {
				return nil, fmt.Errorf("storage: duplicate future log directories for %s", tp)
			}
			jobs = append(jobs, loadJob{tp: tp, path: path, future: true})
			continue
		}
		if _, dup := m.logs[tp]; dup {
			return nil, fmt.Errorf("storage: duplicate log directories for %s", tp)
		}
		jobs = append(jobs, loadJob{tp: tp, path: path})
	}
	return jobs, nil
}

// Startup starts the background schedule (retention, checkpoints, async
// deletion, flush.ms) and the cleaner if enabled.
func (m *LogManager) Startup() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started || m.shutdown {
		return
	}
	m.started = true
	if m.cfg.CleanerEnable {
		m.cleaner = newManagerCleaner(m)
		m.cleaner.Startup()
	}
	m.wg.Add(1)
	go m.scheduler() // owned by the manager; stopped by Shutdown via m.stop
}

// scheduler runs the periodic tasks. Task intervals are wall-clock ticks;
// decisions inside tasks use the injected clock.
func (m *LogManager) scheduler() {
	defer m.wg.Done()
	initial := time.Duration(m.cfg.InitialTaskDelayMs) * time.Millisecond
	type task struct {
		every time.Duration
		next  time.Time
		run   func()
	}
	mk := func(ms int64, run func()) *task {
		if ms <= 0 || ms > int64(1<<62)/int64(time.Millisecond) {
			return nil
		}
		return &task{every: time.Duration(ms) * time.Millisecond, next: time.Now().Add(initial), run: run}
	}
	var tasks []*task
	for _, t := range []*task{
		mk(m.cfg.RetentionCheckIntervalMs, func() { m.RunRetention() }),
		mk(m.cfg.FlushCheckpointIntervalMs, func() { m.logErr(m.CheckpointRecoveryPoints()) }),
		mk(m.cfg.FlushStartOffsetCheckpointIntervalMs, func() { m.logErr(m.CheckpointLogStartOffsets()) }),
		mk(m.cfg.HighWatermarkCheckpointIntervalMs, func() { m.logErr(m.CheckpointHighWatermarks()) }),
		mk(1000, func() { m.logErr(m.DeletePending()) }),
		mk(min(m.cfg.FlushSchedulerIntervalMs, 1000), func() { m.flushDue() }),
		mk(m.cfg.ProducerIDExpirationCheckIntervalMs, func() {
			now := m.clock()
			for _, l := range m.AllLogs() {
				l.RemoveExpiredProducers(now)
			}
		}),
	} {
		if t != nil {
			tasks = append(tasks, t)
		}
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case now := <-tick.C:
			for _, t := range tasks {
				if !now.Before(t.next) {
					t.run()
					t.next = now.Add(t.every)
				}
			}
		}
	}
}

func (m *LogManager) logErr(err error) {
	if err != nil {
		m.logger.Error("log manager task failed", "err", err)
	}
}

func (m *LogManager) flushDue() {
	now := m.clock()
	for _, l := range m.AllLogs() {
		if err := l.flushIfDue(now); err != nil && !errors.Is(err, ErrLogClosed) {
			m.logger.Error("flush failed", "topic", l.tp.Topic, "partition", l.tp.Partition, "err", err)
		}
	}
}

// RunRetention runs one retention pass and returns the number of
// segments deleted. While a cleaner runs, compacted logs are left to it
// (it applies retention after each of its passes, as Kafka's cleaner
// thread does); otherwise every log gets the rules its cleanup.policy
// allows (log-start-offset retention always, size and time with "delete").
func (m *LogManager) RunRetention() int {
	m.mu.Lock()
	cleaner := m.cleaner
	m.mu.Unlock()
	total := 0
	for tp, l := range m.AllLogs() {
		if cleaner != nil && l.Config().CleanupPolicyCompact {
			continue
		}
		n, err := l.DeleteOldSegments()
		if err != nil && !errors.Is(err, ErrLogClosed) {
			m.logger.Error("retention failed", "topic", tp.Topic, "partition", tp.Partition, "err", err)
		}
		total += n
	}
	return total
}

// DeletePending removes .deleted segments and -delete directories whose
// file.delete.delay.ms has passed.
func (m *LogManager) DeletePending() error {
	now := m.clock()
	var err error
	for _, l := range m.allLogsAndFutures() {
		if e := l.deletePending(now); e != nil && err == nil {
			err = e
		}
	}
	m.mu.Lock()
	var due []pendingDirDelete
	keep := m.dirDeletes[:0]
	for _, d := range m.dirDeletes {
		if !now.Before(d.due) {
			due = append(due, d)
		} else {
			keep = append(keep, d)
		}
	}
	m.dirDeletes = keep
	m.mu.Unlock()
	for _, d := range due {
		if d.log != nil {
			if e := d.log.releaseFiles(); e != nil && err == nil {
				err = e
			}
		}
		if e := os.RemoveAll(d.path); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// GetLog returns the log of tp.
func (m *LogManager) GetLog(tp common.TopicPartition) (*Log, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.logs[tp]
	return l, ok
}

// AllLogs returns a snapshot of every log.
func (m *LogManager) AllLogs() map[common.TopicPartition]*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[common.TopicPartition]*Log, len(m.logs))
	for tp, l := range m.logs {
		out[tp] = l
	}
	return out
}

// Dirs returns the configured log directories.
func (m *LogManager) Dirs() []string {
	out := make([]string, len(m.dirs))
	for i, d := range m.dirs {
		out[i] = d.path
	}
	return out
}

// GetOrCreateLog returns tp's log, creating it in the directory with the
// fewest partitions. For an existing log, cfg replaces its configuration
// (the caller passes the topic's effective config).
//
// Creating a log is disk work (the directory and its fsync, the segment
// files) done without m.mu, so logs of different partitions are created
// at once (LeaderAndIsr creates thousands in one request) and nothing else
// waits for the manager meanwhile. While tp's log is being created it is
// in m.creating: a second GetOrCreateLog of tp waits for that creation and
// returns its log; the directory's choice counts it (nextLogDirLocked).
func (m *LogManager) GetOrCreateLog(tp common.TopicPartition, cfg LogConfig) (*Log, error) {
	if err := validateTopicName(tp.Topic); err != nil {
		return nil, err
	}
	if tp.Partition < 0 {
		return nil, fmt.Errorf("storage: negative partition %d", tp.Partition)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	for {
		if m.shutdown {
			m.mu.Unlock()
			return nil, errors.New("storage: log manager is shut down")
		}
		if l, ok := m.logs[tp]; ok {
			m.mu.Unlock()
			l.UpdateConfig(cfg)
			return l, nil
		}
		c, ok := m.creating[tp]
		if !ok {
			break
		}
		m.mu.Unlock()
		<-c.done
		m.mu.Lock()
	}
	best := m.nextLogDirLocked(tp)
	if best == nil {
		m.mu.Unlock()
		return nil, fmt.Errorf("%w: cannot create log for %s: every log directory is offline", kerr.KafkaStorageError, tp)
	}
	c := &creation{dir: best, done: make(chan struct{})}
	m.creating[tp] = c
	m.mu.Unlock()

	l, err := m.createLog(tp, cfg, best)

	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.creating, tp)
	close(c.done)
	if err == nil && (m.shutdown || m.isOfflineLocked(best)) {
		// Shut down or failed while the log was made: the manager no
		// longer tracks logs of that directory, so this one is not added.
		_ = l.closeNoFlush()
		if m.shutdown {
			return nil, errors.New("storage: log manager is shut down")
		}
		return nil, fmt.Errorf("%w: cannot create log for %s: its log directory %s went offline", kerr.KafkaStorageError, tp, best.path)
	}
	if err != nil {
		return nil, err
	}
	m.attachLog(l, best)
	m.logs[tp] = l
	m.logDirOf[tp] = best
	if m.preferredDirs[tp] == best {
		// A preference set while the log was made names another
		// directory: it stays for the future log that moves it there.
		delete(m.preferredDirs, tp)
	}
	m.registerLogMetrics(tp, l)
	return l, nil
}

// creation is a log being created by GetOrCreateLog without m.mu.
type creation struct {
	dir  *logDir
	done chan struct{} // closed when the creation ended, made or not
}

// createLog makes tp's directory in dir and opens its log; the entry is
// made durable by the log's first flush of data (logs flushed at once
// share that fsync of dir). It takes no lock of the manager.
func (m *LogManager) createLog(tp common.TopicPartition, cfg LogConfig, dir *logDir) (*Log, error) {
	path := filepath.Join(dir.path, tp.String())
	// The log directory exists, so one mkdir tells a new partition
	// directory (empty: loading it looks for no files) from one left
	// over (loaded as found).
	existed := false
	if err := os.Mkdir(path, 0o755); errors.Is(err, fs.ErrExist) {
		if fi, serr := os.Stat(path); serr != nil || !fi.IsDir() {
			err = fmt.Errorf("storage: create %s: not a directory", path)
			m.reportDirFailure(dir, "creating log "+tp.String(), err)
			return nil, err
		}
		existed = true
	} else if err != nil {
		err = fmt.Errorf("storage: create %s: %w", path, err)
		m.reportDirFailure(dir, "creating log "+tp.String(), err)
		return nil, err
	}
	// The new directory's entry in the log directory is not fsync'd
	// here: the log's first flush of data does it (through the log
	// directory's group commit) before Flush returns or the recovery
	// point rises, and a checkpoint written in the log directory fsyncs
	// it too. Until then the log holds nothing a crash may not lose, and
	// a directory lost with it is created again by the next LeaderAndIsr.
	// A LeaderAndIsr of thousands of new partitions then waits for no
	// fsync of the log directory per batch of creations.
	l, err := loadLog(loadParams{dir: path, tp: tp, cfg: cfg, cleanShutdown: true, fresh: !existed,
		parentEntry: dir.entries, clock: m.clock, logger: m.logger, stats: m.stats})
	if err != nil {
		if IsResourceExhausted(err) {
			if !existed {
				// Leave no half-made directory behind: it would be
				// loaded as a log at the next start, and nothing
				// deletes a directory whose log was never created.
				os.RemoveAll(path)
			}
			m.logger.Warn("cannot create log: out of descriptors or memory maps", "topic", tp.Topic, "partition", tp.Partition, "err", err)
			return nil, resourceError("creating log "+tp.String(), err)
		}
		m.reportDirFailure(dir, "creating log "+tp.String(), err)
		return nil, err
	}
	return l, nil
}

func validateTopicName(t string) error {
	if t == "" || t == "." || t == ".." || len(t) > 249 {
		return fmt.Errorf("storage: illegal topic name %q", t)
	}
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("storage: illegal character %q in topic name %q", c, t)
		}
	}
	return nil
}

// DeleteLog removes tp's log: the directory is renamed to
// <topic>-<p>.<uuid>-delete and removed after file.delete.delay.ms.
func (m *LogManager) DeleteLog(tp common.TopicPartition) error {
	if err := m.DeleteFutureLog(tp); err != nil {
		return err
	}
	m.mu.Lock()
	delete(m.preferredDirs, tp)
	l, ok := m.logs[tp]
	if !ok {
		m.mu.Unlock()
		return nil
	}
	delete(m.logs, tp)
	delete(m.logDirOf, tp)
	m.mu.Unlock()
	m.unregisterLogMetrics(tp)
	delay := l.Config().FileDeleteDelayMs
	// Stop using the log now; its files stay open until the directory is
	// removed so fetches already holding FileRecords finish.
	l.detach()
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return err
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	suffix := "." + hex.EncodeToString(u[:]) + "-delete"
	name := tp.String()
	if len(name)+len(suffix) > 255 {
		// Truncate the topic part so the whole name fits in 255 bytes.
		p := "-" + strconv.Itoa(int(tp.Partition))
		name = tp.Topic[:255-len(suffix)-len(p)] + p
	}
	dst := filepath.Join(filepath.Dir(l.dir), name+suffix)
	if err := os.Rename(l.dir, dst); err != nil {
		return fmt.Errorf("storage: rename %s for deletion: %w", l.dir, err)
	}
	if err := syncDir(filepath.Dir(l.dir)); err != nil {
		return err
	}
	m.mu.Lock()
	m.dirDeletes = append(m.dirDeletes, pendingDirDelete{path: dst, due: m.clock().Add(time.Duration(delay) * time.Millisecond), log: l})
	m.mu.Unlock()
	// Drop its checkpoint entries right away.
	return errors.Join(m.CheckpointRecoveryPoints(), m.CheckpointLogStartOffsets(), m.CheckpointHighWatermarks())
}

// checkpoint writes one per-directory offset checkpoint from f.
func (m *LogManager) checkpoint(file string, f func(l *Log) (int64, bool)) error {
	m.checkpoints.Lock()
	defer m.checkpoints.Unlock()
	m.mu.Lock()
	per := map[*logDir]map[common.TopicPartition]int64{}
	for _, d := range m.dirs {
		if !m.isOfflineLocked(d) {
			per[d] = map[common.TopicPartition]int64{}
		}
	}
	for tp, l := range m.logs {
		if v, ok := f(l); ok {
			if entries, online := per[m.logDirOf[tp]]; online {
				entries[tp] = v
			}
		}
	}
	for tp, l := range m.futures {
		if v, ok := f(l); ok {
			if entries, online := per[m.futureDirOf[tp]]; online {
				entries[tp] = v
			}
		}
	}
	m.mu.Unlock()
	var err error
	for d, entries := range per {
		if e := WriteOffsetCheckpoint(filepath.Join(d.path, file), entries); e != nil {
			m.reportDirFailure(d, "writing "+file, e)
			if err == nil {
				err = e
			}
		}
	}
	return err
}

// CheckpointRecoveryPoints writes recovery-point-offset-checkpoint.
func (m *LogManager) CheckpointRecoveryPoints() error {
	return m.checkpoint(recoveryPointCheckpointFile, func(l *Log) (int64, bool) { return l.RecoveryPoint(), true })
}

// CheckpointLogStartOffsets writes log-start-offset-checkpoint, listing
// only logs whose start offset is above their first segment's base.
func (m *LogManager) CheckpointLogStartOffsets() error {
	return m.checkpoint(logStartOffsetCheckpointFile, func(l *Log) (int64, bool) {
		l.mu.RLock()
		defer l.mu.RUnlock()
		ls := l.logStartOffset.Load()
		return ls, len(l.segments) > 0 && ls > l.segments[0].baseOffset
	})
}

// CheckpointHighWatermarks writes replication-offset-checkpoint.
func (m *LogManager) CheckpointHighWatermarks() error {
	return m.checkpoint(replicationOffsetCheckpoint, func(l *Log) (int64, bool) { return l.HighWatermark(), true })
}

// Shutdown stops the schedule and the cleaner, closes every log cleanly
// (flush, final index entries, trim), writes the checkpoints, marks each
// directory with .kafka_cleanshutdown and releases the locks.
func (m *LogManager) Shutdown() error {
	m.mu.Lock()
	if m.shutdown {
		m.mu.Unlock()
		return nil
	}
	m.shutdown = true
	// Each phase's duration is logged at the end, so a slow exit shows
	// which part of the clean shutdown it waited for.
	phases := newPhaseTimer()
	defer func() { m.logger.Info("log manager shutdown phases", phases.attrs()...) }()
	started := m.started
	cleaner := m.cleaner
	var creating []chan struct{}
	for _, c := range m.creating {
		creating = append(creating, c.done)
	}
	m.mu.Unlock()
	// A log still being created is closed by its creator, which sees the
	// shutdown; its files are closed before the directories are unlocked.
	for _, done := range creating {
		<-done
	}
	phases.end("creating_ms")
	// Close writes each log's own file; the writer stops first.
	m.epochWriter.stop()
	phases.end("epoch_writer_ms")
	if started {
		close(m.stop)
		m.wg.Wait()
	}
	phases.end("schedule_ms")
	var errs []error
	if cleaner != nil {
		errs = append(errs, cleaner.Shutdown())
	}
	phases.end("cleaner_ms")
	// Logs are closed by shutdownCloseWorkers goroutines per data
	// directory (Kafka closes them on a pool per directory too): a close
	// blocks in system calls (fsync, ftruncate), each of which holds an OS
	// thread, so one goroutine per log would ask for as many threads as
	// logs (10,000 logs, the Go runtime's default limit).
	byDir := map[string][]*Log{}
	for _, l := range m.allLogsAndFutures() {
		d := filepath.Dir(l.dir)
		byDir[d] = append(byDir[d], l)
	}
	var wg sync.WaitGroup
	var emu sync.Mutex
	for _, logs := range byDir {
		next := make(chan *Log)
		for range min(shutdownCloseWorkers, len(logs)) {
			wg.Add(1)
			go func() { // closes logs from next until it is closed; joined below
				defer wg.Done()
				for l := range next {
					if err := l.Close(); err != nil {
						emu.Lock()
						errs = append(errs, err)
						emu.Unlock()
					}
				}
			}()
		}
		wg.Add(1)
		go func() { // feeds next; joined below
			defer wg.Done()
			defer close(next)
			for _, l := range logs {
				next <- l
			}
		}()
	}
	wg.Wait()
	phases.end("close_logs_ms")
	m.mu.Lock()
	for _, d := range m.dirDeletes {
		if d.log != nil {
			errs = append(errs, d.log.releaseFiles())
		}
	}
	m.mu.Unlock()
	errs = append(errs, m.CheckpointRecoveryPoints(), m.CheckpointLogStartOffsets(), m.CheckpointHighWatermarks())
	phases.end("checkpoints_ms")
	if err := errors.Join(errs...); err != nil {
		m.unlockAll()
		return err
	}
	for _, d := range m.dirs {
		if m.IsOffline(d.path) {
			continue // no clean-shutdown mark: it recovers at the next start
		}
		p := filepath.Join(d.path, cleanShutdownFile)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, syncDir(d.path))
	}
	phases.end("marker_ms")
	m.unlockAll()
	return errors.Join(errs...)
}

// shutdownCloseWorkers is how many logs of one data directory Shutdown
// closes at once. Closing an idle log makes no fsync; a log written since
// its last flush waits for the disk, and concurrent fsyncs share the file
// system's journal commits.
var shutdownCloseWorkers = 128

// phaseTimer measures consecutive phases of one operation for its log line.
type phaseTimer struct {
	last time.Time
	kv   []any
}

func newPhaseTimer() *phaseTimer { return &phaseTimer{last: time.Now()} }

// end closes the current phase under name and starts the next.
func (p *phaseTimer) end(name string) {
	now := time.Now()
	p.kv = append(p.kv, name, now.Sub(p.last).Milliseconds())
	p.last = now
}

func (p *phaseTimer) attrs() []any { return p.kv }

// WriteMetaProperties (re)writes meta.properties (version 0) in every log
// directory.
func (m *LogManager) WriteMetaProperties(brokerID int32, clusterID string) error {
	data := encodeMetaProperties(MetaProperties{Version: 0, BrokerID: brokerID, ClusterID: clusterID}, m.clock())
	for _, d := range m.dirs {
		if m.IsOffline(d.path) {
			continue
		}
		if err := writeFileAtomic(filepath.Join(d.path, metaPropertiesFile), data); err != nil {
			return err
		}
	}
	return nil
}

// ReadMetaProperties reads meta.properties from every directory. found is
// false when no directory has one; differing contents are an error
// ("inconsistent broker metadata").
func (m *LogManager) ReadMetaProperties() (mp MetaProperties, found bool, err error) {
	for _, d := range m.dirs {
		if m.IsOffline(d.path) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(d.path, metaPropertiesFile))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return mp, false, fmt.Errorf("storage: read meta.properties in %s: %w", d.path, err)
		}
		got, err := decodeMetaProperties(data)
		if err != nil {
			return mp, false, fmt.Errorf("storage: %s: %w", d.path, err)
		}
		if found && got != mp {
			return mp, false, fmt.Errorf("storage: inconsistent broker metadata across log.dirs: %+v in %s vs %+v", got, d.path, mp)
		}
		mp, found = got, true
	}
	return mp, found, nil
}

// ClusterID returns the cluster id stored in meta.properties ("" if none).
func (m *LogManager) ClusterID() string {
	mp, found, err := m.ReadMetaProperties()
	if err != nil || !found {
		return ""
	}
	return mp.ClusterID
}
