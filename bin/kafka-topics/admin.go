package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klassik/klassik/bin/internal/clitools/security"
	"github.com/klassik/klassik/config"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// adminService runs the commands against a broker (--bootstrap-server), as
// Kafka's AdminClientTopicService.
type adminService struct {
	cl      *kgo.Client
	adm     *kadm.Client
	timeout time.Duration
	out     io.Writer
}

func newAdminService(o *topicOptions, out io.Writer) (*adminService, error) {
	timeout := 60 * time.Second // Kafka's default.api.timeout.ms
	opts := []kgo.Opt{
		kgo.SeedBrokers(config.SplitList(o.bootstrapServer)...), kgo.ClientID("kafka-topics"),
		// A broker that accepts a request and never answers (paused,
		// overloaded) is given up on after this much beyond the request's
		// own timeout, and kgo retries elsewhere; its 10 s default made a
		// describe against a cluster with one stalled broker take ~20 s.
		kgo.RequestTimeoutOverhead(perBrokerTimeout),
	}
	if v, ok := o.commandConfig["client.id"]; ok {
		opts = append(opts, kgo.ClientID(v))
	}
	if v, ok := o.commandConfig["request.timeout.ms"]; ok {
		ms, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("Invalid value %s for configuration request.timeout.ms", v)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	secOpts, err := security.Opts(o.commandConfig)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(opts, secOpts...)...)
	if err != nil {
		return nil, err
	}
	return &adminService{cl: cl, adm: kadm.NewClient(cl), timeout: timeout, out: out}, nil
}

func (s *adminService) close() { s.cl.Close() }

func (s *adminService) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.timeout)
}

// kafkaErr renders a protocol error as the Java client's exception message:
// the broker's message when it sent one, else Kafka's description.
// firstTopicError is kafkaErr of the first topic in a response that failed.
func firstTopicError[T any](topics []T, errorOf func(T) (int16, *string)) error {
	for _, t := range topics {
		if err := kafkaErr(errorOf(t)); err != nil {
			return err
		}
	}
	return nil
}

func kafkaErr(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil {
		return nil
	}
	if msg != nil && *msg != "" {
		return fmt.Errorf("%s", *msg)
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return fmt.Errorf("%s", ke.Description)
	}
	return err
}

func (s *adminService) create(o *topicOptions) error {
	ctx, cancel := s.ctx()
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = int32(s.timeout.Milliseconds())
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic = o.topic
	t.NumPartitions, t.ReplicationFactor = -1, -1
	if o.replicaAssign != nil {
		for _, p := range slices.Sorted(maps.Keys(o.replicaAssign)) {
			ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			ra.Partition = p
			ra.Replicas = o.replicaAssign[p]
			t.ReplicaAssignment = append(t.ReplicaAssignment, ra)
		}
	} else {
		if o.hasPartitions {
			t.NumPartitions = o.partitions
		}
		if o.hasReplication {
			t.ReplicationFactor = o.replicationFact
		}
	}
	for _, k := range o.configOrder {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name = k
		v := o.configs[k]
		c.Value = &v
		t.Configs = append(t.Configs, c)
	}
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, s.cl)
	if err != nil {
		return err
	}
	for _, rt := range resp.Topics {
		if rt.ErrorCode == kerr.TopicAlreadyExists.Code {
			if o.ifNotExists {
				return nil
			}
			return fmt.Errorf("Topic '%s' already exists.", o.topic)
		}
		if err := kafkaErr(rt.ErrorCode, rt.ErrorMessage); err != nil {
			return err
		}
	}
	fmt.Fprintf(s.out, "Created topic %s.\n", o.topic)
	return nil
}

// topicNames lists every topic, internal ones included (the Java tool asks
// with listInternal=true and filters afterwards).
func (s *adminService) topicNames(ctx context.Context) ([]string, error) {
	td, err := s.adm.ListTopicsWithInternal(ctx)
	if err != nil {
		return nil, err
	}
	return td.Names(), nil
}

func (s *adminService) selectTopics(ctx context.Context, o *topicOptions) ([]string, error) {
	f, err := newTopicFilter(o.topic, o.hasTopic, o.excludeInternal)
	if err != nil {
		return nil, err
	}
	all, err := s.topicNames(ctx)
	if err != nil {
		return nil, err
	}
	return filterTopics(all, f), nil
}

