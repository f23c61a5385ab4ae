package replica

// Moving a replica between log directories of this broker (Kafka's
// ReplicaManager.alterReplicaLogDirs / describeLogDirs /
// maybeAddLogDirFetchers, ReplicaAlterLogDirsManager and
// ReplicaAlterLogDirsThread, Partition.maybeCreateFutureReplica and
// maybeReplaceCurrentWithFutureReplica).
//
// AlterReplicaLogDirs creates the partition's future log in the target
// directory (broker/storage futurelog.go) and starts a mover, one
// goroutine per moving partition (Kafka runs num.replica.alter.log.dirs.threads
// threads sharing the partitions; one per partition keeps each copy
// independent). The mover copies the current log into the future log from
// the current log start on, in chunks of replica.fetch.max.bytes paced by
// replica.alter.log.dirs.io.max.bytes.per.second, following new appends,
// and mirrors the current log's truncations (storage's truncation floor),
// log start and high watermark. When the copy is close to the end it takes
// the partition's write lock — no append, truncation or role change can
// run — copies the rest, and has storage swap the logs (future renamed to
// <topic>-<partition>, old directory deleted asynchronously); p.log then
// points at the new log. A future log found at start-up resumes when
// LeaderAndIsr brings the partition back (maybeAddLogDirMovers).
//
// A replica this broker does not host yet gets the directory remembered
// (storage's preferred log dir) for when LeaderAndIsr creates it, and the
// answer REPLICA_NOT_AVAILABLE, as Kafka.

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage"
)

// LogDirStore is what moving replicas between log directories needs from
// the broker's log manager; *storage.LogManager satisfies it.
type LogDirStore interface {
	// CheckLogDir: kerr.LogDirNotFound for a path not in log.dirs,
	// kerr.KafkaStorageError for an offline one.
	CheckLogDir(dir string) error
	MaybeUpdatePreferredLogDir(tp common.TopicPartition, dir string) error
	// LogDirs are the directories of tp's current and future logs.
	LogDirs(tp common.TopicPartition) (current, future string)
	GetLog(tp common.TopicPartition) (*storage.Log, bool)
	GetFutureLog(tp common.TopicPartition) (*storage.Log, bool)
	GetOrCreateFutureLog(tp common.TopicPartition, dir string, cfg storage.LogConfig) (*storage.Log, bool, error)
	DeleteFutureLog(tp common.TopicPartition) error
	ReplaceCurrentWithFutureLog(tp common.TopicPartition) (*storage.Log, error)
	DescribeLogDirs(include func(common.TopicPartition) bool) []storage.LogDirDescription
}

// defaultAlterLogDirsChunk is replica.fetch.max.bytes' default, the size
// of one copy step when Config.AlterLogDirsChunkBytes is 0.
const defaultAlterLogDirsChunk = 1 << 20

// logDirMovers owns the mover goroutines, one per moving partition.
type logDirMovers struct {
	// mu guards the following (a leaf lock).
	mu     sync.Mutex
	movers map[common.TopicPartition]*logDirMover
	closed bool
}

// logDirMover is one partition's ReplicaAlterLogDirs copy.
type logDirMover struct {
	tp   common.TopicPartition
	stop chan struct{}
	done chan struct{}
}

// startLogDirMover starts tp's mover unless one runs.
func (m *Manager) startLogDirMover(tp common.TopicPartition) {
	ms := &m.logDirMovers
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.closed {
		return
	}
	if ms.movers == nil {
		ms.movers = map[common.TopicPartition]*logDirMover{}
	}
	if _, ok := ms.movers[tp]; ok {
		return
	}
	mv := &logDirMover{tp: tp, stop: make(chan struct{}), done: make(chan struct{})}
	ms.movers[tp] = mv
	go m.runLogDirMover(mv) // owned by logDirMovers; stopLogDirMover / stopLogDirMovers end it
}

