package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/controller"
)

// adminBackend is the --bootstrap-server mode (Kafka's Admin client calls):
// Metadata for topic and cluster descriptions, ListPartitionReassignments
// and AlterPartitionReassignments (sent to the controller by the client),
// IncrementalAlterConfigs for throttles.
type adminBackend struct {
	cl      *kgo.Client
	adm     *kadm.Client
	timeout time.Duration
}

func newAdminBackend(opts *options) (*adminBackend, error) {
	props, err := admintool.LoadOptionalProperties(opts.commandConfig)
	if err != nil {
		return nil, err
	}
	// default.api.timeout.ms of Kafka's admin client.
	cl, timeout, err := admintool.NewClient(opts.bootstrap, "reassign-partitions-tool", 60*time.Second, props)
	if err != nil {
		return nil, err
	}
	return &adminBackend{cl: cl, adm: kadm.NewClient(cl), timeout: timeout}, nil
}

func (a *adminBackend) close() { a.cl.Close() }

func (a *adminBackend) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), a.timeout)
}

// describeTopics is Admin.describeTopics: an unknown topic fails the whole
// call with UnknownTopicOrPartitionException, as all().get() does.
func (a *adminBackend) describeTopics(topics []string, tolerateUnknown bool) (assignment, error) {
	out := assignment{}
	if len(topics) == 0 {
		return out, nil
	}
	ctx, cancel := a.ctx()
	defer cancel()
	md, err := a.adm.Metadata(ctx, topics...)
	if err != nil {
		return nil, admintool.ClientError(err, "METADATA")
	}
	for _, topic := range topics {
		td, ok := md.Topics[topic]
		if !ok || td.Err != nil {
			if tolerateUnknown && (!ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition)) {
				continue
			}
			if !ok {
				return nil, admintool.NewKafkaError(kerr.UnknownTopicOrPartition.Code, nil)
			}
			return nil, admintool.ClientError(td.Err, "METADATA")
		}
		for p, pd := range td.Partitions {
			out[tp{Topic: topic, Partition: p}] = slices.Clone(pd.Replicas)
		}
	}
	return out, nil
}

func (a *adminBackend) replicaAssignmentForTopics(topics []string) (assignment, error) {
	return a.describeTopics(topics, false)
}

// allBrokers lists the live brokers with their racks.
func (a *adminBackend) allBrokers() ([]controller.BrokerMetadata, error) {
	ctx, cancel := a.ctx()
	defer cancel()
	md, err := a.adm.Metadata(ctx)
	if err != nil {
		return nil, admintool.ClientError(err, "METADATA")
	}
	out := make([]controller.BrokerMetadata, len(md.Brokers))
	for i, n := range md.Brokers {
		out[i] = controller.BrokerMetadata{ID: n.NodeID, Rack: n.Rack}
	}
	return out, nil
}

// listReassignments is Admin.listPartitionReassignments: every ongoing
// reassignment, or those of parts.
func (a *adminBackend) listReassignments(parts []tp) (map[tp]ongoing, error) {
	ctx, cancel := a.ctx()
	defer cancel()
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = int32(a.timeout / time.Millisecond)
	if parts != nil {
		req.Topics = []kmsg.ListPartitionReassignmentsRequestTopic{}
		for _, g := range admintool.GroupByTopic(parts) {
			t := kmsg.NewListPartitionReassignmentsRequestTopic()
			t.Topic, t.Partitions = g.Topic, g.Partitions
			req.Topics = append(req.Topics, t)
		}
	}
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, admintool.ClientError(err, "LIST_PARTITION_REASSIGNMENTS")
	}
	if ke := admintool.NewKafkaError(resp.ErrorCode, resp.ErrorMessage); ke != nil {
		return nil, ke
	}
	out := map[tp]ongoing{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[tp{Topic: t.Topic, Partition: p.Partition}] = ongoing{replicas: p.Replicas, adding: p.AddingReplicas, removing: p.RemovingReplicas}
		}
	}
	return out, nil
}

// alterReassignments sends AlterPartitionReassignments; a nil replica list
// cancels. It returns the per-partition failures.
func (a *adminBackend) alterReassignments(targets map[tp][]int32) (map[tp]error, error) {
	ctx, cancel := a.ctx()
	defer cancel()
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.TimeoutMillis = int32(a.timeout / time.Millisecond)
	idx := map[string]int{}
	keys := make([]tp, 0, len(targets))
	for k := range targets {
		keys = append(keys, k)
	}
	for _, k := range admintool.SortPartitions(keys) {
		i, ok := idx[k.Topic]
		if !ok {
			i = len(req.Topics)
			idx[k.Topic] = i
			t := kmsg.NewAlterPartitionAssignmentsRequestTopic()
			t.Topic = k.Topic
			req.Topics = append(req.Topics, t)
		}
		p := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		p.Partition = k.Partition
		p.Replicas = targets[k]
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, admintool.ClientError(err, "ALTER_PARTITION_REASSIGNMENTS")
	}
	failed := map[tp]error{}
	// A top-level error fails every partition, as the Java client does.
	top := admintool.NewKafkaError(resp.ErrorCode, resp.ErrorMessage)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			k := tp{Topic: t.Topic, Partition: p.Partition}
			if top != nil {
				failed[k] = top
			} else if ke := admintool.NewKafkaError(p.ErrorCode, p.ErrorMessage); ke != nil {
				failed[k] = ke
			}
		}
	}
	if top != nil {
		for k := range targets {
			failed[k] = top
		}
	}
	return failed, nil
}

