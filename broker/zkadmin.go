package broker

// zkAdmin adapts the typed ZooKeeper client to api.AdminZK: Kafka's
// AdminZkClient writes (topic creation, partition addition, deletion
// markers, entity configs with change notifications) and the producer-id
// block claim, each exactly as zookeeper-layout.md §4.9, §4.10, §4.13, §4.16
// and §4.19 describe.

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/broker/api"
	"github.com/klassik/klassik/controller"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

type zkAdmin struct {
	zk *zkclient.Client
}

var _ api.AdminZK = zkAdmin{}

func (z zkAdmin) Brokers(context.Context) ([]controller.BrokerMetadata, error) {
	ids, err := z.zk.Children(zkpaths.BrokerIDsPath)
	if err != nil {
		return nil, err
	}
	out := make([]controller.BrokerMetadata, 0, len(ids))
	for _, name := range ids {
		id, err := zkpaths.ParseBrokerID(name)
		if err != nil {
			continue
		}
		data, _, err := z.zk.Get(zkpaths.BrokerIDPath(id))
		if errors.Is(err, zk.ErrNoNode) {
			continue // went away meanwhile
		}
		if err != nil {
			return nil, err
		}
		info, err := zkpaths.DecodeBrokerInfo(id, data)
		if err != nil {
			return nil, err
		}
		bm := controller.BrokerMetadata{ID: id}
		if info.Rack != "" {
			r := info.Rack
			bm.Rack = &r
		}
		out = append(out, bm)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (z zkAdmin) AllTopics(context.Context) ([]string, error) {
	ts, err := z.zk.Children(zkpaths.TopicsPath)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return ts, err
}

func (z zkAdmin) TopicAssignment(_ context.Context, topic string) (zkpaths.TopicAssignment, int32, error) {
	data, st, err := z.zk.Get(zkpaths.TopicPath(topic))
	if errors.Is(err, zk.ErrNoNode) {
		return zkpaths.TopicAssignment{}, 0, fmt.Errorf("%w: %s", api.ErrNoTopic, topic)
	}
	if err != nil {
		return zkpaths.TopicAssignment{}, 0, err
	}
	a, err := zkpaths.DecodeTopicAssignment(data)
	if err != nil {
		return zkpaths.TopicAssignment{}, 0, err
	}
	return a, st.Version, nil
}

func (z zkAdmin) TopicMarkedForDeletion(_ context.Context, topic string) (bool, error) {
	ok, _, err := z.zk.Exists(zkpaths.DeleteTopicPath(topic))
	return ok, err
}

func (z zkAdmin) CreateTopic(_ context.Context, topic string, assignment map[int32][]int32, configs map[string]string) error {
	// Config node first ("set, else create", no notification: nobody has the
	// topic yet), then the assignment; a NODEEXISTS on the latter means the
	// topic exists and the config node is left as is, as Kafka does.
	if err := z.setEntityConfig(zkpaths.ConfigTypeTopic, topic, configs); err != nil {
		return err
	}
	ta := zkpaths.TopicAssignment{Version: zkpaths.TopicAssignmentVersion, Partitions: assignment, TopicID: zkpaths.RandomUUID()}
	_, err := z.zk.CreateRecursive(zkpaths.TopicPath(topic), ta.Encode(), zkclient.Persistent)
	if errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("%w: %s", api.ErrTopicExists, topic)
	}
	return err
}

func (z zkAdmin) SetTopicAssignment(_ context.Context, topic string, a zkpaths.TopicAssignment, version int32) error {
	_, err := z.zk.Set(zkpaths.TopicPath(topic), a.Encode(), version)
	if errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("%w: %s", api.ErrNoTopic, topic)
	}
	return err
}

func (z zkAdmin) MarkTopicForDeletion(_ context.Context, topic string) error {
	_, err := z.zk.CreateRecursive(zkpaths.DeleteTopicPath(topic), nil, zkclient.Persistent)
	if errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("%w: %s is already marked for deletion", api.ErrTopicExists, topic)
	}
	return err
}

func (z zkAdmin) TopicConfig(_ context.Context, topic string) (map[string]string, error) {
	return readEntityConfig(z.zk, zkpaths.ConfigTypeTopic, topic)
}

func (z zkAdmin) SetTopicConfig(_ context.Context, topic string, configs map[string]string) error {
	if err := z.setEntityConfig(zkpaths.ConfigTypeTopic, topic, configs); err != nil {
		return err
	}
	if err := z.zk.EnsurePath(zkpaths.ConfigChangesPath); err != nil {
		return err
	}
	_, err := z.zk.Create(zkpaths.ConfigChangeSeqPath(),
		zkpaths.EncodeConfigChangeNotification(zkpaths.ConfigEntityPath(zkpaths.ConfigTypeTopic, topic)),
		zkclient.PersistentSequential)
	return err
}

// setEntityConfig writes /config/<type>/<name> with "set, else create".
func (z zkAdmin) setEntityConfig(typ, name string, configs map[string]string) error {
	p := zkpaths.ConfigPath(typ, name)
	data := zkpaths.EncodeEntityConfig(configs)
	for {
		_, err := z.zk.Set(p, data, -1)
		if !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		_, err = z.zk.CreateRecursive(p, data, zkclient.Persistent)
		if !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
		// Raced with another creator: set again.
	}
}

func (z zkAdmin) ClaimProducerIDBlock(_ context.Context, brokerID int32) (int64, int64, error) {
	for {
		data, st, err := z.zk.Get(zkpaths.LatestProducerIDBlockPath)
		if errors.Is(err, zk.ErrNoNode) {
			if err := z.zk.EnsurePath(zkpaths.LatestProducerIDBlockPath); err != nil {
				return 0, 0, err
			}
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		var prev *zkpaths.ProducerIDBlock
		if len(data) > 0 {
			b, err := zkpaths.DecodeProducerIDBlock(data)
			if err != nil {
				return 0, 0, err
			}
			prev = &b
		}
		next, err := zkpaths.NextProducerIDBlock(prev, brokerID)
		if err != nil {
			return 0, 0, err
		}
		_, err = z.zk.Set(zkpaths.LatestProducerIDBlockPath, next.Encode(), st.Version)
		if errors.Is(err, zk.ErrBadVersion) {
			continue // another broker claimed a block meanwhile
		}
		if err != nil {
			return 0, 0, err
		}
		return next.BlockStart, next.BlockEnd, nil
	}
}

// readEntityConfig reads /config/<type>/<name>; a missing node or null data
// means no overrides.
func readEntityConfig(c *zkclient.Client, typ, name string) (map[string]string, error) {
	data, _, err := c.Get(zkpaths.ConfigPath(typ, name))
	if errors.Is(err, zk.ErrNoNode) || (err == nil && len(data) == 0) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return zkpaths.DecodeEntityConfig(data)
}

func (z zkAdmin) ConsumerOffset(_ context.Context, group, topic string, partition int32) (int64, bool, error) {
	return z.zk.GetConsumerOffset(group, topic, partition)
}

func (z zkAdmin) SetConsumerOffset(_ context.Context, group, topic string, partition int32, offset int64) error {
	return z.zk.SetConsumerOffset(group, topic, partition, offset)
}
