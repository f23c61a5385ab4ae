package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/klassik/klassik/bin/internal/clitools"

	"github.com/klassik/klassik/broker/common"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// zkStore is the part of zkclient.Client the ZooKeeper mode uses.
type zkStore interface {
	GetAllTopics() ([]string, error)
	GetTopicAssignments(topics []string) (map[string]zkpaths.TopicAssignment, error)
	CreatePreferredReplicaElection(tps []common.TopicPartition) error
	GetPreferredReplicaElection() ([]common.TopicPartition, bool, error)
	Close()
}

func connectZk(connect string, timeout time.Duration) (zkStore, error) {
	sec, err := clitools.ZooKeeperOptions("")
	if err != nil {
		return nil, err
	}
	return zkclient.Connect(connect, timeout, append(sec, zkclient.WithConnectTimeout(timeout))...)
}

// electViaZk is ZkCommand.electPreferredLeaders: keep the requested
// partitions that exist (all partitions without a file), create
// /admin/preferred_replica_election for the controller, and report the
// ones skipped. Every failure is wrapped in "Admin command failed".
func electViaZk(zc zkStore, requested []common.TopicPartition, out io.Writer) error {
	valid, invalid, err := splitExisting(zc, requested)
	if err != nil {
		return &admintool.CommandFailed{Msg: "Admin command failed", Cause: &admintool.AdminOperation{Msg: err.Error()}}
	}
	if err := writeElection(zc, valid, out); err != nil {
		return &admintool.CommandFailed{Msg: "Admin command failed", Cause: err}
	}
	fmt.Fprintf(out, "Successfully started preferred replica election for partitions %s\n", scalaSet(valid))
	for _, tp := range admintool.SortPartitions(invalid) {
		fmt.Fprintf(out, "Skipping preferred replica leader election for partition %s since it doesn't exist.\n", tp)
	}
	return nil
}

// splitExisting partitions the request into partitions present in the
// topics' assignment znodes and the others. A nil request means every
// partition of every topic.
func splitExisting(zc zkStore, requested []common.TopicPartition) (valid, invalid []common.TopicPartition, err error) {
	var topics []string
	if requested == nil {
		if topics, err = zc.GetAllTopics(); err != nil {
			return nil, nil, err
		}
	} else {
		seen := map[string]bool{}
		for _, tp := range requested {
			if !seen[tp.Topic] {
				seen[tp.Topic] = true
				topics = append(topics, tp.Topic)
			}
		}
	}
	assignments, err := zc.GetTopicAssignments(topics)
	if err != nil {
		return nil, nil, err
	}
	exists := map[common.TopicPartition]bool{}
	var all []common.TopicPartition
	for t, a := range assignments {
		for p := range a.Partitions {
			tp := common.TopicPartition{Topic: t, Partition: p}
			exists[tp] = true
			all = append(all, tp)
		}
	}
	if requested == nil {
		return admintool.SortPartitions(all), nil, nil
	}
	for _, tp := range requested {
		if exists[tp] {
			valid = append(valid, tp)
		} else {
			invalid = append(invalid, tp)
		}
	}
	return admintool.SortPartitions(valid), invalid, nil
}

// writeElection is writePreferredReplicaElectionData.
func writeElection(zc zkStore, tps []common.TopicPartition, out io.Writer) error {
	zps := make([]common.TopicPartition, len(tps))
	for i, tp := range tps {
		zps[i] = common.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}
	}
	err := zc.CreatePreferredReplicaElection(zps)
	if errors.Is(err, zkclient.ErrPreferredElectionInProgress) {
		current, _, rerr := zc.GetPreferredReplicaElection()
		if rerr != nil {
			return &admintool.AdminOperation{Msg: rerr.Error()}
		}
		names := make([]string, len(current))
		for i, tp := range current {
			names[i] = fmt.Sprintf("%s-%d", tp.Topic, tp.Partition)
		}
		return &admintool.AdminOperation{Msg: fmt.Sprintf("Preferred replica leader election currently in progress for %s. Aborting operation", strings.Join(names, ","))}
	}
	if err != nil {
		return &admintool.AdminOperation{Msg: err.Error()}
	}
	fmt.Fprintf(out, "Created preferred replica election path with %s\n", admintool.JoinPartitions(tps, ","))
	return nil
}

// scalaSet renders partitions as Scala's Set.toString: "Set(t-0, t-1)".
func scalaSet(tps []common.TopicPartition) string {
	return "Set(" + admintool.JoinPartitions(tps, ", ") + ")"
}