// stopLogDirMover stops tp's mover and waits for it. Never call it
// holding tp's Partition.mu (the mover takes it).
func (m *Manager) stopLogDirMover(tp common.TopicPartition) {
	ms := &m.logDirMovers
	ms.mu.Lock()
	mv := ms.movers[tp]
	delete(ms.movers, tp)
	ms.mu.Unlock()
	if mv != nil {
		close(mv.stop)
		<-mv.done
	}
}

// stopLogDirMovers stops every mover (Shutdown); the future logs stay on
// disk and the moves resume after a restart.
func (m *Manager) stopLogDirMovers() {
	ms := &m.logDirMovers
	ms.mu.Lock()
	ms.closed = true
	movers := ms.movers
	ms.movers = nil
	ms.mu.Unlock()
	for _, mv := range movers {
		close(mv.stop)
	}
	for _, mv := range movers {
		<-mv.done
	}
}

// LogDirMoveInProgress tells whether tp's mover runs (tests).
func (m *Manager) LogDirMoveInProgress(tp common.TopicPartition) bool {
	m.logDirMovers.mu.Lock()
	defer m.logDirMovers.mu.Unlock()
	_, ok := m.logDirMovers.movers[tp]
	return ok
}

func (m *Manager) runLogDirMover(mv *logDirMover) {
	defer close(mv.done)
	defer func() {
		ms := &m.logDirMovers
		ms.mu.Lock()
		if ms.movers[mv.tp] == mv {
			delete(ms.movers, mv.tp)
		}
		ms.mu.Unlock()
	}()
	log := m.log.With("topic", mv.tp.Topic, "partition", mv.tp.Partition, "component", "ReplicaAlterLogDirs")
	log.Info("moving replica to another log directory")
	for {
		select {
		case <-mv.stop:
			return
		default:
		}
		done, err := m.logDirMoveStep(mv)
		if done {
			if err != nil {
				log.Error("log directory move stopped", "err", err)
			}
			return
		}
		if err != nil {
			log.Warn("log directory move step failed; retrying", "err", err)
			if !mv.sleep(time.Second) {
				return
			}
		}
	}
}

// sleep waits d or until the mover is stopped (false).
func (mv *logDirMover) sleep(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-mv.stop:
		return false
	case <-t.C:
		return true
	}
}

// errMoveAbandoned ends a mover whose partition, current log or future
// log went away (StopReplica, a cancelled move, a restart of the move).
var errMoveAbandoned = errors.New("replica: log directory move abandoned")

// logDirMoveStep copies one chunk, or swaps the logs when the copy is
// near the end. done ends the mover (err nil: finished or abandoned).
func (m *Manager) logDirMoveStep(mv *logDirMover) (done bool, err error) {
	store := m.cfg.LogDirs
	p, ok := m.Partition(mv.tp)
	if !ok {
		return true, nil
	}
	cur, ok1 := store.GetLog(mv.tp)
	fut, ok2 := store.GetFutureLog(mv.tp)
	if !ok1 || !ok2 || p.Log() != Log(cur) {
		return true, nil
	}
	chunk := m.cfg.AlterLogDirsChunkBytes
	if chunk <= 0 {
		chunk = defaultAlterLogDirsChunk
	}
	var rate int64
	if m.cfg.AlterLogDirsRate != nil {
		rate = m.cfg.AlterLogDirsRate()
	}
	if rate > 0 && rate < int64(chunk) {
		chunk = int32(max(rate, 1024))
	}
	if err := followCurrentLog(cur, fut); err != nil {
		return abandonedOr(err)
	}
	start := time.Now()
	n, err := copyChunk(cur, fut, chunk)
	if err != nil {
		return abandonedOr(err)
	}
	if n > 0 && !m.throttleMove(mv, n, start) {
		return true, nil
	}
	if fut.LogEndOffset() < cur.LogEndOffset() && n >= int(chunk)/2 {
		return false, nil // far behind: keep copying without the lock
	}
	return p.maybeReplaceCurrentWithFutureLog(store, cur, fut, chunk)
}

