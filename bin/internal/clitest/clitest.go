// Package clitest holds the helpers the tests of the bin/ tools share:
// writing an input file, running a tool's run function or its bin/*.sh
// script, a chroot on the shared real ZooKeeper with registered brokers,
// a testcluster with a topic whose leaders are elected, and whether its
// brokers serve an API.
//
// It is imported only by _test files; nothing in a tool's binary uses it.
package clitest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// WriteFile writes content to a new file in the test's temporary directory
// and returns its path.
func WriteFile(t testing.TB, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.json")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// RunFunc is a tool's run: arguments in, output written, exit status out.
type RunFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// Run calls run in process with a one-minute deadline and returns what it
// wrote and its exit status.
func Run(t testing.TB, run RunFunc, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errOut strings.Builder
	code = run(ctx, args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// Command runs the script at path with env added, bounded by three
// minutes, and returns its combined output and exit status.
func Command(t testing.TB, env []string, path string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %v timed out:\n%s", path, args, out)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(out), code
}

// buildDir is the build directory the scripts Script runs share, so that
// kafka-run-class.sh compiles a tool once per test binary; Main removes it.
var buildDir struct {
	// mu guards the following.
	mu   sync.Mutex
	path string
}

// Main runs a tool's tests with testcluster.Main (which stops the shared
// ZooKeeper the cluster tests start) and then removes Script's build
// directory: a tool's TestMain is os.Exit(clitest.Main(m)).
func Main(m *testing.M) int {
	code := testcluster.Main(m)
	buildDir.mu.Lock()
	defer buildDir.mu.Unlock()
	if buildDir.path != "" {
		os.RemoveAll(buildDir.path)
	}
	return code
}

func sharedBuildDir(t testing.TB) string {
	t.Helper()
	buildDir.mu.Lock()
	defer buildDir.mu.Unlock()
	if buildDir.path == "" {
		d, err := os.MkdirTemp("", "klassik-tool-build")
		if err != nil {
			t.Fatal(err)
		}
		buildDir.path = d
	}
	return buildDir.path
}

// Script runs bin/<script> from a tool's directory as an operator would,
// with env added, bounded by three minutes, and returns its stdout, stderr
// and exit status. The tool is built into a directory shared by the test
// binary (removed by Main), so it is compiled once.
func Script(t testing.TB, env []string, script string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", script))
	if err != nil {
		t.Fatal(err)
	}
	dir := sharedBuildDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(append(os.Environ(), "KLASSIK_BUILD_DIR="+dir), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v: no exit within 3m\n%s%s", script, args, out.String(), errOut.String())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s: %v", path, err)
	}
	return out.String(), errOut.String(), code
}

// CheckScriptVersion runs bin/<script> --version from a tool's directory:
// kafka-run-class.sh builds the tool into a private build directory and
// runs it, which must print admintool.Version.
func CheckScriptVersion(t *testing.T, script string) {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", script))
	if err != nil {
		t.Fatal(err)
	}
	out, code := Command(t, []string{"KLASSIK_BUILD_DIR=" + t.TempDir()}, path, "--version")
	if code != 0 || !strings.HasSuffix(out, admintool.Version+"\n") {
		t.Fatalf("%s --version: exit %d\n%s", script, code, out)
	}
}

// ZooKeeper returns a fresh chroot on the shared real ZooKeeper and a
// client to it, with the top-level paths a broker creates in place and
// brokers 1..len(racks) registered as running brokers would register
// (PLAINTEXT on 127.0.0.1:9091+id); racks[i] is broker i+1's rack, "" for
// none.
func ZooKeeper(t *testing.T, racks ...string) (string, *zkclient.Client) {
	t.Helper()
	connect := zkserver.ConnectString(t)
	c, err := zkclient.Connect(connect, 10*time.Second)
	if err != nil {
		t.Fatalf("connect %s: %v", connect, err)
	}
	t.Cleanup(c.Close)
	if err := c.EnsureTopLevelPaths(); err != nil {
		t.Fatal(err)
	}
	for i, rack := range racks {
		id := int32(i + 1)
		_, err := c.RegisterBroker(zkpaths.BrokerInfo{ID: id, Version: 5, Rack: rack, JMXPort: -1, Timestamp: time.Now().UnixMilli(),
			Endpoints: []zkpaths.EndPoint{{ListenerName: "PLAINTEXT", Host: "127.0.0.1", Port: 9091 + id, SecurityProtocol: "PLAINTEXT"}}})
		if err != nil {
			t.Fatalf("register broker %d: %v", id, err)
		}
	}
	return connect, c
}

// CreateTopic creates topic on the cluster and fails the test if that
// fails.
func CreateTopic(t *testing.T, ctx context.Context, c *testcluster.Cluster, topic string, partitions int32, rf int16) {
	t.Helper()
	if res, err := c.Admin().CreateTopic(ctx, partitions, rf, nil, topic); err != nil || res.Err != nil {
		t.Fatalf("create topic %s: %v / %v", topic, err, res.Err)
	}
}

// StartWithTopic starts a cluster with opts, creates topic and waits until
// every one of its partitions has a leader known to every broker.
func StartWithTopic(t *testing.T, opts testcluster.Options, topic string, partitions int32, rf int16) *testcluster.Cluster {
	t.Helper()
	c := testcluster.Start(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	CreateTopic(t, ctx, c, topic, partitions, rf)
	c.WaitLeaders(20*time.Second, topic, partitions)
	return c
}

// Supports asks the cluster's brokers (ApiVersions) whether they serve the
// API key, failing the test when they cannot be asked.
func Supports(t *testing.T, c *testcluster.Cluster, key int16) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, c.Client())
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		t.Fatalf("ApiVersions: %v", err)
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == key {
			return true
		}
	}
	return false
}

