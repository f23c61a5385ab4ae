package zkclient

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
)

// GetAllTopics lists /brokers/topics, sorted.
func (c *Client) GetAllTopics() ([]string, error) {
	kids, err := c.Children(zkpaths.TopicsPath)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return kids, err
}

// TopicExists reports whether /brokers/topics/<t> exists.
func (c *Client) TopicExists(topic string) (bool, error) {
	ok, _, err := c.Exists(zkpaths.TopicPath(topic))
	return ok, err
}

// GetTopicAssignment reads /brokers/topics/<t> and its zkVersion; a missing
// topic returns an error matching ErrTopicNotFound and zk.ErrNoNode, an
// undecodable one an error matching ErrUndecodable.
func (c *Client) GetTopicAssignment(topic string) (zkpaths.TopicAssignment, int32, error) {
	data, st, err := c.Get(zkpaths.TopicPath(topic))
	if errors.Is(err, zk.ErrNoNode) {
		return zkpaths.TopicAssignment{}, 0, fmt.Errorf("%w: %s: %w", ErrTopicNotFound, topic, err)
	}
	if err != nil {
		return zkpaths.TopicAssignment{}, 0, err
	}
	a, err := zkpaths.DecodeTopicAssignment(data)
	if err != nil {
		return zkpaths.TopicAssignment{}, 0, fmt.Errorf("%w: topic %s: %w", ErrUndecodable, topic, err)
	}
	return a, st.Version, nil
}

// GetTopicAssignments reads several topics; missing topics are omitted.
func (c *Client) GetTopicAssignments(topics []string) (map[string]zkpaths.TopicAssignment, error) {
	out := make(map[string]zkpaths.TopicAssignment, len(topics))
	for _, t := range topics {
		a, _, err := c.GetTopicAssignment(t)
		if errors.Is(err, ErrTopicNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[t] = a
	}
	return out, nil
}

// GetReplicaAssignment returns partition -> replicas of one topic.
func (c *Client) GetReplicaAssignment(topic string) (map[int32][]int32, error) {
	a, _, err := c.GetTopicAssignment(topic)
	if err != nil {
		return nil, err
	}
	return a.Partitions, nil
}

// CreateTopic creates a topic as Kafka's AdminZkClient does: refuse if the
// topic is marked for deletion (ErrTopicMarkedForDeletion), exists
// (ErrTopicExists) or collides with another topic by '.' versus '_'
// (ErrTopicCollision); write /config/topics/<t> first ("set, else create",
// no change notification) and then create /brokers/topics/<t>. A
// NodeExists on that create also yields ErrTopicExists. The assignment is
// written as given (set TopicID for a v3 topic id).
func (c *Client) CreateTopic(topic string, assignment zkpaths.TopicAssignment, configs map[string]string) error {
	if ok, err := c.IsTopicMarkedForDeletion(topic); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("%w: %s", ErrTopicMarkedForDeletion, topic)
	}
	if ok, err := c.TopicExists(topic); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("%w: %s", ErrTopicExists, topic)
	}
	if strings.ContainsAny(topic, "._") {
		all, err := c.GetAllTopics()
		if err != nil {
			return err
		}
		norm := strings.ReplaceAll(topic, ".", "_")
		for _, t := range all {
			if t != topic && strings.ReplaceAll(t, ".", "_") == norm {
				return fmt.Errorf("%w: %q collides with existing topic %q", ErrTopicCollision, topic, t)
			}
		}
	}
	if err := c.setOrCreateEntityConfigs(zkpaths.ConfigTypeTopic, topic, configs); err != nil {
		return err
	}
	_, err := c.CreateRecursive(zkpaths.TopicPath(topic), assignment.Encode(), Persistent)
	if errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("%w: %s", ErrTopicExists, topic)
	}
	return err
}

// UpdateTopicAssignment overwrites a topic's assignment, as the
// partition-addition path does (not fenced), conditionally on
// expectedVersion (-1: any version; a lost race matches zk.ErrBadVersion).
// The topic must exist. Returns the new zkVersion.
func (c *Client) UpdateTopicAssignment(topic string, assignment zkpaths.TopicAssignment, expectedVersion int32) (int32, error) {
	st, err := c.Set(zkpaths.TopicPath(topic), assignment.Encode(), expectedVersion)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, fmt.Errorf("%w: %s: %w", ErrTopicNotFound, topic, err)
	}
	if err != nil {
		return 0, err
	}
	return st.Version, nil
}

// SetTopicAssignment is the controller's fenced write of a topic znode
// (reassignment progress, topic id back-fill, undoing partition additions).
// expectedVersion -1 means any version. Returns the new zkVersion.
func (c *Client) SetTopicAssignment(epochZkVersion int32, topic string, assignment zkpaths.TopicAssignment, expectedVersion int32) (int32, error) {
	r, err := c.fencedOne(epochZkVersion, SetOp(zkpaths.TopicPath(topic), assignment.Encode(), expectedVersion))
	if err != nil {
		return 0, err
	}
	return r.Stat.Version, nil
}

// DeleteTopicZNode removes /brokers/topics/<t> and its subtree with fenced
// deletes, depth-first, tolerating nodes already gone.
func (c *Client) DeleteTopicZNode(epochZkVersion int32, topic string) error {
	return c.deleteRecursive(zkpaths.TopicPath(topic), func(p string) error {
		_, err := c.fencedOne(epochZkVersion, DeleteOp(p, -1))
		return err
	})
}

// DeleteTopicConfigs removes /config/topics/<t> of each topic (fenced).
func (c *Client) DeleteTopicConfigs(epochZkVersion int32, topics ...string) error {
	for _, t := range topics {
		_, err := c.fencedOne(epochZkVersion, DeleteOp(zkpaths.ConfigPath(zkpaths.ConfigTypeTopic, t), -1))
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
	}
	return nil
}

// IsTopicMarkedForDeletion reports whether /admin/delete_topics/<t> exists.
func (c *Client) IsTopicMarkedForDeletion(topic string) (bool, error) {
	ok, _, err := c.Exists(zkpaths.DeleteTopicPath(topic))
	return ok, err
}

// CreateDeleteTopicPath marks a topic for deletion (/admin/delete_topics/<t>,
// null data). The topic must exist (ErrTopicNotFound); an existing marker
// yields ErrTopicAlreadyMarkedForDeletion.
func (c *Client) CreateDeleteTopicPath(topic string) error {
	if ok, err := c.TopicExists(topic); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("%w: %s", ErrTopicNotFound, topic)
	}
	_, err := c.CreateRecursive(zkpaths.DeleteTopicPath(topic), nil, Persistent)
	if errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("%w: %s", ErrTopicAlreadyMarkedForDeletion, topic)
	}
	return err
}

// GetTopicDeletions lists the topics marked for deletion, sorted.
func (c *Client) GetTopicDeletions() ([]string, error) {
	kids, err := c.Children(zkpaths.AdminDeleteTopicsPath)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return kids, err
}

// DeleteTopicDeletions removes deletion markers (fenced; missing ones are fine).
func (c *Client) DeleteTopicDeletions(epochZkVersion int32, topics ...string) error {
	for _, t := range topics {
		_, err := c.fencedOne(epochZkVersion, DeleteOp(zkpaths.DeleteTopicPath(t), -1))
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
	}
	return nil
}
