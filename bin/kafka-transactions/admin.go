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
	"github.com/klassik/klassik/broker/common"
)

// The admin calls of the tool, each as the Java admin client's handler
// does it (clients/admin/internals, Kafka 3.0): which broker is asked,
// which errors are retried until the call's deadline
// (default.api.timeout.ms) and which fail it, with the message the Java
// exception carries.

// retryBackoff is the admin client's retry.backoff.ms default.
const retryBackoff = 100 * time.Millisecond

// admin sends the tool's requests.
type admin struct {
	cl  *kgo.Client
	adm *kadm.Client
}

// errTimeout is what a call that could not complete before its deadline
// fails with (the Java client's TimeoutException).
func errTimeout(call string, last error) error {
	msg := "Timed out waiting for a node assignment. Call: " + call
	if last != nil {
		msg = fmt.Sprintf("Call(callName=%s) timed out after retrying: %v", call, last)
	}
	return errors.New(msg)
}

// retry runs attempt until it reports done, backing off between
// attempts; ctx's end fails the call with a timeout naming the last
// retriable problem.
func retry(ctx context.Context, call string, attempt func() (done bool, retriable error, err error)) error {
	var last error
	for {
		done, retriable, err := attempt()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		last = retriable
		select {
		case <-ctx.Done():
			return errTimeout(call, last)
		case <-time.After(retryBackoff):
		}
	}
}

// exception is an error code with the message the Java client raises it
// with; an unknown API is the client's UnsupportedVersionException.
func exception(code int16, msg string) error {
	var m *string
	if msg != "" {
		m = &msg
	}
	return errors.New(admintool.NewKafkaError(code, m).Message)
}

// requestErr turns a transport failure into a retriable problem, or an
// unsupported API into a failure.
func requestErr(err error, api string) (retriable, fatal error) {
	if strings.Contains(err.Error(), "broker is too old") || errors.Is(err, kerr.UnsupportedVersion) {
		return nil, errors.New("The broker does not support " + api)
	}
	return err, nil
}

// metadata asks any broker for the brokers and the given topics (nil: all
// topics, internal ones included; empty: none).
func (a *admin) metadata(ctx context.Context, topics []string) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false
	if topics != nil {
		req.Topics = []kmsg.MetadataRequestTopic{}
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
	}
	return req.RequestWith(ctx, a.cl)
}

// brokerIDs lists the cluster's brokers.
func (a *admin) brokerIDs(ctx context.Context) ([]int32, error) {
	var ids []int32
	err := retry(ctx, "listNodes", func() (bool, error, error) {
		m, err := a.metadata(ctx, []string{})
		if err != nil {
			return false, err, nil
		}
		for _, b := range m.Brokers {
			ids = append(ids, b.NodeID)
		}
		slices.Sort(ids)
		return true, nil, nil
	})
	return ids, err
}

