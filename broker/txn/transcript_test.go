package txn

// Transcript tests (etcd-io/raft's interaction-test style, on
// github.com/cockroachdb/datadriven): testdata/*.txt hold scripts of
// client requests and cluster events, each followed by "----" and what
// the coordinators answered, the __transaction_state records they wrote
// (as kafka-dump-log.sh --transaction-log-decoder prints them) and the
// WriteTxnMarkers requests they sent. Run with -rewrite to regenerate the
// expected output after an intended change, and read the diff.
//
// Commands (broker=B picks the coordinator, default 1; P is a
// __transaction_state partition number or txn=ID for that id's
// partition):
//
//	become-leader P epoch=E [broker=B]   resign P epoch=E [broker=B]
//	init-producer-id txn=ID timeout=MS [pid=N epoch=N] [v=N]
//	add-partitions txn=ID pid=N epoch=N [v=N] t-0 t-1 ...
//	add-offsets txn=ID pid=N epoch=N group=G [v=N]
//	end-txn txn=ID pid=N epoch=N commit|abort [v=N]
//	advance DURATION                     (the shared fake clock)
//	markers fail t-0 CODE [times=N]      (next N answers for t-0)
//	markers ok t-0                       (drop the queued answers)
//	leader t-0 B|none|gone               (the metadata cache's leader)
//	broker down|up B                     (marker sends to B fail)
//	store fail CODE|ok [broker=B]        (B's appends fail)
//	store hold-reads|release-reads       (loads block until released)
//	seed txn=ID state=S pid=N epoch=N [start=MS] [t-0 ...]  (a record
//	                                     written by an earlier coordinator;
//	                                     state=tombstone for a tombstone)
//	seed-garbage txn=ID                  (an unreadable record)
//	pids fail|ok                         (producer id blocks)
//	state txn=ID [broker=B]              (DescribeTransactions)
//	list [broker=B] [states=S,S] [pids=N,N]
//	metrics [broker=B]                   (the coordinator's gauges)
//	close broker=B

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/common/jvm"
	"github.com/klassik/klassik/broker/group"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// brokerStore is one broker's access to the shared __transaction_state
// log: a test can make its appends fail (a broker that lost leadership
// gets NOT_LEADER_OR_FOLLOWER from its replica manager).
type brokerStore struct {
	shared *group.MemStore
	h      *harness
	broker int32
}

func (s *brokerStore) Append(ctx context.Context, partition int32, batch []byte) error {
	s.h.storeMu.Lock()
	err := s.h.storeErr[s.broker]
	s.h.storeMu.Unlock()
	if err != nil {
		return err
	}
	return s.shared.Append(ctx, partition, batch)
}

func (s *brokerStore) Read(ctx context.Context, partition int32, fn func(batch []byte) error) error {
	s.h.storeMu.Lock()
	hold := s.h.holdReads
	if hold != nil {
		s.h.blockedReads.Add(1)
	}
	s.h.storeMu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			// Still counted unless release-reads already reset the count.
			s.h.storeMu.Lock()
			if s.h.holdReads == hold {
				s.h.blockedReads.Add(-1)
			}
			s.h.storeMu.Unlock()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return s.shared.Read(ctx, partition, fn)
}

// harnessPartitions is the number of __transaction_state partitions of
// the harness's coordinators.
const harnessPartitions = 50

type harness struct {
	t        *testing.T
	store    *group.MemStore
	markers  *fakeMarkers
	blocks   *pidBlocks
	clock    *purgatory.FakeClock
	coords   map[int32]*Coordinator
	storeMu  sync.Mutex
	storeErr map[int32]error // guarded by storeMu
	// holdReads, when set, blocks every Read until it is closed (a
	// partition that takes long to load); guarded by storeMu.
	holdReads    chan struct{}
	blockedReads atomic.Int64
	seen         map[int32]int // records already printed per partition
}

func newHarness(t *testing.T) *harness {
	// Blocks of one id, so that every new producer id claims one.
	return &harness{t: t, store: group.NewMemStore(), markers: newFakeMarkers(), blocks: &pidBlocks{size: 1},
		clock: purgatory.NewFakeClock(testStart), coords: map[int32]*Coordinator{}, storeErr: map[int32]error{},
		seen: map[int32]int{}}
}

func (h *harness) coord(b int32) *Coordinator {
	if c := h.coords[b]; c != nil {
		return c
	}
	cfg := testConfig()
	cfg.BrokerID = b
	cfg.NumPartitions = harnessPartitions
	c, err := New(cfg, &brokerStore{shared: h.store, h: h, broker: b}, NewProducerIDManager(b, h.blocks.claim), h.markers,
		h.clock, quietLogger())
	if err != nil {
		h.t.Fatal(err)
	}
	h.coords[b] = c
	h.t.Cleanup(c.Close)
	return c
}

