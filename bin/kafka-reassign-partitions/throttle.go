package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/klassik/klassik/broker/common/jvm"
)

// Throttle configuration keys (Kafka's DynamicConfig.Broker and LogConfig).
const (
	brokerLeaderThrottle   = "leader.replication.throttled.rate"
	brokerFollowerThrottle = "follower.replication.throttled.rate"
	brokerLogDirThrottle   = "replica.alter.log.dirs.io.max.bytes.per.second"
	topicLeaderThrottle    = "leader.replication.throttled.replicas"
	topicFollowerThrottle  = "follower.replication.throttled.replicas"
)

var (
	brokerThrottles = []string{brokerLeaderThrottle, brokerFollowerThrottle, brokerLogDirThrottle}
	topicThrottles  = []string{topicLeaderThrottle, topicFollowerThrottle}
)

// partitionMove is one partition's sources (replicas before the move) and
// destinations (replicas being added).
type partitionMove struct {
	sources, destinations []int32
}

// moveMap is topic -> partition -> move (Kafka's MoveMap).
type moveMap map[string]map[int32]*partitionMove

// ongoing is one reassignment reported by ListPartitionReassignments.
type ongoing struct {
	replicas, adding, removing []int32
}

// proposedMoveMap is calculateProposedMoveMap: the moves of every ongoing
// reassignment, overlaid with the proposed ones, whose sources are the
// ongoing move's sources when the partition is already moving, else its
// current replicas.
func proposedMoveMap(current map[tp]ongoing, proposed, currentParts assignment) (moveMap, error) {
	mm := moveMap{}
	get := func(topic string) map[int32]*partitionMove {
		if mm[topic] == nil {
			mm[topic] = map[int32]*partitionMove{}
		}
		return mm[topic]
	}
	for part, r := range current {
		var sources []int32
		for _, x := range r.replicas {
			if !slices.Contains(r.adding, x) {
				sources = append(sources, x)
			}
		}
		get(part.Topic)[part.Partition] = &partitionMove{sources: sources, destinations: slices.Clone(r.adding)}
	}
	for _, part := range proposed.sortedKeys() {
		moves := get(part.Topic)
		var sources []int32
		if m, ok := moves[part.Partition]; ok {
			sources = m.sources
		} else if cur, ok := currentParts[part]; ok {
			sources = cur
		} else {
			return nil, fmt.Errorf("Trying to reassign a topic partition %s with 0 replicas", part)
		}
		var dests []int32
		for _, x := range proposed[part] {
			if !slices.Contains(sources, x) {
				dests = append(dests, x)
			}
		}
		moves[part.Partition] = &partitionMove{sources: slices.Clone(sources), destinations: dests}
	}
	return mm, nil
}

// leaderThrottles is calculateLeaderThrottles: per topic the sorted set of
// "partition:source" strings (string order, as Kafka's TreeSet[String]).
func (mm moveMap) leaderThrottles() map[string]string {
	return mm.throttles(func(m *partitionMove) []int32 { return m.sources })
}

// followerThrottles is calculateFollowerThrottles: "partition:destination"
// for destinations that are not also sources.
func (mm moveMap) followerThrottles() map[string]string {
	return mm.throttles(func(m *partitionMove) []int32 {
		var out []int32
		for _, d := range m.destinations {
			if !slices.Contains(m.sources, d) {
				out = append(out, d)
			}
		}
		return out
	})
}

func (mm moveMap) throttles(brokers func(*partitionMove) []int32) map[string]string {
	out := map[string]string{}
	for topic, parts := range mm {
		set := map[string]bool{}
		for p, m := range parts {
			for _, b := range brokers(m) {
				set[fmt.Sprintf("%d:%d", p, b)] = true
			}
		}
		items := make([]string, 0, len(set))
		for s := range set {
			items = append(items, s)
		}
		slices.Sort(items)
		out[topic] = strings.Join(items, ",")
	}
	return out
}

// reassigningBrokers is calculateReassigningBrokers: every source and
// destination, sorted.
func (mm moveMap) reassigningBrokers() []int32 {
	set := map[int32]bool{}
	for _, parts := range mm {
		for _, m := range parts {
			for _, b := range m.sources {
				set[b] = true
			}
			for _, b := range m.destinations {
				set[b] = true
			}
		}
	}
	return sortedKeys(set)
}

// sortedKeys lists a map's keys in ascending order (never nil).
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// throttleClearer is what clearThrottles needs of a backend (the admin API
// or ZooKeeper).
type throttleClearer interface {
	brokerLister
	clearBrokerThrottles(brokers []int32) error
	clearTopicThrottles(topics []string) error
}

// clearThrottles is clearAllThrottles: remove the throttle keys from every
// registered or targeted broker and every topic of the file.
func (t *tool) clearThrottles(b throttleClearer, targets []reassignmentEntry) error {
	live, err := brokerIDs(b)
	if err != nil {
		return err
	}
	brokers, topics := throttledEntities(live, targets)
	fmt.Fprintln(t.out, clearingMessage("broker", "broker", int32Strings(brokers)))
	if err := b.clearBrokerThrottles(brokers); err != nil {
		return err
	}
	fmt.Fprintln(t.out, clearingMessage("topic", "topic", topics))
	return b.clearTopicThrottles(topics)
}

// throttledEntities are what clearAllThrottles clears, in the order
// Kafka prints them: the brokers that are registered (live, in the order
// the backend lists them) or hold a replica of a target, and the targets'
// topics, each as the Scala Set Kafka builds (scalaSetOrder).
func throttledEntities(live []int32, targets []reassignmentEntry) (brokers []int32, topics []string) {
	all := slices.Clone(live)
	for _, e := range targets {
		all = append(all, e.Replicas...)
	}
	return scalaSetOrder(all, int32Hash), scalaSetOrder(topicsOf(targets), jvm.StringHashCode)
}

// topicsOf lists the topics of the entries, each once, in first-appearance
// order.
func topicsOf(entries []reassignmentEntry) []string {
	var topics []string
	for _, e := range entries {
		if !slices.Contains(topics, e.Part.Topic) {
			topics = append(topics, e.Part.Topic)
		}
	}
	return topics
}

// clearingMessage is the line clearAllThrottles prints before each step:
// "Clearing broker-level throttles on brokers 1,2,3".
func clearingMessage(level, noun string, items []string) string {
	plural := "s"
	if len(items) == 1 {
		plural = ""
	}
	return fmt.Sprintf("Clearing %s-level throttles on %s%s %s", level, noun, plural, strings.Join(items, ","))
}
