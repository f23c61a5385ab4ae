package zkpaths

import (
	"fmt"
	"strconv"
	"strings"
)

// Top-level and fixed znode paths, relative to the chroot. Kafka: the
// companion objects in kafka.zk.ZkData (ClusterZNode, ControllerZNode, ...).
const (
	AdminPath                    = "/admin"
	AdminDeleteTopicsPath        = "/admin/delete_topics"
	ReassignPartitionsPath       = "/admin/reassign_partitions"
	PreferredReplicaElectionPath = "/admin/preferred_replica_election"

	BrokersPath         = "/brokers"
	BrokerIDsPath       = "/brokers/ids"
	BrokerSeqIDPath     = "/brokers/seqid"
	TopicsPath          = "/brokers/topics"
	ClusterPath         = "/cluster"
	ClusterIDPath       = "/cluster/id"
	ControllerPath      = "/controller"
	ControllerEpochPath = "/controller_epoch"

	ConfigPathRoot    = "/config"
	ConfigChangesPath = "/config/changes"
	// ConfigChangePrefix is the child name prefix of sequential config
	// change notifications (ConfigEntityChangeNotificationSequenceZNode).
	ConfigChangePrefix = "config_change_"

	ConsumersPath = "/consumers"

	IsrChangeNotificationPath = "/isr_change_notification"
	// IsrChangeNotificationPrefix is the child name prefix of ISR change
	// notifications (IsrChangeNotificationSequenceZNode).
	IsrChangeNotificationPrefix = "isr_change_"

	LogDirEventNotificationPath = "/log_dir_event_notification"
	// LogDirEventNotificationPrefix is the child name prefix of log dir
	// failure notifications (LogDirEventNotificationSequenceZNode).
	LogDirEventNotificationPrefix = "log_dir_event_"

	LatestProducerIDBlockPath = "/latest_producer_id_block"
	FeaturePath               = "/feature"
	MigrationPath             = "/migration"

	DelegationTokenPath         = "/delegation_token"
	DelegationTokenChangesPath  = "/delegation_token/token_changes"
	DelegationTokensPath        = "/delegation_token/tokens"
	DelegationTokenChangePrefix = "token_change_"

	// ACL storage of the ZooKeeper-based authorizer.
	ACLLiteralPath         = "/kafka-acl"
	ACLLiteralChangesPath  = "/kafka-acl-changes"
	ACLExtendedPath        = "/kafka-acl-extended"
	ACLPrefixedPath        = "/kafka-acl-extended/prefixed"
	ACLExtendedChangesPath = "/kafka-acl-extended-changes"
	ACLChangePrefix        = "acl_changes_"

	// ZooKeeperInternalPath is ZooKeeper's own subtree; Kafka never touches it.
	ZooKeeperInternalPath = "/zookeeper"
)

// Config entity types: the directory names under /config (kafka.server.ConfigType).
const (
	ConfigTypeTopic  = "topics"
	ConfigTypeClient = "clients"
	ConfigTypeUser   = "users"
	ConfigTypeBroker = "brokers"
	ConfigTypeIP     = "ips"
)

// ConfigEntityDefault is the literal znode name of the default entity
// (ConfigEntityName.Default).
const ConfigEntityDefault = "<default>"

// ReservedBrokerMaxIDDefault is Kafka's default reserved.broker.max.id; a
// generated broker id is the /brokers/seqid version plus this value.
const ReservedBrokerMaxIDDefault = 1000

// PersistentZkPaths are the persistent paths every broker ensures at start-up
// (ZkData.PersistentZkPaths), in Kafka's order. Parents such as /brokers,
// /config and /admin appear through create-recursive.
var PersistentZkPaths = []string{
	ConsumersPath,
	BrokerIDsPath,
	TopicsPath,
	ConfigChangesPath,
	AdminDeleteTopicsPath,
	BrokerSeqIDPath,
	IsrChangeNotificationPath,
	LatestProducerIDBlockPath,
	LogDirEventNotificationPath,
	ConfigPath(ConfigTypeTopic, ""),
	ConfigPath(ConfigTypeClient, ""),
	ConfigPath(ConfigTypeUser, ""),
	ConfigPath(ConfigTypeBroker, ""),
	ConfigPath(ConfigTypeIP, ""),
}

// SecureRootPaths are the roots Kafka's zookeeper-security-migration tool
// walks when switching ACL modes (ZkData.SecureRootPaths). /consumers is
// deliberately absent: it stays world-writable.
var SecureRootPaths = []string{
	AdminPath, BrokersPath, ClusterPath, ConfigPathRoot, ControllerPath,
	ControllerEpochPath, IsrChangeNotificationPath, LatestProducerIDBlockPath,
	LogDirEventNotificationPath, DelegationTokenPath, ACLExtendedPath,
	MigrationPath, FeaturePath, ACLLiteralPath, ACLLiteralChangesPath,
	ACLPrefixedPath, ACLExtendedChangesPath,
}

// sensitiveRootPaths get creator-only ACLs in secure mode.
var sensitiveRootPaths = []string{ConfigPath(ConfigTypeUser, ""), ConfigPath(ConfigTypeBroker, ""), DelegationTokensPath}

