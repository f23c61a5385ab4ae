package faulttest_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/faulttest"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// ZooKeeper trouble under load: the brokers run against the shared
// three-node ensemble (zkserver.SharedEnsemble) while an idempotent
// acks=all workload (RF=3, min.insync.replicas=2) runs throughout, and the
// ensemble loses its leader, its quorum, or everything at once (SIGSTOP).
//
// What Kafka promises, and each test checks:
//   - connection loss is not session expiry: a broker whose session
//     survives keeps its /brokers/ids/<id> node (same czxid, the broker
//     epoch, and the same owner session) and reconnects;
//   - the data path does not need ZooKeeper: a leader with its full ISR
//     keeps acknowledging acks=all writes while ZooKeeper is away;
//   - metadata changes wait for ZooKeeper and then complete;
//   - a session that did expire is replaced: the broker re-registers with a
//     new broker epoch, a controller is elected again, and nothing of the
//     old session is left: every ephemeral node in the cluster's chroot is
//     /brokers/ids/<id> of a live broker session or /controller of the
//     controller's session ("dump"), and each broker watches what a broker
//     of its role watched before the fault, no more and no less ("wchc",
//     which lists data and exists watches only; the child watches are
//     checked by what they trigger: a topic created afterwards gets its
//     partitions from the controller's /brokers/topics child watch);
//   - afterwards every partition is led with its full ISR and every
//     acknowledged record is present exactly once, in order, on every ISR
//     replica (scenario.finish).
//
// Timings: zookeeper.session.timeout.ms is 5000 (the ensemble's tickTime is
// 500 ms, so 5 s is within its 1-30 s bounds). The quorum is lost for the
// issue's 30 s, six session timeouts: a session the server counted down
// would long have expired, and a broker's ZooKeeper request waits as long
// as its session lives, with no deadline of its own. The ensemble pause
// lasts 1.5 session timeouts: past the timeout, for the suite's budget.
const (
	zkSessionTimeout = 5 * time.Second
	zkQuorumOutage   = 30 * time.Second
	zkOutage         = zkSessionTimeout * 3 / 2
)

// zkScenario is a scenario on the shared ensemble (or on a one-member
// Ensemble wrapping a standalone server).
type zkScenario struct {
	*scenario
	e              *zkserver.Ensemble
	chroot         string
	sessionTimeout time.Duration
}

func newZKScenario(t *testing.T, topic string) *zkScenario {
	t.Helper()
	e := zkserver.SharedEnsemble(t)
	// Leave the ensemble whole for the next test, whatever happens here.
	t.Cleanup(func() {
		if err := e.EnsureServing(60 * time.Second); err != nil {
			t.Errorf("restoring the shared ensemble: %v", err)
		}
	})
	return newZKScenarioOn(t, e, zkSessionTimeout, topic)
}

// newZKScenarioOn starts three brokers with the session timeout against e.
func newZKScenarioOn(t *testing.T, e *zkserver.Ensemble, sessionTimeout time.Duration, topic string) *zkScenario {
	t.Helper()
	s := newScenario(t, faulttest.Options{SessionTimeout: sessionTimeout, ZooKeeper: e.ConnectString("")}, topic, faulttest.RoundRobin(3, 3, 3))
	_, chroot, err := zkclient.ParseConnectString(s.c.ZKConnect())
	if err != nil {
		t.Fatal(err)
	}
	return &zkScenario{scenario: s, e: e, chroot: chroot, sessionTimeout: sessionTimeout}
}

// registration is one broker's /brokers/ids/<id> node.
type registration struct {
	epoch int64 // czxid: the broker epoch
	owner int64 // ephemeralOwner: the broker's session
}