func (s *adminService) list(o *topicOptions) error {
	ctx, cancel := s.ctx()
	defer cancel()
	topics, err := s.selectTopics(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintln(s.out, strings.Join(topics, "\n"))
	return nil
}

func (s *adminService) describe(o *topicOptions) error {
	ctx, cancel := s.ctx()
	defer cancel()
	// One metadata round trip for the names, partitions and live brokers:
	// each request may land on a stalled broker and cost a timeout.
	f, err := newTopicFilter(o.topic, o.hasTopic, o.excludeInternal)
	if err != nil {
		return err
	}
	md, err := s.adm.Metadata(ctx)
	if err != nil {
		return err
	}
	topics := filterTopics(md.Topics.Names(), f)
	if err := ensureTopicExists(topics, o); err != nil {
		return err
	}
	if len(topics) == 0 {
		return nil
	}
	live := map[int32]bool{}
	var ids []int32
	for _, b := range md.Brokers {
		live[b.NodeID] = true
		ids = append(ids, b.NodeID)
	}
	configs, err := s.describeTopicConfigs(ctx, ids, topics)
	if err != nil {
		return err
	}
	// ListPartitionReassignments goes to the controller; a stalled
	// controller must not hold the describe, and no answer means "none".
	rctx, rcancel := context.WithTimeout(ctx, perBrokerTimeout)
	reassign := s.reassignments(rctx, topics)
	rcancel()
	var infos []topicInfo
	for _, name := range topics {
		td, ok := md.Topics[name]
		if !ok {
			continue
		}
		if td.Err != nil {
			return td.Err
		}
		rc, ok := configs[name]
		if !ok {
			return fmt.Errorf("no configs returned for topic %s", name)
		}
		if rc.Err != nil {
			if rc.ErrMessage != "" {
				return errors.New(rc.ErrMessage)
			}
			return rc.Err
		}
		ti := topicInfo{Name: name, TopicID: td.ID}
		for _, c := range rc.Configs {
			if c.Source == kmsg.ConfigSourceDefaultConfig {
				continue
			}
			if c.Key == "min.insync.replicas" && c.Value != nil {
				ti.MinISR, _ = strconv.Atoi(*c.Value)
			}
			v := ""
			if c.Value != nil {
				v = *c.Value
			}
			if c.Sensitive {
				v = "null"
			}
			ti.Configs = append(ti.Configs, configEntry{c.Key, v})
		}
		slices.SortFunc(ti.Configs, func(a, b configEntry) int { return strings.Compare(a.Name, b.Name) })
		if ti.MinISR == 0 {
			ti.MinISR = minISRFrom(rc.Configs)
		}
		for _, pd := range td.Partitions {
			pi := partitionInfo{Partition: pd.Partition, Leader: pd.Leader, Replicas: pd.Replicas, ISR: pd.ISR}
			if r, ok := reassign[partitionKey{name, pd.Partition}]; ok {
				pi.Reassign, pi.Adding, pi.Removing = true, r.adding, r.removing
			}
			ti.Partitions = append(ti.Partitions, pi)
		}
		infos = append(infos, ti)
	}
	writeDescription(s.out, infos, o, live)
	return nil
}

// perBrokerTimeout bounds one request to one broker where any broker can
// answer (topic configs live in ZooKeeper and every broker reads them): a
// broker that does not answer in this time (paused, overloaded,
// partitioned) must not hold the whole command for the client's full
// request timeout.
const perBrokerTimeout = 3 * time.Second

// describeTopicConfigs sends DescribeConfigs for topics to every broker in
// ids at once, each attempt bounded by perBrokerTimeout (or the remaining
// command time if shorter), and returns the first complete answer keyed by
// topic; the other attempts are cancelled and waited for. Any broker can
// answer, so one paused or overloaded broker costs nothing as long as
// another one answers.
func (s *adminService) describeTopicConfigs(ctx context.Context, ids []int32, topics []string) (map[string]kadm.ResourceConfig, error) {
	if len(ids) == 0 {
		return nil, errors.New("no brokers in the cluster metadata")
	}
	type result struct {
		resp *kmsg.DescribeConfigsResponse
		err  error
	}
	actx, cancel := context.WithTimeout(ctx, perBrokerTimeout)
	results := make(chan result, len(ids))
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() { // one attempt per broker; cancelled and joined below
			defer wg.Done()
			req := kmsg.NewPtrDescribeConfigsRequest()
			for _, t := range topics {
				r := kmsg.NewDescribeConfigsRequestResource()
				r.ResourceType = kmsg.ConfigResourceTypeTopic
				r.ResourceName = t
				req.Resources = append(req.Resources, r)
			}
			kresp, err := s.cl.Broker(int(id)).Request(actx, req)
			if err != nil {
				results <- result{err: fmt.Errorf("describe configs on broker %d: %w", id, err)}
				return
			}
			results <- result{resp: kresp.(*kmsg.DescribeConfigsResponse)}
		}()
	}
	defer func() {
		cancel()
		wg.Wait()
	}()
	var lastErr error
	for range ids {
		r := <-results
		if r.err != nil {
			lastErr = r.err
			continue
		}
		out := make(map[string]kadm.ResourceConfig, len(r.resp.Resources))
		for _, res := range r.resp.Resources {
			rc := kadm.ResourceConfig{Name: res.ResourceName, Err: kerr.ErrorForCode(res.ErrorCode)}
			if res.ErrorMessage != nil {
				rc.ErrMessage = *res.ErrorMessage
			}
			for _, c := range res.Configs {
				rc.Configs = append(rc.Configs, kadm.Config{Key: c.Name, Value: c.Value, Sensitive: c.IsSensitive, Source: c.Source})
			}
			out[res.ResourceName] = rc
		}
		return out, nil
	}
	return nil, lastErr
}

