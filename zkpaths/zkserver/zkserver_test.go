package zkserver

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func TestMain(m *testing.M) { os.Exit(RunShared(m)) }

func TestSharedServerServesStandalone(t *testing.T) {
	s, err := Shared()
	if err != nil {
		t.Fatalf("shared server: %v", err)
	}
	mode, err := Mode(s.Addr(), 2*time.Second)
	if err != nil {
		t.Fatalf("srvr: %v", err)
	}
	if mode != "standalone" {
		t.Fatalf("mode = %q, want standalone", mode)
	}
	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") {
		t.Fatalf("addr %q is not loopback", s.Addr())
	}
	if got := s.ConnectString("/kafka"); got != s.Addr()+"/kafka" {
		t.Fatalf("ConnectString = %q", got)
	}
	again, _ := Shared()
	if again != s {
		t.Fatalf("Shared returned a different server the second time")
	}
	ruok, err := FourLetterWord(s.Addr(), "ruok", 2*time.Second)
	if err != nil || ruok != "imok" {
		t.Fatalf("ruok = %q, %v", ruok, err)
	}
}

func TestChrootIsUniquePerCall(t *testing.T) {
	a, b := Chroot(t), Chroot(t)
	if a == b || !strings.HasPrefix(a, "/test-TestChrootIsUniquePerCall-") {
		t.Fatalf("chroots %q %q", a, b)
	}
}

func TestKillAndRestart(t *testing.T) {
	s := StartT(t)
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if s.Running() {
		t.Fatalf("still running after Kill")
	}
	if _, err := Mode(s.Addr(), 500*time.Millisecond); err == nil {
		t.Fatalf("killed server still answers srvr")
	}
	if err := s.Restart(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if mode, err := Mode(s.Addr(), 2*time.Second); err != nil || mode != "standalone" {
		t.Fatalf("after restart: %q, %v", mode, err)
	}
	dir := s.Dir()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temp dir %s not removed: %v", dir, err)
	}
}

func TestMissingInstallationIsAnErrorWithHint(t *testing.T) {
	_, err := Start(Options{Jar: "/nonexistent/zookeeper.jar"})
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("err = %v, want ErrNotInstalled", err)
	}
	if !strings.Contains(err.Error(), "apt-get install -y zookeeper default-jre-headless") {
		t.Fatalf("error lacks install hint: %v", err)
	}
	_, err = Start(Options{Java: "/nonexistent/java"})
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("err = %v, want ErrNotInstalled", err)
	}
}

func TestZkCliSeesServer(t *testing.T) {
	s, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	out, err := ZkCli(s.Addr(), 60*time.Second, "ls", "/")
	if err != nil {
		t.Fatalf("zkCli: %v", err)
	}
	if !strings.Contains(out, "zookeeper") {
		t.Fatalf("ls / = %q, want it to list zookeeper", out)
	}
}

func TestEnsembleOfThree(t *testing.T) {
	e, err := StartEnsemble(3, Options{})
	if err != nil {
		t.Fatalf("ensemble: %v", err)
	}
	defer e.Stop()
	leaders := 0
	modes := e.Modes()
	for i, s := range e.Servers {
		mode := modes[i]
		switch mode {
		case "leader":
			leaders++
		case "follower":
		default:
			t.Fatalf("%s mode %q", s.Addr(), mode)
		}
	}
	if leaders != 1 {
		t.Fatalf("%d leaders", leaders)
	}
	cs := e.ConnectString("/kafka")
	if strings.Count(cs, ",") != 2 || !strings.HasSuffix(cs, "/kafka") {
		t.Fatalf("connect string %q", cs)
	}

	// The ensemble's view of one client: its session and negotiated timeout
	// (cons), its ephemeral node (dump, from the leader) and its watches
	// (wchc, from the member it is connected to).
	conn, _, err := zk.Connect([]string{e.Servers[0].Addr()}, 4*time.Second, zk.WithLogInfo(false), zk.WithLogger(nopLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for conn.State() != zk.StateHasSession {
		if time.Now().After(deadline) {
			t.Fatal("no session")
		}
		time.Sleep(10 * time.Millisecond)
	}
	sid := conn.SessionID()
	acl := zk.WorldACL(zk.PermAll)
	if _, err := conn.Create("/e", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := conn.ExistsW("/missing"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := conn.GetW("/e"); err != nil {
		t.Fatal(err)
	}
	// A child watch is not reported: ZooKeeper's wchc, wchp and wchs list
	// the data (and exists) watches only.
	if _, _, _, err := conn.ChildrenW("/"); err != nil {
		t.Fatal(err)
	}
	// The leader lists a session among its live ones once its session
	// tracker has taken it in, which a loaded machine can delay past the
	// ephemeral's creation: wait for it (bounded), then check both.
	var d DumpInfo
	for deadline := time.Now().Add(20 * time.Second); ; {
		var err error
		if d, err = e.Dump(); err != nil {
			t.Fatal(err)
		}
		if d.Sessions[sid] || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !d.Sessions[sid] || !slices.Equal(d.Ephemerals[sid], []string{"/e"}) {
		t.Errorf("dump: session 0x%x alive %v, ephemerals %q", sid, d.Sessions[sid], d.Ephemerals[sid])
	}
	w, err := e.Watches()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w[sid], []string{"/e", "/missing"}) {
		t.Errorf("wchc: session 0x%x watches %q", sid, w[sid])
	}
	conns, err := e.Connections()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(conns, func(c ConnInfo) bool { return c.SessionID == sid && c.Timeout == 4*time.Second }) {
		t.Errorf("cons: no connection of session 0x%x with timeout 4s in %+v", sid, conns)
	}

	// A paused follower stops serving; resumed, it serves again.
	leader, err := e.Leader(5 * time.Second)
	if err != nil || modes[leader] != "leader" {
		t.Fatalf("Leader() = %d, %v; modes %q", leader, err, modes)
	}
	f := (leader + 1) % 3
	if err := e.Servers[f].Pause(); err != nil {
		t.Fatal(err)
	}
	if m := e.Modes()[f]; m != "" {
		t.Errorf("paused member %d answers srvr with mode %q", f+1, m)
	}
	if err := e.EnsureServing(30 * time.Second); err != nil {
		t.Fatalf("after resuming member %d: %v", f+1, err)
	}
}

func TestProxyExpireSession(t *testing.T) {
	s, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProxy(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	conn, _, err := zk.Connect([]string{p.Addr()}, time.Second, zk.WithLogInfo(false), zk.WithLogger(nopLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for conn.State() != zk.StateHasSession {
		if time.Now().After(deadline) {
			t.Fatal("no session")
		}
		time.Sleep(10 * time.Millisecond)
	}
	sid := conn.SessionID()
	if alive, err := SessionAlive(s.Addr(), sid); err != nil || !alive {
		t.Fatalf("fresh session not alive: %v %v", alive, err)
	}
	if err := p.ExpireSession(sid, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if alive, _ := SessionAlive(s.Addr(), sid); alive {
		t.Fatal("session still alive")
	}
	// The client reconnects through the resumed proxy with a new session.
	for conn.SessionID() == sid || conn.State() != zk.StateHasSession {
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatal("no new session after expiry")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}
