package api

// Topic creation, shared by CreateTopics (19) and Metadata auto-creation (3):
// Kafka's ZkAdminManager.createTopics + AdminZkClient.createTopic.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/controller"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// validateTopicName applies Kafka's topic name rules, answering
// INVALID_TOPIC_EXCEPTION with Kafka's message.
func validateTopicName(name string) error {
	if err := config.ValidateTopicName(name); err != nil {
		return fmt.Errorf("%w: %s", kerr.InvalidTopicException, err.Error())
	}
	return nil
}

// topicSpec is a validated topic creation.
type topicSpec struct {
	name       string
	assignment map[int32][]int32
	configs    map[string]string
}

func (s topicSpec) replicationFactor() int16 { return int16(len(s.assignment[0])) }

// createOptions says how a creation request is planned.
type createOptions struct {
	numPartitions     int32 // -1: num.partitions
	replicationFactor int16 // -1: default.replication.factor
	assignment        map[int32][]int32
	configs           map[string]string
	rackMode          controller.RackAwareMode
}

// planTopic validates a creation and computes its assignment without writing
// anything (validate_only stops here). Errors wrap kerr codes.
func (a *Apis) planTopic(ctx context.Context, name string, o createOptions) (topicSpec, error) {
	if err := validateTopicName(name); err != nil {
		return topicSpec{}, err
	}
	if _, _, err := a.zk.GetTopicAssignment(name); err == nil {
		return topicSpec{}, fmt.Errorf("%w: topic '%s' already exists", kerr.TopicAlreadyExists, name)
	} else if !errors.Is(err, zkclient.ErrTopicNotFound) {
		return topicSpec{}, err
	}
	marked, err := a.zk.IsTopicMarkedForDeletion(name)
	if err != nil {
		return topicSpec{}, err
	}
	if marked {
		return topicSpec{}, fmt.Errorf("%w: topic '%s' is marked for deletion", kerr.TopicAlreadyExists, name)
	}
	if config.HasCollisionChars(name) {
		all, err := a.zk.GetAllTopics()
		if err != nil {
			return topicSpec{}, err
		}
		var colliding []string
		for _, t := range all {
			if t != name && config.TopicNamesCollide(t, name) {
				colliding = append(colliding, t)
			}
		}
		if len(colliding) > 0 {
			return topicSpec{}, fmt.Errorf("%w: topic '%s' collides with existing topics: %s",
				kerr.InvalidTopicException, name, strings.Join(colliding, ", "))
		}
	}
	if err := a.validateTopicConfigs(o.configs); err != nil {
		return topicSpec{}, err
	}

	brokers, err := a.registeredBrokers()
	if err != nil {
		return topicSpec{}, err
	}
	var assignment map[int32][]int32
	if len(o.assignment) > 0 {
		if o.numPartitions != -1 || o.replicationFactor != -1 {
			return topicSpec{}, fmt.Errorf("%w: both numPartitions or replicationFactor and replicasAssignments were set; both cannot be used at the same time",
				kerr.InvalidRequest)
		}
		ids := make([]int32, len(brokers))
		for i, b := range brokers {
			ids[i] = b.ID
		}
		if err := controller.ValidateReplicaAssignment(o.assignment, ids); err != nil {
			return topicSpec{}, err
		}
		assignment = o.assignment
	} else {
		n, rf := o.numPartitions, o.replicationFactor
		if n == -1 {
			n = a.conf().NumPartitions
		}
		if rf == -1 {
			rf = int16(a.conf().DefaultReplicationFactor)
		}
		if n <= 0 {
			return topicSpec{}, fmt.Errorf("%w: number of partitions must be larger than 0", kerr.InvalidPartitions)
		}
		if rf <= 0 {
			return topicSpec{}, fmt.Errorf("%w: replication factor must be larger than 0", kerr.InvalidReplicationFactor)
		}
		if err := checkAssignmentSize(int64(n), int64(rf)); err != nil {
			return topicSpec{}, err
		}
		assignment, err = controller.AssignReplicasToBrokers(controller.ApplyRackAwareMode(brokers, o.rackMode),
			int(n), int(rf), a.fixedStartIndex, -1)
		if err != nil {
			return topicSpec{}, err
		}
	}
	return topicSpec{name: name, assignment: assignment, configs: o.configs}, nil
}

// maxReplicasPerTopic bounds partitions × replication factor. The whole
// assignment of a topic lives in one znode, which ZooKeeper caps at
// jute.maxbuffer (Kafka raises its client's to 4 MiB); a million replica
// entries is already past that, so larger requests are refused up front
// instead of computing an assignment that can never be stored.
const maxReplicasPerTopic = 1 << 20

