package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster/proc"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// tools are the bin/ Go tools a replay may run; they are built (or found
// up to date) once before the first step, so no step waits for a compile.
var tools = []string{"kafka-server", "kafka-topics", "kafka-dump-log", "kafka-consumer-groups", "kafka-console-consumer", "kafka-console-producer"}

// brokerDefaults are the server.properties of every scenario broker, before
// the scenario's own: a short ZooKeeper session so a killed broker's
// ephemeral znodes go within seconds, short fetch and ISR timings, one
// topic partition per broker of the offsets topic, no delay before the
// first rebalance and no automatic leader moves that would blur a step.
var brokerDefaults = map[string]string{
	"zookeeper.session.timeout.ms":         "3000",
	"replica.lag.time.max.ms":              "3000",
	"replica.fetch.wait.max.ms":            "200",
	"replica.fetch.backoff.ms":             "200",
	"controlled.shutdown.enable":           "false",
	"controller.socket.timeout.ms":         "5000",
	"offsets.topic.num.partitions":         "3",
	"group.initial.rebalance.delay.ms":     "0",
	"unclean.leader.election.enable":       "false",
	"auto.leader.rebalance.enable":         "false",
	"log.index.interval.bytes":             "4096",
	"transaction.state.log.num.partitions": "3",
}

// Stage is one replay's cluster and narration. A scenario calls its
// methods in order; a method that cannot do what the step needs ends the
// scenario with Failf. Only the replay's goroutine uses a Stage.
type Stage struct {
	ctx     context.Context
	name    string
	out     io.Writer
	repo    string // the checkout holding bin/
	dir     string // the replay's temporary directory, removed in cleanup
	step    int
	zk      *zkserver.Server
	zkc     *zkclient.Client
	brokers []*Broker
	clients []*kgo.Client
	procs   []*proc.Process // tools started in the background
}

// Broker is one kafka-server process of the replay.
type Broker struct {
	ID     int32
	Port   int
	Addr   string // 127.0.0.1:Port
	LogDir string // log.dirs
	Props  string // its server.properties
	node   proc.Node
	props  map[string]string // what Props holds
	client *kgo.Client       // a client that knows only this broker, made on first use
}

// failure is the panic value of Failf; replay recovers it and nothing
// else.
type failure struct{ msg string }

// replay runs one scenario on a fresh stage and prints its verdict line;
// the stage is cleaned up whatever happens.
func replay(ctx context.Context, sc scenario, out io.Writer) (code int) {
	s := &Stage{ctx: ctx, name: sc.name, out: out}
	defer func() {
		r := recover()
		s.cleanup()
		var msg string
		switch f := r.(type) {
		case nil:
		case failure:
			msg = f.msg
		default:
			msg = fmt.Sprintf("internal error: %v", r)
			fmt.Fprintf(os.Stderr, "%s", debug.Stack())
		}
		if ctx.Err() != nil && !strings.HasPrefix(msg, "interrupted") {
			msg = strings.TrimSuffix("interrupted: "+msg, ": ")
		}
		if msg != "" {
			fmt.Fprintf(out, "\nscenario %s: FAILED (%s)\n", sc.name, msg)
			code = 1
		}
	}()
	s.prepare()
	held := sc.run(s)
	if ctx.Err() != nil {
		s.Failf("interrupted")
	}
	fmt.Fprintf(out, "\nscenario %s: OK (%s)\n", sc.name, held)
	return 0
}

