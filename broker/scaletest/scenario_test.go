package scaletest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/faulttest"
	"github.com/klassik/klassik/zkpaths"
)

func TestMain(m *testing.M) { os.Exit(faulttest.Main(m)) }

const (
	topic         = "scale"
	baselineTopic = "one" // 1 partition: the Metadata baseline
	// bound limits a failed wait; a passing run waits for the condition.
	bound = 3 * time.Minute
	// fdReserve is what a broker holds besides one descriptor per
	// segment: listeners, connections (clients, followers, ZooKeeper),
	// epoll, its output, checkpoint and lock files.
	fdReserve = 256
	// mapsReserve bounds /proc/<pid>/maps of an idle broker: the Go
	// runtime's and the binary's mappings; indexes are mapped only when a
	// lookup needs more than their last entry, so idle replicas add none.
	mapsReserve = 512
	// produceEvery: the scenario writes one record to every
	// produceEvery-th partition and reads them back at the end.
	produceEvery = 10
)

// config sizes one run of the scenario.
type config struct {
	partitions      int // of the scale topic, RF=3 over brokers 1..3
	metadataSamples int // Metadata requests timed per topic
	// measureRejoin waits, after the restart that follows the controlled
	// shutdown, until the broker is back in every ISR, so the failover
	// after it starts from full ISRs (the test lets the rejoin run on
	// beside the failover and waits for full ISRs at the end).
	measureRejoin bool
	// createOnly ends the scenario after the creation (step 1's
	// creation and its checks, nothing produced).
	createOnly bool
	// shutdownCycles, when above 0, ends the scenario after step 1 with
	// that many SIGTERMs of a non-controller broker (shutdownCycle), each
	// followed by its restart and rejoin.
	shutdownCycles int
	// filesBaseline times, just before the creation, the file system's
	// part of it done by plain code (filesbaseline_test.go).
	filesBaseline bool
}

// Result is what one run measured. Every duration is wall time on the
// test's clock, observed by polling (5 ms for ZooKeeper, about 20 ms for
// the brokers' Metadata), so each is an upper bound by that much.
type Result struct {
	Partitions int

	CreateAnswered time.Duration // CreateTopics sent -> its answer
	Create         time.Duration // CreateTopics sent -> every partition led with its full ISR in every broker's Metadata
	FilesBaseline  time.Duration // config.filesBaseline: the replicas' directories and files made by plain code
	Produce        time.Duration // one acks=all record to every produceEvery-th partition

	Idle []footprint // per broker, the scale topic idle
	Base []footprint // per broker, before the scale topic existed

	MetaSize                  int           // bytes of the Metadata answer for the scale topic
	MetaP50, MetaP99          time.Duration // Metadata of every partition of the scale topic
	BaseMetaP50, BaseMetaP99  time.Duration // Metadata of the 1-partition topic, same broker and connection
	MetaAllTopicsP50          time.Duration // Metadata of every topic (nil topic list)
	KilledController          int32
	SessionEnd                time.Duration // kill -9 -> /brokers/ids/<id> gone
	Election                  time.Duration // session end -> another broker in /controller
	Failover                  time.Duration // session end -> every partition led by a live broker in every live broker's Metadata
	StoppedBroker             int32
	StoppedLed                int             // partitions it led when SIGTERM was sent
	ControlledShutdown        time.Duration   // SIGTERM -> its "controlled shutdown succeeded" log line (may exit)
	ShutdownExit              time.Duration   // SIGTERM -> process exit
	Restart                   restartTimes    // after the clean shutdown
	ShutdownCycles            []shutdownTimes // with config.shutdownCycles
	RestartAfterKill          restartTimes    // after the kill -9
	End                       []footprint     // per broker, at the end
	EndSegments               []int           // per broker, .log files at the end
	HeapPerReplica            []float64       // per broker, bytes: (Idle - Base) heap / partitions
	StackPerReplica           []float64       // per broker, bytes
	GoroutinesPerReplica      []float64       // per broker
	FDsPerReplica             []float64       // per broker, idle
	MapsPerReplica            []float64       // per broker, idle
	ConsumedBack              int             // records consumed back at the end
	CreateRequestPartitionCnt int             // partitions in the CreateTopics request
}