// listTransactions asks every broker for the transactions it coordinates
// (ListTransactionsHandler), optionally only those of producerIDs.
func (a *admin) listTransactions(ctx context.Context, producerIDs []int64) ([]brokerListings, error) {
	ids, err := a.brokerIDs(ctx)
	if err != nil {
		return nil, err
	}
	var out []brokerListings
	for _, id := range ids {
		var bl brokerListings
		err := retry(ctx, "listTransactions", func() (bool, error, error) {
			req := kmsg.NewPtrListTransactionsRequest()
			req.ProducerIDFilters = producerIDs
			resp, err := req.RequestWith(ctx, a.cl.Broker(int(id)))
			if err != nil {
				retriable, fatal := requestErr(err, "LIST_TRANSACTIONS")
				return false, retriable, fatal
			}
			switch resp.ErrorCode {
			case 0:
			case kerr.CoordinatorLoadInProgress.Code:
				return false, kerr.CoordinatorLoadInProgress, nil
			case kerr.CoordinatorNotAvailable.Code:
				return false, nil, fmt.Errorf("ListTransactions request sent to broker %d failed because the coordinator is shutting down", id)
			default:
				return false, nil, exception(resp.ErrorCode, fmt.Sprintf("ListTransactions request sent to broker %d failed with an unexpected exception", id))
			}
			bl = brokerListings{brokerID: id}
			for _, s := range resp.TransactionStates {
				bl.listings = append(bl.listings, transactionListing{transactionalID: s.TransactionalID, producerID: s.ProducerID, state: s.TransactionState})
			}
			return true, nil, nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, bl)
	}
	return out, nil
}

// errTransactionalIDNotFound marks a transactional id its coordinator
// does not know (TransactionalIdNotFoundException).
type errTransactionalIDNotFound struct{ msg string }

func (e *errTransactionalIDNotFound) Error() string { return e.msg }

// describeTransactions finds each id's coordinator (FindCoordinator type
// 1) and asks it (DescribeTransactionsHandler). Per id: a description or
// an error.
func (a *admin) describeTransactions(ctx context.Context, ids []string) (map[string]*transactionDescription, map[string]error) {
	descs := map[string]*transactionDescription{}
	failed := map[string]error{}
	pending := slices.Clone(ids)
	var last error
	for len(pending) > 0 {
		coordinators := a.adm.FindTxnCoordinators(ctx, pending...)
		byBroker := map[int32][]string{}
		for _, id := range pending {
			c, ok := coordinators[id]
			switch {
			case !ok:
				last = errors.New("no coordinator answer")
			case c.Err == nil:
				byBroker[c.NodeID] = append(byBroker[c.NodeID], id)
			case errors.Is(c.Err, kerr.CoordinatorNotAvailable), errors.Is(c.Err, kerr.CoordinatorLoadInProgress), errors.Is(c.Err, kerr.NotCoordinator):
				last = c.Err
			case errors.Is(c.Err, kerr.TransactionalIDAuthorizationFailed):
				failed[id] = fmt.Errorf("FindCoordinator request for transactionalId `%s` failed due to authorization failure", id)
			default:
				var ke *kerr.Error
				if errors.As(c.Err, &ke) {
					failed[id] = exception(ke.Code, c.ErrMessage)
				} else {
					last = c.Err // a transport failure: retried
				}
			}
		}
		for broker, bids := range byBroker {
			req := kmsg.NewPtrDescribeTransactionsRequest()
			req.TransactionalIDs = bids
			resp, err := req.RequestWith(ctx, a.cl.Broker(int(broker)))
			if err != nil {
				retriable, fatal := requestErr(err, "DESCRIBE_TRANSACTIONS")
				if fatal != nil {
					for _, id := range bids {
						failed[id] = fatal
					}
				}
				last = retriable
				continue
			}
			for _, s := range resp.TransactionStates {
				if !slices.Contains(bids, s.TransactionalID) {
					continue
				}
				switch s.ErrorCode {
				case 0:
					d := &transactionDescription{coordinatorID: broker, state: s.State, producerID: s.ProducerID,
						producerEpoch: s.ProducerEpoch, timeoutMs: s.TimeoutMillis, startTimeMs: s.StartTimestamp}
					for _, t := range s.Topics {
						for _, p := range t.Partitions {
							d.partitions = append(d.partitions, common.TopicPartition{Topic: t.Topic, Partition: p})
						}
					}
					descs[s.TransactionalID] = d
				case kerr.TransactionalIDAuthorizationFailed.Code:
					failed[s.TransactionalID] = fmt.Errorf("DescribeTransactions request for transactionalId `%s` failed due to authorization failure", s.TransactionalID)
				case kerr.TransactionalIDNotFound.Code:
					failed[s.TransactionalID] = &errTransactionalIDNotFound{fmt.Sprintf("DescribeTransactions request for transactionalId `%s` failed because the ID could not be found", s.TransactionalID)}
				case kerr.CoordinatorLoadInProgress.Code, kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code:
					last = kerr.ErrorForCode(s.ErrorCode)
				default:
					failed[s.TransactionalID] = exception(s.ErrorCode, fmt.Sprintf("DescribeTransactions request for transactionalId `%s` failed due to unexpected error", s.TransactionalID))
				}
			}
		}
		pending = slices.DeleteFunc(pending, func(id string) bool { return descs[id] != nil || failed[id] != nil })
		if len(pending) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			for _, id := range pending {
				failed[id] = errTimeout("describeTransactions", last)
			}
			return descs, failed
		case <-time.After(retryBackoff):
		}
	}
	return descs, failed
}

