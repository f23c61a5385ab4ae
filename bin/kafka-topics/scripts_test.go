package main

// Tests of the bin/*.sh scripts that start tools and ZooKeeper. They live
// here because the scripts have no Go package of their own.

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// script runs bin/<name> with env added, bounded by a deadline.
func script(t *testing.T, env []string, name string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join("..", name), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %v timed out:\n%s", name, args, out)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return string(out), code
}

func TestRunClassBuildsOnlyWhenSourcesChange(t *testing.T) {
	build := t.TempDir()
	env := []string{"KLASSIK_BUILD_DIR=" + build}
	out, code := script(t, env, "kafka-topics.sh", "--version")
	if code != 0 || !strings.Contains(out, "Klassik") {
		t.Fatalf("kafka-topics.sh --version: %d\n%s", code, out)
	}
	bin := filepath.Join(build, "kafka-topics")
	st1, err := os.Stat(bin)
	if err != nil {
		t.Fatalf("binary not built into KLASSIK_BUILD_DIR: %v", err)
	}
	if _, err := os.Stat(bin + ".sources"); err != nil {
		t.Fatalf("no source hash stamp: %v", err)
	}
	out, code = script(t, env, "kafka-run-class.sh", "kafka-topics", "--version")
	if code != 0 || !strings.Contains(out, "Klassik") {
		t.Fatalf("second run: %d %s", code, out)
	}
	st2, err := os.Stat(bin)
	if err != nil || !st2.ModTime().Equal(st1.ModTime()) {
		t.Errorf("binary rebuilt although no source changed (%v)", err)
	}
	// A stale stamp (as after editing a source file) forces a rebuild.
	if err := os.WriteFile(bin+".sources", []byte("stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code = script(t, env, "kafka-run-class.sh", "kafka-topics", "--version"); code != 0 {
		t.Fatalf("rebuild run: %d %s", code, out)
	}
	stamp, _ := os.ReadFile(bin + ".sources")
	if string(stamp) == "stale\n" {
		t.Errorf("stamp not refreshed after rebuild")
	}
	if out, code = script(t, env, "kafka-run-class.sh", "no-such-tool"); code != 1 || !strings.Contains(out, "unknown tool 'no-such-tool'") {
		t.Errorf("unknown tool: %d %s", code, out)
	}
	if out, code = script(t, env, "kafka-run-class.sh"); code != 1 || !strings.Contains(out, "USAGE") {
		t.Errorf("no args: %d %s", code, out)
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

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
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
	port := freePort(t)
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
	deadline = time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("ZooKeeper pid %d still running 30s after SIGTERM", pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out, code = script(t, env, "zookeeper-server-stop.sh"); code != 1 || strings.TrimSpace(out) != "No zookeeper server to stop" {
		t.Errorf("second stop: %d %s", code, out)
	}
}

// stubBroker is installed as the kafka-server binary of a private build
// directory: it records its arguments and exits 0 on SIGTERM, like the
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
	build, logs, stub := t.TempDir(), t.TempDir(), t.TempDir()
	env := []string{"KLASSIK_BUILD_DIR=" + build, "LOG_DIR=" + logs, "STUB_DIR=" + stub}
	// Build kafka-topics once to learn the module's source hash, then put
	// the stub in place of kafka-server with that hash so the script does
	// not rebuild the real broker.
	if out, code := script(t, append(env, "KLASSIK_BUILD_ONLY=1"), "kafka-run-class.sh", "kafka-topics"); code != 0 {
		t.Fatalf("build: %d %s", code, out)
	}
	hash, err := os.ReadFile(filepath.Join(build, "kafka-topics.sources"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stub, "main.go"), []byte(stubBroker), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stub, "go.mod"), []byte("module stub\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gob := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(build, "kafka-server"), ".")
	gob.Dir = stub
	if out, err := gob.CombinedOutput(); err != nil {
		t.Fatalf("build stub: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(build, "kafka-server.sources"), hash, 0o644); err != nil {
		t.Fatal(err)
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
	deadline := time.Now().Add(30 * time.Second)
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("pid %d still running after SIGTERM", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if out, code = script(t, env, "kafka-server-stop.sh"); code != 1 || strings.TrimSpace(out) != "No kafka server to stop" {
		t.Errorf("second stop: %d %s", code, out)
	}
}