// scenario is one run's cluster and what it knows.
type scenario struct {
	t          testing.TB
	cfg        config
	c          *faulttest.Cluster
	assignment map[int32][]int32
	tps        []common.TopicPartition
	conns      map[int32]*metaConn // one per broker id, for polling
	res        Result
}

// runScenario runs the scenario (see doc.go) and returns its measurements;
// every check failing fails t.
func runScenario(t testing.TB, cfg config) Result {
	s := &scenario{t: t, cfg: cfg, conns: map[int32]*metaConn{}}
	s.res.Partitions = cfg.partitions
	t.Cleanup(func() {
		for _, m := range s.conns {
			m.close()
		}
	})
	opts := faulttest.Options{
		Brokers: 3,
		HTTP:    true,
		Overrides: map[string]string{
			"klassik.http.pprof.enable": "true",
			// Four times Kafka's default. Creating 10,000 partitions takes
			// 30-50 s on the shared two-core machine, and a follower of
			// 6,667 of them can start fetching more than 30 s after its
			// leader became leader; the ISRs it then leaves are written
			// back one ZooKeeper write at a time inside the leader's
			// handling of the next fetch, which delays that fetch so long
			// that other partitions lag out too. The scenario checks the
			// control plane's steps from full ISRs, so it keeps followers
			// that only start late in the ISR.
			"replica.lag.time.max.ms":   "120000",
			"replica.fetch.wait.max.ms": "500",
			// Kafka's default, instead of the fault scenarios' 5 s: a
			// broker's first LeaderAndIsr of 10,000 partitions takes
			// longer than 5 s here, and the controller would send it
			// again every 5 s, each copy handled again after the first.
			"controller.socket.timeout.ms": "30000",
		},
	}
	// One descriptor per segment: 10,000 replicas need more than 10,000.
	need := cfg.partitions + 4*fdReserve
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Max < uint64(need) {
		opts.NoFileLimit = need
		t.Logf("RLIMIT_NOFILE hard limit %d is below the %d a broker needs: starting brokers with %d through prlimit", lim.Max, need, need)
	}
	s.c = faulttest.Start(t, opts)
	for i := 0; i < s.c.N(); i++ {
		n := s.c.Node(i)
		s.conns[n.ID] = &metaConn{addr: n.Addr()}
	}
	s.assignment = faulttest.RoundRobin(cfg.partitions, 3, 3)
	for p := 0; p < cfg.partitions; p++ {
		s.tps = append(s.tps, common.TopicPartition{Topic: topic, Partition: int32(p)})
	}
	all := []int32{1, 2, 3}

	s.c.CreateTopic(baselineTopic, faulttest.RoundRobin(1, 3, 3), nil)
	s.res.Base = s.footprints()
	if cfg.filesBaseline {
		s.res.FilesBaseline = s.filesBaseline()
	}
	s.create()
	s.poll("every partition led by its preferred replica with its full ISR in ZooKeeper", 100*time.Millisecond, func() error {
		return s.zkState(want{live: all, fullISR: true, preferred: true})
	})
	s.checkLogDirs()
	if cfg.createOnly {
		return s.res
	}
	s.produce()
	if cfg.shutdownCycles > 0 {
		for i := 0; i < cfg.shutdownCycles; i++ {
			s.res.ShutdownCycles = append(s.res.ShutdownCycles, s.shutdownCycle(i))
		}
		return s.res
	}
	s.res.Idle = s.footprints()
	s.perReplica()
	s.metadataLatency()

	// A broker that is not the controller leads a third: its controlled
	// shutdown, then its restart.
	stopped := s.controlledShutdown()
	offset := fileSize(s.c.Node(stopped).Output)
	s.res.Restart = s.restart(stopped, "a clean shutdown", cfg.measureRejoin)
	s.checkCleanLoad(stopped, offset)
	// The controller's kill -9, then its restart; at the end every broker
	// is back in every ISR.
	killed := s.failover()
	s.res.RestartAfterKill = s.restart(killed, "kill -9", true)
	s.poll("every partition led with its full ISR in ZooKeeper at the end", 100*time.Millisecond, func() error {
		return s.zkState(want{live: all, fullISR: true})
	})
	s.checkLogDirs()
	s.checkFootprint()
	s.consumeBack()
	return s.res
}

