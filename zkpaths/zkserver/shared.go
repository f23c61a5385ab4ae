package zkserver

import (
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

// StopShared stops the shared server and the shared ensemble if they were
// started.
func StopShared() {
	stopSharedEnsemble()
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
