package txn

// The __transaction_state record formats (Kafka's TransactionLog with
// the generated TransactionLogKey and TransactionLogValue, version 0 of
// each, in the classic non-flexible encoding):
//
//	key   v0: version int16 = 0, transactional_id string
//	value v0: version int16 = 0, producer_id int64, producer_epoch int16,
//	          transaction_timeout_ms int32, transaction_status int8,
//	          transaction_partitions nullable [topic string, partition_ids [int32]],
//	          transaction_last_update_timestamp_ms int64,
//	          transaction_start_timestamp_ms int64
//
// A null value is a tombstone: the id was expired. An Empty value
// carries a null partition array.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

// KeyVersion and ValueVersion are the only versions Kafka 2.8 writes and
// reads.
const (
	KeyVersion   int16 = 0
	ValueVersion int16 = 0
)

// ErrMalformed is wrapped by every decoding error of this file.
var ErrMalformed = errors.New("txn: malformed __transaction_state record")

// Value is one transactional id's state as persisted.
type Value struct {
	ProducerID    int64
	ProducerEpoch int16
	TimeoutMs     int32
	State         State
	// Partitions in the order they are written: grouped by topic in order
	// of first appearance.
	Partitions   []common.TopicPartition
	LastUpdateMs int64
	StartMs      int64
}

// EncodeKey encodes a key (version 0).
func EncodeKey(transactionalID string) []byte {
	return kbin.AppendString(kbin.AppendInt16(nil, KeyVersion), transactionalID)
}

// EncodeValue encodes v (version 0). Partitions of one topic are written
// together under the topic's first appearance; an Empty state writes a
// null partition array, as Kafka does.
func EncodeValue(v Value) []byte {
	b := kbin.AppendInt16(nil, ValueVersion)
	b = kbin.AppendInt64(b, v.ProducerID)
	b = kbin.AppendInt16(b, v.ProducerEpoch)
	b = kbin.AppendInt32(b, v.TimeoutMs)
	b = append(b, byte(v.State))
	if v.State == Empty {
		b = kbin.AppendInt32(b, -1)
	} else {
		var topics []string
		byTopic := map[string][]int32{}
		for _, tp := range v.Partitions {
			if _, ok := byTopic[tp.Topic]; !ok {
				topics = append(topics, tp.Topic)
			}
			byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
		}
		b = kbin.AppendInt32(b, int32(len(topics)))
		for _, t := range topics {
			b = kbin.AppendString(b, t)
			ps := byTopic[t]
			b = kbin.AppendInt32(b, int32(len(ps)))
			for _, p := range ps {
				b = kbin.AppendInt32(b, p)
			}
		}
	}
	b = kbin.AppendInt64(b, v.LastUpdateMs)
	return kbin.AppendInt64(b, v.StartMs)
}

// reader is a bounds-checked cursor; the first failure sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.err = fmt.Errorf("%w: truncated %s", ErrMalformed, what)
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func (r *reader) int8(what string) int8 {
	if b := r.take(1, what); b != nil {
		return int8(b[0])
	}
	return 0
}

