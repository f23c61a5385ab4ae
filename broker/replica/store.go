package replica

import (
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Log is what a Partition needs from its local replica log; *storage.Log
// satisfies it (some of the methods are in broker/storage/replica_api.go),
// and tests use an in-memory log. Errors that are
// protocol outcomes are kerr values (kerr.OffsetOutOfRange,
// kerr.CorruptMessage, kerr.OutOfOrderSequenceNumber ...); anything else is
// mapped to UNKNOWN_SERVER_ERROR (or KAFKA_STORAGE_ERROR) by the caller.
type Log interface {
	AppendAsLeader(records []byte, leaderEpoch int32) (storage.AppendInfo, error)
	// AppendAsCoordinator is AppendAsLeader for data the broker writes
	// itself (group and transaction coordinators, transaction markers).
	AppendAsCoordinator(records []byte, leaderEpoch int32) (storage.AppendInfo, error)
	// ReadRecords returns the batches from startOffset below maxOffset, at
	// most maxBytes (at least one batch if minOneMessage); nil when there
	// are none. The real log's records are a file range sent with sendfile,
	// so Len must be cheap: a long-polling fetch calls it on every wake-up.
	ReadRecords(startOffset int64, maxBytes int32, maxOffset int64, minOneMessage bool) (storage.Records, error)
	// AppendAsFollower appends batches copied from the leader with their
	// offsets and leader epochs (the epoch cache follows the batches).
	AppendAsFollower(records []byte) (storage.AppendInfo, error)
	// TruncateTo removes every record at or after offset (no-op at or
	// beyond the log end), with the epoch cache and producer state.
	TruncateTo(offset int64) error
	// TruncateFullyAndStartAt empties the log and restarts it at offset.
	TruncateFullyAndStartAt(offset int64) error

	LogStartOffset() int64
	LogEndOffset() int64
	// The Log owns the high watermark (see storage.Log.HighWatermark): a
	// leader only raises it (MaybeIncrementHighWatermark, which reports
	// whether it rose), a follower copies its leader's (SetHighWatermark),
	// truncation lowers it; the Partition calls the first two under its
	// role lock.
	HighWatermark() int64
	MaybeIncrementHighWatermark(hw int64) bool
	SetHighWatermark(hw int64)
	// LastStableOffset is min(HW, first offset of the earliest open
	// transaction): the READ_COMMITTED bound.
	LastStableOffset() int64
	// CollectAbortedTransactions lists the aborted transactions overlapping
	// [startOffset, upperBound) for READ_COMMITTED fetches.
	CollectAbortedTransactions(startOffset, upperBound int64) ([]storage.AbortedTxn, error)
	// ActiveProducers is the partition's producer state, by producer id
	// (DescribeProducers).
	ActiveProducers() []storage.ProducerStateEntry

	// FetchOffsetByTimestamp handles ts >= 0, -2 (earliest) and -3 (max
	// timestamp). found=false means no such offset (offset -1 to the client).
	FetchOffsetByTimestamp(ts int64) (offset, timestamp int64, leaderEpoch int32, found bool, err error)
	DeleteRecordsBefore(offset int64) (newLogStart int64, err error)

	// Leader epoch cache (leader-epoch-checkpoint).
	AssignEpoch(epoch int32, startOffset int64) error
	LatestEpoch() (epoch int32, ok bool)
	// EndOffsetForEpoch is the largest cached epoch not above epoch and
	// its end offset (the next epoch's start offset, or the log end for
	// the latest); (-1, -1) when epoch is older than every cached one.
	EndOffsetForEpoch(epoch int32) (int32, int64)

	// DeleteRecordsAllowed is false for compact-only topics
	// (cleanup.policy=compact), which reject DeleteRecords with
	// POLICY_VIOLATION.
	DeleteRecordsAllowed() bool
	// CompressionType is the topic's compression.type; a Fetch below v10
	// cannot carry zstd batches.
	CompressionType() string
	// SetTopicID records the topic id (partition.metadata is written
	// before the next append); an id of another incarnation of the topic
	// is kerr.InconsistentTopicID.
	SetTopicID(id [16]byte) error
}

// LogStore owns every partition log of this broker (storage.LogManager).
type LogStore interface {
	// GetOrCreateLog opens the log of tp, or creates it with cfg (the
	// topic's effective configuration, resolved by the caller before it
	// takes the partition lock).
	GetOrCreateLog(tp common.TopicPartition, cfg storage.LogConfig) (Log, error)
	GetLog(tp common.TopicPartition) (Log, bool)
	DeleteLog(tp common.TopicPartition) error
	// OfflineDirs lists the failed log directories: a partition that is
	// not new and has no log may have it there (offline.go).
	OfflineDirs() []string
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
// fetcher id) implements it; the manager builds one from
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

// NewLogStore is the manager's LogStore over the broker's log manager. It
// only widens *storage.Log to Log: a Go method returning *storage.Log does
// not satisfy an interface method returning Log, and the manager's tests
// run the same code over in-memory logs.
func NewLogStore(logs *storage.LogManager) LogStore { return logManager{logs} }

type logManager struct{ logs *storage.LogManager }

func (s logManager) GetOrCreateLog(tp common.TopicPartition, cfg storage.LogConfig) (Log, error) {
	l, err := s.logs.GetOrCreateLog(tp, cfg)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (s logManager) GetLog(tp common.TopicPartition) (Log, bool) {
	l, ok := s.logs.GetLog(tp)
	if !ok {
		return nil, false
	}
	return l, true
}

func (s logManager) DeleteLog(tp common.TopicPartition) error { return s.logs.DeleteLog(tp) }

func (s logManager) OfflineDirs() []string { return s.logs.OfflineDirs() }