// poll calls cond every interval until it returns nil, failing the test
// with its last error after bound.
func (s *scenario) poll(what string, interval time.Duration, cond func() error) {
	s.t.Helper()
	deadline := time.Now().Add(bound)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out after %v waiting for %s: %v\n%s", bound, what, err, s.c.DumpState())
		}
		time.Sleep(interval)
	}
}

// metadataEverywhere waits until the Metadata of every broker in viewers
// satisfies w for the scale topic and returns when the last one did.
func (s *scenario) metadataEverywhere(what string, viewers []int32, w want) time.Time {
	s.t.Helper()
	pending := slices.Clone(viewers)
	var last time.Time
	s.poll(what, 20*time.Millisecond, func() error {
		var errs []error
		for _, id := range slices.Clone(pending) {
			resp, _, _, err := s.conns[id].fetch([]string{topic})
			if err == nil {
				err = checkMetadata(resp, topic, s.assignment, w)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("broker %d: %w", id, err))
				continue
			}
			last = time.Now()
			pending = slices.DeleteFunc(pending, func(x int32) bool { return x == id })
		}
		return errors.Join(errs...)
	})
	return last
}

// checkZK reads every state znode of the scale topic and checks it
// against w.
func (s *scenario) checkZK(w want) {
	s.t.Helper()
	if err := s.zkState(w); err != nil {
		s.t.Fatalf("ZooKeeper: %v", err)
	}
}

// zkState returns why the scale topic's assignment and state znodes fall
// short of w, or nil.
func (s *scenario) zkState(w want) error {
	zk := s.c.ZK()
	a, err := zk.GetReplicaAssignment(topic)
	if err != nil {
		return err
	}
	if len(a) != s.cfg.partitions {
		return fmt.Errorf("%s has %d partitions, want %d", topic, len(a), s.cfg.partitions)
	}
	states, err := zk.GetPartitionStates(s.tps)
	if err != nil {
		return err
	}
	for _, tp := range s.tps {
		replicas := a[tp.Partition]
		if !faulttest.SameSet(replicas, s.assignment[tp.Partition]) {
			return fmt.Errorf("%s replicas %v, want %v", tp, replicas, s.assignment[tp.Partition])
		}
		st, ok := states[tp]
		if !ok {
			return fmt.Errorf("%s has no state znode", tp)
		}
		if why := w.checkPartition(st.Leader, st.ISR, replicas); why != "" {
			return fmt.Errorf("%s: %s (%s)", tp, why, st)
		}
	}
	return nil
}

// checkLogDirs checks that every replica's directory is on its broker.
func (s *scenario) checkLogDirs() {
	s.t.Helper()
	for i := 0; i < s.c.N(); i++ {
		n := s.c.Node(i)
		missing := 0
		for p, replicas := range s.assignment {
			if !slices.Contains(replicas, n.ID) {
				continue
			}
			dir := filepath.Join(n.LogDir, topic+"-"+strconv.Itoa(int(p)))
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				if missing++; missing <= 5 {
					s.t.Errorf("broker %d: replica directory %s missing: %v", n.ID, dir, err)
				}
			}
		}
		if missing > 0 {
			s.t.Fatalf("broker %d: %d replica directories missing", n.ID, missing)
		}
	}
}

