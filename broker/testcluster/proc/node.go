package proc

import (
	"errors"
	"sync"
	"syscall"
)

// Node is one member of a process cluster (a broker) over its restarts:
// the file every one of its processes appends its output to, and the
// latest process. Both process harnesses keep one per broker. Safe for
// concurrent use.
type Node struct {
	Output string // stdout and stderr of every process, appended

	// mu guards the following.
	mu sync.Mutex
	p  *Process // the latest process; nil before the first start
}

// Start starts s as the node's process, its output appended to Output; it
// refuses while the latest process is still running.
func (n *Node) Start(s Spec) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.p != nil && n.p.Running() {
		return errors.New("already running")
	}
	s.Output = n.Output
	p, err := Start(s)
	if err != nil {
		return err
	}
	n.p = p
	return nil
}

// Process is the latest process, which may have exited (nil before the
// first start).
func (n *Node) Process() *Process {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.p
}

// Running reports whether the latest process has not exited (a stopped
// process is running).
func (n *Node) Running() bool {
	p := n.Process()
	return p != nil && p.Running()
}

// Signal sends sig to the running process.
func (n *Node) Signal(sig syscall.Signal) error {
	p := n.Process()
	if p == nil || !p.Running() {
		return errors.New("not running")
	}
	return p.Signal(sig)
}

// Kill ends the latest process if it is still running (SIGKILL, then the
// wait for its exit); the owner calls it for every node at cleanup.
func (n *Node) Kill() {
	if p := n.Process(); p != nil && p.Running() {
		p.Kill()
	}
}
