package txn

import (
	"fmt"
	"strings"
)

// FormatLogMessage renders a __transaction_state record as Kafka 2.8's
// TransactionLog.TransactionLogMessageFormatter prints it for
// kafka-console-consumer.sh: "<transactionalId>::NULL" for a tombstone,
// else "<transactionalId>::TransactionMetadata(transactionalId=..,
// producerId=.., producerEpoch=.., txnTimeoutMs=.., state=..,
// pendingState=None, topicPartitions=HashSet(t-0, ..),
// txnStartTimestamp=.., txnLastUpdateTimestamp=..)", the partitions in the
// iteration order of Scala's mutable HashSet.
func FormatLogMessage(key, value []byte) (string, error) {
	id, err := DecodeKey(key)
	if err != nil {
		return "", err
	}
	if value == nil {
		return id + "::NULL", nil
	}
	v, err := DecodeValue(value)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(v.Partitions))
	for _, tp := range scalaHashSetOrder(v.Partitions) {
		names = append(names, tp.String())
	}
	return fmt.Sprintf("%s::TransactionMetadata(transactionalId=%s, producerId=%d, producerEpoch=%d, txnTimeoutMs=%d, state=%s, pendingState=None, topicPartitions=HashSet(%s), txnStartTimestamp=%d, txnLastUpdateTimestamp=%d)",
		id, id, v.ProducerID, v.ProducerEpoch, v.TimeoutMs, v.State, strings.Join(names, ", "), v.StartMs, v.LastUpdateMs), nil
}
