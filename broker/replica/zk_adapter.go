package replica

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// zkIsrUpdater is the direct ZooKeeper mode of replication.md §7.3 (Kafka's
// ReplicationUtils.updateLeaderAndIsr and the isr_change_notification
// writes of ReplicaManager, IBP < 2.7-IV2).
type zkIsrUpdater struct{ c *zkclient.Client }

// NewZkIsrUpdater writes ISR changes with c: a setData of the partition
// state znode conditional on its version (not fenced by /controller_epoch,
// as in Kafka), and persistent sequential /isr_change_notification/isr_change_
// znodes.
func NewZkIsrUpdater(c *zkclient.Client) IsrUpdater { return zkIsrUpdater{c} }

func (u zkIsrUpdater) UpdateIsr(tp common.TopicPartition, st IsrState) (int32, error) {
	v, err := u.c.UpdateLeaderAndIsrConditional(common.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}, zkpaths.LeaderAndIsr{
		Leader:              st.Leader,
		LeaderEpoch:         st.LeaderEpoch,
		ISR:                 st.ISR,
		LeaderRecoveryState: zkpaths.LeaderRecovered,
		ControllerEpoch:     st.ControllerEpoch,
		ZkVersion:           st.PartitionEpoch,
	})
	if errors.Is(err, zk.ErrBadVersion) {
		return 0, fmt.Errorf("%w: %s-%d expected version %d", ErrIsrVersionConflict, tp.Topic, tp.Partition, st.PartitionEpoch)
	}
	return v, err
}

func (u zkIsrUpdater) NotifyIsrChange(tps []common.TopicPartition) error {
	out := make([]common.TopicPartition, len(tps))
	for i, tp := range tps {
		out[i] = common.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}
	}
	_, err := u.c.CreateIsrChangeNotification(out)
	return err
}
