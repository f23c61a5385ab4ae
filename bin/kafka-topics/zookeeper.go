package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/klassik/klassik/bin/internal/clitools"

	"github.com/klassik/klassik/broker/common"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/controller"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// zkStore is the part of zkclient.Client the ZooKeeper mode uses.
type zkStore interface {
	GetAllTopics() ([]string, error)
	GetAllBrokers() ([]zkpaths.BrokerInfo, error)
	GetBrokerIDs() ([]int32, error)
	GetTopicAssignment(topic string) (zkpaths.TopicAssignment, int32, error)
	GetPartitionStates(tps []common.TopicPartition) (map[common.TopicPartition]zkpaths.LeaderAndIsr, error)
	GetEntityConfigs(entityType, name string) (map[string]string, error)
	ChangeEntityConfigs(entityType, name string, configs map[string]string) error
	CreateTopic(topic string, assignment zkpaths.TopicAssignment, configs map[string]string) error
	UpdateTopicAssignment(topic string, assignment zkpaths.TopicAssignment, expectedVersion int32) (int32, error)
	CreateDeleteTopicPath(topic string) error
	Exists(p string) (bool, *zk.Stat, error)
	Close()
}

// zkService runs the commands directly against ZooKeeper (--zookeeper), as
// Kafka's ZookeeperTopicService with AdminZkClient: creation writes
// /config/topics/<t> and then /brokers/topics/<t> (the controller reacts to
// the new child), deletion creates /admin/delete_topics/<t>, and describe
// reads the assignment and the partition state znodes.
type zkService struct {
	zk  zkStore
	out io.Writer
}

func newZkService(o *topicOptions, out io.Writer) (*zkService, error) {
	// Kafka's tool uses a 30 s session and connection timeout.
	sec, err := clitools.ZooKeeperOptions("")
	if err != nil {
		return nil, err
	}
	c, err := zkclient.Connect(o.zookeeper, 30*time.Second, append(sec, zkclient.WithConnectTimeout(30*time.Second))...)
	if err != nil {
		return nil, err
	}
	return &zkService{zk: c, out: out}, nil
}

func (s *zkService) close() { s.zk.Close() }

func (s *zkService) selectTopics(o *topicOptions) ([]string, error) {
	f, err := newTopicFilter(o.topic, o.hasTopic, o.excludeInternal)
	if err != nil {
		return nil, err
	}
	all, err := s.zk.GetAllTopics()
	if err != nil {
		return nil, err
	}
	return filterTopics(all, f), nil
}

func (s *zkService) markedForDeletion(topic string) (bool, error) {
	ok, _, err := s.zk.Exists(zkpaths.DeleteTopicPath(topic))
	return ok, err
}

func (s *zkService) list(o *topicOptions) error {
	topics, err := s.selectTopics(o)
	if err != nil {
		return err
	}
	for _, t := range topics {
		marked, err := s.markedForDeletion(t)
		if err != nil {
			return err
		}
		if marked {
			fmt.Fprintf(s.out, "%s - marked for deletion\n", t)
		} else {
			fmt.Fprintln(s.out, t)
		}
	}
	return nil
}

func (s *zkService) brokerMetadata(disableRackAware bool) ([]controller.BrokerMetadata, error) {
	brokers, err := s.zk.GetAllBrokers()
	if err != nil {
		return nil, err
	}
	var md []controller.BrokerMetadata
	for _, b := range brokers {
		m := controller.BrokerMetadata{ID: b.ID}
		if b.Rack != "" {
			r := b.Rack
			m.Rack = &r
		}
		md = append(md, m)
	}
	mode := controller.RackAwareEnforced
	if disableRackAware {
		mode = controller.RackAwareDisabled
	}
	return controller.ApplyRackAwareMode(md, mode), nil
}

// stripKerr turns an error wrapping a kerr code ("NAME: description: detail")
// into the detail alone, phrased as Kafka's exception messages are (leading
// capital, final period): "Replication factor: 3 larger than available
// brokers: 1."
func stripKerr(err error) string {
	msg := err.Error()
	var ke *kerr.Error
	if errors.As(err, &ke) {
		if rest, ok := strings.CutPrefix(msg, ke.Error()+": "); ok {
			msg = rest
		}
	}
	if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
		if !strings.HasSuffix(msg, ".") {
			msg += "."
		}
	}
	return msg
}