// prepare finds the checkout, builds the tools and makes the directory.
func (s *Stage) prepare() {
	s.repo = os.Getenv("KLASSIK_HOME")
	if s.repo == "" {
		exe, err := os.Executable()
		if err != nil {
			s.Failf("cannot find the checkout: %v (run bin/klassik-scenario.sh)", err)
		}
		s.repo = filepath.Dir(filepath.Dir(filepath.Dir(exe))) // <repo>/bin/.build/klassik-scenario
	}
	if _, err := os.Stat(filepath.Join(s.repo, "bin", "kafka-run-class.sh")); err != nil {
		s.Failf("no bin/kafka-run-class.sh under %s: set KLASSIK_HOME or run bin/klassik-scenario.sh", s.repo)
	}
	for _, t := range tools {
		cmd := exec.CommandContext(s.ctx, filepath.Join(s.repo, "bin", "kafka-run-class.sh"), t)
		cmd.Env = append(os.Environ(), "KLASSIK_BUILD_ONLY=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			s.Failf("building bin/%s: %v\n%s", t, err, out)
		}
	}
	s.sweepStale()
	dir, err := os.MkdirTemp("", dirPrefix+s.name+"-")
	if err != nil {
		s.Failf("temporary directory: %v", err)
	}
	s.dir = dir
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		s.Failf("%v", err)
	}
	fmt.Fprintf(s.out, "Scenario %s (everything lives in %s and is removed at the end;\n", s.name, s.dir)
	fmt.Fprintf(s.out, "broker N keeps its server.properties, server.out and logs/ in broker-N/)\n")
}

// A replay's directory is <tmp>/klassik-scenario-<name>-<random>, holding
// the replay's pid in owner.pid.
const (
	dirPrefix = "klassik-scenario-"
	ownerFile = "owner.pid"
)

// sweepStale removes the directories of earlier replays that were killed
// (SIGKILL leaves no chance to clean up; their children died with them):
// those whose owner.pid names a process that no longer exists.
func (s *Stage) sweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue // not ours, or still being made
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		if os.RemoveAll(d) == nil {
			fmt.Fprintf(s.out, "(removed %s, left by a replay that was killed)\n", d)
		}
	}
}

// cleanup kills every process the replay started and removes its
// directory. A paused (SIGSTOPped) broker dies of SIGKILL all the same.
func (s *Stage) cleanup() {
	for _, cl := range s.clients {
		cl.Close()
	}
	for _, p := range s.procs {
		if p.Running() {
			p.Kill()
		}
	}
	for _, b := range s.brokers {
		b.node.Kill()
	}
	if s.zkc != nil {
		s.zkc.Close()
	}
	if s.zk != nil {
		_ = s.zk.Kill()
	}
	if s.dir != "" {
		if err := os.RemoveAll(s.dir); err != nil {
			fmt.Fprintf(s.out, "(could not remove %s: %v)\n", s.dir, err)
		}
	}
}

// Failf ends the scenario: the replay prints the message in its FAILED
// line after cleaning up.
func (s *Stage) Failf(format string, args ...any) {
	panic(failure{msg: fmt.Sprintf(format, args...)})
}

// Step starts the next numbered step with a plain sentence.
func (s *Stage) Step(format string, args ...any) {
	s.step++
	lines := wrap(fmt.Sprintf(format, args...), narrationWidth-4)
	fmt.Fprintf(s.out, "\n%2d. %s\n", s.step, lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintf(s.out, "    %s\n", l)
	}
}

// narrationWidth is where Step and Say wrap their sentences.
const narrationWidth = 100

// wrap breaks text longer than width into lines of at most width
// characters at spaces (a longer word stays whole); shorter text is kept
// as it is, spacing included.
func wrap(text string, width int) []string {
	if len(text) <= width {
		return []string{text}
	}
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}

// Say adds an explanation or an observation to the current step.
func (s *Stage) Say(format string, args ...any) {
	for _, para := range strings.Split(fmt.Sprintf(format, args...), "\n") {
		for _, l := range wrap(para, narrationWidth-4) {
			fmt.Fprintf(s.out, "    %s\n", l)
		}
	}
}

// Dir is the replay's temporary directory.
func (s *Stage) Dir() string { return s.dir }

// ZooKeeperAddr is the throwaway ZooKeeper's host:port.
func (s *Stage) ZooKeeperAddr() string { return s.zk.Addr() }