// create sends CreateTopics with the whole assignment and waits until
// every partition is led with its full ISR in every broker's Metadata.
func (s *scenario) create() {
	s.t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = int32(bound / time.Millisecond)
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = topic
	rt.NumPartitions, rt.ReplicationFactor = -1, -1
	for p := 0; p < s.cfg.partitions; p++ {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition = int32(p)
		ra.Replicas = s.assignment[int32(p)]
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	}
	req.Topics = append(req.Topics, rt)
	s.res.CreateRequestPartitionCnt = len(rt.ReplicaAssignment)
	cl := s.c.Client()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	prof := s.startProfiles("create", 30)
	defer prof.wait()
	start := time.Now()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		s.t.Fatalf("CreateTopics %s: %v", topic, err)
	}
	s.res.CreateAnswered = time.Since(start)
	for _, tr := range resp.Topics {
		if err := kerr.ErrorForCode(tr.ErrorCode); err != nil {
			s.t.Fatalf("CreateTopics %s: %v", topic, err)
		}
	}
	done := s.metadataEverywhere("every partition led by its preferred replica with its full ISR after creation", []int32{1, 2, 3},
		want{live: []int32{1, 2, 3}, fullISR: true, preferred: true})
	s.res.Create = done.Sub(start)
	s.t.Logf("created %d partitions (RF=3): answered after %v, led with full ISRs in every broker's Metadata after %v",
		s.cfg.partitions, s.res.CreateAnswered.Round(time.Millisecond), s.res.Create.Round(time.Millisecond))
	s.logLeaderAndIsrTimes(start)
}

// logLeaderAndIsrTimes logs, per broker, when each LeaderAndIsr request of
// more than one partition that a broker finished after start arrived and
// how long the broker took with it (its state-change log lines), so the
// creation's time splits into the controller's part (until the request
// arrived), the broker's, and what followed until the Metadata showed it.
func (s *scenario) logLeaderAndIsrTimes(start time.Time) {
	for i := 0; i < s.c.N(); i++ {
		n := s.c.Node(i)
		data, err := os.ReadFile(n.Output)
		if err != nil {
			s.t.Logf("broker %d output: %v", n.ID, err)
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.Contains(line, `msg="finished LeaderAndIsr request"`) {
				continue
			}
			at, err1 := time.Parse(time.RFC3339Nano, logField(line, "time"))
			elapsed, err2 := strconv.Atoi(logField(line, "elapsed_ms"))
			parts, err3 := strconv.Atoi(logField(line, "partitions"))
			if err1 != nil || err2 != nil || err3 != nil || at.Before(start) || parts < 2 {
				continue
			}
			ms := func(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
			took := time.Duration(elapsed) * time.Millisecond
			s.t.Logf("broker %d: LeaderAndIsr of %d partitions arrived %s after CreateTopics was sent, handled in %s (finished at %s)",
				n.ID, parts, ms(at.Add(-took).Sub(start)), ms(took), ms(at.Sub(start)))
		}
	}
}

// logField returns the value of key=value in a line of slog's text
// format (unquoted values only), or "".
func logField(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		if !strings.HasPrefix(line, key+"=") {
			return ""
		}
		i = -1
	}
	v := line[i+len(key)+2:]
	if j := strings.IndexByte(v, ' '); j >= 0 {
		v = v[:j]
	}
	return v
}

// produce writes one acks=all record to every produceEvery-th partition
// (each broker leads a third of them).
func (s *scenario) produce() {
	s.t.Helper()
	cl := s.c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()))
	var recs []*kgo.Record
	for p := 0; p < s.cfg.partitions; p += produceEvery {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte(recordValue(int32(p)))})
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	start := time.Now()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		s.t.Fatalf("producing one record to each of %d partitions: %v", len(recs), err)
	}
	s.res.Produce = time.Since(start)
	s.t.Logf("produced one acks=all record to each of %d partitions in %v", len(recs), s.res.Produce.Round(time.Millisecond))
}

func recordValue(p int32) string { return "record of partition " + strconv.Itoa(int(p)) }

// footprints measures every broker.
func (s *scenario) footprints() []footprint {
	s.t.Helper()
	var fs []footprint
	for i := 0; i < s.c.N(); i++ {
		n := s.c.Node(i)
		p := n.Process()
		if p == nil || !p.Running() {
			s.t.Fatalf("broker %d is not running", n.ID)
		}
		f, err := measure(n.HTTPAddr, p.Pid())
		if err != nil {
			s.t.Fatalf("broker %d: %v", n.ID, err)
		}
		fs = append(fs, f)
	}
	return fs
}

