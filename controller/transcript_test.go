package controller

// Transcript tests (in the style of etcd-io/raft's interaction tests, on
// the same github.com/cockroachdb/datadriven library): testdata/*.txt hold
// scripts of cluster events, one command per directive, each followed by
// "----" and the controller's ZooKeeper writes and the requests it sent
// ("ok" when there were none). Run with -rewrite to rewrite the expected
// output after an intended change, and read the diff.

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/klassik/klassik/broker/common"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zktest"
)

// recordingSink records flushed requests instead of sending them and
// answers StopReplica(delete) with success, as a healthy broker would.
type recordingSink struct {
	c     *Controller
	sent  []outgoingRequest
	fail  map[int32]bool // brokers whose StopReplica(delete) fails
	known map[int32]bool
	// storage lists, per broker, partitions on a failed log dir: their
	// LeaderAndIsr answers are KAFKA_STORAGE_ERROR.
	storage map[int32]map[common.TopicPartition]bool
}

func (s *recordingSink) addBroker(b Broker)    { s.known[b.ID] = true }
func (s *recordingSink) removeBroker(id int32) { delete(s.known, id) }
func (s *recordingSink) maxVersion(int32, int16) int16 {
	return -1
}
func (s *recordingSink) shutdown() {}

// answer is broker's LeaderAndIsr answer for tp: KAFKA_STORAGE_ERROR when
// the partition is on a failed log dir there.
func (s *recordingSink) answer(broker int32, tp common.TopicPartition) kmsg.LeaderAndISRResponseTopicPartition {
	rp := kmsg.NewLeaderAndISRResponseTopicPartition()
	rp.Partition = tp.Partition
	if s.storage[broker][tp] {
		rp.ErrorCode = kerr.KafkaStorageError.Code
	}
	return rp
}

func (s *recordingSink) send(reqs []outgoingRequest) {
	for _, o := range reqs {
		if !s.known[o.broker] {
			continue
		}
		s.sent = append(s.sent, o)
		if lr, ok := o.req.(*kmsg.LeaderAndISRRequest); ok && len(s.storage[o.broker]) > 0 {
			resp := lr.ResponseKind().(*kmsg.LeaderAndISRResponse)
			for _, ts := range lr.TopicStates {
				rt := kmsg.NewLeaderAndISRResponseTopic()
				rt.TopicID = ts.TopicID
				for _, p := range ts.PartitionStates {
					rt.Partitions = append(rt.Partitions, s.answer(o.broker, common.TopicPartition{Topic: ts.Topic, Partition: p.Partition}))
				}
				resp.Topics = append(resp.Topics, rt)
			}
			s.c.onResponse(o.broker, o, resp)
		}
		if o.kind == kindStopReplica && len(o.deletePartitions) > 0 {
			resp := kmsg.NewPtrStopReplicaResponse()
			if s.fail[o.broker] {
				resp.ErrorCode = 56 // KAFKA_STORAGE_ERROR
			}
			s.c.onResponse(o.broker, o, resp)
		}
	}
}

// syncWatchClient is the typed client of one controller on zktest, except
// that its watches are the server's persistent watches: their callbacks run
// on the goroutine that made the change, so every event a change causes is
// queued before the harness drains the queues, and a transcript never
// depends on goroutine timing.
type syncWatchClient struct {
	*zkclient.Client
	srv *zktest.Server
}

func (z syncWatchClient) WatchData(p string, fn func()) func()     { return z.srv.WatchData(p, fn) }
func (z syncWatchClient) WatchChildren(p string, fn func()) func() { return z.srv.WatchChildren(p, fn) }

type harness struct {
	t       *testing.T
	srv     *zktest.Server
	ctrls   map[int32]*Controller
	clients map[int32]*zkclient.Client
	sinks   map[int32]*recordingSink
	cfg     func(*Config)
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, srv: zktest.NewServer(), ctrls: map[int32]*Controller{}, clients: map[int32]*zkclient.Client{}, sinks: map[int32]*recordingSink{}}
	var ops []any
	for _, p := range []string{"/brokers", "/brokers/ids", "/brokers/topics", "/admin", "/admin/delete_topics", "/config", "/config/topics", "/isr_change_notification", "/log_dir_event_notification"} {
		ops = append(ops, zkclient.CreateOp(p, nil, zkclient.Persistent))
	}
	if err := h.srv.Multi(ops...); err != nil {
		t.Fatal(err)
	}
	h.srv.Record()
	return h
}

// The harness acts as brokers and tools through the server directly (no
// session, so none of it shows as a controller write).

