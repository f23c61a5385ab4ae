package api

import (
	"context"
	"errors"

	"github.com/klassik/klassik/controller"
	"github.com/klassik/klassik/zkpaths"
)

// AdminZK is the ZooKeeper side of the admin APIs (Kafka's AdminZkClient
// plus the parts of KafkaZkClient they use). The broker adapts
// zkpaths/zkclient to it; tests may use an in-memory fake.
//
// Errors: ErrTopicExists from CreateTopic when /brokers/topics/<t> exists,
// ErrNoTopic when a topic znode is missing; anything else is a ZooKeeper
// failure.
type AdminZK interface {
	// Brokers lists the registered brokers (ids and racks), sorted by id.
	Brokers(ctx context.Context) ([]controller.BrokerMetadata, error)
	// AllTopics lists the children of /brokers/topics.
	AllTopics(ctx context.Context) ([]string, error)
	// TopicAssignment reads /brokers/topics/<t> with its znode version.
	TopicAssignment(ctx context.Context, topic string) (zkpaths.TopicAssignment, int32, error)
	// TopicMarkedForDeletion reports whether /admin/delete_topics/<t> exists.
	TopicMarkedForDeletion(ctx context.Context, topic string) (bool, error)
	// CreateTopic writes /config/topics/<t> (no notification), then creates
	// /brokers/topics/<t> with a fresh topic id (zookeeper-layout.md §4.9).
	CreateTopic(ctx context.Context, topic string, assignment map[int32][]int32, configs map[string]string) error
	// SetTopicAssignment rewrites /brokers/topics/<t> conditionally on
	// version (partition addition, §4.10).
	SetTopicAssignment(ctx context.Context, topic string, a zkpaths.TopicAssignment, version int32) error
	// MarkTopicForDeletion creates /admin/delete_topics/<t>; ErrTopicExists
	// when it is already marked.
	MarkTopicForDeletion(ctx context.Context, topic string) error
	// TopicConfig reads /config/topics/<t> (empty when absent).
	TopicConfig(ctx context.Context, topic string) (map[string]string, error)
	// SetTopicConfig writes the complete override set of /config/topics/<t>
	// and creates the /config/changes notification (§4.16).
	SetTopicConfig(ctx context.Context, topic string, configs map[string]string) error
	// ClaimProducerIDBlock claims the next block of /latest_producer_id_block
	// for brokerID (§4.19).
	ClaimProducerIDBlock(ctx context.Context, brokerID int32) (start, end int64, err error)
	// ConsumerOffset reads /consumers/<g>/offsets/<t>/<p> (OffsetFetch v0);
	// ok is false when nothing was committed.
	ConsumerOffset(ctx context.Context, group, topic string, partition int32) (offset int64, ok bool, err error)
	// SetConsumerOffset writes it (OffsetCommit v0).
	SetConsumerOffset(ctx context.Context, group, topic string, partition int32, offset int64) error
}

var (
	// ErrTopicExists reports an existing znode where a create expected none.
	ErrTopicExists = errors.New("api: topic znode already exists")
	// ErrNoTopic reports a missing topic znode.
	ErrNoTopic = errors.New("api: topic znode does not exist")
)