// alterConfigs sends one IncrementalAlterConfigs; the first failed resource
// fails the call (all().get()).
func (a *adminBackend) alterConfigs(resources []kmsg.IncrementalAlterConfigsRequestResource) error {
	if len(resources) == 0 {
		return nil
	}
	ctx, cancel := a.ctx()
	defer cancel()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Resources = resources
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return admintool.ClientError(err, "INCREMENTAL_ALTER_CONFIGS")
	}
	for _, r := range resp.Resources {
		if ke := admintool.NewKafkaError(r.ErrorCode, r.ErrorMessage); ke != nil {
			return ke
		}
	}
	return nil
}

func configResource(typ kmsg.ConfigResourceType, name string, op kmsg.IncrementalAlterConfigOp, kv map[string]string, keys []string) kmsg.IncrementalAlterConfigsRequestResource {
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = typ, name
	for _, k := range keys {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op = k, op
		if v, ok := kv[k]; ok {
			c.Value = &v
		}
		r.Configs = append(r.Configs, c)
	}
	return r
}

// executeAdmin is executeAssignment over the admin API.
func (t *tool) executeAdmin(a *adminBackend, opts *options) error {
	proposed, moves, err := readAssignmentFileWithMoves(opts.reassignmentFile, parseExecuteAssignmentArgs)
	if err != nil {
		return err
	}
	current, err := a.listReassignments(nil)
	if err != nil {
		return err
	}
	if !opts.additional && len(current) > 0 {
		return &terse{cannotExecuteBecauseOfExisting}
	}
	ids, err := brokerIDs(a)
	if err != nil {
		return err
	}
	for _, k := range proposed.sortedKeys() {
		for _, r := range proposed[k] {
			if !slices.Contains(ids, r) {
				return &adminFailed{fmt.Sprintf("Unknown broker id %d", r)}
			}
		}
	}
	currentParts, err := a.describeTopics(proposed.topics(), false)
	if err != nil {
		return err
	}
	fmt.Fprintln(t.out, currentAssignmentToString(proposed, currentParts))
	if opts.throttle >= 0 || opts.logDirThrottle >= 0 {
		fmt.Fprintln(t.out, youMustRunVerifyPeriodically)
		if opts.throttle >= 0 {
			mm, err := proposedMoveMap(current, proposed, currentParts)
			if err != nil {
				return err
			}
			if err := t.modifyReassignmentThrottle(a, mm, opts.throttle); err != nil {
				return err
			}
		}
		if opts.logDirThrottle >= 0 {
			if err := t.modifyLogDirThrottle(a, moves, opts.logDirThrottle); err != nil {
				return err
			}
		}
	}
	failed, err := a.alterReassignments(proposed)
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		return &terse{"Error reassigning partition(s):\n" + failureLines(failed)}
	}
	fmt.Fprintln(t.out, startedMessage(proposed))
	if len(moves) > 0 {
		return t.executeMoves(a, moves, opts.timeout)
	}
	return nil
}

func failureLines(failed map[tp]error) string {
	keys := make([]tp, 0, len(failed))
	for k := range failed {
		keys = append(keys, k)
	}
	var lines []string
	for _, k := range admintool.SortPartitions(keys) {
		lines = append(lines, fmt.Sprintf("%s: %s", k, failed[k].Error()))
	}
	return strings.Join(lines, "\n")
}

func (t *tool) modifyReassignmentThrottle(a *adminBackend, mm moveMap, rate int64) error {
	leader, follower := mm.leaderThrottles(), mm.followerThrottles()
	var res []kmsg.IncrementalAlterConfigsRequestResource
	for _, topic := range sortedKeys(leader) {
		kv := map[string]string{topicLeaderThrottle: leader[topic], topicFollowerThrottle: follower[topic]}
		res = append(res, configResource(kmsg.ConfigResourceTypeTopic, topic, kmsg.IncrementalAlterConfigOpSet, kv, topicThrottles))
	}
	if err := a.alterConfigs(res); err != nil {
		return err
	}
	res = nil
	v := strconv.FormatInt(rate, 10)
	for _, id := range mm.reassigningBrokers() {
		kv := map[string]string{brokerLeaderThrottle: v, brokerFollowerThrottle: v}
		res = append(res, configResource(kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(id)), kmsg.IncrementalAlterConfigOpSet, kv, []string{brokerLeaderThrottle, brokerFollowerThrottle}))
	}
	if err := a.alterConfigs(res); err != nil {
		return err
	}
	fmt.Fprintf(t.out, "The inter-broker throttle limit was set to %d B/s\n", rate)
	return nil
}