func (h *harness) create(p string, data []byte) error {
	return h.srv.Multi(zkclient.CreateOp(p, data, zkclient.Persistent))
}

func (h *harness) set(p string, data []byte) error {
	return h.srv.Multi(zkclient.SetOp(p, data, -1))
}

func (h *harness) delete(p string) error { return h.srv.Multi(zkclient.DeleteOp(p, -1)) }

func (h *harness) get(p string) ([]byte, zk.Stat, error) {
	data, st, ok := h.srv.Get(p)
	if !ok {
		return nil, zk.Stat{}, fmt.Errorf("%s: %w", p, zk.ErrNoNode)
	}
	return data, st, nil
}

// numChildren counts the children of a node that has no grandchildren.
func (h *harness) numChildren(p string) int { return len(h.srv.Paths(p)) - 1 }

func (h *harness) controller(id int32) *Controller {
	if c, ok := h.ctrls[id]; ok {
		return c
	}
	cfg := DefaultConfig(id)
	cfg.AutoLeaderRebalanceEnable = false
	cfg.Logger = quietLogger()
	if h.cfg != nil {
		h.cfg(&cfg)
	}
	cl, err := h.srv.NewClient("", zkclient.WithClock(func() time.Time { return time.UnixMilli(0) }), zkclient.WithMaxInFlightRequests(1))
	if err != nil {
		h.t.Fatal(err)
	}
	c := newController(cfg, syncWatchClient{Client: cl, srv: h.srv}, func() int64 { return 0 })
	sink := &recordingSink{c: c, known: map[int32]bool{}, fail: map[int32]bool{}, storage: map[int32]map[common.TopicPartition]bool{}}
	c.newSink = func() requestSink { return sink }
	h.ctrls[id], h.clients[id], h.sinks[id] = c, cl, sink
	h.t.Cleanup(func() {
		c.em.close()
		c.onControllerResignation()
		cl.Close()
	})
	return c
}

// drain processes every queued event of every controller, synchronously.
// active returns the controller that holds the controller role.
func (h *harness) active() (*Controller, error) {
	var active *Controller
	for _, c := range h.ctrls {
		if c.IsActive() {
			active = c
		}
	}
	if active == nil {
		return nil, fmt.Errorf("no active controller")
	}
	return active, nil
}

func (h *harness) drain() {
	for progress := true; progress; {
		progress = false
		ids := sortedMapKeys(h.ctrls)
		for _, id := range ids {
			c := h.ctrls[id]
			for {
				q := c.em.take()
				if q == nil {
					break
				}
				if q.claim() {
					close(q.started)
					c.process(q.ev)
					progress = true
				}
			}
		}
	}
}

func parseInts(s string) []int32 {
	var out []int32
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.Atoi(f)
		if err != nil {
			panic(fmt.Sprintf("bad number %q", f))
		}
		out = append(out, int32(n))
	}
	return out
}

func (h *harness) brokerJSON(id int32) []byte {
	return zkpaths.BrokerInfo{ID: id, Version: 5, JMXPort: -1, Timestamp: 1,
		Endpoints: []zkpaths.EndPoint{{ListenerName: "PLAINTEXT", Host: "127.0.0.1", Port: 9000 + id, SecurityProtocol: "PLAINTEXT"}}}.Encode()
}

