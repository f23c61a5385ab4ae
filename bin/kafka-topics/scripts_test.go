package main

// Tests of the bin/*.sh scripts that start tools and ZooKeeper. They live
// here because the scripts have no Go package of their own.

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// script runs bin/<name> with env added, bounded by a deadline.
func script(t *testing.T, env []string, name string, args ...string) (string, int) {
	t.Helper()
	return clitest.Command(t, env, filepath.Join("..", name), args...)
}

// tempRepo makes a throw-away module holding copies of the bin/*.sh scripts
// and the given Go tools (bin/<name>/main.go), so script tests do not
// depend on the rest of the working tree, which other changes may be
// editing while the tests run.
func tempRepo(t *testing.T, tools map[string]string) string {
	t.Helper()
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	scripts, err := filepath.Glob(filepath.Join("..", "*.sh"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts found: %v", err)
	}
	for _, sc := range scripts {
		data, err := os.ReadFile(sc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "bin", filepath.Base(sc)), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example.com/scripttest\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, src := range tools {
		writeTool(t, repo, name, src)
	}
	return repo
}

func writeTool(t *testing.T, repo, name, src string) {
	t.Helper()
	dir := filepath.Join(repo, "bin", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runIn runs <repo>/bin/<name> like script does for the real bin/.
func runIn(t *testing.T, repo string, env []string, name string, args ...string) (string, int) {
	t.Helper()
	return clitest.Command(t, env, filepath.Join(repo, "bin", name), args...)
}

const helloTool = `package main

import (
	"fmt"
	"os"
	"strings"
)

func main() { fmt.Println("hello v1", strings.Join(os.Args[1:], " ")) }
`

func TestRunClassBuildsOnlyWhenSourcesChange(t *testing.T) {
	repo := tempRepo(t, map[string]string{"hello": helloTool})
	build := filepath.Join(repo, "bin", ".build")
	out, code := runIn(t, repo, nil, "kafka-run-class.sh", "hello", "a", "b c")
	if code != 0 || out != "hello v1 a b c\n" {
		t.Fatalf("first run: %d %q", code, out)
	}
	bin := filepath.Join(build, "hello")
	st1, err := os.Stat(bin)
	if err != nil {
		t.Fatalf("binary not built into bin/.build: %v", err)
	}
	if _, err := os.Stat(bin + ".sources"); err != nil {
		t.Fatalf("no source hash stamp: %v", err)
	}
	if out, code = runIn(t, repo, nil, "kafka-run-class.sh", "hello"); code != 0 || out != "hello v1 \n" {
		t.Fatalf("second run: %d %q", code, out)
	}
	if st2, err := os.Stat(bin); err != nil || !st2.ModTime().Equal(st1.ModTime()) {
		t.Errorf("binary rebuilt although no source changed (%v)", err)
	}
	// Editing any source file of the module triggers a rebuild.
	writeTool(t, repo, "hello", strings.Replace(helloTool, "hello v1", "hello v2", 1))
	if out, code = runIn(t, repo, nil, "kafka-run-class.sh", "hello"); code != 0 || out != "hello v2 \n" {
		t.Errorf("after edit: %d %q", code, out)
	}
	// KLASSIK_BUILD_DIR moves the cache; KLASSIK_BUILD_ONLY builds without running.
	other := t.TempDir()
	if out, code = runIn(t, repo, []string{"KLASSIK_BUILD_DIR=" + other, "KLASSIK_BUILD_ONLY=1"}, "kafka-run-class.sh", "hello"); code != 0 || out != "" {
		t.Errorf("build only: %d %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(other, "hello")); err != nil {
		t.Errorf("KLASSIK_BUILD_DIR not used: %v", err)
	}
	// A compile error is reported and nothing stale is run.
	writeTool(t, repo, "hello", "package main\n\nfunc main() { undefined() }\n")
	if out, code = runIn(t, repo, nil, "kafka-run-class.sh", "hello"); code != 1 || !strings.Contains(out, "building bin/hello failed") {
		t.Errorf("compile error: %d %q", code, out)
	}
	if out, code = runIn(t, repo, nil, "kafka-run-class.sh", "no-such-tool"); code != 1 || !strings.Contains(out, "unknown tool 'no-such-tool'") {
		t.Errorf("unknown tool: %d %s", code, out)
	}
	if out, code = runIn(t, repo, nil, "kafka-run-class.sh"); code != 1 || !strings.Contains(out, "USAGE") {
		t.Errorf("no args: %d %s", code, out)
	}
}

// TestKafkaTopicsScript runs the real tool through the real scripts once.
func TestKafkaTopicsScript(t *testing.T) {
	out, code := script(t, []string{"KLASSIK_BUILD_DIR=" + t.TempDir()}, "kafka-topics.sh", "--version")
	if code != 0 || !strings.Contains(out, "Klassik") {
		t.Fatalf("kafka-topics.sh --version: %d\n%s", code, out)
	}
}

func TestServerScriptsUsage(t *testing.T) {
	env := []string{"KLASSIK_BUILD_DIR=" + t.TempDir(), "LOG_DIR=" + t.TempDir()}
	if out, code := script(t, env, "kafka-server-start.sh"); code != 1 || !strings.Contains(out, "USAGE:") || !strings.Contains(out, "[--override property=value]*") {
		t.Errorf("kafka-server-start.sh without args: %d %s", code, out)
	}
	if out, code := script(t, env, "kafka-server-start.sh", "-daemon"); code != 1 || !strings.Contains(out, "USAGE:") {
		t.Errorf("kafka-server-start.sh -daemon alone: %d %s", code, out)
	}
	if out, code := script(t, env, "kafka-server-stop.sh"); code != 1 || strings.TrimSpace(out) != "No kafka server to stop" {
		t.Errorf("kafka-server-stop.sh with nothing running: %d %s", code, out)
	}
	if out, code := script(t, env, "zookeeper-server-start.sh"); code != 1 || !strings.Contains(out, "USAGE:") {
		t.Errorf("zookeeper-server-start.sh without args: %d %s", code, out)
	}
	if out, code := script(t, env, "zookeeper-shell.sh"); code != 1 || !strings.Contains(out, "USAGE:") {
		t.Errorf("zookeeper-shell.sh without args: %d %s", code, out)
	}
}

// ruok sends ZooKeeper's "ruok" four-letter word.
func ruok(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("ruok")); err != nil {
		return false
	}
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.HasPrefix(line, "imok")
}

func TestZooKeeperScripts(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	port, err := zkserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cfg := filepath.Join(dir, "zookeeper.properties")
	props := fmt.Sprintf("dataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=*\ntickTime=500\n", filepath.Join(dir, "data"), port)
	if err := os.WriteFile(cfg, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"LOG_DIR=" + logs}
	out, code := script(t, env, "zookeeper-server-start.sh", "-daemon", cfg)
	if code != 0 || !strings.Contains(out, "Started ZooKeeper") {
		t.Fatalf("zookeeper-server-start.sh -daemon: %d\n%s", code, out)
	}
	pidData, err := os.ReadFile(filepath.Join(logs, "zookeeper.pid"))
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidData)))
	if err != nil {
		t.Fatalf("pid file %q: %v", pidData, err)
	}
	t.Cleanup(func() {
		// Only if the stop script failed: end our own JVM by its pid.
		if syscall.Kill(pid, 0) == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for !ruok(addr) {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(logs, "zookeeper.out"))
			t.Fatalf("ZooKeeper did not answer ruok within 60s; log:\n%s", log)
		}
		time.Sleep(200 * time.Millisecond)
	}

	if out, code = script(t, nil, "zookeeper-shell.sh", addr, "create", "/klassik", "hello"); code != 0 || out != "Created /klassik\n" {
		t.Errorf("zookeeper-shell.sh create: %d %q", code, out)
	}
	if out, code = script(t, nil, "zookeeper-shell.sh", addr, "get", "/klassik"); code != 0 || out != "hello\n" {
		t.Errorf("zookeeper-shell.sh get: %d %q", code, out)
	}
	if out, code = script(t, nil, "zookeeper-shell.sh", addr, "ls", "/"); code != 0 || out != "[klassik, zookeeper]\n" {
		t.Errorf("zookeeper-shell.sh ls: %d %q", code, out)
	}
	if out, code = script(t, nil, "zookeeper-shell.sh", addr+"/klassik", "ls", "/"); code != 0 || out != "[]\n" {
		t.Errorf("zookeeper-shell.sh with chroot: %d %q", code, out)
	}
	if out, code = script(t, nil, "zookeeper-shell.sh", addr, "get", "/missing"); code == 0 || out != "Node does not exist: /missing\n" {
		t.Errorf("zookeeper-shell.sh missing node: %d %q", code, out)
	}

	if out, code = script(t, env, "zookeeper-server-stop.sh"); code != 0 || !strings.Contains(out, "Sent SIGTERM to ZooKeeper pid(s) "+strconv.Itoa(pid)) {
		t.Errorf("zookeeper-server-stop.sh: %d %s", code, out)
	}
	waitExited(t, pid)
	if out, code = script(t, env, "zookeeper-server-stop.sh"); code != 1 || strings.TrimSpace(out) != "No zookeeper server to stop" {
		t.Errorf("second stop: %d %s", code, out)
	}
}

// stubBroker is the kafka-server tool of the temporary repository: it records its arguments and exits 0 on SIGTERM, like the
// broker's controlled shutdown.
const stubBroker = `package main

import (
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	dir := os.Getenv("STUB_DIR")
	_ = os.WriteFile(dir+"/args-"+os.Getenv("STUB_NAME"), []byte(strings.Join(os.Args[1:], " ")), 0o644)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM)
	<-ch
	_ = os.WriteFile(dir+"/stopped-"+os.Getenv("STUB_NAME"), nil, 0o644)
}
`

// TestKafkaServerDaemonScripts checks kafka-server-start.sh -daemon and
// kafka-server-stop.sh with a stub broker: log and pid files named after
// broker.id (the override wins over the file), the recorded pid is the
// broker binary itself, a second start is refused, and stop delivers
// SIGTERM to every broker.
func TestKafkaServerDaemonScripts(t *testing.T) {
	repo := tempRepo(t, map[string]string{"kafka-server": stubBroker})
	build, logs, stub := t.TempDir(), t.TempDir(), t.TempDir()
	env := []string{"KLASSIK_BUILD_DIR=" + build, "LOG_DIR=" + logs, "STUB_DIR=" + stub}
	script := func(t *testing.T, env []string, name string, args ...string) (string, int) {
		return runIn(t, repo, env, name, args...)
	}

	props := filepath.Join(stub, "server.properties")
	if err := os.WriteFile(props, []byte("broker.id = 4\nzookeeper.connect=localhost:2181\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := script(t, append(env, "STUB_NAME=a"), "kafka-server-start.sh", "-daemon", props)
	if code != 0 || !strings.Contains(out, "Started broker 4 (pid ") {
		t.Fatalf("start: %d %s", code, out)
	}
	out, code = script(t, append(env, "STUB_NAME=b"), "kafka-server-start.sh", "-daemon", props, "--override", "broker.id=5", "--override", "num.partitions=3")
	if code != 0 || !strings.Contains(out, "Started broker 5 (pid ") {
		t.Fatalf("start with override: %d %s", code, out)
	}
	pids := map[string]int{}
	for _, id := range []string{"4", "5"} {
		data, err := os.ReadFile(filepath.Join(logs, "server-"+id+".pid"))
		if err != nil {
			t.Fatalf("pid file of broker %s: %v", id, err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		pids[id] = pid
		t.Cleanup(func() {
			if syscall.Kill(pid, 0) == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
		if _, err := os.Stat(filepath.Join(logs, "server-"+id+".out")); err != nil {
			t.Errorf("log file of broker %s: %v", id, err)
		}
	}
	waitFile := func(name string) []byte {
		deadline := time.Now().Add(30 * time.Second)
		for {
			if b, err := os.ReadFile(filepath.Join(stub, name)); err == nil {
				return b
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not appear", name)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if got := string(waitFile("args-b")); got != props+" --override broker.id=5 --override num.partitions=3" {
		t.Errorf("broker arguments %q", got)
	}
	waitFile("args-a")
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pids["4"]) + "/exe")
	if err != nil || filepath.Base(exe) != "kafka-server" {
		t.Errorf("pid %d is not the broker binary: %q %v", pids["4"], exe, err)
	}
	if out, code = script(t, append(env, "STUB_NAME=c"), "kafka-server-start.sh", "-daemon", props); code != 1 || !strings.Contains(out, "already running") {
		t.Errorf("second start of broker 4: %d %s", code, out)
	}
	out, code = script(t, env, "kafka-server-stop.sh")
	if code != 0 || !strings.Contains(out, strconv.Itoa(pids["4"])) || !strings.Contains(out, strconv.Itoa(pids["5"])) {
		t.Errorf("stop: %d %s", code, out)
	}
	waitFile("stopped-a")
	waitFile("stopped-b")
	for _, pid := range pids {
		waitExited(t, pid)
	}
	if out, code = script(t, env, "kafka-server-stop.sh"); code != 1 || strings.TrimSpace(out) != "No kafka server to stop" {
		t.Errorf("second stop: %d %s", code, out)
	}
}

// waitExited polls, with a 30-second deadline, until process pid is gone.
func waitExited(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still running 30s after SIGTERM", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