// leaders maps partitions to their leaders from one metadata answer; the
// ones without a known leader are left out (the caller retries them).
func (a *admin) leaders(ctx context.Context, tps []common.TopicPartition) (map[common.TopicPartition]int32, error) {
	var topics []string
	for _, tp := range tps {
		if !slices.Contains(topics, tp.Topic) {
			topics = append(topics, tp.Topic)
		}
	}
	m, err := a.metadata(ctx, topics)
	if err != nil {
		return nil, err
	}
	out := map[common.TopicPartition]int32{}
	for _, t := range m.Topics {
		if t.ErrorCode != 0 || t.Topic == nil {
			continue
		}
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 && p.Leader >= 0 {
				out[common.TopicPartition{Topic: *t.Topic, Partition: p.Partition}] = p.Leader
			}
		}
	}
	return out, nil
}

// partitionResult is what DescribeProducers answered for one partition.
type partitionResult struct {
	states []producerState
	err    error
}

// describeProducers asks each partition's leader, or brokerID when given
// (DescribeProducersHandler), for its active producers.
func (a *admin) describeProducers(ctx context.Context, tps []common.TopicPartition, brokerID *int32) map[common.TopicPartition]partitionResult {
	results := map[common.TopicPartition]partitionResult{}
	pending := slices.Clone(tps)
	var last error
	for {
		var route map[common.TopicPartition]int32
		if brokerID != nil {
			route = map[common.TopicPartition]int32{}
			for _, tp := range pending {
				route[tp] = *brokerID
			}
		} else {
			var err error
			if route, err = a.leaders(ctx, pending); err != nil {
				last = err
			}
		}
		byBroker := map[int32][]common.TopicPartition{}
		for _, tp := range pending {
			if b, ok := route[tp]; ok {
				byBroker[b] = append(byBroker[b], tp)
			}
		}
		for broker, btps := range byBroker {
			req := kmsg.NewPtrDescribeProducersRequest()
			for _, g := range groupByTopic(btps) {
				rt := kmsg.NewDescribeProducersRequestTopic()
				rt.Topic, rt.Partitions = g.topic, g.partitions
				req.Topics = append(req.Topics, rt)
			}
			resp, err := req.RequestWith(ctx, a.cl.Broker(int(broker)))
			if err != nil {
				retriable, fatal := requestErr(err, "DESCRIBE_PRODUCERS")
				if fatal != nil {
					for _, tp := range btps {
						results[tp] = partitionResult{err: fatal}
					}
				}
				last = retriable
				continue
			}
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					tp := common.TopicPartition{Topic: t.Topic, Partition: p.Partition}
					if !slices.Contains(btps, tp) {
						continue
					}
					if err := producersError(tp, p, brokerID); err != nil {
						if r, ok := err.(retriableErr); ok {
							last = r.error
							continue
						}
						results[tp] = partitionResult{err: err}
						continue
					}
					var states []producerState
					for _, ap := range p.ActiveProducers {
						states = append(states, producerState{producerID: ap.ProducerID, producerEpoch: ap.ProducerEpoch,
							lastSequence: ap.LastSequence, lastTimestamp: ap.LastTimestamp,
							coordinatorEpoch: ap.CoordinatorEpoch, txnStartOffset: ap.CurrentTxnStartOffset})
					}
					results[tp] = partitionResult{states: states}
				}
			}
		}
		pending = slices.DeleteFunc(pending, func(tp common.TopicPartition) bool { _, done := results[tp]; return done })
		if len(pending) == 0 {
			return results
		}
		select {
		case <-ctx.Done():
			for _, tp := range pending {
				results[tp] = partitionResult{err: errTimeout("describeProducers", last)}
			}
			return results
		case <-time.After(retryBackoff):
		}
	}
}

