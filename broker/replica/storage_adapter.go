package replica

import (
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage"
)

// storageStore adapts *storage.LogManager to LogStore.
type storageStore struct{ logs *storage.LogManager }

// NewStorageLogStore wraps the broker's log manager.
func NewStorageLogStore(logs *storage.LogManager) LogStore { return &storageStore{logs: logs} }

func (s *storageStore) GetOrCreateLog(tp common.TopicPartition, cfg storage.LogConfig) (Log, error) {
	l, err := s.logs.GetOrCreateLog(tp, cfg)
	if err != nil {
		return nil, err
	}
	return storageLog{l}, nil
}

func (s *storageStore) GetLog(tp common.TopicPartition) (Log, bool) {
	l, ok := s.logs.GetLog(tp)
	if !ok {
		return nil, false
	}
	return storageLog{l}, true
}

func (s *storageStore) DeleteLog(tp common.TopicPartition) error {
	return s.logs.DeleteLog(tp)
}

// storageLog adapts *storage.Log to Log.
type storageLog struct{ l *storage.Log }

// StorageLog returns the *storage.Log behind a Log obtained from a store
// made by NewStorageLogStore (nil otherwise).
func StorageLog(l Log) *storage.Log {
	if sl, ok := l.(storageLog); ok {
		return sl.l
	}
	return nil
}

func (s storageLog) AppendAsLeader(records []byte, leaderEpoch int32) (AppendResult, error) {
	info, err := s.l.AppendAsLeader(records, leaderEpoch)
	if err != nil {
		return AppendResult{}, err
	}
	return appendResult(info), nil
}

func (s storageLog) AppendAsCoordinator(records []byte, leaderEpoch int32) (AppendResult, error) {
	info, err := s.l.AppendAsCoordinator(records, leaderEpoch)
	if err != nil {
		return AppendResult{}, err
	}
	return appendResult(info), nil
}

func (s storageLog) AppendAsFollower(records []byte) (AppendResult, error) {
	info, err := s.l.AppendAsFollower(records)
	if err != nil {
		return AppendResult{}, err
	}
	return appendResult(info), nil
}

func (s storageLog) TruncateTo(offset int64) error { return s.l.TruncateTo(offset) }

func (s storageLog) TruncateFullyAndStartAt(offset int64) error {
	return s.l.TruncateFullyAndStartAt(offset)
}

func appendResult(info storage.AppendInfo) AppendResult {
	return AppendResult{
		FirstOffset:    info.FirstOffset,
		LastOffset:     info.LastOffset,
		LogAppendTime:  info.LogAppendTime,
		LogStartOffset: info.LogStartOffset,
		NumMessages:    info.NumMessages,
		Duplicate:      info.Duplicate,
	}
}

func (s storageLog) LastStableOffset() int64 { return s.l.LastStableOffset() }

func (s storageLog) AbortedTransactions(startOffset, upperBound int64) ([]AbortedTxn, error) {
	txns, err := s.l.CollectAbortedTransactions(startOffset, upperBound)
	if err != nil {
		return nil, err
	}
	out := make([]AbortedTxn, len(txns))
	for i, t := range txns {
		out[i] = AbortedTxn{ProducerID: t.ProducerID, FirstOffset: t.FirstOffset}
	}
	return out, nil
}

func (s storageLog) Read(startOffset int64, maxBytes int32, maxOffset int64, minOneMessage bool) (ReadResult, error) {
	fd, err := s.l.Read(startOffset, maxBytes, maxOffset, minOneMessage)
	if err != nil {
		return ReadResult{}, err
	}
	if fd.Records.Len() == 0 {
		return ReadResult{FirstOffset: fd.FirstOffset}, nil
	}
	return ReadResult{Records: fd.Records, FirstOffset: fd.FirstOffset}, nil
}

func (s storageLog) LogStartOffset() int64     { return s.l.LogStartOffset() }
func (s storageLog) LogEndOffset() int64       { return s.l.LogEndOffset() }
func (s storageLog) HighWatermark() int64      { return s.l.HighWatermark() }
func (s storageLog) SetHighWatermark(hw int64) { s.l.SetHighWatermark(hw) }

func (s storageLog) FetchOffsetByTimestamp(ts int64) (int64, int64, int32, bool, error) {
	return s.l.FetchOffsetByTimestamp(ts)
}

func (s storageLog) DeleteRecordsBefore(offset int64) (int64, error) {
	return s.l.DeleteRecordsBefore(offset)
}

func (s storageLog) AssignEpoch(epoch int32, startOffset int64) error {
	return s.l.LeaderEpochs().Assign(epoch, startOffset)
}

func (s storageLog) LatestEpoch() (int32, bool) {
	e := s.l.LeaderEpochs().LatestEpoch()
	return e, e >= 0
}

func (s storageLog) EndOffsetForEpoch(epoch int32) (int32, int64) {
	return s.l.LeaderEpochs().EndOffsetFor(epoch)
}

func (s storageLog) DeleteRecordsAllowed() bool {
	cfg := s.l.Config()
	return !(cfg.CleanupPolicyCompact && !cfg.CleanupPolicyDelete)
}

// CompressionType is the topic's compression.type; Fetch below v10 cannot
// carry zstd batches.
func (s storageLog) CompressionType() string { return s.l.Config().CompressionType }

func (s storageLog) SetTopicID(id [16]byte) error { return s.l.SetTopicID(id) }