// registrations reads every broker's registration, waiting until all are
// present (after an expiry a broker re-registers within moments).
func (s *zkScenario) registrations() map[int32]registration {
	s.t.Helper()
	regs := map[int32]registration{}
	s.c.WaitFor(30*time.Second, "every broker registered", func() bool {
		for i := 0; i < s.c.N(); i++ {
			id := s.c.Node(i).ID
			ok, st, err := s.c.ZK().Exists(zkpaths.BrokerIDPath(id))
			if err != nil || !ok {
				return false
			}
			regs[id] = registration{epoch: st.Czxid, owner: st.EphemeralOwner}
		}
		return true
	})
	return regs
}

// watchSnapshot is what each broker's session watches (paths relative to
// the chroot), and which broker is the controller.
type watchSnapshot struct {
	controller int32
	byBroker   map[int32][]string
}

// byRole splits the snapshot into the controller's watches and those of
// the other brokers, which must all watch the same paths.
func (w watchSnapshot) byRole() (controller, other []string, err error) {
	var others [][]string
	for id, paths := range w.byBroker {
		if id == w.controller {
			controller = paths
			continue
		}
		others = append(others, paths)
	}
	for _, o := range others[1:] {
		if !slices.Equal(o, others[0]) {
			return nil, nil, fmt.Errorf("brokers other than the controller watch different paths: %q versus %q", others[0], o)
		}
	}
	return controller, others[0], nil
}

// watches reads "wchc" from every member and keeps each broker session's
// watches inside this cluster's chroot.
func (s *zkScenario) watches(regs map[int32]registration) (watchSnapshot, error) {
	ctl, ok := s.c.Controller()
	if !ok {
		return watchSnapshot{}, fmt.Errorf("no controller")
	}
	all, err := s.e.Watches()
	if err != nil {
		return watchSnapshot{}, err
	}
	w := watchSnapshot{controller: ctl, byBroker: map[int32][]string{}}
	for id, r := range regs {
		var paths []string
		for _, p := range all[r.owner] {
			if rel, ok := strings.CutPrefix(p, s.chroot); ok && (rel == "" || rel[0] == '/') {
				paths = append(paths, rel)
			}
		}
		sort.Strings(paths)
		w.byBroker[id] = slices.Compact(paths)
	}
	return w, nil
}

// controllerEpoch reads /controller_epoch.
func (s *zkScenario) controllerEpoch() int32 {
	s.t.Helper()
	var epoch int32
	s.c.WaitFor(30*time.Second, "/controller_epoch", func() bool {
		e, _, ok, err := s.c.ZK().GetControllerEpoch()
		epoch = e
		return ok && err == nil
	})
	return epoch
}

// stableWatches waits until every broker other than the controller watches
// the same paths (a watch that just fired is re-armed within moments) and
// returns the snapshot.
func (s *zkScenario) stableWatches(regs map[int32]registration) watchSnapshot {
	s.t.Helper()
	var w watchSnapshot
	var last error
	if !pollFor(15*time.Second, func() bool {
		w, last = s.watches(regs)
		if last == nil {
			_, _, last = w.byRole()
		}
		return last == nil
	}) {
		s.t.Fatalf("watches never settled: %v", last)
	}
	ctl, other, _ := w.byRole()
	s.t.Logf("watches before the fault: the controller (%d) %q; every other broker %q", w.controller, ctl, other)
	return w
}