// ZK is a ZooKeeper client of the replay for its own waits and reads
// (evidence is shown with bin/zookeeper-shell.sh).
func (s *Stage) ZK() *zkclient.Client { return s.zkc }

// StartZooKeeper starts the replay's own ZooKeeper server on a free
// loopback port.
func (s *Stage) StartZooKeeper() {
	zk, err := zkserver.Start(zkserver.Options{Dir: filepath.Join(s.dir, "zookeeper")})
	if err != nil {
		s.Failf("starting ZooKeeper: %v", err)
	}
	s.zk = zk
	c, err := zkclient.Connect(zk.Addr(), 10*time.Second)
	if err != nil {
		s.Failf("connecting to ZooKeeper %s: %v", zk.Addr(), err)
	}
	s.zkc = c
	s.Say("ZooKeeper serves %s.", zk.Addr())
}

// StartBrokers starts brokers 1..n with brokerDefaults and overrides, and
// waits until all are registered under /brokers/ids and one of them holds
// /controller.
func (s *Stage) StartBrokers(n int, overrides map[string]string) []*Broker {
	if s.zk == nil {
		s.StartZooKeeper()
	}
	var started []*Broker
	for i := 0; i < n; i++ {
		b := s.newBroker(int32(len(s.brokers)+1), overrides)
		s.brokers = append(s.brokers, b)
		started = append(started, b)
		s.startBroker(b)
	}
	for _, b := range started {
		s.WaitFor(30*time.Second, fmt.Sprintf("broker %d registered in /brokers/ids", b.ID), func() bool {
			ok, _, err := s.zkc.Exists("/brokers/ids/" + strconv.Itoa(int(b.ID)))
			return ok && err == nil
		})
	}
	s.WaitFor(30*time.Second, "a controller elected", func() bool {
		_, ok, err := s.zkc.GetController()
		return ok && err == nil
	})
	for _, b := range started {
		s.Say("broker %d: pid %d, listening on %s", b.ID, b.node.Process().Pid(), b.Addr)
	}
	return started
}

