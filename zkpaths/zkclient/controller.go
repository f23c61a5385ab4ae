package zkclient

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
)

// GetController returns the broker id in /controller; ok is false if there
// is no controller.
func (c *Client) GetController() (id int32, ok bool, err error) {
	info, ok, err := c.getControllerInfo()
	return info.BrokerID, ok, err
}

// getControllerInfo reads /controller in full.
func (c *Client) getControllerInfo() (info zkpaths.ControllerInfo, ok bool, err error) {
	info, ok, err = getDecoded(c, zkpaths.ControllerPath, zkpaths.DecodeController)
	if err != nil {
		return zkpaths.ControllerInfo{}, false, err
	}
	return info, ok, nil
}

// GetControllerEpoch reads /controller_epoch: the epoch and the node's
// zkVersion; ok is false if the node does not exist yet.
func (c *Client) GetControllerEpoch() (epoch, zkVersion int32, ok bool, err error) {
	data, st, err := c.Get(zkpaths.ControllerEpochPath)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, err
	}
	epoch, err = zkpaths.DecodeControllerEpoch(data)
	if err != nil {
		return 0, 0, false, err
	}
	return epoch, st.Version, true, nil
}

// RegisterControllerAndIncrementEpoch tries to become controller
// (KafkaZkClient.registerControllerAndIncrementControllerEpoch): it reads
// /controller_epoch (creating it with 0 on the cluster's first election),
// then in one multi creates the ephemeral /controller and sets
// /controller_epoch to epoch+1 conditional on the version just read. It
// returns the new epoch and the zkVersion of /controller_epoch to use for
// fenced writes. If another broker won (NodeExists/BadVersion and the nodes
// do not show our own earlier success) the error matches ErrControllerMoved.
func (c *Client) RegisterControllerAndIncrementEpoch(brokerID int32) (epoch, epochZkVersion int32, err error) {
	cur, curVersion, ok, err := c.GetControllerEpoch()
	if err != nil {
		return 0, 0, err
	}
	if !ok {
		_, err := c.CreateRecursive(zkpaths.ControllerEpochPath, zkpaths.EncodeControllerEpoch(0), Persistent)
		switch {
		case err == nil:
			cur, curVersion = 0, 0
		case errors.Is(err, zk.ErrNodeExists):
			cur, curVersion, ok, err = c.GetControllerEpoch()
			if err != nil {
				return 0, 0, err
			}
			if !ok {
				return 0, 0, fmt.Errorf("zkclient: %s vanished during election", zkpaths.ControllerEpochPath)
			}
		default:
			return 0, 0, err
		}
	}
	next := cur + 1
	res, err := c.Multi(
		CreateOp(zkpaths.ControllerPath, zkpaths.EncodeController(brokerID, c.opts.now()), Ephemeral),
		SetOp(zkpaths.ControllerEpochPath, zkpaths.EncodeControllerEpoch(next), curVersion),
	)
	if err == nil {
		c.log.Info("elected controller", "broker", brokerID, "controller_epoch", next, "epoch_zk_version", res[1].Stat.Version)
		return next, res[1].Stat.Version, nil
	}
	if !errors.Is(err, zk.ErrNodeExists) && !errors.Is(err, zk.ErrBadVersion) {
		return 0, 0, fmt.Errorf("zkclient: controller election: %w", err)
	}
	// Maybe our own earlier attempt landed before a connection loss.
	holder, hasHolder, herr := c.GetController()
	if herr != nil {
		return 0, 0, herr
	}
	nowEpoch, nowVersion, ok, eerr := c.GetControllerEpoch()
	if eerr != nil {
		return 0, 0, eerr
	}
	if hasHolder && holder == brokerID && ok && nowEpoch == next {
		return next, nowVersion, nil
	}
	return 0, 0, fmt.Errorf("%w: election lost (controller=%d, epoch=%d): %v", ErrControllerMoved, holder, nowEpoch, err)
}

// DeleteController removes /controller with a fenced delete, used by a
// controller forcing its own resignation (TriggerControllerMove).
func (c *Client) DeleteController(epochZkVersion int32) error {
	_, err := c.fencedOne(epochZkVersion, DeleteOp(zkpaths.ControllerPath, -1))
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// AllocateProducerIDBlock hands the next block of 1000 producer ids to
// brokerID with the compare-and-set loop on /latest_producer_id_block (not
// fenced; the node version protects it).
func (c *Client) AllocateProducerIDBlock(brokerID int32) (zkpaths.ProducerIDBlock, error) {
	for {
		data, st, err := c.Get(zkpaths.LatestProducerIDBlockPath)
		if errors.Is(err, zk.ErrNoNode) {
			if err := c.EnsurePath(zkpaths.LatestProducerIDBlockPath); err != nil {
				return zkpaths.ProducerIDBlock{}, err
			}
			continue
		}
		if err != nil {
			return zkpaths.ProducerIDBlock{}, err
		}
		var prev *zkpaths.ProducerIDBlock
		if len(data) > 0 {
			b, err := zkpaths.DecodeProducerIDBlock(data)
			if err != nil {
				return zkpaths.ProducerIDBlock{}, err
			}
			prev = &b
		}
		next, err := zkpaths.NextProducerIDBlock(prev, brokerID)
		if err != nil {
			return zkpaths.ProducerIDBlock{}, err
		}
		_, err = c.Set(zkpaths.LatestProducerIDBlockPath, next.Encode(), st.Version)
		if err == nil {
			return next, nil
		}
		if !errors.Is(err, zk.ErrBadVersion) {
			return zkpaths.ProducerIDBlock{}, err
		}
	}
}