// checkNoStaleSessionState checks that the only ephemeral nodes in the
// chroot are the live brokers' registrations and the controller's
// /controller, each owned by the session the broker runs now, and that each
// broker's session watches exactly what a broker of its role watched in
// before (the controller may have moved).
func (s *zkScenario) checkNoStaleSessionState(before watchSnapshot) {
	s.t.Helper()
	beforeCtl, beforeOther, err := before.byRole()
	if err != nil {
		s.t.Fatal(err)
	}
	var last string
	if !pollFor(20*time.Second, func() bool {
		regs := s.registrations()
		ctl, ok := s.c.Controller()
		if !ok {
			last = "no controller"
			return false
		}
		d, err := s.e.Dump()
		if err != nil {
			last = err.Error()
			return false
		}
		var problems []string
		owners := map[int64]int32{}
		for id, r := range regs {
			owners[r.owner] = id
			if !d.Sessions[r.owner] {
				problems = append(problems, fmt.Sprintf("broker %d's node is owned by session 0x%x, which the leader does not track", id, r.owner))
			}
		}
		for sid, paths := range d.Ephemerals {
			for _, p := range paths {
				rel, ok := strings.CutPrefix(p, s.chroot)
				if !ok || (rel != "" && rel[0] != '/') {
					continue // another test's chroot
				}
				id, isBroker := owners[sid]
				switch {
				case !isBroker:
					problems = append(problems, fmt.Sprintf("stale ephemeral %s of session 0x%x, which no broker runs", rel, sid))
				case rel == zkpaths.ControllerPath:
					if id != ctl {
						problems = append(problems, fmt.Sprintf("/controller owned by broker %d's session, but the controller is %d", id, ctl))
					}
				case rel != zkpaths.BrokerIDPath(id):
					problems = append(problems, fmt.Sprintf("unexpected ephemeral %s of broker %d's session", rel, id))
				}
			}
		}
		w, err := s.watches(regs)
		if err != nil {
			last = err.Error()
			return false
		}
		for id, paths := range w.byBroker {
			want := beforeOther
			if id == ctl {
				want = beforeCtl
			}
			if !slices.Equal(paths, want) {
				problems = append(problems, fmt.Sprintf("broker %d (controller %v) watches %q, want %q", id, id == ctl, paths, want))
			}
		}
		last = strings.Join(problems, "\n")
		return len(problems) == 0
	}) {
		s.t.Fatalf("stale or missing ZooKeeper state after recovery:\n%s", last)
	}
}

// compareRegistrations reports, per broker, whether its session survived
// (same epoch and owner: connection loss only) or was replaced (a new
// epoch, registered by a new session); requireSame makes a replaced
// session a failure.
func (s *zkScenario) compareRegistrations(before map[int32]registration, requireSame bool) (expired int) {
	s.t.Helper()
	after := s.registrations()
	for id, b := range before {
		a := after[id]
		switch {
		case a == b:
			s.t.Logf("broker %d: same session 0x%x and broker epoch %d (connection loss, no expiry)", id, a.owner, a.epoch)
		case a.epoch != b.epoch && a.owner != b.owner:
			expired++
			s.t.Logf("broker %d: session 0x%x expired; re-registered by session 0x%x with broker epoch %d (was %d)", id, b.owner, a.owner, a.epoch, b.epoch)
			if requireSame {
				s.t.Errorf("broker %d's session was replaced (0x%x -> 0x%x, epoch %d -> %d): connection loss must not be treated as session expiry", id, b.owner, a.owner, b.epoch, a.epoch)
			}
		default:
			s.t.Errorf("broker %d: registration %+v -> %+v: a new node needs a new session and the same session keeps its node", id, b, a)
		}
	}
	return expired
}

// waitReconnected waits until every broker's session has a connection to
// some ensemble member ("cons").
func (s *zkScenario) waitReconnected() {
	s.t.Helper()
	s.c.WaitFor(30*time.Second, "every broker's session connected to a member", func() bool {
		conns, err := s.e.Connections()
		if err != nil {
			return false
		}
		live := map[int64]bool{}
		for _, c := range conns {
			if c.Timeout != 0 && c.Timeout != s.sessionTimeout && c.SessionID != s.c.ZK().SessionID() {
				s.t.Errorf("session 0x%x runs with timeout %v, want zookeeper.session.timeout.ms %v", c.SessionID, c.Timeout, s.sessionTimeout)
			}
			live[c.SessionID] = true
		}
		for _, r := range s.registrations() {
			if !live[r.owner] {
				return false
			}
		}
		return true
	})
}

