package zkclient

// Batched fenced writes: the controller writes thousands of partition state
// znodes at once (topic creation, failover, controlled shutdown). One
// fenced multi per znode costs one ZooKeeper transaction (and one log
// fsync) per znode; fencedBatch packs many znodes' ops behind a single
// check(/controller_epoch) into one multi, several multis in flight at
// once, and gives each op exactly the outcome a multi of its own would
// have had: a multi is atomic, so when one op fails (a lost conditional
// write, an existing znode) nothing of it was applied, that op's error is
// final, and the other ops are sent again without it. Partition leaders
// write their own ISR changes the same way, without the controller-epoch
// check (unfencedBatch): each setData is conditional on its own version.

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Bounds of one batched multi: ZooKeeper refuses requests larger than its
// jute.maxbuffer (1 MiB by default), so a batch stays well below it.
const (
	maxBatchOps   = 1000
	maxBatchBytes = 256 << 10
)

// opResult is one op's outcome in a fenced batch.
type opResult struct {
	res zk.MultiResponse
	err error
}

// opSize estimates an op's encoded size in a multi.
func opSize(op any) int {
	const overhead = 32 // header, version, flags, ACL of the default kind
	switch o := op.(type) {
	case *zk.CreateRequest:
		return overhead + len(o.Path) + len(o.Data) + 32*len(o.Acl)
	case *zk.SetDataRequest:
		return overhead + len(o.Path) + len(o.Data)
	case *zk.DeleteRequest:
		return overhead + len(o.Path)
	case *zk.CheckVersionRequest:
		return overhead + len(o.Path)
	}
	return overhead
}

// chunkOps splits op indexes into batches within maxBatchOps and
// maxBatchBytes (an op larger than the byte bound gets a batch of its own).
func chunkOps(ops []any) [][]int {
	var chunks [][]int
	var cur []int
	size := 0
	for i, op := range ops {
		n := opSize(op)
		if len(cur) > 0 && (len(cur) >= maxBatchOps || size+n > maxBatchBytes) {
			chunks = append(chunks, cur)
			cur, size = nil, 0
		}
		cur = append(cur, i)
		size += n
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	return chunks
}

// fencedBatch runs every op fenced by check(/controller_epoch,
// epochZkVersion), packed into multis of many ops, at most maxInFlight
// multis at once. The result for op i is what fencedOne(epochZkVersion,
// ops[i]) would have returned: its response, or its error (matching
// zk.ErrBadVersion, zk.ErrNodeExists, zk.ErrNoNode, ... or
// ErrControllerMoved when the epoch check failed).
func (c *Client) fencedBatch(epochZkVersion int32, ops []any) []opResult {
	return c.batch(&epochZkVersion, ops)
}

// unfencedBatch is fencedBatch without the controller-epoch check: the
// result for op i is what a multi of ops[i] alone would have returned. A
// partition leader's own ISR writes go this way; each is fenced by its own
// conditional version instead.
func (c *Client) unfencedBatch(ops []any) []opResult {
	return c.batch(nil, ops)
}

// batch runs ops in multis of many ops, each behind check(/controller_epoch,
// *fence) when fence is not nil.
func (c *Client) batch(fence *int32, ops []any) []opResult {
	out := make([]opResult, len(ops))
	_ = forEach(c.opts.maxInFlight, chunkOps(ops), func(idx []int) error {
		c.batchChunk(fence, ops, idx, out)
		return nil
	})
	return out
}

// singleOp runs one op as a multi of its own (behind the fence if any).
func (c *Client) singleOp(fence *int32, op any) (zk.MultiResponse, error) {
	if fence != nil {
		return c.fencedOne(*fence, op)
	}
	res, err := c.Multi(op)
	if err != nil {
		if len(res) == 1 && res[0].Error != nil {
			return zk.MultiResponse{}, fmt.Errorf("zkclient: %s: %w", describeOp(op), res[0].Error)
		}
		return zk.MultiResponse{}, err
	}
	return res[0], nil
}

// batchChunk runs the ops at idx as one multi (fenced if fence is not nil)
// and fills their results; a failed op is taken out and the rest sent
// again. After a few failed rounds the remaining ops go one multi each, so
// that a batch in which many writes lose their race costs no more than
// single writes.
func (c *Client) batchChunk(fence *int32, ops []any, idx []int, out []opResult) {
	const maxRounds = 8
	lead := 0 // ops before the caller's: the fence's check
	if fence != nil {
		lead = 1
	}
	for round := 0; len(idx) > 0; round++ {
		if len(idx) == 1 || round >= maxRounds {
			for _, i := range idx {
				res, err := c.singleOp(fence, ops[i])
				out[i] = opResult{res: res, err: err}
			}
			return
		}
		batch := make([]any, 0, len(idx)+lead)
		if fence != nil {
			batch = append(batch, CheckOp("/controller_epoch", *fence))
		}
		for _, i := range idx {
			batch = append(batch, ops[i])
		}
		res, err := c.Multi(batch...)
		if err == nil {
			for k, i := range idx {
				out[i] = opResult{res: res[k+lead]}
			}
			return
		}
		if len(res) != len(batch) {
			// No per-op results (the connection failed for good): every
			// op fails as its own multi would have.
			for _, i := range idx {
				out[i] = opResult{err: err}
			}
			return
		}
		if fence != nil {
			if cerr := res[0].Error; cerr != nil {
				if errors.Is(cerr, zk.ErrBadVersion) {
					cerr = fmt.Errorf("%w: /controller_epoch version is no longer %d", ErrControllerMoved, *fence)
				} else {
					cerr = fmt.Errorf("zkclient: fenced multi: controller epoch check: %w", cerr)
				}
				for _, i := range idx {
					out[i] = opResult{err: cerr}
				}
				return
			}
		}
		// The first op that failed on its own: its error is final (the ops
		// before it were rolled back, those after it not tried).
		failed := -1
		for k := lead; k < len(res); k++ {
			if e := res[k].Error; e != nil && !isRuntimeInconsistency(e) {
				failed = k - lead
				break
			}
		}
		if failed < 0 {
			for _, i := range idx {
				out[i] = opResult{err: err}
			}
			return
		}
		i := idx[failed]
		what := "zkclient: "
		if fence != nil {
			what = "zkclient: fenced "
		}
		out[i] = opResult{err: fmt.Errorf("%s%s: %w", what, describeOp(ops[i]), res[failed+lead].Error)}
		idx = append(idx[:failed:failed], idx[failed+1:]...)
	}
}