// minISRFrom reads min.insync.replicas from a topic's config entries of any
// source.
func minISRFrom(cs []kadm.Config) int {
	for _, c := range cs {
		if c.Key == "min.insync.replicas" && c.Value != nil {
			n, _ := strconv.Atoi(*c.Value)
			return n
		}
	}
	return 0
}

type partitionKey struct {
	topic     string
	partition int32
}

type reassignment struct{ adding, removing []int32 }

// reassignments lists in-flight reassignments; like the Java tool it treats
// an unsupported or refused request as "none".
func (s *adminService) reassignments(ctx context.Context, topics []string) map[partitionKey]reassignment {
	out := map[partitionKey]reassignment{}
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = int32(s.timeout.Milliseconds())
	resp, err := req.RequestWith(ctx, s.cl)
	if err != nil || resp.ErrorCode != 0 {
		return out
	}
	for _, t := range resp.Topics {
		if !slices.Contains(topics, t.Topic) {
			continue
		}
		for _, p := range t.Partitions {
			out[partitionKey{t.Topic, p.Partition}] = reassignment{adding: p.AddingReplicas, removing: p.RemovingReplicas}
		}
	}
	return out
}

func (s *adminService) alter(o *topicOptions) error {
	return s.onExistingTopics(o, func(ctx context.Context, topics []string) error {
		md, err := s.adm.Metadata(ctx, topics...)
		if err != nil {
			return err
		}
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.TimeoutMillis = int32(s.timeout.Milliseconds())
		for _, name := range topics {
			t := kmsg.NewCreatePartitionsRequestTopic()
			t.Topic = name
			t.Count = o.partitions
			if o.replicaAssign != nil {
				existing := int32(len(md.Topics[name].Partitions))
				for _, p := range slices.Sorted(maps.Keys(o.replicaAssign)) {
					if p < existing {
						continue
					}
					a := kmsg.NewCreatePartitionsRequestTopicAssignment()
					a.Replicas = o.replicaAssign[p]
					t.Assignment = append(t.Assignment, a)
				}
			}
			req.Topics = append(req.Topics, t)
		}
		resp, err := req.RequestWith(ctx, s.cl)
		if err != nil {
			return err
		}
		return firstTopicError(resp.Topics, func(t kmsg.CreatePartitionsResponseTopic) (int16, *string) { return t.ErrorCode, t.ErrorMessage })
	})
}

func (s *adminService) delete(o *topicOptions) error {
	return s.onExistingTopics(o, func(ctx context.Context, topics []string) error {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.TimeoutMillis = int32(s.timeout.Milliseconds())
		for _, name := range topics {
			n := name
			t := kmsg.NewDeleteTopicsRequestTopic()
			t.Topic = &n
			req.Topics = append(req.Topics, t)
			req.TopicNames = append(req.TopicNames, name)
		}
		resp, err := req.RequestWith(ctx, s.cl)
		if err != nil {
			return err
		}
		return firstTopicError(resp.Topics, func(t kmsg.DeleteTopicsResponseTopic) (int16, *string) { return t.ErrorCode, t.ErrorMessage })
	})
}

// onExistingTopics runs fn, under one deadline, on the topics the command
// selects (existingTopics); selecting none is nothing to do.
func (s *adminService) onExistingTopics(o *topicOptions, fn func(ctx context.Context, topics []string) error) error {
	ctx, cancel := s.ctx()
	defer cancel()
	topics, err := s.existingTopics(ctx, o)
	if err != nil || len(topics) == 0 {
		return err
	}
	return fn(ctx, topics)
}

// existingTopics is selectTopics, failing as Kafka does when the --topic
// given matches nothing and --if-exists is absent.
func (s *adminService) existingTopics(ctx context.Context, o *topicOptions) ([]string, error) {
	topics, err := s.selectTopics(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := ensureTopicExists(topics, o); err != nil {
		return nil, err
	}
	return topics, nil
}