// recovered waits for the cluster to be whole after the ensemble is back:
// a controller, every partition led with its full ISR, new
// acknowledgements.
func (s *zkScenario) recovered(what string) {
	s.t.Helper()
	start := time.Now()
	s.c.WaitFor(30*time.Second, "a controller after "+what, func() bool {
		_, ok := s.c.Controller()
		return ok
	})
	s.c.WaitFullISR(s.topic, int(s.partitions), 45*time.Second)
	s.t.Logf("%s: controller and full ISR %v after the ensemble served again", what, time.Since(start).Round(time.Millisecond))
	s.progress(200, 30*time.Second, "after "+what)
}

// fetch reads n records of the topic from the start with a new consumer
// (no group: only Metadata and Fetch, which need no ZooKeeper) and fails the
// test if they do not arrive within timeout.
func (s *zkScenario) fetch(n int, timeout time.Duration, what string) {
	s.t.Helper()
	parts := map[int32]kgo.Offset{}
	for p := int32(0); p < s.partitions; p++ {
		parts[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.c.Bootstrap()...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{s.topic: parts}))
	if err != nil {
		s.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start, got := time.Now(), 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			s.t.Fatalf("fetch %s: %d of %d records within %v (errors %v)", what, got, n, timeout, fs.Errors())
		}
		got += fs.NumRecords()
	}
	s.t.Logf("fetched %d records %s in %v", got, what, time.Since(start).Round(time.Millisecond))
}

// pollFor polls cond every 100ms until it holds or timeout passes.
func pollFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alterConfigAsync starts an AlterConfigs of the topic's retention.ms (a
// metadata change: a write to /config/topics/<t> and a change notification)
// and returns a channel with its outcome. The client waits for the answer
// longer than any outage of these tests: the broker holds the request until
// ZooKeeper is back.
func (s *zkScenario) alterConfigAsync(value string) <-chan error {
	res := make(chan error, 1)
	adm := kadm.NewClient(s.c.Client(kgo.RequestTimeoutOverhead(100*time.Second), kgo.RetryTimeout(120*time.Second)))
	go func() { // ends with the request (bounded by its context)
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
		defer cancel()
		rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: &value}}, s.topic)
		if err == nil {
			for _, r := range rs {
				if r.Err != nil {
					err = fmt.Errorf("%v: %s", r.Err, r.ErrMessage)
				}
			}
		}
		res <- err
	}()
	return res
}

// waitTopicConfig waits until /config/topics/<t> holds retention.ms=value.
func (s *zkScenario) waitTopicConfig(value string) {
	s.t.Helper()
	s.c.WaitFor(30*time.Second, "retention.ms="+value+" in /config/topics", func() bool {
		data, _, err := s.c.ZK().Get(zkpaths.ConfigPath(zkpaths.ConfigTypeTopic, s.topic))
		return err == nil && strings.Contains(string(data), `"retention.ms":"`+value+`"`)
	})
}