// exec runs one command and returns its transcript output.
func (h *harness) exec(cmd string, args []string) (string, error) {
	switch cmd {
	case "broker-up":
		for _, id := range parseInts(strings.Join(args, " ")) {
			if err := h.create(zkpaths.BrokerIDPath(id), h.brokerJSON(id)); err != nil {
				return "", err
			}
		}
	case "broker-down":
		for _, id := range parseInts(strings.Join(args, " ")) {
			if err := h.delete(zkpaths.BrokerIDPath(id)); err != nil {
				return "", err
			}
		}
	case "broker-bounce":
		for _, id := range parseInts(strings.Join(args, " ")) {
			// Deleted and re-created between two watch deliveries: a larger czxid.
			p := zkpaths.BrokerIDPath(id)
			if err := h.srv.Multi(zkclient.DeleteOp(p, -1), zkclient.CreateOp(p, h.brokerJSON(id), zkclient.Persistent)); err != nil {
				return "", err
			}
		}
	case "start":
		for _, id := range parseInts(strings.Join(args, " ")) {
			c := h.controller(id)
			c.em.put(startupEvent{})
		}
	case "stop":
		// The controller's process dies: its session (and so /controller,
		// if it held it) goes away.
		id := parseInts(args[0])[0]
		c := h.ctrls[id]
		c.em.close()
		c.onControllerResignation()
		h.clients[id].Close()
		delete(h.ctrls, id)
		delete(h.clients, id)
	case "create-topic":
		ta := zkpaths.TopicAssignment{Partitions: map[int32][]int32{}, TopicID: "ztFyzQr5QwmEYeGhG6khTg"}
		for _, a := range args[1:] {
			p, rs, _ := strings.Cut(a, ":")
			n, _ := strconv.Atoi(p)
			ta.Partitions[int32(n)] = parseInts(rs)
		}
		_ = h.create(zkpaths.ConfigPath(zkpaths.ConfigTypeTopic, args[0]), zkpaths.EncodeEntityConfig(map[string]string{}))
		if err := h.create(zkpaths.TopicPath(args[0]), ta.Encode()); err != nil {
			return "", err
		}
	case "add-partitions":
		data, _, err := h.get(zkpaths.TopicPath(args[0]))
		if err != nil {
			return "", err
		}
		ta, err := zkpaths.DecodeTopicAssignment(data)
		if err != nil {
			return "", err
		}
		for _, a := range args[1:] {
			p, rs, _ := strings.Cut(a, ":")
			n, _ := strconv.Atoi(p)
			ta.Partitions[int32(n)] = parseInts(rs)
		}
		if err := h.set(zkpaths.TopicPath(args[0]), ta.Encode()); err != nil {
			return "", err
		}
	case "delete-topic":
		if err := h.create(zkpaths.DeleteTopicPath(args[0]), nil); err != nil {
			return "", err
		}
	case "topic-config":
		cfg := map[string]string{}
		for _, kv := range args[1:] {
			k, v, _ := strings.Cut(kv, "=")
			cfg[k] = v
		}
		if err := h.set(zkpaths.ConfigPath(zkpaths.ConfigTypeTopic, args[0]), zkpaths.EncodeEntityConfig(cfg)); err != nil {
			return "", err
		}
	case "leader-isr":
		// The partition leader shrinks/expands the ISR itself (classic path)
		// and notifies the controller.
		p, _ := strconv.Atoi(args[1])
		sp := zkpaths.PartitionStatePath(args[0], int32(p))
		data, st, err := h.get(sp)
		if err != nil {
			return "", err
		}
		s, err := zkpaths.DecodeLeaderAndIsr(data, st.Version)
		if err != nil {
			return "", err
		}
		s.ISR = parseInts(strings.Join(args[2:], " "))
		if err := h.set(sp, s.Encode()); err != nil {
			return "", err
		}
		seq := h.numChildren(zkpaths.IsrChangeNotificationPath)
		note := zkpaths.EncodeIsrChangeNotification([]common.TopicPartition{{Topic: args[0], Partition: int32(p)}})
		if err := h.create(fmt.Sprintf("%s/isr_change_%010d", zkpaths.IsrChangeNotificationPath, seq), note); err != nil {
			return "", err
		}
	case "controlled-shutdown":
		id := parseInts(args[0])[0]
		active, err := h.active()
		if err != nil {
			return "", err
		}
		remaining, err := active.processControlledShutdown(id, -1)
		h.drain()
		return fmt.Sprintf("remaining=%v err=%v\n", remaining, err) + h.output(), nil
	case "elect-leaders":
		kind := ElectPreferred
		if args[0] == "unclean" {
			kind = ElectUnclean
		}
		var tps []common.TopicPartition
		for _, a := range args[1:] {
			i := strings.LastIndex(a, "-")
			p, _ := strconv.Atoi(a[i+1:])
			tps = append(tps, common.TopicPartition{Topic: a[:i], Partition: int32(p)})
		}
		active, err := h.active()
		if err != nil {
			return "", err
		}
		outcomes, err := active.processReplicaLeaderElection(replicaLeaderElectionEvent{partitions: tps, kind: kind, trigger: triggerAdmin})
		h.drain()
		var b strings.Builder
		for _, tp := range sortedKeys(outcomes) {
			fmt.Fprintf(&b, "%s: leader=%d err=%v\n", tp, outcomes[tp].Leader, outcomes[tp].Err)
		}
		if err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
		return b.String() + h.output(), nil
	case "zk-preferred-election":
		var tps []common.TopicPartition
		for _, a := range args {
			i := strings.LastIndex(a, "-")
			p, _ := strconv.Atoi(a[i+1:])
			tps = append(tps, common.TopicPartition{Topic: a[:i], Partition: int32(p)})
		}
		if err := h.create(zkpaths.PreferredReplicaElectionPath, zkpaths.EncodePreferredReplicaElection(tps)); err != nil {
			return "", err
		}
	case "reassign", "reassign-cancel", "list-reassignments":
		active, err := h.active()
		if err != nil {
			return "", err
		}
		var b strings.Builder
		if cmd == "list-reassignments" {
			r := active.processListReassignments(listReassignmentsEvent{})
			for _, tp := range sortedKeys(r.val) {
				a := r.val[tp]
				fmt.Fprintf(&b, "%s: replicas=%v adding=%v removing=%v\n", tp, a.Replicas, a.AddingReplicas, a.RemovingReplicas)
			}
			return b.String(), nil
		}
		i := strings.LastIndex(args[0], "-")
		p, _ := strconv.Atoi(args[0][i+1:])
		tp := common.TopicPartition{Topic: args[0][:i], Partition: int32(p)}
		var target []int32
		if cmd == "reassign" {
			target = parseInts(args[1])
		}
		errs, err := active.processApiReassignment(apiReassignmentEvent{targets: map[common.TopicPartition][]int32{tp: target}})
		h.drain()
		fmt.Fprintf(&b, "%s: err=%v", tp, errs[tp])
		if err != nil {
			fmt.Fprintf(&b, " (%v)", err)
		}
		return b.String() + "\n" + h.output(), nil
	case "zk-reassign":
		var parts []zkpaths.PartitionReplicas
		for _, a := range args {
			tpStr, rs, _ := strings.Cut(a, ":")
			i := strings.LastIndex(tpStr, "-")
			p, _ := strconv.Atoi(tpStr[i+1:])
			parts = append(parts, zkpaths.PartitionReplicas{Topic: tpStr[:i], Partition: int32(p), Replicas: parseInts(rs)})
		}
		if err := h.create(zkpaths.ReassignPartitionsPath, zkpaths.EncodeReassignment(parts)); err != nil {
			return "", err
		}
	case "log-dir-failure":
		id := parseInts(args[0])[0]
		for _, a := range args[1:] {
			i := strings.LastIndex(a, "-")
			p, _ := strconv.Atoi(a[i+1:])
			for _, s := range h.sinks {
				if s.storage[id] == nil {
					s.storage[id] = map[common.TopicPartition]bool{}
				}
				s.storage[id][common.TopicPartition{Topic: a[:i], Partition: int32(p)}] = true
			}
		}
		seq := h.numChildren(zkpaths.LogDirEventNotificationPath)
		if err := h.create(fmt.Sprintf("%s/log_dir_event_%010d", zkpaths.LogDirEventNotificationPath, seq), zkpaths.EncodeLogDirEventNotification(id)); err != nil {
			return "", err
		}
	case "unclean-enabled":
		for _, c := range h.ctrls {
			c.TopicUncleanLeaderElectionEnabled(args[0])
		}
	case "auto-rebalance":
		for _, c := range h.ctrls {
			c.em.put(autoPreferredReplicaLeaderElectionEvent{})
		}
	case "fail-stop-replica":
		for _, id := range parseInts(strings.Join(args, " ")) {
			for _, s := range h.sinks {
				s.fail[id] = true
			}
		}
	case "heal-stop-replica":
		for _, s := range h.sinks {
			s.fail = map[int32]bool{}
		}
	case "state":
		h.drain()
		return h.dumpStates(), nil
	default:
		return "", fmt.Errorf("unknown command %q", cmd)
	}
	h.drain()
	return h.output(), nil
}