func (s *Stage) newBroker(id int32, overrides map[string]string) *Broker {
	port, err := zkserver.FreePort()
	if err != nil {
		s.Failf("free port: %v", err)
	}
	dir := filepath.Join(s.dir, "broker-"+strconv.Itoa(int(id)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.Failf("%v", err)
	}
	b := &Broker{ID: id, Port: port, Addr: "127.0.0.1:" + strconv.Itoa(port),
		LogDir: filepath.Join(dir, "logs"), Props: filepath.Join(dir, "server.properties")}
	b.node.Output = filepath.Join(dir, "server.out")
	b.props = map[string]string{
		"broker.id":         strconv.Itoa(int(id)),
		"listeners":         "PLAINTEXT://" + b.Addr,
		"log.dirs":          b.LogDir,
		"zookeeper.connect": s.zk.Addr(),
	}
	for k, v := range brokerDefaults {
		b.props[k] = v
	}
	s.SetProperties(b, overrides)
	return b
}

// SetProperties changes properties in b's server.properties; they apply
// from the broker's next start (Restart).
func (s *Stage) SetProperties(b *Broker, props map[string]string) {
	for k, v := range props {
		b.props[k] = v
	}
	keys := make([]string, 0, len(b.props))
	for k := range b.props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	fmt.Fprintf(&sb, "# broker %d of scenario %s\n", b.ID, s.name)
	for _, k := range keys {
		fmt.Fprintf(&sb, "%s=%s\n", k, b.props[k])
	}
	if err := os.WriteFile(b.Props, []byte(sb.String()), 0o644); err != nil {
		s.Failf("%v", err)
	}
}

// startBroker starts b's process: bin/kafka-server-start.sh in the
// foreground execs the broker, so the pid is the broker's.
func (s *Stage) startBroker(b *Broker) {
	err := b.node.Start(proc.Spec{Path: filepath.Join(s.repo, "bin", "kafka-server-start.sh"), Args: []string{b.Props},
		Banner: "broker " + strconv.Itoa(int(b.ID))})
	if err != nil {
		s.Failf("starting broker %d: %v", b.ID, err)
	}
}

// Broker returns the broker with the id.
func (s *Stage) Broker(id int32) *Broker {
	for _, b := range s.brokers {
		if b.ID == id {
			return b
		}
	}
	s.Failf("no broker %d", id)
	return nil
}

// Restart starts a killed broker again with the same configuration and
// log directory and waits until it is registered.
//
// A killed broker's registration outlives it until its ZooKeeper session
// expires, so "registered again" means a /brokers/ids node owned by a
// session other than the one before the restart.
func (s *Stage) Restart(b *Broker) {
	path := "/brokers/ids/" + strconv.Itoa(int(b.ID))
	var before int64
	if ok, st, err := s.zkc.Exists(path); err == nil && ok {
		before = st.EphemeralOwner
	}
	s.startBroker(b)
	s.WaitFor(30*time.Second, fmt.Sprintf("broker %d registered again", b.ID), func() bool {
		ok, st, err := s.zkc.Exists(path)
		return err == nil && ok && st.EphemeralOwner != before
	})
	s.Say("broker %d: pid %d, listening on %s", b.ID, b.Pid(), b.Addr)
}

// Signal sends sig to b (SIGKILL, SIGSTOP, SIGCONT, SIGTERM); after
// SIGKILL it waits until the process is gone.
func (s *Stage) Signal(b *Broker, sig syscall.Signal) {
	p := b.node.Process()
	if p == nil || !p.Running() {
		s.Failf("broker %d is not running", b.ID)
	}
	if err := p.Signal(sig); err != nil {
		s.Failf("signal %v to broker %d: %v", sig, b.ID, err)
	}
	if sig == syscall.SIGKILL && !p.Wait(10*time.Second) {
		s.Failf("broker %d (pid %d) did not die of SIGKILL", b.ID, p.Pid())
	}
	// kill(2) returns before the target's threads have stopped: a thread
	// running on the other core can still send a fetch. Wait until every
	// thread of the process is stopped, so what follows the step happens
	// to a paused broker.
	if sig == syscall.SIGSTOP {
		deadline := time.Now().Add(10 * time.Second)
		for !allThreadsStopped(p.Pid()) {
			if time.Now().After(deadline) {
				s.Failf("broker %d (pid %d) did not stop after SIGSTOP", b.ID, p.Pid())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// allThreadsStopped reports whether every thread of pid is in state T
// (stopped by a signal), read from /proc/<pid>/task/*/stat.
func allThreadsStopped(pid int) bool {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			return false
		}
		// The state follows the command name in parentheses, which may
		// itself hold spaces or parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) || b[i+2] != 'T' {
			return false
		}
	}
	return true
}

// Pid is b's current process id.
func (b *Broker) Pid() int { return b.node.Process().Pid() }

// Client returns a franz-go client seeded with the given brokers (all of
// them when none is given), closed in cleanup.
func (s *Stage) Client(opts ...kgo.Opt) *kgo.Client {
	var seeds []string
	for _, b := range s.brokers {
		seeds = append(seeds, b.Addr)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...)...)
	if err != nil {
		s.Failf("client: %v", err)
	}
	s.clients = append(s.clients, cl)
	return cl
}

// Admin returns an admin client on a new Client.
func (s *Stage) Admin() *kadm.Client { return kadm.NewClient(s.Client()) }

// Context bounds one request of a step to timeout within the replay.
func (s *Stage) Context(timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, timeout)
}

