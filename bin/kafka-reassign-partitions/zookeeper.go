package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klassik/klassik/bin/internal/clitools"

	"github.com/klassik/klassik/controller"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// zkStore is the part of zkclient.Client the ZooKeeper mode uses.
type zkStore interface {
	GetAllBrokers() ([]zkpaths.BrokerInfo, error)
	GetTopicAssignments(topics []string) (map[string]zkpaths.TopicAssignment, error)
	GetPartitionReassignment() ([]zkpaths.PartitionReplicas, bool, error)
	CreatePartitionReassignment(parts []zkpaths.PartitionReplicas) error
	GetEntityConfigs(entityType, name string) (map[string]string, error)
	ChangeEntityConfigs(entityType, name string, configs map[string]string) error
	Close()
}

// zkBackend is the --zookeeper mode: Kafka 2.x's legacy path, where the
// tool writes /admin/reassign_partitions and the controller acts on it.
type zkBackend struct {
	zk zkStore
}

func newZkBackend(connect string) (*zkBackend, error) {
	// Kafka's tool uses 30 s session and connection timeouts.
	sec, err := clitools.ZooKeeperOptions("")
	if err != nil {
		return nil, err
	}
	c, err := zkclient.Connect(connect, 30*time.Second, append(sec, zkclient.WithConnectTimeout(30*time.Second))...)
	if err != nil {
		return nil, err
	}
	return &zkBackend{zk: c}, nil
}

func (z *zkBackend) close() { z.zk.Close() }

func (z *zkBackend) replicaAssignmentForTopics(topics []string) (assignment, error) {
	as, err := z.zk.GetTopicAssignments(topics)
	if err != nil {
		return nil, err
	}
	out := assignment{}
	for topic, a := range as {
		for p, reps := range a.Partitions {
			out[tp{Topic: topic, Partition: p}] = reps
		}
	}
	return out, nil
}

// allBrokers lists the registered brokers with their racks.
func (z *zkBackend) allBrokers() ([]controller.BrokerMetadata, error) {
	all, err := z.zk.GetAllBrokers()
	if err != nil {
		return nil, err
	}
	out := make([]controller.BrokerMetadata, len(all))
	for i, b := range all {
		out[i].ID = b.ID
		if b.Rack != "" {
			r := b.Rack
			out[i].Rack = &r
		}
	}
	return out, nil
}

// errLogDirsNeedBootstrap refuses, in ZooKeeper mode, a file that moves
// replicas to log directories.
var errLogDirsNeedBootstrap = &adminFailed{"bootstrap-server needs to be provided when replica reassignments are present."}

// executeZk is executeAssignment over ZooKeeper: validate partitions and
// brokers, refuse while /admin/reassign_partitions exists, print the
// rollback JSON, apply the throttle to the topic and broker configs, then
// create the znode.
func (t *tool) executeZk(z *zkBackend, opts *options) error {
	proposed, err := readAssignmentFile(opts.reassignmentFile, parseExecuteAssignmentArgs, errLogDirsNeedBootstrap)
	if err != nil {
		return err
	}
	current, err := z.replicaAssignmentForTopics(proposed.topics())
	if err != nil {
		return err
	}
	var missing []string
	for _, k := range proposed.sortedKeys() {
		if _, ok := current[k]; !ok {
			missing = append(missing, k.String())
		}
	}
	if len(missing) > 0 {
		return &adminFailed{"The proposed assignment contains non-existent partitions: List(" + strings.Join(missing, ", ") + ")"}
	}
	live, err := brokerIDs(z)
	if err != nil {
		return err
	}
	unknown := map[int32]bool{}
	for _, reps := range proposed {
		for _, r := range reps {
			if !slices.Contains(live, r) {
				unknown[r] = true
			}
		}
	}
	if len(unknown) > 0 {
		return &adminFailed{"The proposed assignment contains non-existent brokerIDs: " + joinInts(sortedKeys(unknown), ",")}
	}
	if _, inProgress, err := z.zk.GetPartitionReassignment(); err != nil && !inProgress {
		return err
	} else if inProgress {
		return &terse{cannotExecuteBecauseOfExisting}
	}
	fmt.Fprintln(t.out, currentAssignmentToString(proposed, current))
	if opts.throttle >= 0 {
		fmt.Fprintln(t.out, youMustRunVerifyPeriodically)
		mm, err := proposedMoveMap(nil, proposed, current)
		if err != nil {
			return err
		}
		if err := z.setTopicThrottles(mm.leaderThrottles(), mm.followerThrottles()); err != nil {
			return err
		}
		if err := z.setBrokerThrottles(mm.reassigningBrokers(), opts.throttle); err != nil {
			return err
		}
		fmt.Fprintf(t.out, "The inter-broker throttle limit was set to %d B/s\n", opts.throttle)
	}
	var parts []zkpaths.PartitionReplicas
	for _, k := range proposed.sortedKeys() {
		parts = append(parts, zkpaths.PartitionReplicas{Topic: k.Topic, Partition: k.Partition, Replicas: proposed[k]})
	}
	if err := z.zk.CreatePartitionReassignment(parts); err != nil {
		if errors.Is(err, zkclient.ErrReassignmentInProgress) {
			return fmt.Errorf("KeeperErrorCode = NodeExists for %s", zkpaths.ReassignPartitionsPath)
		}
		return err
	}
	fmt.Fprintln(t.out, startedMessage(proposed))
	return nil
}