// perReplica derives the idle cost of one replica on each broker (each
// holds one replica of every partition).
func (s *scenario) perReplica() {
	n := float64(s.cfg.partitions)
	for i := range s.res.Idle {
		b, a := s.res.Base[i], s.res.Idle[i]
		s.res.HeapPerReplica = append(s.res.HeapPerReplica, (float64(a.heap)-float64(b.heap))/n)
		s.res.StackPerReplica = append(s.res.StackPerReplica, (float64(a.stack)-float64(b.stack))/n)
		s.res.GoroutinesPerReplica = append(s.res.GoroutinesPerReplica, float64(a.goroutines-b.goroutines)/n)
		s.res.FDsPerReplica = append(s.res.FDsPerReplica, float64(a.fds-b.fds)/n)
		s.res.MapsPerReplica = append(s.res.MapsPerReplica, float64(a.maps-b.maps)/n)
		s.t.Logf("broker %d idle with %d replicas: heap %.1f MiB (%.0f B/replica), stacks %.0f B/replica, %d goroutines (%+.3f/replica), %d descriptors (%.3f/replica), %d maps (%.4f/replica)",
			i+1, s.cfg.partitions, float64(a.heap)/(1<<20), s.res.HeapPerReplica[i], s.res.StackPerReplica[i], a.goroutines, s.res.GoroutinesPerReplica[i],
			a.fds, s.res.FDsPerReplica[i], a.maps, s.res.MapsPerReplica[i])
	}
}

// metadataLatency times Metadata for the scale topic, the baseline topic
// and every topic, alternating, on broker 1 over one connection.
func (s *scenario) metadataLatency() {
	s.t.Helper()
	m := &metaConn{addr: s.c.Node(0).Addr()}
	defer m.close()
	var big, base, all []time.Duration
	for i := 0; i < s.cfg.metadataSamples; i++ {
		resp, size, d, err := m.fetch([]string{topic})
		if err != nil {
			s.t.Fatal(err)
		}
		if i == 0 {
			if err := checkMetadata(resp, topic, s.assignment, want{live: []int32{1, 2, 3}}); err != nil {
				s.t.Fatal(err)
			}
			s.res.MetaSize = size
		}
		big = append(big, d)
		_, _, d, err = m.fetch([]string{baselineTopic})
		if err != nil {
			s.t.Fatal(err)
		}
		base = append(base, d)
		_, _, d, err = m.fetch(nil)
		if err != nil {
			s.t.Fatal(err)
		}
		all = append(all, d)
	}
	slices.Sort(big)
	slices.Sort(base)
	slices.Sort(all)
	s.res.MetaP50, s.res.MetaP99 = quantile(big, 0.5), quantile(big, 0.99)
	s.res.BaseMetaP50, s.res.BaseMetaP99 = quantile(base, 0.5), quantile(base, 0.99)
	s.res.MetaAllTopicsP50 = quantile(all, 0.5)
	s.t.Logf("Metadata v%d of %d partitions (%d bytes): p50 %v, p99 %v; of 1 partition: p50 %v, p99 %v; of every topic: p50 %v (%d requests each)",
		metadataVersion, s.cfg.partitions, s.res.MetaSize, s.res.MetaP50, s.res.MetaP99, s.res.BaseMetaP50, s.res.BaseMetaP99, s.res.MetaAllTopicsP50, len(big))
}

