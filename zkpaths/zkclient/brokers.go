package zkclient

import (
	"errors"
	"fmt"
	"sort"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
)

// EnsureTopLevelPaths creates the persistent paths every broker ensures at
// start-up (zkpaths.PersistentZkPaths); existing nodes are fine.
func (c *Client) EnsureTopLevelPaths() error {
	for _, p := range zkpaths.PersistentZkPaths {
		if err := c.EnsurePath(p); err != nil {
			return err
		}
	}
	return nil
}

// getClusterID reads /cluster/id; ok is false if the node is missing.
func (c *Client) getClusterID() (id string, ok bool, err error) {
	id, ok, err = getDecoded(c, zkpaths.ClusterIDPath, zkpaths.DecodeClusterID)
	if err != nil {
		return "", false, err
	}
	return id, ok, nil
}

// GetOrCreateClusterID returns the cluster id, creating /cluster/id with a
// fresh random id if there is none; a concurrent creator wins and its id is
// returned (KafkaZkClient.getOrCreateClusterId / createOrGetClusterId).
func (c *Client) GetOrCreateClusterID() (string, error) {
	id, ok, err := c.getClusterID()
	if err != nil || ok {
		return id, err
	}
	proposed := zkpaths.RandomUUID()
	_, err = c.CreateRecursive(zkpaths.ClusterIDPath, zkpaths.EncodeClusterID(proposed), Persistent)
	if err == nil {
		return proposed, nil
	}
	if !errors.Is(err, zk.ErrNodeExists) {
		return "", err
	}
	id, ok, err = c.getClusterID()
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("zkclient: %s was created and deleted concurrently", zkpaths.ClusterIDPath)
	}
	return id, nil
}

// RegisterBroker creates /brokers/ids/<id> as Kafka 2.2+ does ("checked
// ephemeral": multi(create null ephemeral, setData json version 0)) and
// returns the broker epoch (the node's czxid). If a node for the id exists:
// our own previous (expired) session's node is deleted and the registration
// retried; our current session's node (an earlier attempt that did land) is
// accepted; any other owner fails with an error matching zk.ErrNodeExists.
// A zero info.Timestamp is replaced by the current time.
func (c *Client) RegisterBroker(info zkpaths.BrokerInfo) (int64, error) {
	if info.Timestamp == 0 {
		info.Timestamp = c.opts.now().UnixMilli()
	}
	p := zkpaths.BrokerIDPath(info.ID)
	data := info.Encode()
	for attempt := 0; attempt < 10; attempt++ {
		res, err := c.Multi(CreateOp(p, nil, Ephemeral), SetOp(p, data, 0))
		if err == nil {
			c.mu.Lock()
			c.registeredSessionID = c.conn.SessionID()
			c.mu.Unlock()
			czxid := res[1].Stat.Czxid
			c.log.Info("registered broker", "broker", info.ID, "path", p, "broker_epoch", czxid)
			return czxid, nil
		}
		switch {
		case errors.Is(err, zk.ErrNoNode) && len(res) > 0 && errors.Is(res[0].Error, zk.ErrNoNode):
			// /brokers/ids is missing.
			if err := c.EnsurePath(zkpaths.BrokerIDsPath); err != nil {
				return 0, err
			}
			continue
		case errors.Is(err, zk.ErrNodeExists):
		default:
			return 0, fmt.Errorf("zkclient: register broker %d: %w", info.ID, err)
		}
		_, st, err := c.Get(p)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return 0, err
		}
		cur := c.conn.SessionID()
		c.mu.Lock()
		prev := c.registeredSessionID
		c.mu.Unlock()
		switch {
		case st.EphemeralOwner == cur:
			c.mu.Lock()
			c.registeredSessionID = cur
			c.mu.Unlock()
			return st.Czxid, nil
		case st.EphemeralOwner == prev && prev != cur:
			// Our previous session's node, not yet removed by the server
			// (ZOOKEEPER-2985): delete and retry.
			if err := c.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return 0, err
			}
			continue
		default:
			return 0, fmt.Errorf("zkclient: register broker %d: %s is held by session 0x%x (another live broker, or this broker's previous process whose session has not expired yet): %w",
				info.ID, p, st.EphemeralOwner, zk.ErrNodeExists)
		}
	}
	return 0, fmt.Errorf("zkclient: register broker %d: gave up after repeated conflicts", info.ID)
}

// GetBroker reads one registration with its epoch (czxid); ok is false if
// the broker is not registered.
func (c *Client) GetBroker(id int32) (info zkpaths.BrokerInfo, ok bool, err error) {
	data, st, err := c.Get(zkpaths.BrokerIDPath(id))
	if errors.Is(err, zk.ErrNoNode) {
		return zkpaths.BrokerInfo{}, false, nil
	}
	if err != nil {
		return zkpaths.BrokerInfo{}, false, err
	}
	info, err = zkpaths.DecodeBrokerInfo(id, data)
	if err != nil {
		return zkpaths.BrokerInfo{}, false, err
	}
	info.Epoch = st.Czxid
	return info, true, nil
}

// GetBrokerIDs lists the registered broker ids, ascending. Non-numeric
// children are skipped.
func (c *Client) GetBrokerIDs() ([]int32, error) {
	kids, err := c.Children(zkpaths.BrokerIDsPath)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ids := make([]int32, 0, len(kids))
	for _, k := range kids {
		id, err := zkpaths.ParseBrokerID(k)
		if err != nil {
			c.log.Warn("ignoring non-numeric child of /brokers/ids", "name", k)
			continue
		}
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// GetAllBrokers reads every registration with its epoch, sorted by id.
// Brokers that vanish between listing and reading are skipped; unreadable
// registrations are logged and skipped.
func (c *Client) GetAllBrokers() ([]zkpaths.BrokerInfo, error) {
	ids, err := c.GetBrokerIDs()
	if err != nil {
		return nil, err
	}
	out := make([]zkpaths.BrokerInfo, 0, len(ids))
	for _, id := range ids {
		info, ok, err := c.GetBroker(id)
		if err != nil {
			if errors.Is(err, ErrClosed) || retryable(err) || errors.Is(err, zk.ErrSessionExpired) {
				return nil, err
			}
			c.log.Warn("ignoring unreadable broker registration", "broker", id, "err", err)
			continue
		}
		if ok {
			out = append(out, info)
		}
	}
	return out, nil
}

// generateBrokerSequenceID bumps /brokers/seqid with a zero-length setData
// and returns its new data version (1, 2, ...), creating the node if needed.
func (c *Client) generateBrokerSequenceID() (int32, error) {
	for i := 0; i < 3; i++ {
		st, err := c.Set(zkpaths.BrokerSeqIDPath, []byte{}, -1)
		if err == nil {
			return st.Version, nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return 0, err
		}
		if err := c.EnsurePath(zkpaths.BrokerSeqIDPath); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("zkclient: %s keeps disappearing", zkpaths.BrokerSeqIDPath)
}

// GenerateBrokerID returns a new broker id for broker.id.generation.enable:
// sequence + reservedBrokerMaxID (Kafka's default reserved.broker.max.id is
// zkpaths.ReservedBrokerMaxIDDefault, so the first id is 1001).
func (c *Client) GenerateBrokerID(reservedBrokerMaxID int32) (int32, error) {
	seq, err := c.generateBrokerSequenceID()
	if err != nil {
		return 0, err
	}
	return seq + reservedBrokerMaxID, nil
}
