package controller

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
)

// memZK is an in-memory zkAPI for unit tests of the controller's handlers:
// versions, czxids, fenced multis against /controller_epoch and watches
// that re-arm themselves (callbacks run synchronously, so they only
// enqueue, as in production). Everything that claims ZooKeeper behaviour is
// also covered by the integration tests on a real server.
type memZK struct {
	// mu guards the following.
	mu      sync.Mutex
	nodes   map[string]*memNode
	zxid    int64
	watches map[string][]*memWatch
	log     []string // mutations, for transcripts
}

type memNode struct {
	data    []byte
	version int32
	czxid   int64
}

type memWatch struct {
	children bool
	fn       func()
	dead     bool
}

func newMemZK() *memZK {
	z := &memZK{nodes: map[string]*memNode{"/": {}}, watches: map[string][]*memWatch{}}
	for _, p := range []string{"/brokers", "/brokers/ids", "/brokers/topics", "/admin", "/admin/delete_topics", "/config", "/config/topics", "/isr_change_notification", "/log_dir_event_notification"} {
		z.nodes[p] = &memNode{}
	}
	return z
}

func (z *memZK) childrenLocked(p string) []string {
	var out []string
	prefix := strings.TrimSuffix(p, "/") + "/"
	for q := range z.nodes {
		if strings.HasPrefix(q, prefix) && !strings.Contains(q[len(prefix):], "/") && q != "/" {
			out = append(out, q[len(prefix):])
		}
	}
	sort.Strings(out)
	return out
}

// fire collects the callbacks for a change of p (data) and its parent
// (children); they run after the lock is released.
func (z *memZK) fireLocked(p string, childrenChanged bool) []func() {
	var fns []func()
	for _, w := range z.watches[p] {
		if !w.children && !w.dead {
			fns = append(fns, w.fn)
		}
	}
	if childrenChanged {
		for _, w := range z.watches[path.Dir(p)] {
			if w.children && !w.dead {
				fns = append(fns, w.fn)
			}
		}
	}
	return fns
}

func run(fns []func()) {
	for _, f := range fns {
		f()
	}
}

func (z *memZK) GetData(p string) ([]byte, zkStat, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	n, ok := z.nodes[p]
	if !ok {
		return nil, zkStat{}, fmt.Errorf("%w: %s", errNoNode, p)
	}
	return slices.Clone(n.data), zkStat{Version: n.version, Czxid: n.czxid}, nil
}

func (z *memZK) GetChildren(p string) ([]string, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if _, ok := z.nodes[p]; !ok {
		return nil, fmt.Errorf("%w: %s", errNoNode, p)
	}
	return z.childrenLocked(p), nil
}

func (z *memZK) watch(p string, children bool, fn func()) func() {
	z.mu.Lock()
	defer z.mu.Unlock()
	w := &memWatch{children: children, fn: fn}
	z.watches[p] = append(z.watches[p], w)
	return func() {
		z.mu.Lock()
		w.dead = true
		z.mu.Unlock()
	}
}

func (z *memZK) WatchData(p string, fn func()) func()     { return z.watch(p, false, fn) }
func (z *memZK) WatchChildren(p string, fn func()) func() { return z.watch(p, true, fn) }

// --- mutations (also used by tests acting as admins and brokers) ---

func (z *memZK) createLocked(p string, data []byte) ([]func(), error) {
	if _, ok := z.nodes[p]; ok {
		return nil, fmt.Errorf("%w: %s", errNodeExists, p)
	}
	if _, ok := z.nodes[path.Dir(p)]; !ok {
		return nil, fmt.Errorf("%w: parent of %s", errNoNode, p)
	}
	z.zxid++
	z.nodes[p] = &memNode{data: slices.Clone(data), czxid: z.zxid}
	return z.fireLocked(p, true), nil
}

func (z *memZK) setLocked(p string, data []byte, version int32) (int32, []func(), error) {
	n, ok := z.nodes[p]
	if !ok {
		return 0, nil, fmt.Errorf("%w: %s", errNoNode, p)
	}
	if version >= 0 && n.version != version {
		return 0, nil, fmt.Errorf("%w: %s at %d, expected %d", errBadVersion, p, n.version, version)
	}
	z.zxid++
	n.data = slices.Clone(data)
	n.version++
	return n.version, z.fireLocked(p, false), nil
}