// failover kills -9 the controller and waits until, after its session
// ended, every partition is led by a live broker in ZooKeeper and in every
// live broker's Metadata. It returns the killed broker's index.
func (s *scenario) failover() int {
	s.t.Helper()
	ctrl, ok := s.c.Controller()
	if !ok {
		s.t.Fatal("no controller")
	}
	ki := s.c.Index(ctrl)
	s.res.KilledController = ctrl
	var live []int32
	for _, id := range []int32{1, 2, 3} {
		if id != ctrl {
			live = append(live, id)
		}
	}
	zk := s.c.ZK()
	offsets := map[int]int64{}
	for i := 0; i < s.c.N(); i++ {
		if i != ki {
			offsets[i] = fileSize(s.c.Node(i).Output)
		}
	}
	kill := time.Now()
	s.c.Kill9(ki)
	prof := s.startProfiles("failover", 20)
	defer prof.wait()
	var end time.Time
	s.poll(fmt.Sprintf("broker %d's session to end", ctrl), 5*time.Millisecond, func() error {
		ok, _, err := zk.Exists(zkpaths.BrokerIDPath(ctrl))
		if err != nil {
			return err
		}
		if ok {
			return fmt.Errorf("%s still there", zkpaths.BrokerIDPath(ctrl))
		}
		end = time.Now()
		return nil
	})
	s.res.SessionEnd = end.Sub(kill)
	s.poll("another controller", 5*time.Millisecond, func() error {
		id, ok := s.c.Controller()
		if !ok || id == ctrl {
			return errors.New("no new controller yet")
		}
		s.res.Election = time.Since(end)
		return nil
	})
	done := s.metadataEverywhere("every partition led by a live broker after the controller's kill -9", live, want{live: live})
	s.res.Failover = done.Sub(end)
	s.saveOutputs("failover")
	s.checkZK(want{live: live})
	s.t.Logf("controller %d killed -9: session ended after %v; then a new controller after %v, every partition led by a live broker in every live broker's Metadata after %v",
		ctrl, s.res.SessionEnd.Round(time.Millisecond), s.res.Election.Round(time.Millisecond), s.res.Failover.Round(time.Millisecond))
	// The new controller's own breakdown of its failover (its phases'
	// durations), for the reader of the log.
	if id, ok := s.c.Controller(); ok {
		if i := s.c.Index(id); i >= 0 {
			if line := lineAfter(s.c.Node(i).Output, offsets[i], "controller failover complete"); line != "" {
				s.t.Logf("broker %d: %s", id, line)
			}
		}
	}
	return ki
}

// lineAfter returns the part from "msg=" of the first line of a broker's
// output after offset that contains substr ("" if none).
func lineAfter(path string, offset int64, substr string) string {
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) < offset {
		return ""
	}
	for _, line := range strings.Split(string(data[offset:]), "\n") {
		if i := strings.Index(line, "msg="); i >= 0 && strings.Contains(line, substr) {
			return line[i:]
		}
	}
	return ""
}

// controlledShutdown sends SIGTERM to a broker that is not the controller
// and leads a third of the partitions: its controlled shutdown must
// succeed, it must exit 0, and every partition must be led by another
// broker. It returns the stopped broker's index.
func (s *scenario) controlledShutdown() int {
	s.t.Helper()
	ctrl, ok := s.c.Controller()
	if !ok {
		s.t.Fatal("no controller")
	}
	var victim int32
	var survivors []int32
	for _, id := range []int32{1, 2, 3} {
		if id != ctrl && victim == 0 {
			victim = id
		} else {
			survivors = append(survivors, id)
		}
	}
	vi := s.c.Index(victim)
	n := s.c.Node(vi)
	resp, _, _, err := s.conns[victim].fetch([]string{topic})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if t.Topic != nil && *t.Topic == topic && p.Leader == victim {
				s.res.StoppedLed++
			}
		}
	}
	if s.res.StoppedLed < s.cfg.partitions/3 {
		s.t.Fatalf("broker %d leads %d of %d partitions before its shutdown, want a third", victim, s.res.StoppedLed, s.cfg.partitions)
	}
	s.res.StoppedBroker = victim
	offset := fileSize(n.Output)
	cn := s.c.Node(s.c.Index(ctrl))
	ctrlOffset := fileSize(cn.Output)
	start := time.Now()
	s.c.Stop(vi)
	s.res.ShutdownExit = time.Since(start)
	if code := n.Process().ExitCode(); code != 0 {
		s.t.Fatalf("broker %d exited %d after SIGTERM, want 0:\n%s", victim, code, s.c.DumpState())
	}
	ts, ok := logLineTime(n.Output, offset, "controlled shutdown succeeded")
	if !ok {
		s.t.Fatalf("broker %d: no \"controlled shutdown succeeded\" in its output after SIGTERM:\n%s", victim, s.c.DumpState())
	}
	s.res.ControlledShutdown = ts.Sub(start)
	w := want{live: survivors, notLeader: victim}
	s.checkZK(w)
	s.metadataEverywhere("no partition led by the stopped broker", survivors, w)
	s.t.Logf("broker %d (leading %d partitions) stopped with SIGTERM: controlled shutdown succeeded after %v, exited 0 after %v; the controller (broker %d): %s",
		victim, s.res.StoppedLed, s.res.ControlledShutdown.Round(time.Millisecond), s.res.ShutdownExit.Round(time.Millisecond),
		ctrl, lineAfter(cn.Output, ctrlOffset, "controlled shutdown handled"))
	return vi
}