// retriableErr marks a partition error the call retries.
type retriableErr struct{ error }

// producersError is DescribeProducersHandler.handlePartitionError.
func producersError(tp common.TopicPartition, p kmsg.DescribeProducersResponseTopicPartition, brokerID *int32) error {
	switch p.ErrorCode {
	case 0:
		return nil
	case kerr.NotLeaderForPartition.Code:
		if brokerID != nil {
			return fmt.Errorf("Failed to describe active producers for partition %s on brokerId %d", tp, *brokerID)
		}
		return retriableErr{kerr.NotLeaderForPartition}
	case kerr.UnknownTopicOrPartition.Code:
		return retriableErr{kerr.UnknownTopicOrPartition}
	case kerr.InvalidTopicException.Code:
		msg := kerr.InvalidTopicException.Description
		if p.ErrorMessage != nil {
			msg = *p.ErrorMessage
		}
		return fmt.Errorf("Failed to fetch metadata for partition %s due to invalid topic error: %s", tp, msg)
	case kerr.TopicAuthorizationFailed.Code:
		return fmt.Errorf("Failed to describe active producers for partition %s due to authorization failure on topic `%s`", tp, tp.Topic)
	}
	return fmt.Errorf("Failed to describe active producers for partition %s due to unexpected error", tp)
}

type topicPartitions struct {
	topic      string
	partitions []int32
}

func groupByTopic(tps []common.TopicPartition) []topicPartitions {
	var out []topicPartitions
	for _, tp := range sortedPartitions(tps) {
		if n := len(out); n > 0 && out[n-1].topic == tp.Topic {
			out[n-1].partitions = append(out[n-1].partitions, tp.Partition)
			continue
		}
		out = append(out, topicPartitions{topic: tp.Topic, partitions: []int32{tp.Partition}})
	}
	return out
}

// abortSpec is the admin client's AbortTransactionSpec.
type abortSpec struct {
	tp               common.TopicPartition
	producerID       int64
	producerEpoch    int16
	coordinatorEpoch int32
}

func (s abortSpec) String() string {
	return fmt.Sprintf("AbortTransactionSpec(topicPartition=%s, producerId=%d, producerEpoch=%d, coordinatorEpoch=%d)",
		s.tp, s.producerID, s.producerEpoch, s.coordinatorEpoch)
}

