package config

import (
	"fmt"
	"strings"
)

// MaxTopicNameLength is Kafka's limit (249, so that "<topic>-<partition>"
// directory names stay below common file name limits).
const MaxTopicNameLength = 249

// Internal topic names (Kafka's Topic.GROUP_METADATA_TOPIC_NAME and
// TRANSACTION_STATE_TOPIC_NAME).
const (
	GroupMetadataTopicName    = "__consumer_offsets"
	TransactionStateTopicName = "__transaction_state"
)

// IsInternalTopic reports whether name is one of Kafka's internal topics.
func IsInternalTopic(name string) bool {
	return name == GroupMetadataTopicName || name == TransactionStateTopicName
}

// ValidateTopicName applies Kafka's rules (org.apache.kafka.common.internals
// .Topic.validate): not empty, not "." or "..", at most 249 characters, and
// only ASCII letters, digits, '.', '_' and '-'. The messages are Kafka's, as
// returned with INVALID_TOPIC_EXCEPTION.
func ValidateTopicName(name string) error {
	if name == "" {
		return fmt.Errorf("Topic name is illegal, it can't be empty")
	}
	if name == "." || name == ".." {
		return fmt.Errorf(`Topic name cannot be "." or ".."`)
	}
	if len(name) > MaxTopicNameLength {
		return fmt.Errorf("Topic name is illegal, it can't be longer than %d characters, topic name: %s", MaxTopicNameLength, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("Topic name %q is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'", name)
		}
	}
	return nil
}

// HasCollisionChars reports whether a topic name contains '.' or '_', the
// two characters that map to the same metric name.
func HasCollisionChars(name string) bool { return strings.ContainsAny(name, "._") }

// TopicNamesCollide reports whether two different-looking names would clash
// in metric names because '.' and '_' are treated alike (Kafka refuses to
// create the second one with INVALID_TOPIC_EXCEPTION).
func TopicNamesCollide(a, b string) bool {
	return strings.ReplaceAll(a, ".", "_") == strings.ReplaceAll(b, ".", "_")
}
