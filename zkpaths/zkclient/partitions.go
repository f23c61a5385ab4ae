package zkclient

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/klassik/klassik/broker/common"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
)

// PartitionStateResult is the outcome of one partition's state write.
type PartitionStateResult struct {
	ZkVersion int32 // new partition epoch on success
	Err       error // e.g. zk.ErrBadVersion, zk.ErrNodeExists, zk.ErrNoNode
}

// defaultMaxInFlight bounds concurrent requests of batch operations, like
// Kafka's zookeeper.max.in.flight.requests (default 10); go-zookeeper
// pipelines them on one connection.
const defaultMaxInFlight = 10

// forEach runs fn for every item with at most parallelism calls at once
// and returns the first error a call returned (every item runs whatever
// the others return); the workers (at most parallelism goroutines, each
// taking the next item until none is left, so that ten thousand items
// cost ten goroutines, not ten thousand) are owned by the call and finish
// before it returns. With parallelism 1 the items run in order on the
// caller's goroutine.
func forEach[T any](parallelism int, items []T, fn func(T) error) error {
	var mu sync.Mutex
	var first error
	run := func(it T) {
		if err := fn(it); err != nil {
			mu.Lock()
			if first == nil {
				first = err
			}
			mu.Unlock()
		}
	}
	if len(items) <= 1 || parallelism <= 1 {
		for _, it := range items {
			run(it)
		}
		return first
	}
	workers := min(parallelism, len(items))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(items)) {
					return
				}
				run(items[i])
			}
		}()
	}
	wg.Wait()
	return first
}

// GetPartitionState reads one state znode; ok is false if it does not exist.
// The returned state carries the partition epoch in ZkVersion.
func (c *Client) GetPartitionState(tp common.TopicPartition) (zkpaths.LeaderAndIsr, bool, error) {
	data, st, err := c.Get(zkpaths.PartitionStatePath(tp.Topic, tp.Partition))
	if errors.Is(err, zk.ErrNoNode) {
		return zkpaths.LeaderAndIsr{}, false, nil
	}
	if err != nil {
		return zkpaths.LeaderAndIsr{}, false, err
	}
	s, err := zkpaths.DecodeLeaderAndIsr(data, st.Version)
	if err != nil {
		return zkpaths.LeaderAndIsr{}, false, fmt.Errorf("%w: state of %s: %w", ErrUndecodable, tp, err)
	}
	return s, true, nil
}

