package api

import (
	"github.com/klassik/klassik/controller"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// AdminZK is the ZooKeeper side of the admin APIs: the methods of Kafka's
// AdminZkClient and KafkaZkClient they call, as *zkclient.Client has them
// (the broker passes its client; tests may use an in-memory fake).
//
// Errors are zkclient's: zkclient.ErrTopicNotFound when a topic znode is
// missing, zkclient.ErrTopicExists, ErrTopicMarkedForDeletion or
// ErrTopicCollision from CreateTopic, ErrTopicAlreadyMarkedForDeletion from
// CreateDeleteTopicPath, zk.ErrBadVersion from a conditional write that
// lost a race; anything else is a ZooKeeper failure.
type AdminZK interface {
	// GetAllBrokers reads every registration, sorted by id.
	GetAllBrokers() ([]zkpaths.BrokerInfo, error)
	// GetAllTopics lists the children of /brokers/topics.
	GetAllTopics() ([]string, error)
	// GetTopicAssignment reads /brokers/topics/<t> with its znode version.
	GetTopicAssignment(topic string) (zkpaths.TopicAssignment, int32, error)
	// IsTopicMarkedForDeletion reports whether /admin/delete_topics/<t>
	// exists.
	IsTopicMarkedForDeletion(topic string) (bool, error)
	// CreateTopic writes /config/topics/<t> (no change notification: nobody
	// hosts the topic yet), then creates /brokers/topics/<t>.
	CreateTopic(topic string, assignment zkpaths.TopicAssignment, configs map[string]string) error
	// UpdateTopicAssignment rewrites /brokers/topics/<t> conditionally on
	// its version (partition addition); the controller notices the new
	// partitions through its data watch.
	UpdateTopicAssignment(topic string, assignment zkpaths.TopicAssignment, expectedVersion int32) (int32, error)
	// CreateDeleteTopicPath creates /admin/delete_topics/<t>, the request
	// the controller's topic deletion acts on.
	CreateDeleteTopicPath(topic string) error
	// GetEntityConfigs reads /config/<type>/<name> (empty when absent).
	GetEntityConfigs(entityType, name string) (map[string]string, error)
	// ChangeEntityConfigs writes the complete override set of
	// /config/<type>/<name> and then a /config/changes/config_change_<seq>
	// notification naming it, which every broker's config listener reads.
	ChangeEntityConfigs(entityType, name string, configs map[string]string) error
	// AllocateProducerIDBlock claims the next block of 1000 producer ids in
	// /latest_producer_id_block for brokerID (a compare-and-set on the
	// node's version, retried when another broker won).
	AllocateProducerIDBlock(brokerID int32) (zkpaths.ProducerIDBlock, error)
	// GetConsumerOffset reads /consumers/<g>/offsets/<t>/<p> (OffsetFetch
	// v0); ok is false when nothing was committed.
	GetConsumerOffset(group, topic string, partition int32) (offset int64, ok bool, err error)
	// SetConsumerOffset writes it (OffsetCommit v0).
	SetConsumerOffset(group, topic string, partition int32, offset int64) error
}

var _ AdminZK = (*zkclient.Client)(nil)

// brokerMetadata is what replica assignment needs of the registrations.
func brokerMetadata(infos []zkpaths.BrokerInfo) []controller.BrokerMetadata {
	out := make([]controller.BrokerMetadata, len(infos))
	for i, info := range infos {
		out[i] = controller.BrokerMetadata{ID: info.ID}
		if info.Rack != "" {
			r := info.Rack
			out[i].Rack = &r
		}
	}
	return out
}

// registeredBrokers lists the registered brokers for replica assignment.
func (a *Apis) registeredBrokers() ([]controller.BrokerMetadata, error) {
	infos, err := a.zk.GetAllBrokers()
	if err != nil {
		return nil, err
	}
	return brokerMetadata(infos), nil
}