// waitIdle waits until every coordinator's goroutines are done or
// parked on the clock (or on a held Read).
func (h *harness) waitIdle() {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var busy int64
		for _, c := range h.coords {
			busy += c.busy.Load()
		}
		if busy-h.blockedReads.Load() == 0 {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("coordinators did not become idle (busy=%d)", busy)
		}
		time.Sleep(time.Millisecond)
	}
}

// newOutput returns the records written and markers sent since the
// last call.
func (h *harness) newOutput() []string {
	var out []string
	for p := int32(0); p < harnessPartitions; p++ {
		recs := records(h.store, p)
		for _, r := range recs[h.seen[p]:] {
			out = append(out, fmt.Sprintf("log %d: %s", p, r))
		}
		h.seen[p] = len(recs)
	}
	for _, s := range h.markers.takeSent() {
		out = append(out, "-> "+s)
	}
	return out
}

var codesByName = func() map[string]int16 {
	m := map[string]int16{"NONE": 0}
	for code := int16(-1); code < 130; code++ {
		if e := kerr.TypedErrorForCode(code); e != nil && e.Code == code {
			m[e.Message] = code
		}
	}
	m["NOT_LEADER_OR_FOLLOWER"] = kerr.NotLeaderForPartition.Code
	return m
}()

func codeName(code int16) string {
	if code == kerr.NotLeaderForPartition.Code {
		return "NOT_LEADER_OR_FOLLOWER"
	}
	return errName(code)
}

type cmdArgs struct {
	t     *testing.T
	d     *datadriven.TestData
	kv    map[string]string
	plain []string
}

func parseArgs(t *testing.T, d *datadriven.TestData) *cmdArgs {
	a := &cmdArgs{t: t, d: d, kv: map[string]string{}}
	for _, arg := range d.CmdArgs {
		if len(arg.Vals) > 0 {
			a.kv[arg.Key] = strings.Join(arg.Vals, ",")
		} else {
			a.plain = append(a.plain, arg.Key)
		}
	}
	return a
}

func (a *cmdArgs) str(k, def string) string {
	if v, ok := a.kv[k]; ok {
		return v
	}
	return def
}

func (a *cmdArgs) int(k string, def int64) int64 {
	v, ok := a.kv[k]
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		a.d.Fatalf(a.t, "%s=%q: %v", k, v, err)
	}
	return n
}

func (a *cmdArgs) must(k string) string {
	v, ok := a.kv[k]
	if !ok {
		a.d.Fatalf(a.t, "missing %s=", k)
	}
	return v
}

func parseTP(t *testing.T, d *datadriven.TestData, s string) common.TopicPartition {
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		d.Fatalf(t, "bad partition %q", s)
	}
	p, err := strconv.Atoi(s[i+1:])
	if err != nil {
		d.Fatalf(t, "bad partition %q", s)
	}
	return common.TopicPartition{Topic: s[:i], Partition: int32(p)}
}

func (h *harness) partitionArg(a *cmdArgs) int32 {
	if id, ok := a.kv["txn"]; ok {
		return jvm.PartitionFor(id, harnessPartitions)
	}
	if len(a.plain) == 0 {
		a.d.Fatalf(a.t, "missing partition")
	}
	p, err := strconv.Atoi(a.plain[0])
	if err != nil {
		a.d.Fatalf(a.t, "bad partition %q", a.plain[0])
	}
	return int32(p)
}

