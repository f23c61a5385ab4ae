package group

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
)

// OffsetStore is the coordinator's view of the __consumer_offsets
// partitions. The broker implements it with the partition logs: Append
// goes through the replica manager with acks=all, Read scans the local
// log of a partition this broker leads.
type OffsetStore interface {
	// Append writes records (already encoded as one v2 batch) to the given
	// __consumer_offsets partition and returns once durable per acks=all,
	// or an error (kerr codes such as NOT_COORDINATOR are honoured, see
	// appendErrorCode).
	Append(ctx context.Context, partition int32, batch []byte) error
	// Read calls fn for every record batch of the partition from its log
	// start to its log end (transactional batches whose marker is not yet
	// written included: loading keeps them pending).
	Read(ctx context.Context, partition int32, fn func(batch []byte) error) error
}

// MemStore is an in-memory OffsetStore for tests: one byte log per
// partition, base offsets assigned on append as a log would. The
// transaction coordinator's tests use it as their __transaction_state
// log (txn.Store has the same two methods).
type MemStore struct {
	// mu guards the following.
	mu      sync.Mutex
	logs    map[int32][]byte
	next    map[int32]int64
	failErr error
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{logs: map[int32][]byte{}, next: map[int32]int64{}}
}

// FailAppends makes every later Append return err (nil restores success).
func (s *MemStore) FailAppends(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failErr = err
}

// Append implements OffsetStore.
func (s *MemStore) Append(ctx context.Context, partition int32, batch []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h, err := record.ParseBatchHeader(batch)
	if err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failErr != nil {
		return s.failErr
	}
	b := append([]byte{}, batch...)
	record.SetBaseOffset(b, s.next[partition])
	s.next[partition] += int64(h.LastOffsetDelta) + 1
	s.logs[partition] = append(s.logs[partition], b...)
	return nil
}

// Read implements OffsetStore.
func (s *MemStore) Read(ctx context.Context, partition int32, fn func(batch []byte) error) error {
	s.mu.Lock()
	data := s.logs[partition]
	s.mu.Unlock()
	return record.ForEachBatch(data, func(batch []byte, _ record.BatchHeader) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn(batch)
	})
}

// Log returns a copy of the partition's bytes.
func (s *MemStore) Log(partition int32) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte{}, s.logs[partition]...)
}

// appendErrorCode maps an Append error to the code the client sees, as
// GroupMetadataManager does for offset commits and group writes.
func appendErrorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		switch ke {
		case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
			return kerr.CoordinatorNotAvailable.Code
		case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
			return kerr.NotCoordinator.Code
		case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
			return kerr.InvalidCommitOffsetSize.Code
		default:
			return ke.Code
		}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return kerr.CoordinatorNotAvailable.Code
	}
	return kerr.UnknownServerError.Code
}