func (h *harness) dumpStates() string {
	var b strings.Builder
	var paths []string
	for _, p := range h.srv.Paths("/") {
		if strings.HasSuffix(p, "/state") || p == "/controller" || p == "/controller_epoch" || strings.HasPrefix(p, "/brokers/topics/") && strings.Count(p, "/") == 3 || strings.HasPrefix(p, "/admin/delete_topics/") || p == zkpaths.PreferredReplicaElectionPath || p == zkpaths.ReassignPartitionsPath {
			paths = append(paths, p)
		}
	}
	for _, p := range paths {
		data, st, _ := h.srv.Get(p)
		fmt.Fprintf(&b, "%s v%d %s\n", p, st.Version, data)
	}
	for _, id := range sortedMapKeys(h.ctrls) {
		c := h.ctrls[id]
		fmt.Fprintf(&b, "controller %d: active=%v epoch=%d\n", id, c.IsActive(), c.Epoch())
	}
	return b.String()
}

func (h *harness) output() string {
	var b strings.Builder
	// The controller's writes are the fenced ones: a multi that starts by
	// checking the /controller_epoch version.
	for _, txn := range h.srv.TakeRecord() {
		if len(txn.Ops) == 0 || txn.Ops[0].Kind != "check" || txn.Ops[0].Path != zkpaths.ControllerEpochPath {
			continue
		}
		for _, op := range txn.Ops[1:] {
			switch op.Kind {
			case "delete":
				b.WriteString("zk: delete " + op.Path + "\n")
			default:
				fmt.Fprintf(&b, "zk: %s %s %s\n", op.Kind, op.Path, op.Data)
			}
		}
	}
	for _, id := range sortedMapKeys(h.sinks) {
		s := h.sinks[id]
		for _, o := range s.sent {
			b.WriteString(describeRequest(o) + "\n")
		}
		s.sent = nil
	}
	return b.String()
}

