package storage

// The storage's share of the process's file descriptors. A segment holds
// one descriptor, its .log (indexes hold none: index.go, indexfiles.go),
// so a broker with many replicas could take every descriptor the process
// may open and leave none for the listener's next connection, the
// controller's channels or the ZooKeeper session — the wedged broker of
// issue 13. Segments therefore draw from a budget: RLIMIT_NOFILE (the
// soft limit, which the Go runtime raises to the hard limit at start)
// less a reserve for everything else, less the index writers' cache. A
// segment that would go over it is not opened: the roll or the log
// creation that needed it fails with ErrOutOfDescriptors, answered as
// KAFKA_STORAGE_ERROR for that partition alone (see IsResourceExhausted
// for why the directory stays online), and the broker keeps serving.

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
)

// ErrOutOfDescriptors is the error of a segment that would exceed the
// storage's descriptor budget. It matches syscall.EMFILE with errors.Is.
var ErrOutOfDescriptors = fmt.Errorf("storage: out of file descriptors for log segments: %w", syscall.EMFILE)

// descriptorBudget counts the open segment files against a limit.
type descriptorBudget struct {
	used  atomic.Int64
	limit atomic.Int64
	// rlimit and reserve are what limit was computed from (the error
	// message).
	rlimit, reserve int64
}

// segmentFiles is the process-wide budget of segment descriptors.
var segmentFiles = newDescriptorBudget()

// descriptorReserve is what stays free for connections, ZooKeeper,
// checkpoints and the runtime: an eighth of the limit, at least 64 and
// at most 2,048 (with Kafka's usual 20,000: 2,048 reserved, 1,024 for the
// index writers' cache, 16,928 segments).
func descriptorReserve(rlimit int64) int64 {
	return min(max(rlimit/8, 64), 2048)
}

func newDescriptorBudget() *descriptorBudget {
	var rl syscall.Rlimit
	cur := int64(1 << 20)
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Cur < uint64(cur) {
		cur = int64(rl.Cur)
	}
	b := &descriptorBudget{rlimit: cur, reserve: descriptorReserve(cur)}
	storage := max(cur-b.reserve, 8)
	// The index writers' cache gets an eighth of the storage share (at
	// most maxIndexWriteFiles), the segments the rest.
	indexFiles.max = int(min(max(storage/8, 4), maxIndexWriteFiles))
	b.limit.Store(storage - int64(indexFiles.max))
	return b
}

// acquire takes one descriptor from the budget.
func (b *descriptorBudget) acquire() error {
	if n := b.used.Add(1); n > b.limit.Load() {
		b.used.Add(-1)
		return fmt.Errorf("%w (%d open, limit %d: RLIMIT_NOFILE %d less %d reserved for connections and ZooKeeper and %d for index writes)",
			ErrOutOfDescriptors, n-1, b.limit.Load(), b.rlimit, b.reserve, indexFiles.max)
	}
	return nil
}

func (b *descriptorBudget) release() { b.used.Add(-1) }

// OpenSegmentFiles is the number of segment descriptors open now and the
// budget's limit (metrics, tests).
func OpenSegmentFiles() (open, limit int64) {
	return segmentFiles.used.Load(), segmentFiles.limit.Load()
}

// SetSegmentFileLimit changes the budget's limit and returns a function
// restoring it. For tests only: it is process-wide.
func SetSegmentFileLimit(n int64) (restore func()) {
	old := segmentFiles.limit.Swap(n)
	return func() { segmentFiles.limit.Store(old) }
}

// IsResourceExhausted reports whether err means the process ran out of a
// resource rather than the disk failing: out of descriptors (EMFILE, our
// own budget; ENFILE for the whole system), of memory-map areas or memory
// (ENOMEM from mmap).
//
// Kafka 2.8 cannot tell these apart: "Too many open files" is an
// IOException, and LogManager.getOrCreateLog or Log's
// maybeHandleIOException hand every IOException to the
// LogDirFailureChannel, which takes the whole directory offline until
// the broker restarts (and stops the broker when it was the last one).
// Klassik deliberately does not: nothing is wrong with the disk, the
// limit passes as soon as descriptors are freed (topics deleted,
// connections closed), and taking a directory offline would turn one
// partition's failed creation or roll into an outage of every partition
// there. The operation that needed the resource fails instead, with
// KAFKA_STORAGE_ERROR for its partition, and is retried by its client or
// by the next LeaderAndIsr. Such an error leaves the log consistent: a
// segment that cannot be opened is never added, and an index entry whose
// pair could not be written is taken back (Segment.indexBatch).
func IsResourceExhausted(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ENOMEM)
}