// throttleMove holds the mover until n bytes copied since start fit the
// replica.alter.log.dirs.io.max.bytes.per.second rate. The rate is read
// again every 100 ms, so a raised or removed throttle takes effect at once
// rather than after a sleep computed from the old rate (one batch can be
// far larger than a second's worth at a low rate). false: the mover stopped.
func (m *Manager) throttleMove(mv *logDirMover, n int, start time.Time) bool {
	for {
		var rate int64
		if m.cfg.AlterLogDirsRate != nil {
			rate = m.cfg.AlterLogDirsRate()
		}
		if rate <= 0 || rate == math.MaxInt64 {
			return true
		}
		left := time.Duration(float64(n)/float64(rate)*float64(time.Second)) - time.Since(start)
		if left <= 0 {
			return true
		}
		if !mv.sleep(min(left, 100*time.Millisecond)) {
			return false
		}
	}
}

func abandonedOr(err error) (bool, error) {
	if errors.Is(err, storage.ErrLogClosed) {
		return true, nil
	}
	return false, err
}

// followCurrentLog mirrors into fut what happened to cur besides appends:
// a truncation below fut's end cuts fut back, a log start beyond fut's
// end restarts fut there, and fut's log start and high watermark follow
// cur's (Kafka's future replica takes both from its fetch responses).
func followCurrentLog(cur, fut *storage.Log) error {
	if off, ok := cur.TakeTruncationFloor(); ok && off < fut.LogEndOffset() {
		if err := fut.TruncateTo(off); err != nil {
			return err
		}
	}
	ls := cur.LogStartOffset()
	if ls > fut.LogEndOffset() {
		if err := fut.TruncateFullyAndStartAt(ls); err != nil {
			return err
		}
	}
	fut.SetHighWatermark(min(cur.HighWatermark(), fut.LogEndOffset()))
	if ls > fut.LogStartOffset() && ls <= fut.HighWatermark() {
		if _, err := fut.DeleteRecordsBefore(ls); err != nil {
			return err
		}
	}
	return nil
}

// copyChunk appends to fut up to maxBytes of cur's batches from fut's log
// end (not bounded by the high watermark: a truncation of cur is mirrored
// by followCurrentLog) and returns the bytes copied.
func copyChunk(cur, fut *storage.Log, maxBytes int32) (int, error) {
	from := fut.LogEndOffset()
	end := cur.LogEndOffset()
	if from >= end {
		return 0, nil
	}
	recs, err := cur.ReadRecords(from, maxBytes, end, true)
	if errors.Is(err, kerr.OffsetOutOfRange) {
		return 0, nil // retention or a truncation moved cur; followCurrentLog catches up
	}
	if err != nil || recs == nil {
		return 0, err
	}
	data, err := recs.ReadAll()
	if err != nil {
		return 0, err
	}
	data = wholeBatches(data)
	if len(data) == 0 {
		return 0, nil
	}
	if base, _, ok := firstBatchRange(data); ok && base < from {
		if from != fut.LogStartOffset() {
			return 0, nil // cur changed under the read; the next step sees its floor
		}
		// An empty copy starting inside cur's first batch (a log start
		// moved into a batch): restart it at the batch so it is copied whole.
		if err := fut.TruncateFullyAndStartAt(base); err != nil {
			return 0, err
		}
	}
	if _, err := fut.AppendAsFollower(data); err != nil {
		if errors.Is(err, storage.ErrNonMonotonicOffsets) {
			return 0, nil
		}
		return 0, err
	}
	return len(data), nil
}

// wholeBatches cuts a read back to its complete batches: a read stops at
// its byte limit, possibly inside a batch (with minOneMessage the first
// batch is always whole).
func wholeBatches(data []byte) []byte {
	pos := 0
	for pos+batchHeaderPrefix <= len(data) {
		size := batchHeaderPrefix + int(int32(binary.BigEndian.Uint32(data[pos+8:])))
		if size <= batchHeaderPrefix || pos+size > len(data) {
			break
		}
		pos += size
	}
	return data[:pos]
}