// GetPartitionStates reads many state znodes concurrently; partitions
// without a state znode are omitted from the result, and so are undecodable
// ones (logged), so that one bad znode fails its partition rather than the
// whole read.
func (c *Client) GetPartitionStates(tps []common.TopicPartition) (map[common.TopicPartition]zkpaths.LeaderAndIsr, error) {
	var mu sync.Mutex
	out := make(map[common.TopicPartition]zkpaths.LeaderAndIsr, len(tps))
	err := forEach(c.opts.maxInFlight, tps, func(tp common.TopicPartition) error {
		s, ok, err := c.GetPartitionState(tp)
		if errors.Is(err, ErrUndecodable) {
			c.log.Warn("ignoring an undecodable partition state", "topic", tp.Topic, "partition", tp.Partition, "err", err)
			return nil
		}
		if err != nil || !ok {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		out[tp] = s
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CreatePartitionStates creates state znodes for new partitions, as the
// controller does (fenced): first /brokers/topics/<t>/partitions and
// .../<p> (results ignored, they may exist), then .../<p>/state with the
// given content. Per-partition outcomes are returned (ZkVersion 0 on
// success, zk.ErrNodeExists if a state already exists); if any fenced op
// failed its epoch check the error is ErrControllerMoved. The znodes of
// many partitions go in one multi (fencedBatch), each with the outcome a
// multi of its own would have had.
func (c *Client) CreatePartitionStates(epochZkVersion int32, states map[common.TopicPartition]zkpaths.LeaderAndIsr) (map[common.TopicPartition]PartitionStateResult, error) {
	topics := map[string]bool{}
	tps := make([]common.TopicPartition, 0, len(states))
	for tp := range states {
		topics[tp.Topic] = true
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, common.TopicPartition.Compare)
	for _, t := range slices.Sorted(maps.Keys(topics)) {
		if _, err := c.fencedOne(epochZkVersion, CreateOp(zkpaths.TopicPartitionsPath(t), nil, Persistent)); errors.Is(err, ErrControllerMoved) {
			return nil, err
		}
	}
	// Two ops per partition: the partition znode (may exist), its state.
	ops := make([]any, 0, 2*len(tps))
	for _, tp := range tps {
		ops = append(ops,
			CreateOp(zkpaths.TopicPartitionPath(tp.Topic, tp.Partition), nil, Persistent),
			CreateOp(zkpaths.PartitionStatePath(tp.Topic, tp.Partition), states[tp].Encode(), Persistent))
	}
	res := c.fencedBatch(epochZkVersion, ops)
	return partitionResults(tps, "creating partition states", func(i int) PartitionStateResult {
		if errors.Is(res[2*i].err, ErrControllerMoved) {
			return PartitionStateResult{Err: res[2*i].err}
		}
		return PartitionStateResult{Err: res[2*i+1].err}
	})
}

// UpdatePartitionStates writes new leader/ISR states as the controller does:
// each write is fenced and conditional on the state's ZkVersion (the
// partition epoch the controller last read). Per-partition results carry the
// new ZkVersion or zk.ErrBadVersion (re-read and retry) / zk.ErrNoNode. If
// the epoch check failed the error is ErrControllerMoved. The writes of
// many partitions go in one multi (fencedBatch), each with the outcome a
// multi of its own would have had.
func (c *Client) UpdatePartitionStates(epochZkVersion int32, states map[common.TopicPartition]zkpaths.LeaderAndIsr) (map[common.TopicPartition]PartitionStateResult, error) {
	tps := slices.SortedFunc(maps.Keys(states), common.TopicPartition.Compare)
	ops := make([]any, len(tps))
	for i, tp := range tps {
		s := states[tp]
		ops[i] = SetOp(zkpaths.PartitionStatePath(tp.Topic, tp.Partition), s.Encode(), s.ZkVersion)
	}
	res := c.fencedBatch(epochZkVersion, ops)
	return partitionResults(tps, "updating partition states", func(i int) PartitionStateResult {
		if res[i].err != nil {
			return PartitionStateResult{Err: res[i].err}
		}
		if res[i].res.Stat == nil {
			return PartitionStateResult{Err: fmt.Errorf("zkclient: set %s: no stat in the multi response", tps[i])}
		}
		return PartitionStateResult{ZkVersion: res[i].res.Stat.Version}
	})
}

// partitionResults collects the result of each partition (result(i) for
// tps[i]); if any write failed its controller-epoch check the error is
// ErrControllerMoved (while what), next to the results.
func partitionResults(tps []common.TopicPartition, what string, result func(i int) PartitionStateResult) (map[common.TopicPartition]PartitionStateResult, error) {
	out := make(map[common.TopicPartition]PartitionStateResult, len(tps))
	moved := false
	for i, tp := range tps {
		r := result(i)
		out[tp] = r
		if errors.Is(r.Err, ErrControllerMoved) {
			moved = true
		}
	}
	if moved {
		return out, fmt.Errorf("%w: while %s", ErrControllerMoved, what)
	}
	return out, nil
}

// UpdateLeaderAndIsrsConditional is UpdateLeaderAndIsrConditional for many
// partitions at once: states[i] is written to tps[i]'s state znode
// conditionally on states[i].ZkVersion, and versions[i], errs[i] are what
// UpdateLeaderAndIsrConditional(tps[i], states[i]) would have returned. The
// writes go in multis of many setData ops (unfencedBatch), several in
// flight, each op with the outcome it would have had alone; a lost race
// is re-read as in the single write (an earlier resend that landed counts
// as success).
func (c *Client) UpdateLeaderAndIsrsConditional(tps []common.TopicPartition, states []zkpaths.LeaderAndIsr) (versions []int32, errs []error) {
	if len(tps) != len(states) {
		panic("zkclient: UpdateLeaderAndIsrsConditional: tps and states differ in length")
	}
	ops := make([]any, len(tps))
	for i, tp := range tps {
		ops[i] = SetOp(zkpaths.PartitionStatePath(tp.Topic, tp.Partition), states[i].Encode(), states[i].ZkVersion)
	}
	res := c.unfencedBatch(ops)
	versions, errs = make([]int32, len(tps)), make([]error, len(tps))
	var conflicts []int
	for i := range res {
		switch {
		case errors.Is(res[i].err, zk.ErrBadVersion):
			conflicts = append(conflicts, i)
			errs[i] = res[i].err
		case res[i].err != nil:
			errs[i] = res[i].err
		case res[i].res.Stat == nil:
			errs[i] = fmt.Errorf("zkclient: set %s: no stat in the multi response", tps[i])
		default:
			versions[i] = res[i].res.Stat.Version
		}
	}
	_ = forEach(c.opts.maxInFlight, conflicts, func(i int) error {
		cur, ok, err := c.GetPartitionState(tps[i])
		switch {
		case err != nil:
			errs[i] = err
		case ok && cur.Equal(states[i]):
			versions[i], errs[i] = cur.ZkVersion, nil
		}
		return nil
	})
	return versions, errs
}

// UpdateLeaderAndIsrConditional is the partition leader's own ISR write of
// the legacy path (IBP < 2.7-IV2, ReplicationUtils.updateLeaderAndIsr): a
// setData conditional on s.ZkVersion, not fenced. On BadVersion it re-reads
// the node; if it already holds exactly s (an earlier resend landed) that
// counts as success with the current version, otherwise zk.ErrBadVersion is
// returned. Returns the new partition epoch.
func (c *Client) UpdateLeaderAndIsrConditional(tp common.TopicPartition, s zkpaths.LeaderAndIsr) (int32, error) {
	p := zkpaths.PartitionStatePath(tp.Topic, tp.Partition)
	st, err := c.Set(p, s.Encode(), s.ZkVersion)
	if err == nil {
		return st.Version, nil
	}
	if !errors.Is(err, zk.ErrBadVersion) {
		return 0, err
	}
	cur, ok, rerr := c.GetPartitionState(tp)
	if rerr != nil {
		return 0, rerr
	}
	if ok && cur.Equal(s) {
		return cur.ZkVersion, nil
	}
	return 0, err
}
