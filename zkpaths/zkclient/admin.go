package zkclient

import (
	"errors"
	"fmt"

	"github.com/klassik/klassik/broker/common"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
)

// GetPartitionReassignment reads /admin/reassign_partitions; ok is false if
// absent. A node Kafka would reject (unknown fields, bad JSON) returns an
// error; Kafka then leaves the node in place.
func (c *Client) GetPartitionReassignment() ([]zkpaths.PartitionReplicas, bool, error) {
	data, _, err := c.Get(zkpaths.ReassignPartitionsPath)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	r, err := zkpaths.DecodeReassignment(data)
	if err != nil {
		return nil, true, err
	}
	return r, true, nil
}

// CreatePartitionReassignment submits a legacy reassignment (tool/operator
// side); an existing node yields ErrReassignmentInProgress.
func (c *Client) CreatePartitionReassignment(parts []zkpaths.PartitionReplicas) error {
	_, err := c.CreateRecursive(zkpaths.ReassignPartitionsPath, zkpaths.EncodeReassignment(parts), Persistent)
	if errors.Is(err, zk.ErrNodeExists) {
		return ErrReassignmentInProgress
	}
	return err
}

// SetOrCreatePartitionReassignment is the controller's fenced rewrite of
// /admin/reassign_partitions (any-version set, or create if missing).
func (c *Client) SetOrCreatePartitionReassignment(epochZkVersion int32, parts []zkpaths.PartitionReplicas) error {
	data := zkpaths.EncodeReassignment(parts)
	_, err := c.fencedOne(epochZkVersion, SetOp(zkpaths.ReassignPartitionsPath, data, -1))
	if errors.Is(err, zk.ErrNoNode) {
		_, err = c.fencedOne(epochZkVersion, CreateOp(zkpaths.ReassignPartitionsPath, data, Persistent))
	}
	return err
}