// batchHeaderPrefix is a batch's base offset and length fields, the bytes
// before the length counts.
const batchHeaderPrefix = 12

// maybeReplaceCurrentWithFutureLog is Kafka's
// Partition.maybeReplaceCurrentWithFutureReplica: under the write lock
// (no append, truncation or role change meanwhile) it copies what is
// left, at most a few chunks, and when the logs end at the same offset
// has storage swap them and makes the new log the partition's.
func (p *Partition) maybeReplaceCurrentWithFutureLog(store LogDirStore, cur, fut *storage.Log, chunk int32) (done bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.log != Log(cur) {
		return true, nil
	}
	if err := followCurrentLog(cur, fut); err != nil {
		return abandonedOr(err)
	}
	for i := 0; i < 4 && fut.LogEndOffset() < cur.LogEndOffset(); i++ {
		n, err := copyChunk(cur, fut, chunk)
		if err != nil {
			return abandonedOr(err)
		}
		if n == 0 {
			break
		}
	}
	if fut.LogEndOffset() != cur.LogEndOffset() {
		return false, nil
	}
	// A non-nil log with an error: swapped, but a checkpoint write failed.
	l, err := store.ReplaceCurrentWithFutureLog(p.tp)
	if l != nil {
		p.log = l
	}
	return true, err
}

// maybeAddLogDirMovers resumes the moves of partitions that have a future
// log (found at start-up, or left by a stopped mover) once LeaderAndIsr
// hosts them (Kafka's ReplicaManager.maybeAddLogDirFetchers).
func (m *Manager) maybeAddLogDirMovers(tps []common.TopicPartition) {
	if m.cfg.LogDirs == nil {
		return
	}
	for _, tp := range tps {
		if _, ok := m.cfg.LogDirs.GetFutureLog(tp); !ok {
			continue
		}
		if p, ok := m.Partition(tp); ok && p.Log() != nil {
			m.startLogDirMover(tp)
		}
	}
}