// WaitFor polls cond until it holds, failing the scenario after timeout
// (or at once when the replay is interrupted).
func (s *Stage) WaitFor(timeout time.Duration, what string, cond func() bool) {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return
		}
		if s.ctx.Err() != nil {
			s.Failf("interrupted while waiting for %s", what)
		}
		if time.Now().After(deadline) {
			s.Failf("%s did not happen within %v", what, timeout)
		}
		select {
		case <-s.ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Tool runs bin/<script> with args as a process, prints the command line
// and its output, and returns the output; a non-zero exit fails the
// scenario.
func (s *Stage) Tool(script string, args ...string) string {
	out, code := s.ToolStatus(script, args...)
	if code != 0 {
		s.Failf("bin/%s exited with status %d", script, code)
	}
	return out
}

// ToolLines is Tool printing only the output lines pick accepts (and how
// many it left out), for tools whose whole output would drown the point.
func (s *Stage) ToolLines(pick func(line string) bool, script string, args ...string) string {
	out, code := s.run(script, args...)
	var shown []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if pick(l) {
			shown = append(shown, l)
		}
	}
	for _, l := range shown {
		fmt.Fprintf(s.out, "      %s\n", l)
	}
	fmt.Fprintf(s.out, "      (%d more lines not shown)\n", strings.Count(out, "\n")-len(shown))
	if code != 0 {
		s.Failf("bin/%s exited with status %d", script, code)
	}
	return strings.Join(shown, "\n")
}

// ToolStatus is Tool for a command whose failure is part of the story: it
// returns the exit status instead of failing.
func (s *Stage) ToolStatus(script string, args ...string) (string, int) {
	out, code := s.run(script, args...)
	if strings.TrimSpace(out) == "" {
		fmt.Fprintf(s.out, "      (no output)\n")
	}
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l != "" {
			fmt.Fprintf(s.out, "      %s\n", l)
		}
	}
	if code != 0 {
		fmt.Fprintf(s.out, "      (exit status %d)\n", code)
	}
	return out, code
}

// run prints the command line of bin/<script> and runs it, returning its
// output and exit status.
func (s *Stage) run(script string, args ...string) (string, int) {
	fmt.Fprintf(s.out, "    $ bin/%s %s\n", script, strings.Join(quoteArgs(args), " "))
	ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.repo, "bin", script), args...)
	cmd.Env = append(os.Environ(), "ZOO_LOG_DIR="+s.dir)
	outb, err := cmd.CombinedOutput()
	if s.ctx.Err() != nil {
		s.Failf("interrupted while bin/%s ran", script)
	}
	if ctx.Err() != nil {
		s.Failf("bin/%s did not finish: %v", script, ctx.Err())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		s.Failf("bin/%s: %v", script, err)
	}
	return string(outb), code
}

// Background starts bin/<script> as a long-running process (a consumer),
// its output going to a file in the replay's directory, and returns it;
// cleanup kills it if the scenario has not stopped it.
func (s *Stage) Background(script string, args ...string) (*proc.Process, string) {
	out := filepath.Join(s.dir, fmt.Sprintf("%s-%d.out", strings.TrimSuffix(script, ".sh"), len(s.procs)+1))
	fmt.Fprintf(s.out, "    $ bin/%s %s &\n", script, strings.Join(quoteArgs(args), " "))
	p, err := proc.Start(proc.Spec{Path: filepath.Join(s.repo, "bin", script), Args: args, Output: out})
	if err != nil {
		s.Failf("starting bin/%s: %v", script, err)
	}
	s.procs = append(s.procs, p)
	s.Say("(pid %d, output in %s)", p.Pid(), out)
	return p, out
}

// Stop ends a background process with SIGTERM, as Ctrl-C would, and
// waits for it.
func (s *Stage) Stop(p *proc.Process) {
	_ = p.Signal(syscall.SIGTERM)
	if !p.Wait(15 * time.Second) {
		s.Failf("pid %d did not stop within 15 s of SIGTERM", p.Pid())
	}
}

// ZkGet shows a znode with bin/zookeeper-shell.sh ... get and returns its
// first line, the data.
func (s *Stage) ZkGet(path string) string {
	out := s.Tool("zookeeper-shell.sh", s.zk.Addr(), "get", path)
	first, _, _ := strings.Cut(out, "\n")
	return strings.TrimSpace(first)
}

func quoteArgs(args []string) []string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'*?$[]{}|&;<>()") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return q
}
