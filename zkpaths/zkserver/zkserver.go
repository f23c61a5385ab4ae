package zkserver

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Locations of Debian's ZooKeeper package (zookeeper 3.8) and a logging
// binding so the server log is readable.
const (
	DefaultJar     = "/usr/share/java/zookeeper.jar"
	slf4jLog4jJar  = "/usr/share/java/slf4j-log4j12.jar"
	log4jJar       = "/usr/share/java/log4j-1.2.jar"
	mainClass      = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
	installHint    = "apt-get install -y zookeeper default-jre-headless"
	DefaultZkCli   = "/usr/share/zookeeper/bin/zkCli.sh"
	defaultStartTO = 60 * time.Second
)

// ErrNotInstalled is returned (wrapped, with what is missing) when Java or
// the ZooKeeper jar cannot be found.
var ErrNotInstalled = errors.New("zkserver: ZooKeeper is not installed; run: " + installHint)

// Options configure a server. The zero value is fine for tests.
type Options struct {
	// Dir is the working directory (config, data, log). Default: a new
	// temporary directory, removed by Stop.
	Dir string
	// TickTime is ZooKeeper's tickTime (default 500ms, so the minimum session
	// timeout is 1s).
	TickTime time.Duration
	// MaxSessionTimeout is maxSessionTimeout (default 30s).
	MaxSessionTimeout time.Duration
	// StartTimeout bounds the wait for readiness (default 60s).
	StartTimeout time.Duration
	// Java is the java binary (default: "java" from PATH).
	Java string
	// Jar is the ZooKeeper server jar (default DefaultJar).
	Jar string
	// ClientPort is the client port (default: a free loopback port).
	ClientPort int
	// Secure adds a TLS client port and authentication settings (see
	// SecureOptions); nil: plaintext only.
	Secure *SecureOptions
}

func (o *Options) defaults() {
	if o.TickTime <= 0 {
		o.TickTime = 500 * time.Millisecond
	}
	if o.MaxSessionTimeout <= 0 {
		o.MaxSessionTimeout = 30 * time.Second
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = defaultStartTO
	}
	if o.Java == "" {
		o.Java = "java"
	}
	if o.Jar == "" {
		o.Jar = DefaultJar
	}
}

// CheckInstalled verifies that Java and the ZooKeeper jar are available and
// otherwise returns an error telling what to install.
func CheckInstalled() error {
	o := Options{}
	o.defaults()
	return checkInstalled(o)
}

func checkInstalled(o Options) error {
	if _, err := exec.LookPath(o.Java); err != nil {
		return fmt.Errorf("%w (java not found: %v)", ErrNotInstalled, err)
	}
	if _, err := os.Stat(o.Jar); err != nil {
		return fmt.Errorf("%w (%s missing)", ErrNotInstalled, o.Jar)
	}
	return nil
}

// peer describes one ensemble member in the config.
type peer struct {
	id                     int
	peerPort, electionPort int
}

// Server is one running ZooKeeper JVM (QuorumPeerMain), standalone or an
// ensemble member.
type Server struct {
	opts    Options
	dir     string
	ownsDir bool
	port    int
	// securePort is the TLS client port (0: none).
	securePort int
	myID       int
	peers      []peer

	// mu guards the following.
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// Start launches a standalone server on a free 127.0.0.1 port and waits
// until it answers "srvr" with a Mode line.
func Start(opts Options) (*Server, error) {
	opts.defaults()
	if err := checkInstalled(opts); err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := newServer(opts, 0, nil)
		if err != nil {
			return nil, err
		}
		if err := s.launch(); err != nil {
			return nil, err
		}
		if err := s.waitReady(opts.StartTimeout); err != nil {
			lastErr = err
			s.Stop()
			if opts.ClientPort != 0 {
				break
			}
			continue // maybe the port was taken meanwhile
		}
		return s, nil
	}
	return nil, lastErr
}

