package storage

// Seams for the parts of the storage engine written by the record
// engineer: producer state (producerstate.go) and the log cleaner
// (cleaner.go). Both are optional; the engine works without them.

// producerStateHook is the minimal interface the append, roll, truncate
// and close paths call. It is a placeholder until producerstate.go lands:
// the Log keeps a nil hook, so nothing is checked or snapshotted.
//
// TODO(producer state): replace with the committed ProducerStateManager API:
// checkAppend before writing (duplicates return the original offsets),
// onAppend after, onRoll takes a snapshot at the new base offset, onTruncate
// drops state outside [logStart, logEnd), onClose snapshots at the log end.
type producerStateHook interface {
	checkAppend(data []byte, leader bool) (*AppendInfo, error)
	onAppend(data []byte)
	onRoll(newBase int64)
	onTruncate(logStart, logEnd int64)
	onSegmentDeleted(base int64)
	onClose(logEnd int64)
}

// newProducerStateHook builds the hook for a log; nil until the producer
// state manager is wired in (producerstate.go may set it from init).
var newProducerStateHook func(l *Log) (producerStateHook, error)

// LogCleaner is what the LogManager runs when ManagerConfig.CleanerEnable is
// set (Kafka's LogCleaner). cleaner.go provides it by setting
// NewLogCleaner from an init function; Startup starts it and Shutdown stops
// it before the logs are closed. See doc.go for what a cleaner may use.
type LogCleaner interface {
	Startup()
	Shutdown() error
}

// NewLogCleaner builds the cleaner for a LogManager; nil means "no cleaner
// implementation linked in" and CleanerEnable only logs that fact.
var NewLogCleaner func(m *LogManager) LogCleaner