func (s *zkService) create(o *topicOptions) error {
	if err := config.ValidateTopicName(o.topic); err != nil {
		return err
	}
	var assignment map[int32][]int32
	if o.replicaAssign != nil {
		if err := controller.ValidateReplicaAssignment(o.replicaAssign, nil); err != nil {
			return errors.New(stripKerr(err))
		}
		assignment = o.replicaAssign
	} else {
		brokers, err := s.brokerMetadata(o.disableRackAware)
		if err != nil {
			return err
		}
		assignment, err = controller.AssignReplicasToBrokers(brokers, int(o.partitions), int(o.replicationFact), -1, -1)
		if err != nil {
			return errors.New(stripKerr(err))
		}
	}
	configs := map[string]string{}
	maps.Copy(configs, o.configs)
	err := s.zk.CreateTopic(o.topic, zkpaths.TopicAssignment{Partitions: assignment, TopicID: zkpaths.RandomUUID()}, configs)
	switch {
	case errors.Is(err, zkclient.ErrTopicExists):
		if o.ifNotExists {
			return nil
		}
		return fmt.Errorf("Topic '%s' already exists.", o.topic)
	case errors.Is(err, zkclient.ErrTopicMarkedForDeletion):
		if o.ifNotExists {
			return nil
		}
		return fmt.Errorf("Topic '%s' is marked for deletion.", o.topic)
	case errors.Is(err, zkclient.ErrTopicCollision):
		return s.collisionError(o.topic)
	case err != nil:
		return err
	}
	fmt.Fprintf(s.out, "Created topic %s.\n", o.topic)
	return nil
}

func (s *zkService) collisionError(topic string) error {
	all, err := s.zk.GetAllTopics()
	if err != nil {
		return err
	}
	var colliding []string
	for _, t := range all {
		if t != topic && config.TopicNamesCollide(t, topic) {
			colliding = append(colliding, t)
		}
	}
	return fmt.Errorf("Topic '%s' collides with existing topics: %s", topic, strings.Join(colliding, ", "))
}

func (s *zkService) describe(o *topicOptions) error {
	topics, err := s.existingTopics(o)
	if err != nil {
		return err
	}
	ids, err := s.zk.GetBrokerIDs()
	if err != nil {
		return err
	}
	live := map[int32]bool{}
	for _, id := range ids {
		live[id] = true
	}
	var infos []topicInfo
	for _, t := range topics {
		a, _, err := s.zk.GetTopicAssignment(t)
		if errors.Is(err, zkclient.ErrTopicNotFound) {
			// Deleted between listing and reading, as Kafka prints it.
			writeDescription(s.out, infos, o, live)
			infos = nil
			fmt.Fprintf(s.out, "Topic %s doesn't exist!\n", t)
			continue
		}
		if err != nil {
			return err
		}
		marked, err := s.markedForDeletion(t)
		if err != nil {
			return err
		}
		overrides, err := s.zk.GetEntityConfigs(zkpaths.ConfigTypeTopic, t)
		if err != nil {
			return err
		}
		ti := topicInfo{Name: t, MarkedForDeletion: marked}
		if id, err := decodeUUID(a.TopicID); err == nil {
			ti.TopicID = id
		}
		for _, k := range slices.Sorted(maps.Keys(overrides)) {
			ti.Configs = append(ti.Configs, configEntry{k, overrides[k]})
		}
		var tps []common.TopicPartition
		for _, p := range a.SortedPartitions() {
			tps = append(tps, common.TopicPartition{Topic: t, Partition: p})
		}
		states, err := s.zk.GetPartitionStates(tps)
		if err != nil {
			return err
		}
		for _, tp := range tps {
			pi := partitionInfo{Partition: tp.Partition, Leader: -1, Replicas: a.Partitions[tp.Partition]}
			if st, ok := states[tp]; ok {
				pi.Leader, pi.ISR = st.Leader, st.ISR
			}
			ti.Partitions = append(ti.Partitions, pi)
		}
		infos = append(infos, ti)
	}
	writeDescription(s.out, infos, o, live)
	return nil
}

// forEachExisting runs fn on each topic the command selects
// (existingTopics), in order, stopping at the first error.
func (s *zkService) forEachExisting(o *topicOptions, fn func(topic string) error) error {
	topics, err := s.existingTopics(o)
	if err != nil {
		return err
	}
	for _, t := range topics {
		if err := fn(t); err != nil {
			return err
		}
	}
	return nil
}