// DeletePartitionReassignment removes /admin/reassign_partitions (fenced).
func (c *Client) DeletePartitionReassignment(epochZkVersion int32) error {
	_, err := c.fencedOne(epochZkVersion, DeleteOp(zkpaths.ReassignPartitionsPath, -1))
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// GetPreferredReplicaElection reads /admin/preferred_replica_election; ok is
// false if absent.
func (c *Client) GetPreferredReplicaElection() ([]common.TopicPartition, bool, error) {
	data, _, err := c.Get(zkpaths.PreferredReplicaElectionPath)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	tps, err := zkpaths.DecodePreferredReplicaElection(data)
	if err != nil {
		return nil, true, err
	}
	return tps, true, nil
}

// CreatePreferredReplicaElection submits a legacy preferred election; an
// existing node yields ErrPreferredElectionInProgress.
func (c *Client) CreatePreferredReplicaElection(tps []common.TopicPartition) error {
	_, err := c.CreateRecursive(zkpaths.PreferredReplicaElectionPath, zkpaths.EncodePreferredReplicaElection(tps), Persistent)
	if errors.Is(err, zk.ErrNodeExists) {
		return ErrPreferredElectionInProgress
	}
	return err
}

// DeletePreferredReplicaElection removes the election node (fenced).
func (c *Client) DeletePreferredReplicaElection(epochZkVersion int32) error {
	_, err := c.fencedOne(epochZkVersion, DeleteOp(zkpaths.PreferredReplicaElectionPath, -1))
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// CreateIsrChangeNotification writes one /isr_change_notification/isr_change_
// sequential node (legacy leader path) and returns its child name.
func (c *Client) CreateIsrChangeNotification(tps []common.TopicPartition) (string, error) {
	p, err := c.CreateRecursive(zkpaths.IsrChangeNotificationSeqPath(), zkpaths.EncodeIsrChangeNotification(tps), PersistentSequential)
	if err != nil {
		return "", err
	}
	return baseName(p), nil
}

// GetAllIsrChangeNotifications lists the notification child names, sorted
// (ascending sequence).
func (c *Client) GetAllIsrChangeNotifications() ([]string, error) {
	return c.childrenOrEmpty(zkpaths.IsrChangeNotificationPath)
}

// GetPartitionsFromIsrChangeNotifications reads the given notifications and
// returns the partitions they name (duplicates removed, first-seen order).
// Notifications that vanished are skipped; undecodable ones are logged and
// skipped.
func (c *Client) GetPartitionsFromIsrChangeNotifications(names []string) ([]common.TopicPartition, error) {
	seen := map[common.TopicPartition]bool{}
	var out []common.TopicPartition
	for _, n := range names {
		data, _, err := c.Get(zkpaths.IsrChangeNotificationPath + "/" + n)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		tps, err := zkpaths.DecodeIsrChangeNotification(data)
		if err != nil {
			c.log.Warn("ignoring bad isr change notification", "name", n, "err", err)
			continue
		}
		for _, tp := range tps {
			if !seen[tp] {
				seen[tp] = true
				out = append(out, tp)
			}
		}
	}
	return out, nil
}

// DeleteIsrChangeNotifications deletes processed notifications (fenced).
func (c *Client) DeleteIsrChangeNotifications(epochZkVersion int32, names ...string) error {
	return c.deleteChildrenFenced(epochZkVersion, zkpaths.IsrChangeNotificationPath, names)
}

// GetAllLogDirEventNotifications lists the log dir event child names, sorted.
func (c *Client) GetAllLogDirEventNotifications() ([]string, error) {
	return c.childrenOrEmpty(zkpaths.LogDirEventNotificationPath)
}

// GetBrokerIDsFromLogDirEvents reads the given events and returns the broker
// ids (duplicates removed). Vanished or undecodable events are skipped.
func (c *Client) GetBrokerIDsFromLogDirEvents(names []string) ([]int32, error) {
	seen := map[int32]bool{}
	var out []int32
	for _, n := range names {
		data, _, err := c.Get(zkpaths.LogDirEventNotificationPath + "/" + n)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		id, err := zkpaths.DecodeLogDirEventNotification(data)
		if err != nil {
			c.log.Warn("ignoring bad log dir event", "name", n, "err", err)
			continue
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

// DeleteLogDirEventNotifications deletes processed events (fenced).
func (c *Client) DeleteLogDirEventNotifications(epochZkVersion int32, names ...string) error {
	return c.deleteChildrenFenced(epochZkVersion, zkpaths.LogDirEventNotificationPath, names)
}

func (c *Client) deleteChildrenFenced(epochZkVersion int32, dir string, names []string) error {
	for _, n := range names {
		_, err := c.fencedOne(epochZkVersion, DeleteOp(dir+"/"+n, -1))
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
	}
	return nil
}

func (c *Client) childrenOrEmpty(p string) ([]string, error) {
	kids, err := c.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return kids, err
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// GetEntityConfigs reads /config/<type>/<name>; a missing node or null data
// means no overrides (empty map). name must be sanitized for users/clients.
func (c *Client) GetEntityConfigs(entityType, name string) (map[string]string, error) {
	data, _, err := c.Get(zkpaths.ConfigPath(entityType, name))
	if errors.Is(err, zk.ErrNoNode) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	cfg, err := zkpaths.DecodeEntityConfig(data)
	if err != nil {
		return nil, fmt.Errorf("zkclient: config %s/%s: %w", entityType, name, err)
	}
	return cfg, nil
}

// setOrCreateEntityConfigs writes the complete override set of an entity
// ("set, else create", any-version; last writer wins). No notification.
func (c *Client) setOrCreateEntityConfigs(entityType, name string, configs map[string]string) error {
	p := zkpaths.ConfigPath(entityType, name)
	data := zkpaths.EncodeEntityConfig(configs)
	_, err := c.Set(p, data, -1)
	if err == nil || !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	_, err = c.CreateRecursive(p, data, Persistent)
	if errors.Is(err, zk.ErrNodeExists) {
		_, err = c.Set(p, data, -1)
	}
	return err
}

// createConfigChangeNotification creates a version 2
// /config/changes/config_change_ node for "<type>/<name>" and returns its
// child name.
func (c *Client) createConfigChangeNotification(entityType, name string) (string, error) {
	if err := c.EnsurePath(zkpaths.ConfigChangesPath); err != nil {
		return "", err
	}
	p, err := c.Create(zkpaths.ConfigChangeSeqPath(), zkpaths.EncodeConfigChangeNotification(zkpaths.ConfigEntityPath(entityType, name)), PersistentSequential)
	if err != nil {
		return "", err
	}
	return baseName(p), nil
}

// ChangeEntityConfigs is AdminZkClient.changeConfigs: write the complete new
// override set, then create a change notification. For client, user and ip
// entities an empty set deletes the node instead when it has no children
// (quota clean-up).
func (c *Client) ChangeEntityConfigs(entityType, name string, configs map[string]string) error {
	if len(configs) == 0 && (entityType == zkpaths.ConfigTypeClient || entityType == zkpaths.ConfigTypeUser || entityType == zkpaths.ConfigTypeIP) {
		p := zkpaths.ConfigPath(entityType, name)
		kids, err := c.Children(p)
		switch {
		case errors.Is(err, zk.ErrNoNode):
		case err != nil:
			return err
		case len(kids) == 0:
			if err := c.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return err
			}
		default:
			if err := c.setOrCreateEntityConfigs(entityType, name, configs); err != nil {
				return err
			}
		}
	} else if err := c.setOrCreateEntityConfigs(entityType, name, configs); err != nil {
		return err
	}
	_, err := c.createConfigChangeNotification(entityType, name)
	return err
}

// GetConsumerOffset reads a legacy consumer offset
// (/consumers/<g>/offsets/<t>/<p>); ok is false if none was committed.
func (c *Client) GetConsumerOffset(group, topic string, partition int32) (offset int64, ok bool, err error) {
	data, _, err := c.Get(zkpaths.ConsumerOffsetPath(group, topic, partition))
	if errors.Is(err, zk.ErrNoNode) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	offset, err = zkpaths.DecodeConsumerOffset(data)
	if err != nil {
		return 0, false, err
	}
	return offset, true, nil
}

// SetConsumerOffset commits a legacy consumer offset ("set, else
// create-recursive", any-version), as OffsetCommit v0 does.
func (c *Client) SetConsumerOffset(group, topic string, partition int32, offset int64) error {
	p := zkpaths.ConsumerOffsetPath(group, topic, partition)
	data := zkpaths.EncodeConsumerOffset(offset)
	_, err := c.Set(p, data, -1)
	if err == nil || !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	_, err = c.CreateRecursive(p, data, Persistent)
	if errors.Is(err, zk.ErrNodeExists) {
		_, err = c.Set(p, data, -1)
	}
	return err
}