// FuzzCommandLines fuzzes a tool's parseOptions with command lines split
// on white space, starting from seeds: the parser must never panic, and
// check runs on every line it accepts (a nil result, for --help or
// --version, is skipped).
func FuzzCommandLines[T any](f *testing.F, parse func(args []string) (*T, string, error), seeds []string, check func(t *testing.T, line string, o *T)) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		o, _, err := parse(strings.Fields(line))
		if err != nil || o == nil {
			return
		}
		check(t, line, o)
	})
}

// FuzzParser fuzzes a parser of one option value or input document,
// starting from seeds: it must never panic, and check (if not nil) runs on
// every input it accepts.
func FuzzParser[In ~string | ~[]byte, T any](f *testing.F, seeds []string, parse func(In) (T, error), check func(t *testing.T, in In, out T)) {
	for _, s := range seeds {
		f.Add(In(s))
	}
	f.Fuzz(func(t *testing.T, in In) {
		out, err := parse(in)
		if err != nil || check == nil {
			return
		}
		check(t, in, out)
	})
}

// UsageCase is a command line a tool must refuse with a usage error whose
// message is Want.
type UsageCase = struct {
	Args []string
	Want string
}

// CheckUsageErrors runs a tool's parseOptions on every case and reports
// each that is not refused with exactly the wanted *admintool.UsageError.
func CheckUsageErrors[T any](t *testing.T, parse func(args []string) (*T, string, error), cases []UsageCase) {
	t.Helper()
	pcs := make([]ParseCase, len(cases))
	for i, c := range cases {
		pcs[i] = ParseCase{Args: c.Args, Err: c.Want, Usage: true}
	}
	CheckParse(t, parse, pcs)
}

// ParseCase is a command line and a tool parser's answer to it: Err is the
// error message ("" for success) and Usage whether the error is a
// *admintool.UsageError (printed with the option table).
type ParseCase = struct {
	Name  string // the subtest's name; "" names it by Args
	Args  []string
	Err   string
	Usage bool
}

// CheckParse runs a tool's parser on every case, each as a subtest, and
// reports each answer that differs; no case may ask for --help or
// --version.
func CheckParse[T any](t *testing.T, parse func(args []string) (*T, string, error), cases []ParseCase) {
	t.Helper()
	for _, c := range cases {
		name := c.Name
		if name == "" {
			name = strings.Join(c.Args, " ")
		}
		t.Run(name, func(t *testing.T) {
			o, special, err := parse(c.Args)
			if special != "" {
				t.Fatalf("%v: special %q", c.Args, special)
			}
			if c.Err == "" {
				if err != nil || o == nil {
					t.Fatalf("%v: %v %+v", c.Args, err, o)
				}
				return
			}
			var ue *admintool.UsageError
			if usage := errors.As(err, &ue); err == nil || err.Error() != c.Err || usage != c.Usage {
				t.Fatalf("%v: got %v (usage error %v), want %q (usage error %v)", c.Args, err, usage, c.Err, c.Usage)
			}
		})
	}
}
