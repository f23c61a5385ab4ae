package replica

import (
	"context"
	"errors"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrAcksZeroFailed is returned by ProduceOrClose when an acks=0 produce had
// a failing partition: the client gets no response, so the broker closes the
// connection to make it refresh metadata.
var ErrAcksZeroFailed = errors.New("replica: acks=0 produce failed; closing connection")

// Produce appends the request's record batches to the partitions this broker
// leads. It returns nil when acks=0.
func (m *Manager) Produce(ctx context.Context, req *kmsg.ProduceRequest) *kmsg.ProduceResponse {
	resp, _ := m.ProduceOrClose(ctx, req)
	return resp
}

// ProduceOrClose is Produce for the network handler: with acks=0 it returns
// a nil response, and ErrAcksZeroFailed if any partition failed so that the
// connection is closed. An acks=all request returns once the ISR has its
// records.
func (m *Manager) ProduceOrClose(ctx context.Context, req *kmsg.ProduceRequest) (*kmsg.ProduceResponse, error) {
	resp, wait, err := m.ProduceInto(ctx, req, clientIDFrom(ctx), nil)
	if err != nil || wait == nil {
		return resp, err
	}
	if err := wait.Wait(); err != nil {
		return nil, err
	}
	return resp, nil
}

// ProduceInto is ProduceOrClose with the client id given (only
// "__admin_client" writes internal topics), the response built in into
// when it is not nil (into is reset, its topic and partition slices keep
// their capacity, so a connection that reuses one response allocates
// nothing per partition for it), and the acks=all wait left to the caller:
// when some partitions appended and wait for the ISR, wait is not nil and
// their codes in resp are final only once wait.Wait returned nil (ctx is
// the request's: its end ends the wait). resp and wait hold nothing of req
// or its records, so the connection may read its next request into them
// meanwhile (network.Request.Defer).
func (m *Manager) ProduceInto(ctx context.Context, req *kmsg.ProduceRequest, clientID string, into *kmsg.ProduceResponse) (resp *kmsg.ProduceResponse, wait network.Waiter, err error) {
	resp = into
	if resp == nil {
		resp = req.ResponseKind().(*kmsg.ProduceResponse)
	} else {
		*resp = kmsg.ProduceResponse{Topics: resp.Topics[:0]}
		resp.Default()
	}
	resp.Version = req.Version

	// Request-wide errors first: every partition gets the same code and
	// nothing is appended.
	var global int16
	switch {
	case req.Acks != 0 && req.Acks != 1 && req.Acks != -1:
		global = kerr.InvalidRequiredAcks.Code
	case req.TransactionID == nil && anyTransactional(req):
		global = kerr.TransactionalIDAuthorizationFailed.Code
	}

	failed := false
	// acks=all: the partitions that appended wait in op, with where their
	// response goes.
	var op *delayedProduce
	if req.Acks == -1 && global == 0 {
		op = newDelayedProduce(m, ctx)
		op.resp = resp
	}
	for _, rt := range req.Topics {
		st := nextProduceTopic(resp)
		st.Topic = rt.Topic
		st.TopicID = rt.TopicID
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
			code := global
			if code == 0 {
				tp := common.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}
				var lastOffset int64
				code, lastOffset = m.producePartition(req, clientID, tp, rp.Records, &sp)
				if code == 0 && op != nil {
					op.add(tp, lastOffset+1, respAt{len(resp.Topics) - 1, len(st.Partitions)})
				}
			}
			sp.ErrorCode = code
			if code != 0 {
				failed = true
			}
			st.Partitions = append(st.Partitions, sp)
		}
	}
	if op != nil && len(op.parts) == 0 {
		// Nothing to wait for: op never left this function.
		op.refs.Store(1)
		op.release()
		op = nil
	}
	if req.Acks == 0 {
		if failed {
			return nil, nil, ErrAcksZeroFailed
		}
		return nil, nil, nil
	}
	if op == nil {
		return resp, nil, nil
	}
	// acks=all: park until the ISR has the records (DelayedProduce).
	timeout := time.Duration(req.TimeoutMillis) * time.Millisecond
	network.LocalDone(ctx) // the wait is Kafka's RemoteTimeMs
	m.produces.TryCompleteElseWatch(op, timeout, op.keys...)
	select {
	case <-op.done: // completed at once (ISR = {leader}, a timeout ≤ 0)
		op.fill()
		op.release()
		return resp, nil, nil
	default:
		// Wait, on the connection's writer, takes the token and
		// releases op.
		return resp, op, nil
	}
}

// nextProduceTopic appends a default topic to resp and returns it; an
// element reused from resp's capacity keeps its partitions' capacity.
func nextProduceTopic(resp *kmsg.ProduceResponse) *kmsg.ProduceResponseTopic {
	if n := len(resp.Topics); n < cap(resp.Topics) {
		resp.Topics = resp.Topics[:n+1]
		st := &resp.Topics[n]
		parts := st.Partitions[:0]
		*st = kmsg.NewProduceResponseTopic()
		st.Partitions = parts
		return st
	}
	resp.Topics = append(resp.Topics, kmsg.NewProduceResponseTopic())
	return &resp.Topics[len(resp.Topics)-1]
}