// abortTransaction writes an abort marker for the producer to the
// partition's leader (AbortTransactionHandler: WriteTxnMarkers), finding
// the leader again after a leadership error.
func (a *admin) abortTransaction(ctx context.Context, spec abortSpec) error {
	return retry(ctx, "abortTransaction", func() (bool, error, error) {
		leaders, err := a.leaders(ctx, []common.TopicPartition{spec.tp})
		if err != nil {
			return false, err, nil
		}
		leader, ok := leaders[spec.tp]
		if !ok {
			return false, kerr.LeaderNotAvailable, nil
		}
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, m.Committed = spec.producerID, spec.producerEpoch, spec.coordinatorEpoch, false
		mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		mt.Topic, mt.Partitions = spec.tp.Topic, []int32{spec.tp.Partition}
		m.Topics = append(m.Topics, mt)
		req.Markers = append(req.Markers, m)
		resp, err := req.RequestWith(ctx, a.cl.Broker(int(leader)))
		if err != nil {
			retriable, fatal := requestErr(err, "WRITE_TXN_MARKERS")
			return false, retriable, fatal
		}
		if len(resp.Markers) != 1 || resp.Markers[0].ProducerID != spec.producerID {
			return false, nil, fmt.Errorf("WriteTxnMarkers response included unexpected marker entries: %v(expected to find exactly one entry with producerId %d)", resp.Markers, spec.producerID)
		}
		topics := resp.Markers[0].Topics
		if len(topics) != 1 || topics[0].Topic != spec.tp.Topic {
			return false, nil, fmt.Errorf("WriteTxnMarkers response included unexpected topic entries: %v(expected to find exactly one entry with topic partition %s)", resp.Markers, spec.tp)
		}
		parts := topics[0].Partitions
		if len(parts) != 1 || parts[0].Partition != spec.tp.Partition {
			return false, nil, fmt.Errorf("WriteTxnMarkers response included unexpected partition entries for topic %s: %v(expected to find exactly one entry with partition %d)", spec.tp.Topic, resp.Markers, spec.tp.Partition)
		}
		switch code := parts[0].ErrorCode; code {
		case 0:
			return true, nil, nil
		case kerr.ClusterAuthorizationFailed.Code:
			return false, nil, fmt.Errorf("WriteTxnMarkers request with %s failed due to cluster authorization error", spec)
		case kerr.InvalidProducerEpoch.Code:
			return false, nil, fmt.Errorf("WriteTxnMarkers request with %s failed due an invalid producer epoch", spec)
		case kerr.TransactionCoordinatorFenced.Code:
			return false, nil, fmt.Errorf("WriteTxnMarkers request with %s failed since the provided coordinator epoch %d has been fenced by the active coordinator", spec, spec.coordinatorEpoch)
		case kerr.NotLeaderForPartition.Code, kerr.ReplicaNotAvailable.Code, kerr.BrokerNotAvailable.Code, kerr.UnknownTopicOrPartition.Code:
			return false, kerr.ErrorForCode(code), nil
		default:
			var ke *kerr.Error
			desc := strconv.Itoa(int(code))
			if errors.As(kerr.ErrorForCode(code), &ke) {
				desc = ke.Description
			}
			return false, nil, fmt.Errorf("WriteTxnMarkers request with %s failed due to unexpected error: %s", spec, desc)
		}
	})
}

// topicInfo is a topic's partitions with their replicas.
type topicInfo struct {
	partitions []partitionInfo
}

type partitionInfo struct {
	partition int32
	replicas  []int32
}

// listTopics names every topic, internal ones included.
func (a *admin) listTopics(ctx context.Context) ([]string, error) {
	var names []string
	err := retry(ctx, "listTopics", func() (bool, error, error) {
		m, err := a.metadata(ctx, nil)
		if err != nil {
			return false, err, nil
		}
		for _, t := range m.Topics {
			if t.Topic != nil && t.ErrorCode == 0 {
				names = append(names, *t.Topic)
			}
		}
		slices.Sort(names)
		return true, nil, nil
	})
	return names, err
}

// describeTopics reads the partitions of topics; a topic that does not
// exist fails the call.
func (a *admin) describeTopics(ctx context.Context, topics []string) (map[string]topicInfo, error) {
	out := map[string]topicInfo{}
	err := retry(ctx, "describeTopics", func() (bool, error, error) {
		m, err := a.metadata(ctx, topics)
		if err != nil {
			return false, err, nil
		}
		for _, t := range m.Topics {
			if t.Topic == nil {
				continue
			}
			switch t.ErrorCode {
			case 0:
			case kerr.LeaderNotAvailable.Code:
				return false, kerr.LeaderNotAvailable, nil
			default:
				return false, nil, exception(t.ErrorCode, "")
			}
			var ti topicInfo
			for _, p := range t.Partitions {
				ti.partitions = append(ti.partitions, partitionInfo{partition: p.Partition, replicas: p.Replicas})
			}
			slices.SortFunc(ti.partitions, func(x, y partitionInfo) int { return int(x.partition) - int(y.partition) })
			out[*t.Topic] = ti
		}
		return true, nil, nil
	})
	return out, err
}
