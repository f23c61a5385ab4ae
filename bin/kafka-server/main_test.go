package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// The test binary doubles as the kafka-server process: with
// KAFKA_SERVER_CHILD=1 it runs main's logic with the arguments in
// KAFKA_SERVER_ARGS (NUL-separated), so the tests can signal a real process
// and check its exit code.
func TestMain(m *testing.M) {
	if os.Getenv("KAFKA_SERVER_CHILD") == "1" {
		os.Exit(run(strings.Split(os.Getenv("KAFKA_SERVER_ARGS"), "\x1f"), os.Stdout, os.Stderr))
	}
	os.Exit(zkserver.RunShared(m))
}

func TestParseArgs(t *testing.T) {
	cases := []struct {
		argv    []string
		path    string
		ovr     map[string]string
		wantErr string
	}{
		{argv: []string{"config/server.properties"}, path: "config/server.properties", ovr: map[string]string{}},
		{argv: []string{"s.properties", "--override", "broker.id=2", "--override=log.dirs=/tmp/a=b"},
			path: "s.properties", ovr: map[string]string{"broker.id": "2", "log.dirs": "/tmp/a=b"}},
		{argv: []string{"--override", "broker.id=2", "s.properties"}, path: "s.properties", ovr: map[string]string{"broker.id": "2"}},
		{argv: nil, wantErr: "missing the server.properties file"},
		{argv: []string{"a", "b"}, wantErr: "only one properties file"},
		{argv: []string{"a", "--override"}, wantErr: "needs a property=value"},
		{argv: []string{"a", "--override", "novalue"}, wantErr: "expected property=value"},
		{argv: []string{"a", "--override", "=1"}, wantErr: "expected property=value"},
		{argv: []string{"a", "--daemon"}, wantErr: "unknown option"},
	}
	for _, tc := range cases {
		a, err := parseArgs(tc.argv)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.argv, err, tc.wantErr)
			}
			continue
		}
		if err != nil || a.path != tc.path || len(a.overrides) != len(tc.ovr) {
			t.Errorf("%q: %+v %v", tc.argv, a, err)
			continue
		}
		for k, v := range tc.ovr {
			if a.overrides[k] != v {
				t.Errorf("%q: override %s=%q, want %q", tc.argv, k, a.overrides[k], v)
			}
		}
	}
	if a, err := parseArgs([]string{"--version"}); err != nil || !a.version {
		t.Fatalf("--version: %+v %v", a, err)
	}
}

// FuzzParseArgs: any argument list either parses into one properties path
// with overrides whose keys are non-empty, or is refused with an error;
// parsing never panics.
func FuzzParseArgs(f *testing.F) {
	f.Add("server.properties\x00--override\x00broker.id=1")
	f.Add("--override=a=b\x00x")
	f.Add("--version")
	f.Add("")
	f.Fuzz(func(t *testing.T, joined string) {
		a, err := parseArgs(strings.Split(joined, "\x00"))
		if err != nil {
			return
		}
		if a.path == "" && !a.version {
			t.Fatal("accepted without a properties file")
		}
		for k := range a.overrides {
			if k == "" {
				t.Fatal("empty override key")
			}
		}
	})
}

func writeProps(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBadConfigurationNamesTheKey(t *testing.T) {
	base := []string{"zookeeper.connect=127.0.0.1:1", "log.dirs=" + t.TempDir()}
	for _, tc := range []struct {
		lines    []string
		override []string
		key      string
	}{
		{lines: []string{"broker.id=1", "num.partitions=many"}, key: "num.partitions"},
		{lines: []string{"broker.id=1", "no.such.property=1"}, key: "no.such.property"},
		{lines: []string{"broker.id=1"}, override: []string{"--override", "listeners=bogus"}, key: "listeners"},
	} {
		p := writeProps(t, append(tc.lines, base...)...)
		var out, errb bytes.Buffer
		code := run(append([]string{p}, tc.override...), &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), tc.key) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and the key %s", tc.lines, code, errb.String(), tc.key)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{filepath.Join(t.TempDir(), "missing.properties")}, &out, &errb); code != 1 {
		t.Errorf("missing file: exit %d", code)
	}
	if code := run(nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "USAGE") {
		t.Errorf("no arguments: exit %d, %q", code, errb.String())
	}
	out.Reset()
	if code := run([]string{"--version"}, &out, &errb); code != 0 || !strings.Contains(out.String(), version) {
		t.Errorf("--version: exit %d, %q", code, out.String())
	}
}

// A real kafka-server process registers in ZooKeeper and, on SIGTERM, shuts
// down in order and exits 0 — its registration disappears with its session.
func TestServerProcessStartsAndStopsOnSIGTERM(t *testing.T) {
	connect := zkserver.ConnectString(t)
	dir := t.TempDir()
	props := writeProps(t,
		"broker.id=7",
		"listeners=PLAINTEXT://127.0.0.1:0",
		"log.dirs="+dir,
		"zookeeper.connect="+connect,
		"zookeeper.session.timeout.ms=6000",
		"controlled.shutdown.retry.backoff.ms=200")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KAFKA_SERVER_CHILD=1",
		"KAFKA_SERVER_ARGS="+strings.Join([]string{props, "--override", "broker.rack=r1"}, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
	})

	zc, err := zkclient.Connect(connect, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	registered := testcluster.Poll(30*time.Second, func() bool {
		info, ok, err := zc.GetBroker(7)
		return err == nil && ok && info.Rack == "r1" && len(info.Endpoints) == 1 && info.Endpoints[0].Port > 0
	})
	if !registered {
		t.Fatalf("broker 7 did not register; stderr:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit 30 s after SIGTERM; stderr:\n%s", stderr.String())
	}
	if _, ok, _ := zc.GetBroker(7); ok {
		t.Fatal("registration still present after the process exited")
	}
	meta, err := os.ReadFile(filepath.Join(dir, "meta.properties"))
	if err != nil || !strings.Contains(string(meta), "broker.id=7") {
		t.Fatalf("meta.properties: %q %v", meta, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".kafka_cleanshutdown")); err != nil {
		t.Fatalf("no clean shutdown marker: %v", err)
	}
	if !strings.Contains(stderr.String(), "shut down completed") {
		t.Fatalf("stderr lacks the shutdown line:\n%s", stderr.String())
	}
}
