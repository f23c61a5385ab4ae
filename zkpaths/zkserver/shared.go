package zkserver

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// One server per test binary, shared by all tests of a package; each test
// works in its own chroot.
var shared struct {
	mu  sync.Mutex
	srv *Server
	err error
}

// Shared returns the package-wide server, starting it on first use. A
// failed start is remembered and returned to every caller.
func Shared() (*Server, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = Start(Options{})
	}
	return shared.srv, shared.err
}

// StopShared stops the shared server if it was started.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv != nil {
		shared.srv.Stop()
		shared.srv = nil
	}
	shared.err = nil
}

// RunShared runs the tests and stops the shared server afterwards. Use it
// from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(zkserver.RunShared(m)) }
func RunShared(m *testing.M) int {
	defer StopShared()
	return m.Run()
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Chroot returns a fresh chroot for the test: "/test-<name>-<random>".
func Chroot(t testing.TB) string {
	name := unsafeChars.ReplaceAllString(t.Name(), "_")
	if len(name) > 60 {
		name = name[:60]
	}
	return "/test-" + strings.Trim(name, "_") + "-" + RandomSuffix(8)
}

// ConnectString returns a connect string to the shared server with a fresh
// chroot for t. It fails the test (never skips) if ZooKeeper cannot start,
// with the installation hint in the message.
func ConnectString(t testing.TB) string {
	t.Helper()
	s, err := Shared()
	if err != nil {
		t.Fatalf("shared ZooKeeper server: %v", err)
	}
	return s.ConnectString(Chroot(t))
}

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
