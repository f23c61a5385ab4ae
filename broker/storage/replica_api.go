package storage

// The methods the replica manager's Log interface (broker/replica) needs
// beyond the log's own API: records as an interface, so that an in-memory
// test log can return its own, and the leader epoch cache and the topic
// configuration facts replication asks the log for.

import "io"

// Records is a range of record batches as a read hands it on: sized, read
// into memory, or written to a connection (a FileRecords is sent with
// sendfile).
type Records interface {
	Len() int
	ReadAll() ([]byte, error)
	WriteTo(w io.Writer) (int64, error)
}

// ReadRecords is Read returning only the records, nil when nothing was
// read (a FileRecords otherwise).
func (l *Log) ReadRecords(startOffset int64, maxBytes int32, maxOffset int64, minOneMessage bool) (Records, error) {
	fd, err := l.Read(startOffset, maxBytes, maxOffset, minOneMessage)
	if err != nil || fd.Records.Len() == 0 {
		return nil, err
	}
	return fd.Records, nil
}

// ReadRecordsInto is ReadRecords filling dst, which the result (nil when
// nothing was read) points to: the caller provides the memory, so a read
// allocates nothing.
func (l *Log) ReadRecordsInto(dst *FileRecords, startOffset int64, maxBytes int32, maxOffset int64, minOneMessage bool) (Records, error) {
	fd, err := l.Read(startOffset, maxBytes, maxOffset, minOneMessage)
	if err != nil || fd.Records.Len() == 0 {
		return nil, err
	}
	*dst = fd.Records
	return dst, nil
}

// AssignEpoch records in the leader epoch cache that epoch starts at
// startOffset.
func (l *Log) AssignEpoch(epoch int32, startOffset int64) error {
	if l.dirFailed.Load() {
		return l.errOffline()
	}
	return l.ioFailed("leader epoch checkpoint", l.LeaderEpochs().Assign(epoch, startOffset))
}

// LatestEpoch is the newest epoch of the leader epoch cache; ok is false
// when the cache is empty.
func (l *Log) LatestEpoch() (epoch int32, ok bool) {
	e := l.LeaderEpochs().LatestEpoch()
	return e, e >= 0
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch from the leader epoch
// cache (LeaderEpochCache.EndOffsetFor): the largest cached epoch not above
// the requested one and its end offset; (-1, -1) when undefined.
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	return l.LeaderEpochs().EndOffsetFor(epoch)
}

// DeleteRecordsAllowed is false for compact-only topics
// (cleanup.policy=compact), which refuse DeleteRecords.
func (l *Log) DeleteRecordsAllowed() bool {
	cfg := l.Config()
	return !(cfg.CleanupPolicyCompact && !cfg.CleanupPolicyDelete)
}

// CompressionType is the topic's compression.type.
func (l *Log) CompressionType() string { return l.Config().CompressionType }