func (s *zkService) delete(o *topicOptions) error {
	return s.forEachExisting(o, func(t string) error {
		if config.IsInternalTopic(t) {
			return fmt.Errorf("Topic %s is a kafka internal topic and is not allowed to be marked for deletion.", t)
		}
		err := s.zk.CreateDeleteTopicPath(t)
		switch {
		case errors.Is(err, zkclient.ErrTopicAlreadyMarkedForDeletion):
			fmt.Fprintf(s.out, "Topic %s is already marked for deletion.\n", t)
		case err != nil:
			return fmt.Errorf("Error while deleting topic %s: %v", t, err)
		default:
			fmt.Fprintf(s.out, "Topic %s is marked for deletion.\n", t)
			fmt.Fprintln(s.out, "Note: This will have no impact if delete.topic.enable is not set to true.")
		}
		return nil
	})
}

func (s *zkService) alter(o *topicOptions) error {
	return s.forEachExisting(o, func(t string) error {
		if len(o.configs) > 0 || len(o.deleteConfigs) > 0 {
			fmt.Fprintln(s.out, "WARNING: Altering topic configuration from this script has been deprecated and may be removed in future releases.")
			fmt.Fprintln(s.out, "         Going forward, please use kafka-configs.sh for this functionality")
			cur, err := s.zk.GetEntityConfigs(zkpaths.ConfigTypeTopic, t)
			if err != nil {
				return err
			}
			if cur == nil {
				cur = map[string]string{}
			}
			maps.Copy(cur, o.configs)
			for _, d := range o.deleteConfigs {
				delete(cur, d)
			}
			if err := s.zk.ChangeEntityConfigs(zkpaths.ConfigTypeTopic, t, cur); err != nil {
				return err
			}
			fmt.Fprintf(s.out, "Updated config for topic %s.\n", t)
		}
		if !o.hasPartitions {
			return nil
		}
		if config.IsInternalTopic(t) {
			return fmt.Errorf("The number of partitions for the internal topic %s cannot be changed.", t)
		}
		fmt.Fprintln(s.out, partitionIncreaseWarning)
		a, _, err := s.zk.GetTopicAssignment(t)
		if errors.Is(err, zkclient.ErrTopicNotFound) {
			return fmt.Errorf("The topic %s does not exist", t)
		}
		if err != nil {
			return err
		}
		existing := len(a.Partitions)
		if int(o.partitions) <= existing {
			return fmt.Errorf("The number of partitions for a topic can only be increased. Topic %s currently has %d partitions, %d would not be an increase.", t, existing, o.partitions)
		}
		var added map[int32][]int32
		if o.replicaAssign != nil {
			added = map[int32][]int32{}
			for p, r := range o.replicaAssign {
				if int(p) >= existing {
					added[p] = r
				}
			}
			if len(added) != int(o.partitions)-existing {
				return fmt.Errorf("Increasing the number of partitions by %d but %d assignments provided.", int(o.partitions)-existing, len(added))
			}
			full := maps.Clone(a.Partitions)
			maps.Copy(full, added)
			if err := controller.ValidateReplicaAssignment(full, nil); err != nil {
				return errors.New(stripKerr(err))
			}
		} else {
			brokers, err := s.brokerMetadata(o.disableRackAware)
			if err != nil {
				return err
			}
			added, err = controller.AssignReplicasForNewPartitions(brokers, a.Partitions, int(o.partitions))
			if err != nil {
				return errors.New(stripKerr(err))
			}
		}
		na := a
		na.Partitions = maps.Clone(a.Partitions)
		maps.Copy(na.Partitions, added)
		if _, err := s.zk.UpdateTopicAssignment(t, na, -1); err != nil {
			return err
		}
		fmt.Fprintln(s.out, "Adding partitions succeeded!")
		return nil
	})
}

// existingTopics is selectTopics, failing as Kafka does when the --topic
// given matches nothing and --if-exists is absent.
func (s *zkService) existingTopics(o *topicOptions) ([]string, error) {
	topics, err := s.selectTopics(o)
	if err != nil {
		return nil, err
	}
	if err := ensureTopicExists(topics, o); err != nil {
		return nil, err
	}
	return topics, nil
}