// TestZooKeeperLeaderKilled kills -9 the ensemble's leader under load. The
// survivors elect a new leader and every broker's session moves to them:
// connection loss, not expiry, so every registration (broker epoch and
// owner session) and the controller are unchanged; produce never waits
// for ZooKeeper, and a metadata change made meanwhile completes.
func TestZooKeeperLeaderKilled(t *testing.T) {
	s := newZKScenario(t, "zkleader")
	regs := s.registrations()
	ctlBefore, _ := s.c.Controller()
	_, ctlStat, err := s.c.ZK().Exists(zkpaths.ControllerPath)
	if err != nil || ctlStat == nil {
		t.Fatalf("/controller: %v", err)
	}
	watchesBefore := s.stableWatches(regs)

	li, err := s.e.Leader(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := s.e.Servers[li].Kill(); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed ensemble leader %s (member %d)", s.e.Servers[li].Addr(), li+1)
	s.progress(200, 30*time.Second, "with the ensemble leader killed")
	t.Logf("200 acknowledgements %v after the kill", time.Since(killed).Round(time.Millisecond))
	s.fetch(200, 15*time.Second, "with the ensemble leader killed")
	nl, err := s.e.Leader(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("member %d leads the ensemble %v after the kill", nl+1, time.Since(killed).Round(time.Millisecond))
	done := s.alterConfigAsync("3600001")
	if err := <-done; err != nil {
		t.Fatalf("AlterConfigs with two of three members: %v", err)
	}
	s.waitTopicConfig("3600001")

	if err := s.e.Servers[li].Restart(); err != nil {
		t.Fatal(err)
	}
	if err := s.e.WaitServing(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	s.waitReconnected()
	s.compareRegistrations(regs, true)
	if ctl, _ := s.c.Controller(); ctl != ctlBefore {
		t.Errorf("controller moved from %d to %d though no session expired", ctlBefore, ctl)
	}
	if _, st, err := s.c.ZK().Exists(zkpaths.ControllerPath); err != nil || st == nil || st.Czxid != ctlStat.Czxid {
		t.Errorf("/controller was re-created (czxid %d -> %+v, %v) though no session expired", ctlStat.Czxid, st, err)
	}
	s.recovered("the leader kill")
	s.checkNoStaleSessionState(watchesBefore)
	s.c.CreateTopic(s.topic+"-after", faulttest.RoundRobin(1, 3, 3), nil)
	s.finish()
}

// TestZooKeeperQuorumLostAndEnsemblePaused takes ZooKeeper away twice under
// load: first two of the three members are killed for 30 s (quorum lost;
// the third refuses clients), then all three are paused with SIGSTOP for
// 1.5 session timeouts (every connection hangs instead of failing). During
// each outage produce keeps being acknowledged (leaders with a full ISR
// need no ZooKeeper) while an AlterConfigs waits; afterwards the change
// completes, sessions that expired are replaced by new registrations with
// new broker epochs, a controller leads again and no state of an old
// session is left.
func TestZooKeeperQuorumLostAndEnsemblePaused(t *testing.T) {
	s := newZKScenario(t, "zkquorum")
	for round, tc := range []struct {
		what   string
		value  string
		outage time.Duration
		fail   func() (restore func())
	}{
		{"quorum loss (two of three members killed)", "3600002", zkQuorumOutage, func() func() {
			li, err := s.e.Leader(10 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			// The leader and one follower.
			victims := []int{li, (li + 1) % len(s.e.Servers)}
			for _, v := range victims {
				if err := s.e.Servers[v].Kill(); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("killed members %d and %d", victims[0]+1, victims[1]+1)
			return func() {
				for _, v := range victims {
					if err := s.e.Servers[v].Restart(); err != nil {
						t.Fatal(err)
					}
				}
			}
		}},
		{"the whole ensemble paused (SIGSTOP)", "3600003", zkOutage, func() func() {
			for _, m := range s.e.Servers {
				if err := m.Pause(); err != nil {
					t.Fatal(err)
				}
			}
			return func() {
				for _, m := range s.e.Servers {
					if err := m.Resume(); err != nil {
						t.Fatal(err)
					}
				}
			}
		}},
	} {
		regs := s.registrations()
		watchesBefore := s.stableWatches(regs)
		ctlBefore, _ := s.c.Controller()
		epochBefore := s.controllerEpoch()
		outage := time.Now()
		restore := tc.fail()
		// Let the clients notice before the metadata change is sent.
		s.progress(50, 30*time.Second, "at the start of "+tc.what)
		done := s.alterConfigAsync(tc.value)
		s.progress(200, tc.outage, "during "+tc.what)
		t.Logf("round %d, %s: 250 acknowledgements within %v of the outage", round+1, tc.what, time.Since(outage).Round(time.Millisecond))
		// The ensemble stays down until fetch returns, however long it
		// takes, so the records are read while ZooKeeper is away.
		s.fetch(200, 20*time.Second, "during "+tc.what)
		select {
		case err := <-done:
			t.Errorf("AlterConfigs completed during %s (%v): it needs ZooKeeper", tc.what, err)
		default:
		}
		if d := tc.outage - time.Since(outage); d > 0 {
			time.Sleep(d) // the outage's length is the fault, not a verdict
		}
		restore()
		back := time.Now()
		if err := s.e.WaitServing(60 * time.Second); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: ensemble serving %v after the restore (outage %v)", round+1, time.Since(back).Round(time.Millisecond), back.Sub(outage).Round(time.Millisecond))
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("AlterConfigs sent during %s: %v", tc.what, err)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("AlterConfigs sent during %s never completed", tc.what)
		}
		t.Logf("round %d: AlterConfigs completed %v after the ensemble came back", round+1, time.Since(back).Round(time.Millisecond))
		s.waitTopicConfig(tc.value)
		s.recovered(tc.what)
		s.waitReconnected()
		expired := s.compareRegistrations(regs, false)
		t.Logf("round %d, %s: %d of %d broker sessions expired", round+1, tc.what, expired, len(regs))
		s.checkNoStaleSessionState(watchesBefore)
		// Read once nothing of an old session is left: after the pause a
		// session the broker had been told was expired kept its ephemeral
		// /controller on the ensemble for about another session timeout,
		// and the election waits for that node to go, as Kafka's does
		// (NodeExists is "controller moved", then the /controller watch).
		ctl, _ := s.c.Controller()
		epoch := s.controllerEpoch()
		t.Logf("round %d: controller %d (epoch %d) -> %d (epoch %d)", round+1, ctlBefore, epochBefore, ctl, epoch)
		switch after := s.registrations(); {
		case after[ctlBefore] != regs[ctlBefore] && epoch <= epochBefore:
			// The controller's session expired, so /controller went with
			// it and whoever won the election bumped the epoch.
			t.Errorf("the controller's session expired but the controller epoch stayed %d", epoch)
		case after[ctlBefore] == regs[ctlBefore] && (ctl != ctlBefore || epoch != epochBefore):
			t.Errorf("the controller's session survived but the controller changed: %d (epoch %d) -> %d (epoch %d)", ctlBefore, epochBefore, ctl, epoch)
		}
		s.c.CreateTopic(fmt.Sprintf("%s-after-%d", s.topic, round+1), faulttest.RoundRobin(1, 3, 3), nil)
	}
	s.finish()
}

// TestBrokerStartupFailsWhenZooKeeperUnreachable: with nothing listening at
// zookeeper.connect, kafka-server gives up after
// zookeeper.connection.timeout.ms and exits with an error naming the
// timeout (Kafka's ZooKeeperClientTimeoutException).
func TestBrokerStartupFailsWhenZooKeeperUnreachable(t *testing.T) {
	port, err := zkserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	props := dir + "/server.properties"
	const timeoutMs = 1500
	cfg := "broker.id=1\nlisteners=PLAINTEXT://127.0.0.1:0\nlog.dirs=" + dir + "/logs\n" +
		"zookeeper.connect=127.0.0.1:" + strconv.Itoa(port) + "/kafka\n" +
		"zookeeper.connection.timeout.ms=" + strconv.Itoa(timeoutMs) + "\n"
	if err := os.WriteFile(props, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := faulttest.RunTool(60*time.Second, "kafka-server", props)
	took := time.Since(start)
	if err == nil {
		t.Fatalf("kafka-server started without ZooKeeper:\n%s", out)
	}
	if !strings.Contains(out, "timed out waiting for connection while in state CONNECTING") {
		t.Fatalf("kafka-server's error does not name the connection timeout:\n%s", out)
	}
	if took < timeoutMs*time.Millisecond {
		t.Fatalf("kafka-server gave up after %v, before zookeeper.connection.timeout.ms", took)
	}
	t.Logf("kafka-server exited %v after start (zookeeper.connection.timeout.ms=%d)", took.Round(time.Millisecond), timeoutMs)
}
