package zkserver

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Ensemble is a quorum of N servers on loopback.
type Ensemble struct {
	Servers []*Server
}

// StartEnsemble starts n (odd, >= 3 for a real quorum) servers and waits
// until every one of them serves as leader or follower.
func StartEnsemble(n int, opts Options) (*Ensemble, error) {
	opts.defaults()
	if err := checkInstalled(opts); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("zkserver: ensemble size %d", n)
	}
	peers := make([]peer, n)
	for i := range peers {
		pp, err := FreePort()
		if err != nil {
			return nil, err
		}
		ep, err := FreePort()
		if err != nil {
			return nil, err
		}
		peers[i] = peer{id: i + 1, peerPort: pp, electionPort: ep}
	}
	e := &Ensemble{}
	for i := 0; i < n; i++ {
		o := opts
		o.Dir = ""
		o.ClientPort = 0
		s, err := newServer(o, i+1, peers)
		if err != nil {
			e.Stop()
			return nil, err
		}
		e.Servers = append(e.Servers, s)
		if err := s.launch(); err != nil {
			e.Stop()
			return nil, err
		}
	}
	for _, s := range e.Servers {
		if err := s.waitReady(opts.StartTimeout); err != nil {
			e.Stop()
			return nil, err
		}
	}
	return e, nil
}

// ConnectString lists every member, with the chroot appended.
func (e *Ensemble) ConnectString(chroot string) string {
	addrs := make([]string, len(e.Servers))
	for i, s := range e.Servers {
		addrs[i] = s.Addr()
	}
	return strings.Join(addrs, ",") + chroot
}

// Stop stops every member.
func (e *Ensemble) Stop() {
	for _, s := range e.Servers {
		s.Stop()
	}
}

// Modes returns each member's srvr mode ("leader", "follower"), "" for a
// member that does not serve (down, paused, or without a quorum).
func (e *Ensemble) Modes() []string {
	modes := make([]string, len(e.Servers))
	for i, s := range e.Servers {
		if !s.Running() {
			continue
		}
		modes[i], _ = Mode(s.Addr(), time.Second)
	}
	return modes
}

// Leader returns the index of the member that serves as leader, waiting up
// to timeout for one (after a kill, the survivors elect within a few ticks).
func (e *Ensemble) Leader(timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		for i, m := range e.Modes() {
			// A one-member Ensemble may wrap a standalone server, which
			// decides alone like a leader.
			if m == "leader" || m == "standalone" && len(e.Servers) == 1 {
				return i, nil
			}
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("zkserver: no ensemble leader within %v (modes %q)", timeout, e.Modes())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WaitServing waits until every member runs and serves, exactly one of them
// as leader: the state a test must leave a shared ensemble in.
func (e *Ensemble) WaitServing(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		modes := e.Modes()
		leaders, serving := 0, 0
		for _, m := range modes {
			switch m {
			case "leader":
				leaders++
				serving++
			case "standalone":
				if len(e.Servers) == 1 {
					leaders++
					serving++
				}
			case "follower":
				serving++
			}
		}
		if leaders == 1 && serving == len(e.Servers) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("zkserver: ensemble not serving within %v (modes %q)", timeout, modes)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Pause stops the member's JVM with SIGSTOP: it keeps its sockets but
// answers nothing, like a machine that froze. Resume continues it.
func (s *Server) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume continues a paused member with SIGCONT.
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil || !s.Running() {
		return fmt.Errorf("zkserver: %s is not running", s.Addr())
	}
	return cmd.Process.Signal(sig)
}

// The shared ensemble: one three-node quorum per test binary for the tests
// that fail ZooKeeper nodes, each test in its own chroot. A test that kills
// or pauses members must restore them (EnsureServing) before it ends.
var sharedEnsemble struct {
	mu  sync.Mutex
	e   *Ensemble
	err error
}

// SharedEnsemble returns the package-wide three-node ensemble, starting it
// on first use and waiting until every member serves (a previous test may
// have left a member restarting). It fails the test if the ensemble cannot
// start or recover.
func SharedEnsemble(t testing.TB) *Ensemble {
	t.Helper()
	sharedEnsemble.mu.Lock()
	if sharedEnsemble.e == nil && sharedEnsemble.err == nil {
		sharedEnsemble.e, sharedEnsemble.err = StartEnsemble(3, Options{})
	}
	e, err := sharedEnsemble.e, sharedEnsemble.err
	sharedEnsemble.mu.Unlock()
	if err != nil {
		t.Fatalf("shared ZooKeeper ensemble: %v", err)
	}
	if err := e.EnsureServing(60 * time.Second); err != nil {
		t.Fatalf("shared ZooKeeper ensemble: %v", err)
	}
	return e
}

// EnsureServing resumes every member (a paused one is continued), restarts
// every member that is down and waits until the ensemble serves with one
// leader.
func (e *Ensemble) EnsureServing(timeout time.Duration) error {
	var errs []error
	for _, s := range e.Servers {
		if s.Running() {
			_ = s.Resume()
			continue
		}
		if err := s.Restart(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return e.WaitServing(timeout)
}

func stopSharedEnsemble() {
	sharedEnsemble.mu.Lock()
	defer sharedEnsemble.mu.Unlock()
	if sharedEnsemble.e != nil {
		sharedEnsemble.e.Stop()
		sharedEnsemble.e = nil
	}
	sharedEnsemble.err = nil
}
