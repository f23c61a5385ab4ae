package zkclient

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/go-zookeeper/zk"
)

// do runs one single-node operation on p's absolute path, retried as
// c.retry does, and names the operation and p in a failure.
func (c *Client) do(op, p string, f func(abs string) error) error {
	if err := c.retry(func() error { return f(c.abs(p)) }); err != nil {
		return fmt.Errorf("zkclient: %s %s: %w", op, p, err)
	}
	return nil
}

// Get reads a node's data and Stat. Null data is returned as nil.
func (c *Client) Get(p string) ([]byte, *zk.Stat, error) {
	var data []byte
	var st *zk.Stat
	if err := c.do("get", p, func(abs string) (err error) {
		data, st, err = c.conn.Get(abs)
		return err
	}); err != nil {
		return nil, nil, err
	}
	return data, st, nil
}

// Exists reports whether a node exists and returns its Stat.
func (c *Client) Exists(p string) (bool, *zk.Stat, error) {
	var ok bool
	var st *zk.Stat
	if err := c.do("exists", p, func(abs string) (err error) {
		ok, st, err = c.conn.Exists(abs)
		return err
	}); err != nil || !ok {
		return false, nil, err
	}
	return true, st, nil
}

// Children lists a node's children, sorted by name.
func (c *Client) Children(p string) ([]string, error) {
	var kids []string
	if err := c.do("children", p, func(abs string) (err error) {
		kids, _, err = c.conn.Children(abs)
		return err
	}); err != nil {
		return nil, err
	}
	sort.Strings(kids)
	return kids, nil
}

// Create creates one node (no parents) with the given mode flags and
// returns its chroot-relative path (with the sequence suffix for
// sequential modes). Pass nil data for Kafka's structural nodes.
func (c *Client) Create(p string, data []byte, flags int32) (string, error) {
	var created string
	if err := c.do("create", p, func(abs string) (err error) {
		created, err = c.conn.Create(abs, data, flags, c.aclFor(p))
		return err
	}); err != nil {
		return "", err
	}
	return c.rel(created), nil
}

// CreateRecursive creates p, first creating every missing ancestor as a
// persistent node with null data (Kafka's createRecursive). NodeExists on
// the target itself is returned to the caller.
func (c *Client) CreateRecursive(p string, data []byte, flags int32) (string, error) {
	created, err := c.Create(p, data, flags)
	if err == nil || !errors.Is(err, zk.ErrNoNode) {
		return created, err
	}
	if err := c.createParents(p); err != nil {
		return "", err
	}
	return c.Create(p, data, flags)
}

func (c *Client) createParents(p string) error {
	parent := path.Dir(p)
	if parent == "/" || parent == "." {
		return nil
	}
	_, err := c.Create(parent, nil, Persistent)
	if err == nil || errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	if !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	if err := c.createParents(parent); err != nil {
		return err
	}
	_, err = c.Create(parent, nil, Persistent)
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	return nil
}

// EnsurePath creates p and its ancestors as persistent null nodes if
// missing (makeSurePersistentPathExists).
func (c *Client) EnsurePath(p string) error {
	_, err := c.CreateRecursive(p, nil, Persistent)
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	return nil
}

// Set writes data if the node's version equals version (-1: any).
func (c *Client) Set(p string, data []byte, version int32) (*zk.Stat, error) {
	var st *zk.Stat
	if err := c.do("set", p, func(abs string) (err error) {
		st, err = c.conn.Set(abs, data, version)
		return err
	}); err != nil {
		return nil, err
	}
	return st, nil
}

// Delete deletes a node if its version equals version (-1: any).
func (c *Client) Delete(p string, version int32) error {
	return c.do("delete", p, func(abs string) error { return c.conn.Delete(abs, version) })
}

// DeleteRecursive deletes p and its subtree depth-first, any-version,
// tolerating nodes that vanish meanwhile. A missing p is not an error.
func (c *Client) DeleteRecursive(p string) error {
	return c.deleteRecursive(p, func(q string) error { return c.Delete(q, -1) })
}

func (c *Client) deleteRecursive(p string, del func(string) error) error {
	kids, err := c.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := c.deleteRecursive(joinPath(p, k), del); err != nil {
			return err
		}
	}
	if err := del(p); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}

func joinPath(p, child string) string {
	if p == "/" {
		return "/" + child
	}
	return p + "/" + child
}

// Op constructors for Multi and fencedMulti. Paths are chroot-relative.

// CreateOp creates a node in a multi; nil data means null data.
func CreateOp(p string, data []byte, flags int32) *zk.CreateRequest {
	return &zk.CreateRequest{Path: p, Data: data, Flags: flags}
}