func (z *memZK) deleteLocked(p string, version int32) ([]func(), error) {
	n, ok := z.nodes[p]
	if !ok {
		return nil, fmt.Errorf("%w: %s", errNoNode, p)
	}
	if len(z.childrenLocked(p)) > 0 {
		return nil, fmt.Errorf("controller test: %s not empty", p)
	}
	if version >= 0 && n.version != version {
		return nil, fmt.Errorf("%w: %s", errBadVersion, p)
	}
	z.zxid++
	delete(z.nodes, p)
	return z.fireLocked(p, true), nil
}

func (z *memZK) create(p string, data []byte) error {
	z.mu.Lock()
	fns, err := z.createLocked(p, data)
	z.mu.Unlock()
	run(fns)
	return err
}

func (z *memZK) set(p string, data []byte) error {
	z.mu.Lock()
	_, fns, err := z.setLocked(p, data, -1)
	z.mu.Unlock()
	run(fns)
	return err
}

func (z *memZK) delete(p string) error {
	z.mu.Lock()
	fns, err := z.deleteLocked(p, -1)
	z.mu.Unlock()
	run(fns)
	return err
}

func (z *memZK) checkEpochLocked(v int32) error {
	n, ok := z.nodes["/controller_epoch"]
	if !ok || n.version != v {
		return fmt.Errorf("%w: /controller_epoch version is not %d", ErrControllerMoved, v)
	}
	return nil
}

func (z *memZK) RegisterControllerAndIncrementEpoch(id int32) (int32, int32, error) {
	z.mu.Lock()
	if _, ok := z.nodes["/controller_epoch"]; !ok {
		z.nodes["/controller_epoch"] = &memNode{data: []byte("0")}
	}
	if _, ok := z.nodes["/controller"]; ok {
		z.mu.Unlock()
		return 0, 0, fmt.Errorf("%w: /controller exists", ErrControllerMoved)
	}
	e := z.nodes["/controller_epoch"]
	var cur int32
	fmt.Sscan(string(e.data), &cur)
	fns, _ := z.createLocked("/controller", []byte(fmt.Sprintf(`{"version":2,"brokerid":%d,"timestamp":"0","kraftControllerEpoch":-1}`, id)))
	v, more, _ := z.setLocked("/controller_epoch", []byte(fmt.Sprint(cur+1)), e.version)
	z.mu.Unlock()
	run(append(fns, more...))
	return cur + 1, v, nil
}

func (z *memZK) FencedCreate(v int32, p string, data []byte) error {
	z.mu.Lock()
	if err := z.checkEpochLocked(v); err != nil {
		z.mu.Unlock()
		return err
	}
	fns, err := z.createLocked(p, data)
	if err == nil {
		z.log = append(z.log, fmt.Sprintf("create %s %s", p, data))
	}
	z.mu.Unlock()
	run(fns)
	return err
}

func (z *memZK) FencedSet(v int32, p string, data []byte, version int32) (int32, error) {
	z.mu.Lock()
	if err := z.checkEpochLocked(v); err != nil {
		z.mu.Unlock()
		return 0, err
	}
	nv, fns, err := z.setLocked(p, data, version)
	if err == nil {
		z.log = append(z.log, fmt.Sprintf("set %s %s", p, data))
	}
	z.mu.Unlock()
	run(fns)
	return nv, err
}

func (z *memZK) FencedDelete(v int32, p string, version int32) error {
	z.mu.Lock()
	if err := z.checkEpochLocked(v); err != nil {
		z.mu.Unlock()
		return err
	}
	fns, err := z.deleteLocked(p, version)
	if err == nil {
		z.log = append(z.log, "delete "+p)
	}
	z.mu.Unlock()
	run(fns)
	return err
}

func (z *memZK) FencedDeleteRecursive(v int32, p string) error {
	kids, err := z.GetChildren(p)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := z.FencedDeleteRecursive(v, p+"/"+k); err != nil {
			return err
		}
	}
	return z.FencedDelete(v, p, -1)
}

func (z *memZK) OnSessionExpired(fn func()) func() { return func() {} }
func (z *memZK) OnNewSession(fn func()) func()     { return func() {} }

func (z *memZK) takeLog() []string {
	z.mu.Lock()
	defer z.mu.Unlock()
	out := z.log
	z.log = nil
	return out
}
