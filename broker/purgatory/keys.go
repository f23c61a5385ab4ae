package purgatory

import "strconv"

// TopicPartitionKey is the watch key of a partition (Kafka's
// TopicPartitionOperationKey, label "topic-partition"). It is unambiguous
// because the partition is always the part after the last '-'.
func TopicPartitionKey(topic string, partition int32) string {
	return topic + "-" + strconv.FormatInt(int64(partition), 10)
}

// GroupKey is the watch key of a consumer group (Kafka's GroupJoinKey /
// GroupKey).
func GroupKey(group string) string { return "group:" + group }

// MemberKey is the watch key of one group member's heartbeat (Kafka's
// MemberKey).
func MemberKey(group, member string) string { return "member:" + group + "\x00" + member }