// SetOp sets data in a multi (version -1: any).
func SetOp(p string, data []byte, version int32) *zk.SetDataRequest {
	return &zk.SetDataRequest{Path: p, Data: data, Version: version}
}

// DeleteOp deletes a node in a multi (version -1: any).
func DeleteOp(p string, version int32) *zk.DeleteRequest {
	return &zk.DeleteRequest{Path: p, Version: version}
}

// CheckOp checks a node's version in a multi.
func CheckOp(p string, version int32) *zk.CheckVersionRequest {
	return &zk.CheckVersionRequest{Path: p, Version: version}
}

// Multi runs ops atomically. Ops are *zk.CreateRequest, *zk.SetDataRequest,
// *zk.DeleteRequest or *zk.CheckVersionRequest with chroot-relative paths (a
// nil Acl on a create gets the default ACL). The returned error is the first
// failing op's error; per-op results are in the responses, with created
// paths made chroot-relative.
func (c *Client) Multi(ops ...any) ([]zk.MultiResponse, error) {
	abs := make([]any, len(ops))
	for i, op := range ops {
		switch o := op.(type) {
		case *zk.CreateRequest:
			acl := o.Acl
			if acl == nil {
				acl = c.aclFor(o.Path)
			}
			abs[i] = &zk.CreateRequest{Path: c.abs(o.Path), Data: o.Data, Acl: acl, Flags: o.Flags}
		case *zk.SetDataRequest:
			abs[i] = &zk.SetDataRequest{Path: c.abs(o.Path), Data: o.Data, Version: o.Version}
		case *zk.DeleteRequest:
			abs[i] = &zk.DeleteRequest{Path: c.abs(o.Path), Version: o.Version}
		case *zk.CheckVersionRequest:
			abs[i] = &zk.CheckVersionRequest{Path: c.abs(o.Path), Version: o.Version}
		default:
			return nil, fmt.Errorf("zkclient: multi: unsupported op %T", op)
		}
	}
	var res []zk.MultiResponse
	err := c.retry(func() (err error) {
		res, err = c.conn.Multi(abs...)
		if err != nil && len(res) > 0 && !retryable(err) {
			return nil // per-op results carry the outcome
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("zkclient: multi: %w", err)
	}
	var first error
	for i := range res {
		if res[i].String != "" {
			res[i].String = c.rel(res[i].String)
		}
		if first == nil && res[i].Error != nil {
			first = res[i].Error
		}
	}
	if first != nil {
		return res, fmt.Errorf("zkclient: multi: %w", first)
	}
	return res, nil
}

// fencedMulti runs multi(check(/controller_epoch, epochZkVersion), ops...):
// the controller's fenced write. A failed check returns ErrControllerMoved;
// otherwise the first failing op's error (e.g. zk.ErrBadVersion on a state
// znode) is returned. The results exclude the check op.
func (c *Client) fencedMulti(epochZkVersion int32, ops ...any) ([]zk.MultiResponse, error) {
	all := append([]any{CheckOp("/controller_epoch", epochZkVersion)}, ops...)
	res, err := c.Multi(all...)
	if err == nil {
		return res[1:], nil
	}
	if len(res) == 0 {
		return nil, err
	}
	if cerr := res[0].Error; cerr != nil {
		if errors.Is(cerr, zk.ErrBadVersion) {
			return nil, fmt.Errorf("%w: /controller_epoch version is no longer %d", ErrControllerMoved, epochZkVersion)
		}
		return nil, fmt.Errorf("zkclient: fenced multi: controller epoch check: %w", cerr)
	}
	for i := 1; i < len(res); i++ {
		if res[i].Error != nil && !isRuntimeInconsistency(res[i].Error) {
			return res[1:], fmt.Errorf("zkclient: fenced %s: %w", describeOp(ops[i-1]), res[i].Error)
		}
	}
	return res[1:], err
}

// isRuntimeInconsistency matches the code ZooKeeper reports for the ops of a
// failed multi that did not themselves fail.
func isRuntimeInconsistency(err error) bool {
	return err != nil && strings.HasSuffix(err.Error(), "error: -2")
}

func describeOp(op any) string {
	switch o := op.(type) {
	case *zk.CreateRequest:
		return "create " + o.Path
	case *zk.SetDataRequest:
		return "set " + o.Path
	case *zk.DeleteRequest:
		return "delete " + o.Path
	case *zk.CheckVersionRequest:
		return "check " + o.Path
	}
	return fmt.Sprintf("%T", op)
}

// fencedOne runs one fenced op and returns its response.
func (c *Client) fencedOne(epochZkVersion int32, op any) (zk.MultiResponse, error) {
	res, err := c.fencedMulti(epochZkVersion, op)
	if err != nil {
		return zk.MultiResponse{}, err
	}
	return res[0], nil
}