func describeRequest(o outgoingRequest) string {
	var b strings.Builder
	switch r := o.req.(type) {
	case *kmsg.LeaderAndISRRequest:
		fmt.Fprintf(&b, "-> %d LeaderAndIsr v%d controller=%d epoch=%d", o.broker, r.Version, r.ControllerID, r.ControllerEpoch)
		for _, ts := range r.TopicStates {
			for _, p := range ts.PartitionStates {
				fmt.Fprintf(&b, "\n     %s-%d leader=%d leader_epoch=%d isr=%v replicas=%v zk_version=%d", ts.Topic, p.Partition, p.Leader, p.LeaderEpoch, p.ISR, p.Replicas, p.ZKVersion)
				if p.IsNew {
					b.WriteString(" new")
				}
				if p.LeaderRecoveryState != 0 {
					b.WriteString(" recovering")
				}
			}
		}
		var leaders []string
		for _, l := range r.LiveLeaders {
			leaders = append(leaders, fmt.Sprintf("%d@%s:%d", l.BrokerID, l.Host, l.Port))
		}
		fmt.Fprintf(&b, "\n     live_leaders=%v", leaders)
	case *kmsg.UpdateMetadataRequest:
		var ids []int32
		for _, lb := range r.LiveBrokers {
			ids = append(ids, lb.ID)
		}
		fmt.Fprintf(&b, "-> %d UpdateMetadata v%d epoch=%d brokers=%v", o.broker, r.Version, r.ControllerEpoch, ids)
		for _, ts := range r.TopicStates {
			for _, p := range ts.PartitionStates {
				fmt.Fprintf(&b, "\n     %s-%d leader=%d leader_epoch=%d isr=%v offline=%v", ts.Topic, p.Partition, p.Leader, p.LeaderEpoch, p.ISR, p.OfflineReplicas)
			}
		}
	case *kmsg.StopReplicaRequest:
		fmt.Fprintf(&b, "-> %d StopReplica v%d epoch=%d", o.broker, r.Version, r.ControllerEpoch)
		for _, t := range r.Topics {
			for _, p := range t.PartitionStates {
				fmt.Fprintf(&b, " %s-%d(leader_epoch=%d delete=%v)", t.Topic, p.Partition, p.LeaderEpoch, p.Delete)
			}
		}
	}
	return b.String()
}

func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			h := newHarness(t)
			datadriven.RunTest(t, file, func(t *testing.T, d *datadriven.TestData) string {
				args := make([]string, len(d.CmdArgs))
				for i, a := range d.CmdArgs {
					args[i] = a.String()
				}
				out, err := h.run(d.Cmd, args)
				if err != nil {
					t.Fatalf("%s: %q: %v", d.Pos, d.FullCmd(), err)
				}
				if out = strings.TrimRight(out, "\n"); out == "" {
					out = "ok"
				}
				return out + "\n"
			})
		})
	}
}

// run is exec plus "config key=value", which sets the configuration of the
// controllers started afterwards.
func (h *harness) run(cmd string, args []string) (string, error) {
	if cmd != "config" {
		return h.exec(cmd, args)
	}
	for _, kv := range args {
		k, v, _ := strings.Cut(kv, "=")
		b := v == "true"
		switch k {
		case "unclean.leader.election.enable":
			h.cfg = func(cfg *Config) { cfg.UncleanLeaderElectionEnable = b }
		case "delete.topic.enable":
			h.cfg = func(cfg *Config) { cfg.DeleteTopicEnable = b }
		default:
			return "", fmt.Errorf("unknown config %q", k)
		}
	}
	return "", nil
}