// restartTimes are the durations of one broker's restart, from the
// process's start.
type restartTimes struct {
	Registered time.Duration // registered in ZooKeeper and accepting connections
	Serving    time.Duration // its Metadata lists every partition led by a live broker
	ISRZK      time.Duration // back in every ISR in ZooKeeper (if waited for)
	ISRMeta    time.Duration // back in every ISR in every broker's Metadata (if waited for)
}

// restart starts broker index i again and waits until its Metadata is
// complete and, with rejoin, until it is back in every ISR in ZooKeeper
// and in every broker's Metadata. Leaders write an ISR expansion to
// ZooKeeper themselves and announce a batch of them through
// /isr_change_notification once expansions pause for 5 s (or 60 s after
// the last), so the Metadata lags ZooKeeper by that much.
func (s *scenario) restart(i int, after string, rejoin bool) restartTimes {
	s.t.Helper()
	var r restartTimes
	id := s.c.Node(i).ID
	all := []int32{1, 2, 3}
	start := time.Now()
	s.c.Restart(i)
	r.Registered = time.Since(start)
	serving := s.metadataEverywhere("the restarted broker's Metadata", []int32{id}, want{live: all})
	r.Serving = serving.Sub(start)
	if rejoin {
		s.poll("the restarted broker back in every ISR in ZooKeeper", 100*time.Millisecond, func() error {
			return s.zkState(want{live: all, fullISR: true})
		})
		r.ISRZK = time.Since(start)
		done := s.metadataEverywhere("the restarted broker back in every ISR in every broker's Metadata", all, want{live: all, fullISR: true})
		r.ISRMeta = done.Sub(start)
	}
	isr := "not waited for"
	if rejoin {
		isr = fmt.Sprintf("after %v in ZooKeeper, %v in every broker's Metadata", r.ISRZK.Round(time.Millisecond), r.ISRMeta.Round(time.Millisecond))
	}
	s.t.Logf("broker %d restarted after %s with %d replicas: registered after %v, its Metadata complete after %v; back in every ISR %s",
		id, after, s.cfg.partitions, r.Registered.Round(time.Millisecond), r.Serving.Round(time.Millisecond), isr)
	return r
}

// checkFootprint checks every broker's descriptors and maps against its
// segments.
func (s *scenario) checkFootprint() {
	s.t.Helper()
	s.res.End = s.footprints()
	for i, f := range s.res.End {
		n := s.c.Node(i)
		segs, err := segments(n.LogDir)
		if err != nil {
			s.t.Fatal(err)
		}
		s.res.EndSegments = append(s.res.EndSegments, segs)
		s.t.Logf("broker %d: %d segments, %d descriptors, %d maps, heap %.1f MiB, %d goroutines",
			n.ID, segs, f.fds, f.maps, float64(f.heap)/(1<<20), f.goroutines)
		if segs < s.cfg.partitions {
			s.t.Errorf("broker %d: %d segments for %d replicas", n.ID, segs, s.cfg.partitions)
		}
		if f.fds > segs+fdReserve {
			s.t.Errorf("broker %d: %d descriptors for %d segments, want at most one per segment plus %d", n.ID, f.fds, segs, fdReserve)
		}
		if f.maps > mapsReserve {
			s.t.Errorf("broker %d: %d maps with %d segments, want at most %d (no index mapped while idle)", n.ID, f.maps, segs, mapsReserve)
		}
	}
}