// producePartition appends one partition's records, filling sp's offsets
// (and, from v8, the error message). Kafka's order: unknown partitions
// first, then the internal-topic rule (only the admin client writes
// internal topics), the zstd rule (Produce v7+), then leadership in the
// append. It returns the error code and the last appended offset.
func (m *Manager) producePartition(req *kmsg.ProduceRequest, clientID string, tp common.TopicPartition, records []byte, sp *kmsg.ProduceResponseTopicPartition) (int16, int64) {
	if isInternalTopic(tp.Topic) && clientID != "__admin_client" && m.knownPartition(tp) {
		return kerr.InvalidTopicException.Code, -1
	}
	if req.Version < 7 && isZstd(records) {
		return kerr.UnsupportedCompressionType.Code, -1 // KIP-110
	}
	info, err := m.appendToLeader(tp, records, req.Acks, false)
	code := m.errorCode(err, tp, "produce")
	m.metrics.topics.produced(tp.Topic, len(records), info, code)
	if code != 0 {
		if req.Version >= 8 && err != nil {
			msg := err.Error()
			sp.ErrorMessage = &msg
		}
		return code, -1
	}
	sp.BaseOffset = info.FirstOffset
	sp.LogAppendTime = info.LogAppendTime
	sp.LogStartOffset = info.LogStartOffset
	return 0, info.LastOffset
}

func isZstd(records []byte) bool {
	f, err := scanBatches(records)
	return err == nil && f.zstd
}

func anyTransactional(req *kmsg.ProduceRequest) bool {
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			// A malformed record set is not transactional here; storage
			// rejects it per partition with CORRUPT_MESSAGE.
			if tx, err := hasTransactionalBatch(p.Records); err == nil && tx {
				return true
			}
		}
	}
	return false
}

// appendToLeader appends records to a partition this broker leads
// (Partition.appendRecordsToLeader), with min.insync.replicas resolved
// before the partition lock for acks=all, then wakes parked fetches and
// produces.
func (m *Manager) appendToLeader(tp common.TopicPartition, records []byte, acks int16, coordinator bool) (storage.AppendInfo, error) {
	p, ok := m.Partition(tp)
	if !ok {
		return storage.AppendInfo{}, m.unknownPartitionError(tp)
	}
	minISR := 0
	if acks == -1 {
		minISR = m.minISR(tp.Topic) // resolved before the lock
	}
	info, hwRose, err := p.appendRecordsToLeader(records, minISR, coordinator, m.cfg.Clock(), m.cfg.ReplicaLagTimeMax)
	if err != nil {
		return storage.AppendInfo{}, err
	}
	// Parked follower fetches wait for new data (LEO), consumer fetches
	// and acks=all produces for the HW.
	if hwRose || info.NumMessages > 0 {
		m.wakeFetches(tp)
	}
	if hwRose {
		m.wakeProduces(tp)
	}
	return info, nil
}

// appendRecordsToLeader is Kafka's Partition.appendRecordsToLeader: under
// the partition's read lock (so no role change interleaves), check
// leadership and, when minISR > 0 (acks=all), that the ISR has at least
// minISR members (NOT_ENOUGH_REPLICAS, nothing appended); append with the
// current leader epoch, then move the high watermark. It reports whether
// the HW rose.
func (p *Partition) appendRecordsToLeader(records []byte, minISR int, coordinator bool, now time.Time, lagMax time.Duration) (storage.AppendInfo, bool, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.log == nil && p.logErr == kerr.KafkaStorageError.Code {
		return storage.AppendInfo{}, false, kerr.KafkaStorageError
	}
	if !p.isLeaderLocked() {
		return storage.AppendInfo{}, false, kerr.NotLeaderForPartition
	}
	if len(p.isr) < minISR {
		return storage.AppendInfo{}, false, kerr.NotEnoughReplicas
	}
	var info storage.AppendInfo
	var err error
	if coordinator {
		info, err = p.log.AppendAsCoordinator(records, p.leaderEpoch)
	} else {
		info, err = p.log.AppendAsLeader(records, p.leaderEpoch)
	}
	if err != nil {
		return storage.AppendInfo{}, false, err
	}
	// With ISR = {leader} (and no caught-up follower outside it) the HW
	// follows the log end at once; otherwise followers' fetches move it.
	return info, p.maybeIncrementHighWatermark(p.log, now, lagMax), nil
}

// knownPartition reports whether tp is hosted here or known to the cluster.
func (m *Manager) knownPartition(tp common.TopicPartition) bool {
	if _, ok := m.Partition(tp); ok {
		return true
	}
	return errors.Is(m.unknownPartitionError(tp), kerr.NotLeaderForPartition)
}

// unknownPartitionError distinguishes a partition the cluster knows but this
// broker does not host (NOT_LEADER_OR_FOLLOWER) from an unknown one.
func (m *Manager) unknownPartitionError(tp common.TopicPartition) error {
	if m.IsOffline(tp) {
		return kerr.KafkaStorageError
	}
	if m.meta.HasPartition(tp.Topic, tp.Partition) {
		return kerr.NotLeaderForPartition
	}
	return kerr.UnknownTopicOrPartition
}

// AppendToLocalLog appends records written by the broker itself to a
// partition this broker leads, bypassing the client-facing rules of Produce
// (internal topics allowed, control batches allowed, coordinator origin in
// storage). The group and transaction coordinators use it for
// __consumer_offsets, __transaction_state and transaction markers (Kafka's
// ReplicaManager.appendRecords with internalTopicsAllowed = true and
// AppendOrigin.Coordinator). acks is 1 or -1 (min.insync.replicas is
// checked for -1).
func (m *Manager) AppendToLocalLog(tp common.TopicPartition, records []byte, acks int16) (storage.AppendInfo, error) {
	return m.appendToLeader(tp, records, acks, true)
}
