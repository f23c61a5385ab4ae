package txn

// DescribeTransactions (key 65) and ListTransactions (key 66): Kafka
// 3.0's TransactionCoordinator.handleDescribeTransactions and
// TransactionStateManager.listTransactionStates (KIP-664).

import (
	"context"
	"regexp"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeTransactions answers each id's state, producer, timeout, start
// time and partitions. An id that is unknown here (or already removed
// by expiry) is TRANSACTIONAL_ID_NOT_FOUND; one whose partition this broker does not
// own NOT_COORDINATOR (COORDINATOR_LOAD_IN_PROGRESS while loading).
func (c *Coordinator) DescribeTransactions(_ context.Context, req *kmsg.DescribeTransactionsRequest) *kmsg.DescribeTransactionsResponse {
	resp := kmsg.NewPtrDescribeTransactionsResponse()
	resp.Version = req.Version
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID = id
		st.ProducerID, st.ProducerEpoch, st.StartTimestamp = noProducerID, noProducerEpoch, -1
		resp.TransactionStates = append(resp.TransactionStates, c.describe(id, st))
	}
	return resp
}

func (c *Coordinator) describe(id string, st kmsg.DescribeTransactionsResponseTransactionState) kmsg.DescribeTransactionsResponseTransactionState {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		st.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return st
	}
	_, tm, code := c.lookupExisting(id, kerr.TransactionalIDNotFound.Code)
	if code != 0 {
		st.ErrorCode = code
		return st
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.state == Dead {
		st.ErrorCode = kerr.TransactionalIDNotFound.Code
		return st
	}
	st.State = tm.state.String()
	st.ProducerID, st.ProducerEpoch = tm.producerID, tm.producerEpoch
	st.TimeoutMillis = tm.timeoutMs
	st.StartTimestamp = tm.startMs
	forEachTopic(tm.sortedPartitionsLocked(), func(topic string, partitions []int32) {
		t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
		t.Topic, t.Partitions = topic, partitions
		st.Topics = append(st.Topics, t)
	})
	return st
}

// ListTransactions lists the ids of every loaded partition, filtered by
// state names (unknown names are echoed in UnknownStateFilters), by
// producer ids, by a minimum running time (v1: only transactions
// running longer than DurationFilterMillis) and by an id pattern (v2).
// While any partition loads the answer is COORDINATOR_LOAD_IN_PROGRESS.
func (c *Coordinator) ListTransactions(_ context.Context, req *kmsg.ListTransactionsRequest) *kmsg.ListTransactionsResponse {
	resp := kmsg.NewPtrListTransactionsResponse()
	resp.Version = req.Version
	states := map[State]bool{}
	for _, name := range req.StateFilters {
		if s, ok := StateFromName(name); ok {
			states[s] = true
		} else {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, name)
		}
	}
	var pattern *regexp.Regexp
	if req.Version >= 2 && req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		re, err := regexp.Compile("^(?:" + *req.TransactionalIDPattern + ")$")
		if err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			return resp
		}
		pattern = re
	}
	durationFilter := int64(-1)
	if req.Version >= 1 {
		durationFilter = req.DurationFilterMillis
	}
	now := c.nowMs()

	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp
	}
	var tms []*txnMetadata
	for _, part := range c.parts {
		if part.loading {
			c.mu.Unlock()
			resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
			return resp
		}
		for _, tm := range part.txns {
			tms = append(tms, tm)
		}
	}
	c.mu.Unlock()

	sort.Slice(tms, func(i, j int) bool { return tms[i].id < tms[j].id })
	for _, tm := range tms {
		tm.mu.Lock()
		include := tm.state != Dead &&
			(len(req.ProducerIDFilters) == 0 || slices.Contains(req.ProducerIDFilters, tm.producerID)) &&
			(len(req.StateFilters) == 0 || states[tm.state]) &&
			(durationFilter < 0 || now-tm.startMs > durationFilter) &&
			(pattern == nil || pattern.MatchString(tm.id))
		if include {
			st := kmsg.NewListTransactionsResponseTransactionState()
			st.TransactionalID, st.ProducerID, st.TransactionState = tm.id, tm.producerID, tm.state.String()
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
		tm.mu.Unlock()
	}
	return resp
}