// StartT starts a server for one test and stops it in t.Cleanup; failure to
// start (including a missing installation) fails the test.
func StartT(t interface {
	Helper()
	Fatalf(string, ...any)
	Cleanup(func())
}) *Server {
	t.Helper()
	s, err := Start(Options{})
	if err != nil {
		t.Fatalf("start ZooKeeper: %v", err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

func newServer(opts Options, myID int, peers []peer) (*Server, error) {
	s := &Server{opts: opts, myID: myID, peers: peers, port: opts.ClientPort}
	if opts.Dir != "" {
		s.dir = opts.Dir
		if err := os.MkdirAll(s.dir, 0o755); err != nil {
			return nil, err
		}
	} else {
		d, err := os.MkdirTemp("", "klassik-zk-")
		if err != nil {
			return nil, err
		}
		s.dir, s.ownsDir = d, true
	}
	if s.port == 0 {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		s.port = p
	}
	if opts.Secure != nil && opts.Secure.KeyStore != "" {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		s.securePort = p
	}
	if err := s.writeConfig(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) writeConfig() error {
	data := filepath.Join(s.dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	tick := int(s.opts.TickTime / time.Millisecond)
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\ninitLimit=20\nsyncLimit=10\n", tick)
	fmt.Fprintf(&b, "dataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n", data, s.port)
	fmt.Fprintf(&b, "admin.enableServer=false\n4lw.commands.whitelist=*\n")
	fmt.Fprintf(&b, "maxSessionTimeout=%d\nmaxClientCnxns=0\n", int(s.opts.MaxSessionTimeout/time.Millisecond))
	b.WriteString(s.opts.Secure.secureConfig(s.securePort))
	if len(s.peers) > 0 {
		for _, p := range s.peers {
			fmt.Fprintf(&b, "server.%d=127.0.0.1:%d:%d\n", p.id, p.peerPort, p.electionPort)
		}
		if err := os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.Itoa(s.myID)+"\n"), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(s.dir, "zoo.cfg"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	log4j := "log4j.rootLogger=INFO, F\n" +
		"log4j.appender.F=org.apache.log4j.FileAppender\n" +
		"log4j.appender.F.File=" + s.LogPath() + "\n" +
		"log4j.appender.F.layout=org.apache.log4j.PatternLayout\n" +
		"log4j.appender.F.layout.ConversionPattern=%d{ISO8601} %p [%t] %c{1}: %m%n\n"
	return os.WriteFile(filepath.Join(s.dir, "log4j.properties"), []byte(log4j), 0o644)
}

func (s *Server) launch() error {
	cp := s.opts.Jar
	for _, j := range []string{slf4jLog4jJar, log4jJar} {
		if _, err := os.Stat(j); err == nil {
			cp += ":" + j
		}
	}
	extra, err := s.opts.Secure.classPath()
	if err != nil {
		return err
	}
	if extra != "" {
		cp += ":" + extra
	}
	out, err := os.OpenFile(filepath.Join(s.dir, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	args := []string{"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzookeeper.admin.enableServer=false",
		"-Dzookeeper.log.dir=" + s.dir,
		"-Dlog4j.configuration=file:" + filepath.Join(s.dir, "log4j.properties")}
	args = append(args, s.opts.Secure.jvmFlags()...)
	args = append(args, "-cp", cp, mainClass, filepath.Join(s.dir, "zoo.cfg"))
	cmd := exec.Command(s.opts.Java, args...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("zkserver: start java: %w", err)
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	// The waiter goroutine owns cmd.Wait; it ends when the JVM exits (Stop
	// and Kill make sure it does).
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(done)
	}()
	return nil
}

func (s *Server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	for {
		mode, err := Mode(s.Addr(), time.Second)
		if err == nil && mode != "" {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("zkserver: ZooKeeper exited during start-up; see %s and %s", s.LogPath(), filepath.Join(s.dir, "stdout.log"))
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("zkserver: ZooKeeper on %s not serving after %v (last: %v); see %s", s.Addr(), timeout, err, s.LogPath())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Addr is "127.0.0.1:<clientPort>".
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Port is the client port.
func (s *Server) Port() int { return s.port }

// Dir is the server's working directory.
func (s *Server) Dir() string { return s.dir }

// LogPath is the server log file.
func (s *Server) LogPath() string { return filepath.Join(s.dir, "zookeeper.log") }

// ConnectString returns a zookeeper.connect value for this server, with the
// chroot appended if non-empty (it must start with '/').
func (s *Server) ConnectString(chroot string) string { return s.Addr() + chroot }

// Running reports whether the JVM is alive.
func (s *Server) Running() bool {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Stop terminates the JVM with SIGTERM (SIGKILL after 10s), waits for it and
// removes a temporary directory. Safe to call more than once.
func (s *Server) Stop() error {
	s.terminate(syscall.SIGTERM, 10*time.Second)
	if s.ownsDir {
		return os.RemoveAll(s.dir)
	}
	return nil
}

// Kill ends the JVM with SIGKILL and waits for it; the data directory is
// kept so Restart can bring the same server back.
func (s *Server) Kill() error {
	s.terminate(syscall.SIGKILL, 10*time.Second)
	return nil
}

// Restart starts a stopped or killed server again on the same port and data
// directory (sessions survive if the restart is quicker than their timeout).
func (s *Server) Restart() error {
	if s.Running() {
		return fmt.Errorf("zkserver: %s is still running", s.Addr())
	}
	if err := s.launch(); err != nil {
		return err
	}
	if len(s.peers) > 0 {
		// An ensemble member alone may not serve until a quorum forms.
		return nil
	}
	return s.waitReady(s.opts.StartTimeout)
}

func (s *Server) terminate(sig syscall.Signal, grace time.Duration) {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	_ = cmd.Process.Signal(sig)
	// A paused (SIGSTOP) server handles SIGTERM only once continued.
	_ = cmd.Process.Signal(syscall.SIGCONT)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		_ = cmd.Process.Kill()
		<-done
	}
}

// FourLetterWord sends a ZooKeeper four-letter command (e.g. "srvr", "ruok",
// "mntr") to addr and returns the reply.
func FourLetterWord(addr, cmd string, timeout time.Duration) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if _, err := conn.Write([]byte(cmd)); err != nil {
		return "", err
	}
	b, err := io.ReadAll(conn)
	if err != nil && len(b) == 0 {
		return "", err
	}
	return string(b), nil
}

// Mode returns the "Mode:" value of srvr (standalone, leader or follower),
// or an error if the server is not serving.
func Mode(addr string, timeout time.Duration) (string, error) {
	out, err := FourLetterWord(addr, "srvr", timeout)
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("zkserver: not serving: %q", strings.TrimSpace(out))
}

// RandomSuffix returns n random hex characters (for chroots and names).
func RandomSuffix(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

// ZkCli runs Debian's zkCli.sh against addr with one command (for example
// "get", "/controller") and returns its standard output without the
// connection banner and WATCHER lines, i.e. what a zkCli user reads as the
// command's answer. addr may carry a chroot ("127.0.0.1:2181/kafka").
func ZkCli(addr string, timeout time.Duration, command ...string) (string, error) {
	out, _, err := runZkCli(addr, timeout, command, "")
	return out, err
}

// ZkCliScript feeds several commands (one per line) to one zkCli.sh
// process, which saves a JVM start per command, and returns the filtered
// output of all of them. Empty output lines (e.g. a zero-length node) are
// dropped along with the banner.
func ZkCliScript(addr string, timeout time.Duration, commands ...string) (string, error) {
	out, _, err := runZkCli(addr, timeout, nil, strings.Join(commands, "\n")+"\nquit\n")
	return out, err
}

// ZkCliScriptStderr is ZkCliScript that also returns what zkCli printed on
// standard error, where it reports a failed command ("Insufficient
// permission : <path>", "Authentication is not valid : <path>").
func ZkCliScriptStderr(addr string, timeout time.Duration, commands ...string) (stdout, stderr string, err error) {
	return runZkCli(addr, timeout, nil, strings.Join(commands, "\n")+"\nquit\n")
}

func runZkCli(addr string, timeout time.Duration, command []string, stdin string) (string, string, error) {
	if _, err := os.Stat(DefaultZkCli); err != nil {
		return "", "", fmt.Errorf("%w (%s missing)", ErrNotInstalled, DefaultZkCli)
	}
	args := append([]string{"-server", addr}, command...)
	cmd := exec.Command(DefaultZkCli, args...)
	// Keep the CLI's log4j quiet and off the system log directory.
	cmd.Env = append(os.Environ(), "ZOO_LOG_DIR="+os.TempDir(), "ZOO_LOG4J_PROP=ERROR,CONSOLE", "CLIENT_JVMFLAGS=-XX:TieredStopAtLevel=1")
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return "", "", fmt.Errorf("zkserver: zkCli: %w", err)
	}
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-waitDone:
		if err != nil {
			return stdout.String(), stderr.String(), fmt.Errorf("zkserver: zkCli %v: %w: %s", command, err, stderr.String())
		}
	case <-t.C:
		_ = cmd.Process.Kill()
		<-waitDone
		return "", "", fmt.Errorf("zkserver: zkCli %v timed out after %v", command, timeout)
	}
	var out []string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if line == "" || strings.HasPrefix(line, "WATCHER::") || strings.HasPrefix(line, "WatchedEvent ") ||
			strings.HasPrefix(line, "Connecting to ") || strings.HasPrefix(line, "SLF4J:") ||
			strings.HasPrefix(line, "Welcome to ZooKeeper!") || strings.HasPrefix(line, "JLine support is") {
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n"), stderr.String(), nil
}
