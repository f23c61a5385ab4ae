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