func (r *reader) int16(what string) int16 {
	if b := r.take(2, what); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) int32(what string) int32 {
	if b := r.take(4, what); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64(what string) int64 {
	if b := r.take(8, what); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reader) string(what string) string {
	n := r.int16(what)
	if r.err == nil && n < 0 {
		r.err = fmt.Errorf("%w: null %s", ErrMalformed, what)
		return ""
	}
	return string(r.take(int(n), what))
}

// DecodeKey returns the transactional id of a key. Kafka's reader
// ignores bytes after the known fields, so this does too.
func DecodeKey(key []byte) (string, error) {
	if key == nil {
		return "", fmt.Errorf("%w: null key", ErrMalformed)
	}
	r := reader{b: key}
	v := r.int16("key version")
	if r.err != nil {
		return "", r.err
	}
	if v != KeyVersion {
		return "", fmt.Errorf("%w: unknown key version %d", ErrMalformed, v)
	}
	id := r.string("transactional_id")
	return id, r.err
}

// DecodeValue decodes a non-null value. The partitions of an Empty value
// are ignored, as Kafka ignores them.
func DecodeValue(value []byte) (Value, error) {
	r := reader{b: value}
	ver := r.int16("value version")
	if r.err != nil {
		return Value{}, r.err
	}
	if ver != ValueVersion {
		return Value{}, fmt.Errorf("%w: unknown value version %d", ErrMalformed, ver)
	}
	var v Value
	v.ProducerID = r.int64("producer_id")
	v.ProducerEpoch = r.int16("producer_epoch")
	v.TimeoutMs = r.int32("transaction_timeout_ms")
	st := r.int8("transaction_status")
	if r.err == nil && (st < 0 || int(st) >= len(stateNames)) {
		return Value{}, fmt.Errorf("%w: unknown transaction state byte %d", ErrMalformed, st)
	}
	v.State = State(st)
	var parts []common.TopicPartition
	if n := r.int32("transaction_partitions"); r.err == nil && n >= 0 {
		// Each entry takes at least 6 bytes; refuse counts the input
		// cannot hold before allocating.
		if int64(n)*6 > int64(len(r.b)) {
			return Value{}, fmt.Errorf("%w: %d topics in %d bytes", ErrMalformed, n, len(r.b))
		}
		for i := int32(0); i < n && r.err == nil; i++ {
			topic := r.string("topic")
			np := r.int32("partition_ids")
			if r.err == nil && (np < 0 || int64(np)*4 > int64(len(r.b))) {
				return Value{}, fmt.Errorf("%w: %d partition ids in %d bytes", ErrMalformed, np, len(r.b))
			}
			for j := int32(0); j < np && r.err == nil; j++ {
				parts = append(parts, common.TopicPartition{Topic: topic, Partition: r.int32("partition id")})
			}
		}
	}
	v.LastUpdateMs = r.int64("transaction_last_update_timestamp_ms")
	v.StartMs = r.int64("transaction_start_timestamp_ms")
	if r.err != nil {
		return Value{}, r.err
	}
	if v.State != Empty {
		v.Partitions = parts
	}
	return v, nil
}

// FormatRecordKeyAndValue renders a __transaction_state record as
// kafka-dump-log.sh --transaction-log-decoder prints it (Kafka 2.8's
// TransactionLog.formatRecordKeyAndValue): the key as
// "transaction_metadata::transactionalId=ID", the value as
// "producerId:P,producerEpoch:E,state=S,partitions=[t-0,...],
// txnLastUpdateTimestamp=T,txnTimeoutMs=M", a tombstone as "<DELETE>".
// Partitions are listed in the order Kafka's hash set iterates them.
func FormatRecordKeyAndValue(key, value []byte) (keyText, valueText string, err error) {
	id, err := DecodeKey(key)
	if err != nil {
		return "", "", err
	}
	keyText = "transaction_metadata::transactionalId=" + id
	if value == nil {
		return keyText, "<DELETE>", nil
	}
	v, err := DecodeValue(value)
	if err != nil {
		return "", "", err
	}
	var names []string
	for _, tp := range scalaHashSetOrder(v.Partitions) {
		names = append(names, tp.String())
	}
	valueText = "producerId:" + strconv.FormatInt(v.ProducerID, 10) +
		",producerEpoch:" + strconv.Itoa(int(v.ProducerEpoch)) +
		",state=" + v.State.String() +
		",partitions=[" + strings.Join(names, ",") + "]" +
		",txnLastUpdateTimestamp=" + strconv.FormatInt(v.LastUpdateMs, 10) +
		",txnTimeoutMs=" + strconv.Itoa(int(v.TimeoutMs))
	return keyText, valueText, nil
}

// recordBatch encodes records as one uncompressed v2 batch with
// CreateTime = now, as the coordinator writes them (Kafka enforces no
// compression on __transaction_state).
func recordBatch(now time.Time, recs []record.Record) []byte {
	return record.BuildAt(record.DefaultBuildOptions(), now, recs)
}