func (z *zkBackend) setTopicThrottles(leader, follower map[string]string) error {
	topics := slices.Sorted(maps.Keys(leader))
	for _, topic := range topics {
		cfg, err := z.zk.GetEntityConfigs(zkpaths.ConfigTypeTopic, topic)
		if err != nil {
			return err
		}
		cfg[topicLeaderThrottle] = leader[topic]
		cfg[topicFollowerThrottle] = follower[topic]
		if err := z.zk.ChangeEntityConfigs(zkpaths.ConfigTypeTopic, topic, cfg); err != nil {
			return err
		}
	}
	return nil
}

func (z *zkBackend) setBrokerThrottles(brokers []int32, rate int64) error {
	for _, id := range brokers {
		name := strconv.Itoa(int(id))
		cfg, err := z.zk.GetEntityConfigs(zkpaths.ConfigTypeBroker, name)
		if err != nil {
			return err
		}
		cfg[brokerLeaderThrottle] = strconv.FormatInt(rate, 10)
		cfg[brokerFollowerThrottle] = strconv.FormatInt(rate, 10)
		if err := z.zk.ChangeEntityConfigs(zkpaths.ConfigTypeBroker, name, cfg); err != nil {
			return err
		}
	}
	return nil
}

// verifyZk is verifyAssignment over ZooKeeper: a partition is done when it
// is no longer listed in /admin/reassign_partitions; throttles are cleared
// once the node is gone.
func (t *tool) verifyZk(z *zkBackend, opts *options) error {
	targets, err := readAssignmentFile(opts.reassignmentFile, parseReassignmentData, errLogDirsNeedBootstrap)
	if err != nil {
		return err
	}
	fmt.Fprintln(t.out, "Warning: because you are using the deprecated --zookeeper option, the results may be incomplete.  Use --bootstrap-server instead for more accurate results.")
	pending, exists, err := z.zk.GetPartitionReassignment()
	if err != nil {
		if !exists {
			return err
		}
		// Kafka ignores a node it cannot parse (it logs a warning) and
		// reports nothing as being reassigned.
		pending = nil
	}
	beingReassigned := map[tp]bool{}
	for _, p := range pending {
		beingReassigned[tp{Topic: p.Topic, Partition: p.Partition}] = true
	}
	current, err := z.replicaAssignmentForTopics(topicsOf(targets))
	if err != nil {
		return err
	}
	states := map[tp]partitionState{}
	for _, e := range targets {
		cur := current[e.Part]
		if cur == nil {
			cur = []int32{}
		}
		states[e.Part] = partitionState{current: cur, target: e.Replicas, done: !beingReassigned[e.Part]}
	}
	fmt.Fprintln(t.out, statesToString(states))
	if len(pending) == 0 && !opts.preserveThrottles {
		return t.clearThrottles(z, targets)
	}
	return nil
}

// clearBrokerThrottles removes the throttle keys from brokers, rewriting
// only those that had one.
func (z *zkBackend) clearBrokerThrottles(brokers []int32) error {
	for _, id := range brokers {
		if err := z.removeKeys(zkpaths.ConfigTypeBroker, strconv.Itoa(int(id)), brokerThrottles); err != nil {
			return err
		}
	}
	return nil
}

// clearTopicThrottles removes the throttle keys from topics, rewriting only
// those that had one.
func (z *zkBackend) clearTopicThrottles(topics []string) error {
	for _, topic := range topics {
		if err := z.removeKeys(zkpaths.ConfigTypeTopic, topic, topicThrottles); err != nil {
			return err
		}
	}
	return nil
}

func (z *zkBackend) removeKeys(entityType, name string, keys []string) error {
	cfg, err := z.zk.GetEntityConfigs(entityType, name)
	if err != nil {
		return err
	}
	changed := false
	for _, k := range keys {
		if _, ok := cfg[k]; ok {
			delete(cfg, k)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return z.zk.ChangeEntityConfigs(entityType, name, cfg)
}
