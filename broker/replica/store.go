package replica

import (
	"io"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AppendResult is what a leader append reports (storage.AppendInfo).
type AppendResult struct {
	FirstOffset    int64
	LastOffset     int64
	LogAppendTime  int64 // -1 unless the topic uses LogAppendTime
	LogStartOffset int64
	NumMessages    int32
	Duplicate      bool // an idempotent retry; FirstOffset is the original one
}

// RecordData is a range of record batches returned by a read. It is a file
// range in the real log (storage.FileRecords) so that it can be sent with
// sendfile; Len must be cheap because long-polling fetches call it on every
// wake-up.
type RecordData interface {
	Len() int
	ReadAll() ([]byte, error)
	WriteTo(w io.Writer) (int64, error)
}

// ReadResult is the result of Log.Read (storage.FetchData).
type ReadResult struct {
	Records     RecordData // may be nil when nothing was read
	FirstOffset int64
}

// Log is what a Partition needs from its local replica log. *storage.Log
// satisfies it through the adapter in storage_adapter.go. Errors that are
// protocol outcomes are kerr values (kerr.OffsetOutOfRange,
// kerr.CorruptMessage, kerr.OutOfOrderSequenceNumber ...); anything else is
// mapped to UNKNOWN_SERVER_ERROR (or KAFKA_STORAGE_ERROR) by the caller.
type Log interface {
	AppendAsLeader(records []byte, leaderEpoch int32) (AppendResult, error)
	// AppendAsCoordinator is AppendAsLeader for data the broker writes
	// itself (group and transaction coordinators, transaction markers).
	AppendAsCoordinator(records []byte, leaderEpoch int32) (AppendResult, error)
	Read(startOffset int64, maxBytes int32, maxOffset int64, minOneMessage bool) (ReadResult, error)
	// AppendAsFollower appends batches copied from the leader with their
	// offsets and leader epochs (the epoch cache follows the batches).
	AppendAsFollower(records []byte) (AppendResult, error)
	// TruncateTo removes every record at or after offset (no-op at or
	// beyond the log end), with the epoch cache and producer state.
	TruncateTo(offset int64) error
	// TruncateFullyAndStartAt empties the log and restarts it at offset.
	TruncateFullyAndStartAt(offset int64) error

	LogStartOffset() int64
	LogEndOffset() int64
	HighWatermark() int64
	SetHighWatermark(hw int64)
	// LastStableOffset is min(HW, first offset of the earliest open
	// transaction): the READ_COMMITTED bound.
	LastStableOffset() int64
	// AbortedTransactions lists the aborted transactions overlapping
	// [startOffset, upperBound) for READ_COMMITTED fetches.
	AbortedTransactions(startOffset, upperBound int64) ([]AbortedTxn, error)

	// FetchOffsetByTimestamp handles ts >= 0, -2 (earliest) and -3 (max
	// timestamp). found=false means no such offset (offset -1 to the client).
	FetchOffsetByTimestamp(ts int64) (offset, timestamp int64, leaderEpoch int32, found bool, err error)
	DeleteRecordsBefore(offset int64) (newLogStart int64, err error)

	// Leader epoch cache (leader-epoch-checkpoint).
	AssignEpoch(epoch int32, startOffset int64) error
	LatestEpoch() (epoch int32, ok bool)
	// EndOffsetForEpoch follows replication.md §8.3: (-1, -1) when undefined.
	EndOffsetForEpoch(epoch int32) (int32, int64)

	// DeleteRecordsAllowed is false for compact-only topics
	// (cleanup.policy=compact), which reject DeleteRecords with
	// POLICY_VIOLATION.
	DeleteRecordsAllowed() bool
}

// AbortedTxn is one aborted transaction as a READ_COMMITTED fetch reports
// it (storage.AbortedTxn).
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
}

// LogStore owns every partition log of this broker (storage.LogManager).
type LogStore interface {
	// GetOrCreateLog opens the log of tp, or creates it with cfg (the
	// topic's effective configuration, resolved by the caller before it
	// takes the partition lock).
	GetOrCreateLog(tp common.TopicPartition, cfg storage.LogConfig) (Log, error)
	GetLog(tp common.TopicPartition) (Log, bool)
	DeleteLog(tp common.TopicPartition) error
}

// MetadataCache is the part of the broker's metadata cache the manager
// drives and reads. *metadata.Cache satisfies it.
type MetadataCache interface {
	// Update applies an accepted UpdateMetadata request and returns the
	// partitions the request marked as deleted (leader -2).
	Update(req *kmsg.UpdateMetadataRequest) (deleted []common.TopicPartition)
	// HasPartition tells a partition the cluster knows (a request for it
	// that this broker does not host answers NOT_LEADER_OR_FOLLOWER) from
	// an unknown one (UNKNOWN_TOPIC_OR_PARTITION).
	HasPartition(topic string, partition int32) bool
	// TopicName resolves the topic ids of Fetch v13+ for topics this broker
	// learned from UpdateMetadata but does not host.
	TopicName(id [16]byte) (string, bool)
}

// FollowerFetcher is told which partitions to fetch from which leader and
// which to stop. FetcherManager (one goroutine per source broker and
// fetcher id, replication.md §5) implements it; the manager builds one from
// Config.ReplicaFetch, and tests may inject their own. Without any,
// followers only record their leader.
type FollowerFetcher interface {
	// AddPartitions starts fetching each partition from its leader; the
	// fetcher truncates by leader epoch before fetching from the log end.
	AddPartitions(parts map[common.TopicPartition]FollowerStart)
	RemovePartitions(tps []common.TopicPartition)
}

// FollowerStart is where a follower begins fetching.
type FollowerStart struct {
	LeaderID int32
	// LeaderHost and LeaderPort are the leader's inter-broker endpoint from
	// the request's LiveLeaders.
	LeaderHost  string
	LeaderPort  int32
	LeaderEpoch int32
	TopicID     [16]byte
	FetchOffset int64
}
