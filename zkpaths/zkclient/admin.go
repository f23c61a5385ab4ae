package zkclient

import (
	"errors"
	"fmt"

	"github.com/klassik/klassik/broker/common"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
)

// getDecoded reads the node at p and decodes it. ok is false (and err nil)
// when the node is absent; a node that exists but does not decode returns ok
// true with the decode error, so the caller can tell "bad" from "missing".
func getDecoded[T any](c *Client, p string, decode func([]byte) (T, error)) (v T, ok bool, err error) {
	data, _, err := c.Get(p)
	if errors.Is(err, zk.ErrNoNode) {
		return v, false, nil
	}
	if err != nil {
		return v, false, err
	}
	if v, err = decode(data); err != nil {
		var zero T
		return zero, true, err
	}
	return v, true, nil
}

// createAdminRequest creates a tool-submitted /admin request node; an
// existing node means an earlier request is still being processed and yields
// inProgress.
func (c *Client) createAdminRequest(p string, data []byte, inProgress error) error {
	_, err := c.CreateRecursive(p, data, Persistent)
	if errors.Is(err, zk.ErrNodeExists) {
		return inProgress
	}
	return err
}

// deleteFenced removes p (any version) in a transaction fenced by the
// controller epoch; a node already gone is not an error.
func (c *Client) deleteFenced(epochZkVersion int32, p string) error {
	_, err := c.fencedOne(epochZkVersion, DeleteOp(p, -1))
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// setOrCreate writes data to p with any version, creating p (and its
// parents) if it is missing; a create that loses a race to another writer
// falls back to the set, so the last writer wins.
func (c *Client) setOrCreate(p string, data []byte) error {
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

// GetPartitionReassignment reads /admin/reassign_partitions; ok is false if
// absent. A node Kafka would reject (unknown fields, bad JSON) returns an
// error; Kafka then leaves the node in place.
func (c *Client) GetPartitionReassignment() ([]zkpaths.PartitionReplicas, bool, error) {
	return getDecoded(c, zkpaths.ReassignPartitionsPath, zkpaths.DecodeReassignment)
}

// CreatePartitionReassignment submits a legacy reassignment (tool/operator
// side); an existing node yields ErrReassignmentInProgress.
func (c *Client) CreatePartitionReassignment(parts []zkpaths.PartitionReplicas) error {
	return c.createAdminRequest(zkpaths.ReassignPartitionsPath, zkpaths.EncodeReassignment(parts), ErrReassignmentInProgress)
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
	return c.deleteFenced(epochZkVersion, zkpaths.ReassignPartitionsPath)
}

// GetPreferredReplicaElection reads /admin/preferred_replica_election; ok is
// false if absent.
func (c *Client) GetPreferredReplicaElection() ([]common.TopicPartition, bool, error) {
	return getDecoded(c, zkpaths.PreferredReplicaElectionPath, zkpaths.DecodePreferredReplicaElection)
}

// CreatePreferredReplicaElection submits a legacy preferred election; an
// existing node yields ErrPreferredElectionInProgress.
func (c *Client) CreatePreferredReplicaElection(tps []common.TopicPartition) error {
	return c.createAdminRequest(zkpaths.PreferredReplicaElectionPath, zkpaths.EncodePreferredReplicaElection(tps), ErrPreferredElectionInProgress)
}

// DeletePreferredReplicaElection removes the election node (fenced).
func (c *Client) DeletePreferredReplicaElection(epochZkVersion int32) error {
	return c.deleteFenced(epochZkVersion, zkpaths.PreferredReplicaElectionPath)
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
	return readNotifications(c, zkpaths.IsrChangeNotificationPath, names, "isr change notification", zkpaths.DecodeIsrChangeNotification)
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
	return readNotifications(c, zkpaths.LogDirEventNotificationPath, names, "log dir event", func(data []byte) ([]int32, error) {
		id, err := zkpaths.DecodeLogDirEventNotification(data)
		return []int32{id}, err
	})
}

// readNotifications reads the notification children names of dir and
// returns the items they carry, duplicates removed, in first-seen order.
// Notifications that vanished are skipped; undecodable ones are logged (as
// a bad <what>) and skipped.
func readNotifications[T comparable](c *Client, dir string, names []string, what string, decode func([]byte) ([]T, error)) ([]T, error) {
	seen := map[T]bool{}
	var out []T
	for _, n := range names {
		data, _, err := c.Get(dir + "/" + n)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		items, err := decode(data)
		if err != nil {
			c.log.Warn("ignoring bad "+what, "name", n, "err", err)
			continue
		}
		for _, it := range items {
			if !seen[it] {
				seen[it] = true
				out = append(out, it)
			}
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
		return nil, fmt.Errorf("%w: config %s/%s: %w", ErrUndecodable, entityType, name, err)
	}
	return cfg, nil
}

// setOrCreateEntityConfigs writes the complete override set of an entity
// ("set, else create", any-version; last writer wins). No notification.
func (c *Client) setOrCreateEntityConfigs(entityType, name string, configs map[string]string) error {
	return c.setOrCreate(zkpaths.ConfigPath(entityType, name), zkpaths.EncodeEntityConfig(configs))
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
	offset, ok, err = getDecoded(c, zkpaths.ConsumerOffsetPath(group, topic, partition), zkpaths.DecodeConsumerOffset)
	if err != nil {
		return 0, false, err
	}
	return offset, ok, nil
}

// SetConsumerOffset commits a legacy consumer offset ("set, else
// create-recursive", any-version), as OffsetCommit v0 does.
func (c *Client) SetConsumerOffset(group, topic string, partition int32, offset int64) error {
	return c.setOrCreate(zkpaths.ConsumerOffsetPath(group, topic, partition), zkpaths.EncodeConsumerOffset(offset))
}