func checkAssignmentSize(partitions, rf int64) error {
	if partitions*rf > maxReplicasPerTopic {
		return fmt.Errorf("%w: %d partitions with %d replicas each would not fit in the topic's znode (at most %d replicas per topic)",
			kerr.InvalidPartitions, partitions, rf, maxReplicasPerTopic)
	}
	return nil
}

// createTopic writes a planned topic to ZooKeeper.
func (a *Apis) createTopic(ctx context.Context, s topicSpec) error {
	cfgs := s.configs
	if cfgs == nil {
		cfgs = map[string]string{}
	}
	ta := zkpaths.TopicAssignment{Version: zkpaths.TopicAssignmentVersion, Partitions: s.assignment, TopicID: zkpaths.RandomUUID()}
	err := a.zk.CreateTopic(s.name, ta, cfgs)
	switch {
	case errors.Is(err, zkclient.ErrTopicExists):
		return fmt.Errorf("%w: topic '%s' already exists", kerr.TopicAlreadyExists, s.name)
	case errors.Is(err, zkclient.ErrTopicMarkedForDeletion):
		return fmt.Errorf("%w: topic '%s' is marked for deletion", kerr.TopicAlreadyExists, s.name)
	case errors.Is(err, zkclient.ErrTopicCollision):
		return fmt.Errorf("%w: %v", kerr.InvalidTopicException, err)
	}
	if err == nil {
		a.logger.Info("created topic", "topic", s.name, "partitions", len(s.assignment), "replication_factor", s.replicationFactor())
	}
	return err
}

// eachTopic runs work, in request order, for each entry of a CreateTopics
// or CreatePartitions request (topics, named by name) that passes the
// checks they share, and returns each entry's error: NOT_CONTROLLER when
// this broker is not the active controller, else INVALID_REQUEST with
// dupFormat (given the name) for a topic named more than once, else work's.
func eachTopic[T any](a *Apis, topics []T, name func(T) string, dupFormat string, work func(i int, t T) error) []error {
	isController := a.controller != nil && a.controller.IsActive()
	count := map[string]int{}
	for _, t := range topics {
		count[name(t)]++
	}
	errs := make([]error, len(topics))
	for i, t := range topics {
		switch {
		case !isController:
			errs[i] = fmt.Errorf("%w: this is not the correct controller for this cluster", kerr.NotController)
		case count[name(t)] > 1:
			errs[i] = fmt.Errorf("%w: "+dupFormat, kerr.InvalidRequest, name(t))
		default:
			errs[i] = work(i, t)
		}
	}
	return errs
}

// leaderWait is a topic a CreateTopics or CreatePartitions response waits
// for: its index in the response and how many partitions need a leader.
type leaderWait struct {
	idx   int
	topic string
	n     int
}

// awaitLeaders waits up to timeoutMs (no wait when it is 0 or less) for
// every topic of waits to have its leaders, and returns those that still
// have not when the wait gave up.
func (a *Apis) awaitLeaders(ctx context.Context, timeoutMs int32, waits []leaderWait) []leaderWait {
	if len(waits) == 0 || timeoutMs <= 0 {
		return nil
	}
	elected := func(w leaderWait) bool { return a.leadersElected(w.topic, w.n) }
	timeout := time.Duration(timeoutMs) * time.Millisecond
	if a.waitForMetadata(ctx, timeout, func() bool { return !slices.ContainsFunc(waits, func(w leaderWait) bool { return !elected(w) }) }) {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(waits), elected)
}

// waitForMetadata polls cond every time the metadata cache changes, until it
// holds, ctx ends or timeout elapses. It reports whether cond held.
func (a *Apis) waitForMetadata(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		changed := a.metaChangedCh()
		if cond() {
			return true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return cond()
		case <-ctx.Done():
			return false
		case <-a.stopping:
			return false
		}
	}
}

// metaChangedCh returns a channel closed at the next metadata change.
func (a *Apis) metaChangedCh() <-chan struct{} {
	a.metaMu.Lock()
	defer a.metaMu.Unlock()
	return a.metaCh
}

// metadataChanged wakes every waitForMetadata.
func (a *Apis) metadataChanged() {
	a.metaMu.Lock()
	defer a.metaMu.Unlock()
	close(a.metaCh)
	a.metaCh = make(chan struct{})
}

// sortedPartitions lists the partition ids of an assignment in order.
func sortedPartitions(m map[int32][]int32) []int32 {
	ps := make([]int32, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}