func (h *harness) run(t *testing.T, d *datadriven.TestData) string {
	a := parseArgs(t, d)
	c := func() *Coordinator { return h.coord(int32(a.int("broker", 1))) }
	ctx := context.Background()
	var out []string
	switch d.Cmd {
	case "become-leader":
		c().OnBecomeLeader(h.partitionArg(a), int32(a.int("epoch", 0)))
	case "resign":
		c().OnResign(h.partitionArg(a), int32(a.int("epoch", -1)))
	case "init-producer-id":
		req := kmsg.NewPtrInitProducerIDRequest()
		req.Version = int16(a.int("v", 4))
		req.TransactionalID = ptr(a.must("txn"))
		req.TransactionTimeoutMillis = int32(a.int("timeout", 60000))
		req.ProducerID, req.ProducerEpoch = a.int("pid", -1), int16(a.int("epoch", -1))
		resp := c().InitProducerID(ctx, req)
		if resp.ErrorCode != 0 {
			out = append(out, fmt.Sprintf("error: %s (pid=%d epoch=%d)", codeName(resp.ErrorCode), resp.ProducerID, resp.ProducerEpoch))
		} else {
			out = append(out, fmt.Sprintf("pid=%d epoch=%d", resp.ProducerID, resp.ProducerEpoch))
		}
	case "add-partitions":
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version = int16(a.int("v", 3))
		req.TransactionalID = a.must("txn")
		req.ProducerID, req.ProducerEpoch = a.int("pid", 0), int16(a.int("epoch", 0))
		for _, s := range a.plain {
			tp := parseTP(t, d, s)
			if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != tp.Topic {
				req.Topics = append(req.Topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: tp.Topic})
			}
			req.Topics[len(req.Topics)-1].Partitions = append(req.Topics[len(req.Topics)-1].Partitions, tp.Partition)
		}
		resp := c().AddPartitionsToTxn(ctx, req)
		var parts []string
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				parts = append(parts, fmt.Sprintf("%s-%d=%s", rt.Topic, rp.Partition, codeName(rp.ErrorCode)))
			}
		}
		out = append(out, strings.Join(parts, " "))
	case "add-offsets":
		req := kmsg.NewPtrAddOffsetsToTxnRequest()
		req.Version = int16(a.int("v", 3))
		req.TransactionalID, req.Group = a.must("txn"), a.must("group")
		req.ProducerID, req.ProducerEpoch = a.int("pid", 0), int16(a.int("epoch", 0))
		out = append(out, codeName(c().AddOffsetsToTxn(ctx, req).ErrorCode))
	case "end-txn":
		req := kmsg.NewPtrEndTxnRequest()
		req.Version = int16(a.int("v", 3))
		req.TransactionalID = a.must("txn")
		req.ProducerID, req.ProducerEpoch = a.int("pid", 0), int16(a.int("epoch", 0))
		switch {
		case len(a.plain) == 1 && a.plain[0] == "commit":
			req.Commit = true
		case len(a.plain) == 1 && a.plain[0] == "abort":
		default:
			d.Fatalf(t, "end-txn needs commit or abort")
		}
		out = append(out, codeName(c().EndTxn(ctx, req).ErrorCode))
	case "advance":
		dur, err := time.ParseDuration(a.plain[0])
		if err != nil {
			d.Fatalf(t, "%v", err)
		}
		h.waitIdle()
		h.clock.Advance(dur)
	case "markers":
		if len(a.plain) == 2 && a.plain[0] == "ok" {
			h.markers.mu.Lock()
			delete(h.markers.errs, parseTP(t, d, a.plain[1]))
			h.markers.mu.Unlock()
			break
		}
		if len(a.plain) < 3 || a.plain[0] != "fail" {
			d.Fatalf(t, "markers fail t-0 CODE [times=N] | markers ok t-0")
		}
		tp := parseTP(t, d, a.plain[1])
		code, ok := codesByName[a.plain[2]]
		if !ok {
			d.Fatalf(t, "unknown error %q", a.plain[2])
		}
		h.markers.mu.Lock()
		for i := int64(0); i < a.int("times", 1); i++ {
			h.markers.errs[tp] = append(h.markers.errs[tp], code)
		}
		h.markers.mu.Unlock()
	case "leader":
		tp := parseTP(t, d, a.plain[0])
		var l int32
		switch a.plain[1] {
		case "none":
			l = -1
		case "gone":
			l = NoSuchPartition
		default:
			n, _ := strconv.Atoi(a.plain[1])
			l = int32(n)
		}
		h.markers.mu.Lock()
		h.markers.leaders[tp] = l
		h.markers.mu.Unlock()
	case "broker":
		b, _ := strconv.Atoi(a.plain[1])
		h.markers.mu.Lock()
		h.markers.downs[int32(b)] = a.plain[0] == "down"
		h.markers.mu.Unlock()
	case "store":
		h.waitIdle()
		b := int32(a.int("broker", 1))
		h.storeMu.Lock()
		switch a.plain[0] {
		case "hold-reads":
			h.holdReads = make(chan struct{})
		case "release-reads":
			// The blocked readers count as busy again from here on.
			h.blockedReads.Store(0)
			close(h.holdReads)
			h.holdReads = nil
		case "ok":
			delete(h.storeErr, b)
		case "fail":
			code, ok := codesByName[a.plain[1]]
			if !ok {
				h.storeMu.Unlock()
				d.Fatalf(t, "unknown error %q", a.plain[1])
			}
			h.storeErr[b] = kerr.ErrorForCode(code)
		default:
			h.storeMu.Unlock()
			d.Fatalf(t, "store fail|ok|hold-reads|release-reads")
		}
		h.storeMu.Unlock()
	case "seed":
		// A record written by an earlier coordinator (or by Kafka).
		id := a.must("txn")
		var rec record.Record
		rec.Key = EncodeKey(id)
		if a.str("state", "") != "tombstone" {
			st, ok := StateFromName(a.must("state"))
			if !ok {
				d.Fatalf(t, "unknown state %q", a.kv["state"])
			}
			v := Value{ProducerID: a.int("pid", 0), ProducerEpoch: int16(a.int("epoch", 0)), TimeoutMs: int32(a.int("timeout", 60000)),
				State: st, LastUpdateMs: h.clock.Now().UnixMilli(), StartMs: a.int("start", -1)}
			if v.StartMs >= 0 {
				v.StartMs += testStart.UnixMilli()
			}
			for _, s := range a.plain {
				v.Partitions = append(v.Partitions, parseTP(t, d, s))
			}
			rec.Value = EncodeValue(v)
		}
		if err := h.store.Append(ctx, jvm.PartitionFor(id, harnessPartitions), recordBatch(h.clock.Now(), []record.Record{rec})); err != nil {
			d.Fatalf(t, "%v", err)
		}
	case "seed-garbage":
		rec := record.Record{Key: []byte{0, 9, 1}, Value: []byte{1}}
		if err := h.store.Append(ctx, jvm.PartitionFor(a.must("txn"), harnessPartitions), recordBatch(h.clock.Now(), []record.Record{rec})); err != nil {
			d.Fatalf(t, "%v", err)
		}
	case "pids":
		h.blocks.mu.Lock()
		if a.plain[0] == "fail" {
			h.blocks.err = errors.New("zookeeper unavailable")
		} else {
			h.blocks.err = nil
		}
		h.blocks.mu.Unlock()
	case "state":
		resp := c().DescribeTransactions(ctx, &kmsg.DescribeTransactionsRequest{TransactionalIDs: []string{a.must("txn")}})
		st := resp.TransactionStates[0]
		if st.ErrorCode != 0 {
			out = append(out, "error: "+codeName(st.ErrorCode))
			break
		}
		var parts []string
		for _, tt := range st.Topics {
			for _, p := range tt.Partitions {
				parts = append(parts, fmt.Sprintf("%s-%d", tt.Topic, p))
			}
		}
		start := "-1"
		if st.StartTimestamp >= 0 {
			start = "+" + time.UnixMilli(st.StartTimestamp).Sub(testStart).String()
		}
		out = append(out, fmt.Sprintf("%s pid=%d epoch=%d timeout=%d start=%s partitions=[%s]", st.State, st.ProducerID,
			st.ProducerEpoch, st.TimeoutMillis, start, strings.Join(parts, " ")))
	case "list":
		req := kmsg.NewPtrListTransactionsRequest()
		req.Version = 0
		if s := a.str("states", ""); s != "" {
			req.StateFilters = strings.Split(s, ",")
		}
		if s := a.str("pids", ""); s != "" {
			for _, p := range strings.Split(s, ",") {
				n, _ := strconv.ParseInt(p, 10, 64)
				req.ProducerIDFilters = append(req.ProducerIDFilters, n)
			}
		}
		resp := c().ListTransactions(ctx, req)
		if resp.ErrorCode != 0 {
			out = append(out, "error: "+codeName(resp.ErrorCode))
		}
		for _, s := range resp.UnknownStateFilters {
			out = append(out, "unknown state filter: "+s)
		}
		for _, st := range resp.TransactionStates {
			out = append(out, fmt.Sprintf("%s pid=%d %s", st.TransactionalID, st.ProducerID, st.TransactionState))
		}
	case "metrics":
		m := c().metrics
		out = append(out, fmt.Sprintf("UnknownDestinationQueueSize=%d LogAppendRetryQueueSize=%d partition-load-time-count=%d",
			m.unknownDestination.Load(), m.logAppendRetries.Load(), m.loadTime.Count()))
	case "close":
		b := int32(a.int("broker", 1))
		h.coord(b).Close()
		delete(h.coords, b)
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	h.waitIdle()
	out = append(out, h.newOutput()...)
	if len(out) == 0 {
		return "ok\n"
	}
	return strings.Join(out, "\n") + "\n"
}

func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata/")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			h := newHarness(t)
			datadriven.RunTest(t, file, h.run)
		})
	}
}