// IsSensitivePath reports whether path must not be world-readable when
// zookeeper.set.acl=true (prefix match, as ZkData.sensitivePath does).
func IsSensitivePath(path string) bool {
	for _, p := range sensitiveRootPaths {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// BrokerIDPath is the ephemeral registration of one broker.
func BrokerIDPath(id int32) string { return BrokerIDsPath + "/" + strconv.Itoa(int(id)) }

// TopicPath holds the replica assignment of one topic.
func TopicPath(topic string) string { return TopicsPath + "/" + topic }

// TopicPartitionsPath is the structural parent of a topic's partition nodes.
func TopicPartitionsPath(topic string) string { return TopicPath(topic) + "/partitions" }

// TopicPartitionPath is the structural node of one partition.
func TopicPartitionPath(topic string, partition int32) string {
	return TopicPartitionsPath(topic) + "/" + strconv.Itoa(int(partition))
}

// PartitionStatePath holds leader, ISR and epochs of one partition.
func PartitionStatePath(topic string, partition int32) string {
	return TopicPartitionPath(topic, partition) + "/state"
}

// DeleteTopicPath is the deletion marker of one topic.
func DeleteTopicPath(topic string) string { return AdminDeleteTopicsPath + "/" + topic }

// ConfigTypePath is the directory of one entity type, e.g. /config/topics.
func ConfigTypePath(entityType string) string { return ConfigPathRoot + "/" + entityType }

// ConfigPath is the config node of one entity; name must already be
// sanitized for users and clients (see Sanitize). With an empty name it is
// the entity type's directory. Nested entities such as
// "alice/clients/app-1" are passed as the name.
func ConfigPath(entityType, name string) string {
	if name == "" {
		return ConfigTypePath(entityType)
	}
	return ConfigTypePath(entityType) + "/" + name
}

// ConfigEntityPath is the notification form "<type>/<name>" of an entity,
// relative to /config.
func ConfigEntityPath(entityType, name string) string { return entityType + "/" + name }

// ConsumerGroupPath is the legacy consumer group root.
func ConsumerGroupPath(group string) string { return ConsumersPath + "/" + group }

// ConsumerIDsPath holds the ephemeral registrations of legacy consumers.
func ConsumerIDsPath(group string) string { return ConsumerGroupPath(group) + "/ids" }

// ConsumerIDPath is one legacy consumer registration.
func ConsumerIDPath(group, consumerID string) string {
	return ConsumerIDsPath(group) + "/" + consumerID
}

// ConsumerOwnersPath is the parent of partition ownership nodes of a topic.
func ConsumerOwnersPath(group, topic string) string {
	return ConsumerGroupPath(group) + "/owners/" + topic
}

// ConsumerOwnerPath is the ephemeral ownership node of one partition.
func ConsumerOwnerPath(group, topic string, partition int32) string {
	return ConsumerOwnersPath(group, topic) + "/" + strconv.Itoa(int(partition))
}

// ConsumerOffsetsPath is the parent of the committed offsets of a topic.
func ConsumerOffsetsPath(group, topic string) string {
	return ConsumerGroupPath(group) + "/offsets/" + topic
}

// ConsumerOffsetPath holds one committed offset as a decimal string.
func ConsumerOffsetPath(group, topic string, partition int32) string {
	return ConsumerOffsetsPath(group, topic) + "/" + strconv.Itoa(int(partition))
}

// DelegationTokenInfoPath holds one delegation token.
func DelegationTokenInfoPath(tokenID string) string { return DelegationTokensPath + "/" + tokenID }

// IsrChangeNotificationSeqPath is the path to create (sequential) for one
// ISR change notification; ZooKeeper appends the 10-digit counter.
func IsrChangeNotificationSeqPath() string {
	return IsrChangeNotificationPath + "/" + IsrChangeNotificationPrefix
}

// LogDirEventNotificationSeqPath is the sequential create path of a log dir event.
func LogDirEventNotificationSeqPath() string {
	return LogDirEventNotificationPath + "/" + LogDirEventNotificationPrefix
}

// ConfigChangeSeqPath is the sequential create path of a config change notification.
func ConfigChangeSeqPath() string { return ConfigChangesPath + "/" + ConfigChangePrefix }

// ParseSequenceNumber extracts the counter from a sequential child name such
// as "isr_change_0000000042" given its prefix.
func ParseSequenceNumber(name, prefix string) (int64, error) {
	if !strings.HasPrefix(name, prefix) {
		return 0, fmt.Errorf("zkpaths: %q does not start with %q", name, prefix)
	}
	n, err := strconv.ParseInt(name[len(prefix):], 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("zkpaths: bad sequence number in %q", name)
	}
	return n, nil
}

// ParseBrokerID parses a child name of /brokers/ids.
func ParseBrokerID(name string) (int32, error) {
	n, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("zkpaths: bad broker id %q: %w", name, err)
	}
	return int32(n), nil
}

// ParsePartition parses a child name of /brokers/topics/<t>/partitions.
func ParsePartition(name string) (int32, error) {
	n, err := strconv.ParseInt(name, 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("zkpaths: bad partition %q", name)
	}
	return int32(n), nil
}

// TopicPartition is the one partition name all packages share.