// AlterReplicaLogDirs serves AlterReplicaLogDirs (key 34) for the
// partitions the caller is authorized for (see the api file for the
// rules and codes).
func (m *Manager) AlterReplicaLogDirs(_ context.Context, req *kmsg.AlterReplicaLogDirsRequest) *kmsg.AlterReplicaLogDirsResponse {
	resp := req.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	type move struct {
		tp  common.TopicPartition
		dir string
	}
	var moves []move
	cfgs := map[string]storage.LogConfig{}
	cfgErrs := map[string]error{}
	for _, d := range req.Dirs {
		for _, t := range d.Topics {
			if _, ok := cfgs[t.Topic]; !ok && cfgErrs[t.Topic] == nil {
				c, err := m.logConfig(t.Topic) // may read ZooKeeper: before any lock
				cfgs[t.Topic], cfgErrs[t.Topic] = c, err
			}
			for _, p := range t.Partitions {
				moves = append(moves, move{common.TopicPartition{Topic: t.Topic, Partition: p}, d.Dir})
			}
		}
	}
	codes := make([]int16, len(moves))
	m.controlMu.Lock()
	for i, mv := range moves {
		if err := cfgErrs[mv.tp.Topic]; err != nil {
			codes[i] = m.storageErrorCode(err, mv.tp, "topic_config")
			continue
		}
		codes[i] = m.alterReplicaLogDir(mv.tp, mv.dir, cfgs[mv.tp.Topic])
	}
	m.controlMu.Unlock()
	byTopic := map[string]int{}
	for i, mv := range moves {
		j, ok := byTopic[mv.tp.Topic]
		if !ok {
			j = len(resp.Topics)
			byTopic[mv.tp.Topic] = j
			rt := kmsg.NewAlterReplicaLogDirsResponseTopic()
			rt.Topic = mv.tp.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
		rp.Partition, rp.ErrorCode = mv.tp.Partition, codes[i]
		resp.Topics[j].Partitions = append(resp.Topics[j].Partitions, rp)
	}
	return resp
}

// alterReplicaLogDir moves one replica; must hold controlMu.
func (m *Manager) alterReplicaLogDir(tp common.TopicPartition, dir string, cfg storage.LogConfig) int16 {
	store := m.cfg.LogDirs
	code := func(err error) int16 {
		var ke *kerr.Error
		if errors.As(err, &ke) {
			return ke.Code
		}
		return m.storageErrorCode(err, tp, "alter_replica_log_dirs")
	}
	if _, err := storage.FutureDirName(tp); err != nil {
		return code(err)
	}
	if err := store.CheckLogDir(dir); err != nil {
		return code(err)
	}
	p, hosted := m.Partition(tp)
	if hosted {
		if _, fut := store.LogDirs(tp); fut != "" && fut != dir {
			// Redirected: drop the copy to the other directory.
			m.stopLogDirMover(tp)
			if err := store.DeleteFutureLog(tp); err != nil {
				return code(err)
			}
		}
	}
	if err := store.MaybeUpdatePreferredLogDir(tp, dir); err != nil {
		return code(err)
	}
	if !hosted {
		if m.meta.HasPartition(tp.Topic, tp.Partition) {
			return kerr.ReplicaNotAvailable.Code
		}
		return kerr.UnknownTopicOrPartition.Code
	}
	p.mu.Lock()
	if p.log == nil {
		p.mu.Unlock()
		return kerr.ReplicaNotAvailable.Code
	}
	if cur, _ := store.LogDirs(tp); cur == dir {
		p.mu.Unlock()
		return 0 // already there
	}
	_, _, err := store.GetOrCreateFutureLog(tp, dir, cfg)
	p.mu.Unlock()
	if err != nil {
		return code(err)
	}
	m.startLogDirMover(tp)
	return 0
}

// DescribeLogDirs serves DescribeLogDirs (key 35): every log directory
// with the current and future logs of the requested partitions (Topics
// nil: all), their sizes, offset lags and is_future.
func (m *Manager) DescribeLogDirs(_ context.Context, req *kmsg.DescribeLogDirsRequest) *kmsg.DescribeLogDirsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	var include func(common.TopicPartition) bool
	if req.Topics != nil {
		want := map[common.TopicPartition]bool{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				want[common.TopicPartition{Topic: t.Topic, Partition: p}] = true
			}
		}
		include = func(tp common.TopicPartition) bool { return want[tp] }
	}
	for _, d := range m.cfg.LogDirs.DescribeLogDirs(include) {
		rd := kmsg.NewDescribeLogDirsResponseDir()
		rd.Dir = d.Path
		if d.Err != nil {
			rd.ErrorCode = kerr.KafkaStorageError.Code
			var ke *kerr.Error
			if errors.As(d.Err, &ke) {
				rd.ErrorCode = ke.Code
			}
			resp.Dirs = append(resp.Dirs, rd)
			continue
		}
		byTopic := map[string]int{}
		for _, p := range d.Partitions {
			j, ok := byTopic[p.Topic]
			if !ok {
				j = len(rd.Topics)
				byTopic[p.Topic] = j
				rt := kmsg.NewDescribeLogDirsResponseDirTopic()
				rt.Topic = p.Topic
				rd.Topics = append(rd.Topics, rt)
			}
			rp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			rp.Partition, rp.Size, rp.OffsetLag, rp.IsFuture = p.Partition, p.Size, p.OffsetLag, p.IsFuture
			rd.Topics[j].Partitions = append(rd.Topics[j].Partitions, rp)
		}
		resp.Dirs = append(resp.Dirs, rd)
	}
	return resp
}