// consumeBack reads every partition from its start with franz-go and
// checks that each produced-to partition holds its one record and no other
// holds any.
func (s *scenario) consumeBack() {
	s.t.Helper()
	cl := s.c.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[int32]int{}
	produced := (s.cfg.partitions + produceEvery - 1) / produceEvery
	deadline := time.Now().Add(bound)
	for len(seen) < produced {
		if time.Now().After(deadline) {
			s.t.Fatalf("consumed records of %d of %d partitions within %v", len(seen), produced, bound)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				s.t.Fatalf("consuming %s-%d: %v", t, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Partition%produceEvery != 0 || r.Offset != 0 || string(r.Value) != recordValue(r.Partition) {
				s.t.Fatalf("%s-%d: record at offset %d is %q, want %q at 0", r.Topic, r.Partition, r.Offset, r.Value, recordValue(r.Partition))
			}
			seen[r.Partition]++
		})
	}
	for p, n := range seen {
		if n != 1 {
			s.t.Fatalf("%s-%d: %d records, want 1", topic, p, n)
		}
	}
	s.res.ConsumedBack = len(seen)
	s.t.Logf("consumed the %d records back, one per partition written", len(seen))
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for i, x := range xs {
		if i == 0 || x > m {
			m = x
		}
	}
	return m
}

func maxInt(fs []footprint, f func(footprint) int) int {
	m := 0
	for _, x := range fs {
		m = max(m, f(x))
	}
	return m
}

// Table renders the result as the README's Markdown table.
func (r Result) Table() string {
	var b strings.Builder
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + " ms"
	}
	sec := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s" }
	fmt.Fprintf(&b, "| step (%d partitions, RF=3, 3 kafka-server processes) | measured | baseline | target |\n|---|---:|---|---|\n", r.Partitions)
	files := "—"
	if r.FilesBaseline > 0 {
		files = fmt.Sprintf("%s (the %d replicas' directories and 4 files each made by plain code, no fsync, just before)", sec(r.FilesBaseline), 3*r.Partitions)
	}
	fmt.Fprintf(&b, "| create, CreateTopics sent until every partition led with a full ISR in every broker's Metadata | %s | %s | ≤ 10 s |\n", sec(r.Create), files)
	fmt.Fprintf(&b, "| failover after kill -9 of the controller: its session's end until every partition led by a live broker in every broker's Metadata | %s | (session end %s after the kill; new controller %s after it) | ≤ 2 s |\n",
		sec(r.Failover), sec(r.SessionEnd), sec(r.Election))
	fmt.Fprintf(&b, "| controlled shutdown of a broker leading %d: SIGTERM until \"controlled shutdown succeeded\" | %s | (process exit %s) | ≤ 1 s |\n", r.StoppedLed, sec(r.ControlledShutdown), sec(r.ShutdownExit))
	rs := func(r restartTimes) string {
		isr := "not waited for"
		if r.ISRZK > 0 {
			isr = sec(r.ISRZK) + " in ZooKeeper, " + sec(r.ISRMeta) + " in every broker's Metadata"
		}
		return fmt.Sprintf("%s | (registered %s; back in every ISR: %s)", sec(r.Serving), sec(r.Registered), isr)
	}
	fmt.Fprintf(&b, "| restart after the clean shutdown: start until its Metadata lists every partition led | %s | ≤ 5 s |\n", rs(r.Restart))
	fmt.Fprintf(&b, "| restart after kill -9: start until its Metadata lists every partition led | %s | — |\n", rs(r.RestartAfterKill))
	fmt.Fprintf(&b, "| Metadata of %d partitions (%d bytes), p50 / p99 | %s / %s | %s / %s (1 partition) | ≤ 20 ms |\n", r.Partitions, r.MetaSize, ms(r.MetaP50), ms(r.MetaP99), ms(r.BaseMetaP50), ms(r.BaseMetaP99))
	for i := range r.HeapPerReplica {
		fmt.Fprintf(&b, "| broker %d, idle, per replica: heap / stacks / goroutines / descriptors / maps | %.0f B / %.0f B / %.3f / %.3f / %.4f | %.1f MiB heap before the topic | ≤ 20 KiB heap |\n",
			i+1, r.HeapPerReplica[i], r.StackPerReplica[i], r.GoroutinesPerReplica[i], r.FDsPerReplica[i], r.MapsPerReplica[i], float64(r.Base[i].heap)/(1<<20))
	}
	for i, f := range r.End {
		fmt.Fprintf(&b, "| broker %d at the end: descriptors / maps | %d / %d | %d segments | ≤ 1 per segment + reserve; maps ≤ 65,530 |\n", i+1, f.fds, f.maps, r.EndSegments[i])
	}
	return b.String()
}