// verifyAdmin is verifyAssignment over the admin API.
func (t *tool) verifyAdmin(a *adminBackend, opts *options) error {
	targets, moves, err := readAssignmentFileWithMoves(opts.reassignmentFile, parseReassignmentData)
	if err != nil {
		return err
	}
	current, err := a.listReassignments(nil)
	if err != nil {
		return err
	}
	states := map[tp]partitionState{}
	var lookUp []string
	for _, e := range targets {
		if r, ok := current[e.Part]; ok {
			states[e.Part] = partitionState{current: r.replicas, target: e.Replicas}
		} else if !slices.Contains(lookUp, e.Part.Topic) {
			lookUp = append(lookUp, e.Part.Topic)
		}
	}
	described, err := a.describeTopics(lookUp, true)
	if err != nil {
		return err
	}
	for _, e := range targets {
		if _, ok := current[e.Part]; ok {
			continue
		}
		reps := described[e.Part]
		if reps == nil {
			reps = []int32{}
		}
		states[e.Part] = partitionState{current: reps, target: e.Replicas, done: true}
	}
	fmt.Fprintln(t.out, statesToString(states))
	// The replica log-directory report, empty without log_dirs moves.
	movesOngoing, err := t.verifyReplicaMoves(a, moves)
	if err != nil {
		return err
	}
	if len(current) == 0 && !movesOngoing && !opts.preserveThrottles {
		return t.clearThrottles(a, targets)
	}
	return nil
}

// clearBrokerThrottles deletes the broker throttle keys of brokers.
func (a *adminBackend) clearBrokerThrottles(brokers []int32) error {
	var res []kmsg.IncrementalAlterConfigsRequestResource
	for _, id := range brokers {
		res = append(res, configResource(kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(id)), kmsg.IncrementalAlterConfigOpDelete, nil, brokerThrottles))
	}
	return a.alterConfigs(res)
}

// clearTopicThrottles deletes the topic throttle keys of topics.
func (a *adminBackend) clearTopicThrottles(topics []string) error {
	var res []kmsg.IncrementalAlterConfigsRequestResource
	for _, topic := range topics {
		res = append(res, configResource(kmsg.ConfigResourceTypeTopic, topic, kmsg.IncrementalAlterConfigOpDelete, nil, topicThrottles))
	}
	return a.alterConfigs(res)
}

// listAdmin is listReassignments.
func (t *tool) listAdmin(a *adminBackend) error {
	current, err := a.listReassignments(nil)
	if err != nil {
		return err
	}
	fmt.Fprintln(t.out, reassignmentsToString(current))
	return nil
}

// reassignmentsToString is curReassignmentsToString.
func reassignmentsToString(current map[tp]ongoing) string {
	if len(current) == 0 {
		return "No partition reassignments found."
	}
	keys := make([]tp, 0, len(current))
	for k := range current {
		keys = append(keys, k)
	}
	lines := []string{"Current partition reassignments:"}
	for _, k := range admintool.SortPartitions(keys) {
		r := current[k]
		line := fmt.Sprintf("%s: replicas: %s.", k, joinInts(r.replicas, ","))
		if len(r.adding) > 0 {
			line += fmt.Sprintf(" adding: %s.", joinInts(r.adding, ","))
		}
		if len(r.removing) > 0 {
			line += fmt.Sprintf(" removing: %s.", joinInts(r.removing, ","))
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// cancelAdmin is cancelAssignment: cancel those of the file's partitions
// that are still moving, then clear the throttles.
func (t *tool) cancelAdmin(a *adminBackend, opts *options) error {
	targets, moves, err := readAssignmentFileWithMoves(opts.reassignmentFile, parseReassignmentData)
	if err != nil {
		return err
	}
	parts := make([]tp, 0, len(targets))
	for _, e := range targets {
		if !slices.Contains(parts, e.Part) {
			parts = append(parts, e.Part)
		}
	}
	current, err := a.listReassignments(parts)
	if err != nil {
		return err
	}
	cancels := map[tp][]int32{}
	for k, r := range current {
		if len(r.adding) > 0 || len(r.removing) > 0 {
			cancels[k] = nil
		}
	}
	if len(cancels) > 0 {
		failed, err := a.alterReassignments(cancels)
		if err != nil {
			return err
		}
		if len(failed) > 0 {
			plural := "s"
			if len(failed) == 1 {
				plural = ""
			}
			return &terse{fmt.Sprintf("Error cancelling partition reassignment%s for:\n%s", plural, failureLines(failed))}
		}
		keys := make([]tp, 0, len(cancels))
		for k := range cancels {
			keys = append(keys, k)
		}
		plural := "s"
		if len(keys) == 1 {
			plural = ""
		}
		fmt.Fprintf(t.out, "Successfully cancelled partition reassignment%s for: %s\n", plural, admintool.JoinPartitions(keys, ","))
	} else {
		fmt.Fprintln(t.out, "None of the specified partition reassignments are active.")
	}
	if err := t.cancelMoves(a, moves, opts.timeout); err != nil {
		return err
	}
	if !opts.preserveThrottles {
		return t.clearThrottles(a, targets)
	}
	return nil
}
