package replica

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/metadata"
	"github.com/klassik/klassik/broker/storage"
)

// NewManager builds the broker's replica manager over the real log manager
// and metadata cache. Logs are created with cfg.LogConfigFor(topic) (topic
// overrides merged over the broker defaults; storage defaults when nil).
// meta may be nil.
func NewManager(cfg Config, logs *storage.LogManager, meta *metadata.Cache) *Manager {
	var mc MetadataCache
	if meta != nil {
		mc = metadataAdapter{meta}
	}
	return New(cfg, NewStorageLogStore(logs, cfg.LogConfigFor), mc)
}

// metadataAdapter adapts *metadata.Cache to MetadataCache and the optional
// lookups the manager uses (HasPartition, TopicName).
type metadataAdapter struct{ c *metadata.Cache }

func (a metadataAdapter) UpdateMetadata(req *kmsg.UpdateMetadataRequest) []TopicPartition {
	deleted := a.c.Update(req)
	out := make([]TopicPartition, 0, len(deleted))
	for _, tp := range deleted {
		out = append(out, TopicPartition(tp))
	}
	return out
}

// HasPartition tells "known to the cluster but not hosted here"
// (NOT_LEADER_OR_FOLLOWER) from "unknown" (UNKNOWN_TOPIC_OR_PARTITION).
func (a metadataAdapter) HasPartition(topic string, partition int32) bool {
	_, ok := a.c.Partition(topic, partition)
	return ok
}

// TopicName resolves Fetch v13 topic ids for topics this broker learned
// from UpdateMetadata but does not host.
func (a metadataAdapter) TopicName(id [16]byte) (string, bool) { return a.c.TopicName(id) }
