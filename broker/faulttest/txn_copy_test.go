package faulttest_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common/jvm"
	"github.com/klassik/klassik/broker/faulttest"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/broker/testcluster/proc"
)

// Exactly-once under crashes (KIP-98, KIP-447): a franz-go
// consume-transform-produce loop (GroupTransactSession, read_committed)
// copies 20,000 records from an input topic to an output topic while the
// transaction coordinator of its transactional id and then a leader of an
// output partition are each killed -9 and restarted. A copier whose
// session fails (franz-go: no error from End is retryable) closes it and
// starts a new one with the same transactional id, as an application
// would; the new InitProducerId fences the old epoch and aborts whatever
// it left open.
//
// Invariant: once the group's committed offsets reach the input's end, a
// read_committed consumer of the output sees every input record exactly
// once, in input order per partition; lost, duplicated and reordered keys
// are reported. The coordinator is the leader of __transaction_state
// partition abs(javaHash(id)) % 50, and FindCoordinator (key type 1) must
// name it, before and after the kill (and for twenty other ids).

const (
	txnCopyRecords    = 20000
	txnCopyPartitions = 3
	txnStatePartition = 50 // transaction.state.log.num.partitions
	txnStateTopic     = "__transaction_state"
	txnCopyID         = "txn-copy-id"
)

func TestJavaStringHash(t *testing.T) {
	// Values of "...".hashCode() in Java.
	for s, want := range map[string]int32{"": 0, "a": 97, "Aa": 2112, "BB": 2112, "hello": 99162322,
		"polygenelubricants": -2147483648} {
		if got := jvm.StringHashCode(s); got != want {
			t.Errorf("jvm.StringHashCode(%q) = %d, want %d", s, got, want)
		}
	}
	if got := jvm.PartitionFor("polygenelubricants", 50); got != 0 {
		t.Errorf("partition of a MinInt32 hash = %d, want 0", got)
	}
}

// logBuffer keeps a client's log for the failure message.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 4<<20 {
		l.b.Write(p)
	}
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// txnCopier is the consume-transform-produce loop; its goroutine is ended
// by stop.
type txnCopier struct {
	t      *testing.T
	seeds  []string
	in     string
	out    string
	group  string
	log    *logBuffer
	paced  atomic.Bool  // while set, one transaction of 100 records per 250 ms, open most of the time
	copied atomic.Int64 // records in transactions End reported committed
	txns   atomic.Int64 // committed transactions

	// mu guards the following.
	mu       sync.Mutex
	failures []string // End/produce errors that restarted the session

	cancel context.CancelFunc
	done   chan struct{}
}

func startTxnCopier(t *testing.T, seeds []string, in, out, group string) *txnCopier {
	ctx, cancel := context.WithCancel(context.Background())
	cp := &txnCopier{t: t, seeds: seeds, in: in, out: out, group: group, log: &logBuffer{}, cancel: cancel, done: make(chan struct{})}
	cp.paced.Store(true)
	go cp.run(ctx)
	t.Cleanup(cp.stop)
	return cp
}

func (cp *txnCopier) stop() {
	cp.cancel()
	<-cp.done
}

func (cp *txnCopier) failed(what string, err error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.failures = append(cp.failures, fmt.Sprintf("%s after %d records: %v", what, cp.copied.Load(), err))
}

func (cp *txnCopier) failureList() []string {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return append([]string(nil), cp.failures...)
}

// run keeps a session copying until ctx ends, starting a new session
// whenever one fails.
func (cp *txnCopier) run(ctx context.Context) {
	defer close(cp.done)
	for ctx.Err() == nil {
		if err := cp.session(ctx); err != nil && ctx.Err() == nil {
			cp.failed("session", err)
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond): // backoff before a new session
			}
		}
	}
}

func (cp *txnCopier) session(ctx context.Context) error {
	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(cp.seeds...),
		kgo.WithLogger(kgo.BasicLogger(cp.log, kgo.LogLevelInfo, nil)),
		kgo.TransactionalID(txnCopyID),
		kgo.TransactionTimeout(30*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ConsumerGroup(cp.group),
		kgo.ConsumeTopics(cp.in),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.FetchMaxWait(200*time.Millisecond),
		kgo.SessionTimeout(6*time.Second),
		kgo.HeartbeatInterval(500*time.Millisecond),
		kgo.RetryTimeout(20*time.Second),
	)
	if err != nil {
		return err
	}
	defer sess.Close()
	for ctx.Err() == nil {
		start := time.Now()
		max := 1000
		if cp.paced.Load() {
			max = 100
		}
		fs := sess.PollRecords(ctx, max)
		if ctx.Err() != nil {
			return nil
		}
		fs.EachError(func(topic string, p int32, err error) {
			fmt.Fprintf(cp.log, "copier: fetch %s-%d: %v\n", topic, p, err)
		})
		if fs.NumRecords() == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		var recs []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			recs = append(recs, &kgo.Record{Topic: cp.out, Partition: r.Partition, Key: r.Key, Value: r.Value})
		})
		try := kgo.TryCommit
		if err := sess.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			cp.failed("produce (aborting)", err)
			try = kgo.TryAbort
		}
		if cp.paced.Load() {
			// The pause is inside the transaction, so a broker killed
			// now most likely holds an open one: the coordinator with
			// it Ongoing, a leader with its records appended.
			select {
			case <-ctx.Done():
			case <-time.After(250*time.Millisecond - time.Since(start)):
			}
		}
		committed, err := sess.End(ctx, try)
		if err != nil {
			return fmt.Errorf("end (try commit %v): %w", try, err)
		}
		if committed {
			cp.copied.Add(int64(len(recs)))
			cp.txns.Add(1)
		}
	}
	return nil
}

// waitCopied requires n more records copied within timeout.
func (cp *txnCopier) waitCopied(c *faulttest.Cluster, n int64, timeout time.Duration, what string) {
	cp.t.Helper()
	target := cp.copied.Load() + n
	c.WaitFor(timeout, fmt.Sprintf("%d records copied (%s); copied %d so far; session failures: %v", target, what, cp.copied.Load(), cp.failureList()),
		func() bool { return cp.copied.Load() >= target })
}

// findTxnCoordinator asks the brokers (FindCoordinator, key type 1) for
// the coordinator of id; -1 with the error if there is none.
func findTxnCoordinator(cl *kgo.Client, id string) (int32, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey = id
	req.CoordinatorKeys = []string{id}
	req.CoordinatorType = 1
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return -1, err
	}
	if len(resp.Coordinators) > 0 {
		co := resp.Coordinators[0]
		return co.NodeID, kerr.ErrorForCode(co.ErrorCode)
	}
	return resp.NodeID, kerr.ErrorForCode(resp.ErrorCode)
}

// waitTxnCoordinator waits until the __transaction_state partition of the
// copier's id has a live leader other than not, and FindCoordinator names
// that leader; it returns the leader.
func waitTxnCoordinator(t *testing.T, c *faulttest.Cluster, not int32) int32 {
	t.Helper()
	p := jvm.PartitionFor(txnCopyID, txnStatePartition)
	var leader, found int32 = -1, -1
	var findErr error
	cl := c.Client()
	defer cl.Close()
	ok := testcluster.Poll(45*time.Second, func() bool {
		st, ok := c.PartitionState(txnStateTopic, p)
		if !ok || st.Leader < 0 || st.Leader == not {
			return false
		}
		leader = st.Leader
		found, findErr = findTxnCoordinator(cl, txnCopyID)
		return findErr == nil && found == leader
	})
	if !ok {
		t.Fatalf("no leader of %s-%d other than %d named by FindCoordinator within 45s: last leader %d, FindCoordinator(key type 1, %q) answered %d, %v\n%s",
			txnStateTopic, p, not, leader, txnCopyID, found, findErr, c.DumpState())
	}
	t.Logf("transaction coordinator of %q: broker %d (leader of %s-%d)", txnCopyID, leader, txnStateTopic, p)
	return leader
}

// checkCoordinatorHashing asks FindCoordinator (key type 1) for 20 other
// transactional ids and requires each answer to be the leader of
// __transaction_state partition abs(javaHash(id)) % 50: with three
// brokers one id can match by chance, twenty cannot.
func checkCoordinatorHashing(t *testing.T, c *faulttest.Cluster) {
	t.Helper()
	cl := c.Client()
	defer cl.Close()
	var wrong []string
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("txn-hash-probe-%d", i)
		p := jvm.PartitionFor(id, txnStatePartition)
		var found, leader int32 = -1, -1
		var err error
		testcluster.Poll(15*time.Second, func() bool {
			st, ok := c.PartitionState(txnStateTopic, p)
			if ok {
				leader = st.Leader
			}
			found, err = findTxnCoordinator(cl, id)
			return ok && err == nil && found == leader
		})
		if err != nil || found != leader {
			wrong = append(wrong, fmt.Sprintf("%q (partition %d, led by %d): FindCoordinator answered %d, %v", id, p, leader, found, err))
		}
	}
	if len(wrong) > 0 {
		t.Errorf("FindCoordinator does not name the leader of partition abs(javaHash(id)) %% %d for:\n  %s", txnStatePartition, strings.Join(wrong, "\n  "))
	}
}

// readOutput reads the output topic from the start (read_committed, or
// read_uncommitted) until each partition's sentinel.
func readOutput(t *testing.T, c *faulttest.Cluster, topic string, committed bool) map[int32][]*kgo.Record {
	t.Helper()
	parts := map[int32]kgo.Offset{}
	for p := int32(0); p < txnCopyPartitions; p++ {
		parts[p] = kgo.NewOffset().AtStart()
	}
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl := c.Client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchIsolationLevel(iso), kgo.FetchMaxWait(500*time.Millisecond))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got := map[int32][]*kgo.Record{}
	ended := map[int32]bool{}
	for len(ended) < txnCopyPartitions {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			hw, err := c.HighWatermarks(topic)
			t.Fatalf("consumer of %s (read_committed %v): sentinels of %d of %d partitions before the deadline (a transaction left open holds the last stable offset back?); high watermarks %v (%v)\n%s",
				topic, committed, len(ended), txnCopyPartitions, hw, err, lastStableReport(c, topic))
		}
		fs.EachError(func(_ string, p int32, err error) { t.Logf("fetch %s-%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Key) == "END" {
				ended[r.Partition] = true
				return
			}
			if !ended[r.Partition] {
				got[r.Partition] = append(got[r.Partition], r)
			}
		})
	}
	return got
}

func lastStableReport(c *faulttest.Cluster, topic string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl := c.Client(kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = 1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := int32(0); p < txnCopyPartitions; p++ {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = p
		rp.Timestamp = -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return "ListOffsets read_committed: " + err.Error()
	}
	var b strings.Builder
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			fmt.Fprintf(&b, "%s-%d last stable offset %d (%v); ", t.Topic, p.Partition, p.Offset, kerr.ErrorForCode(p.ErrorCode))
		}
	}
	return b.String()
}

// TestTxnCopyKillCoordinatorAndLeader: see the top of this file.
func TestTxnCopyKillCoordinatorAndLeader(t *testing.T) {
	start := time.Now()
	const in, out, group = "txn-copy-in", "txn-copy-out", "txn-copy"
	c := faulttest.Start(t, faulttest.Options{Brokers: 3, Overrides: map[string]string{
		"transaction.state.log.num.partitions":     strconv.Itoa(txnStatePartition),
		"transaction.state.log.replication.factor": "3",
		"transaction.state.log.min.isr":            "2",
		"offsets.topic.num.partitions":             "6",
		"group.min.session.timeout.ms":             "6000",
	}})
	c.CreateTopic(in, faulttest.RoundRobin(txnCopyPartitions, 3, 3), nil)
	c.CreateTopic(out, faulttest.RoundRobin(txnCopyPartitions, 3, 3), nil)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prod := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MaxBufferedRecords(txnCopyRecords))
	recs := make([]*kgo.Record, 0, txnCopyRecords)
	for i := 0; i < txnCopyRecords; i++ {
		k := []byte("k-" + strconv.Itoa(i))
		recs = append(recs, &kgo.Record{Topic: in, Partition: int32(i % txnCopyPartitions), Key: k, Value: k})
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("producing the input: %v", err)
	}
	t.Logf("%d input records written in %v", txnCopyRecords, time.Since(start).Round(100*time.Millisecond))

	cp := startTxnCopier(t, c.Bootstrap(), in, out, group)
	defer func() {
		if t.Failed() {
			t.Logf("copier session failures: %v\ncopier log (tail):\n%s", cp.failureList(), proc.TailString(cp.log.String(), 120))
		}
	}()
	cp.waitCopied(c, 1500, 45*time.Second, "first transactions")

	// The transaction coordinator: killed, its partition moves, restarted.
	coord := waitTxnCoordinator(t, c, -1)
	checkCoordinatorHashing(t, c)
	victim := c.Index(coord)
	c.Kill9(victim)
	newCoord := waitTxnCoordinator(t, c, coord)
	cp.waitCopied(c, 800, 45*time.Second, "with the coordinator killed")
	c.Restart(victim)
	c.WaitFullISR(txnStateTopic, txnStatePartition, 45*time.Second)
	c.WaitFullISR(out, txnCopyPartitions, 45*time.Second)
	cp.waitCopied(c, 800, 45*time.Second, "after the coordinator's restart")

	// A leader of an output partition, not the current coordinator if
	// one can be found.
	now := waitTxnCoordinator(t, c, -1)
	p := int32(0)
	for q := int32(0); q < txnCopyPartitions; q++ {
		if st, ok := c.PartitionState(out, q); ok && st.Leader != now {
			p = q
			break
		}
	}
	st, _ := c.PartitionState(out, p)
	victim = c.Index(st.Leader)
	c.Kill9(victim)
	c.WaitFor(30*time.Second, fmt.Sprintf("a new leader of %s-%d", out, p), func() bool {
		s, ok := c.PartitionState(out, p)
		return ok && s.Leader >= 0 && s.Leader != st.Leader
	})
	cp.waitCopied(c, 800, 45*time.Second, "with the output leader killed")
	c.Restart(victim)
	c.WaitFullISR(out, txnCopyPartitions, 45*time.Second)
	t.Logf("faults done after %v: coordinator %d killed (moved to %d), leader %d of %s-%d killed; %d records copied in %d transactions",
		time.Since(start).Round(100*time.Millisecond), coord, newCoord, st.Leader, out, p, cp.copied.Load(), cp.txns.Load())

	// The rest at full speed, until the group has committed the input's end.
	cp.paced.Store(false)
	adm := c.Admin()
	c.WaitFor(60*time.Second, "the group's committed offsets at the input's end", func() bool {
		octx, ocancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ocancel()
		offs, err := adm.FetchOffsets(octx, group)
		if err != nil {
			return false
		}
		var sum int64
		for q := int32(0); q < txnCopyPartitions; q++ {
			if o, ok := offs.Lookup(in, q); ok && o.Err == nil {
				sum += o.At
			}
		}
		return sum == txnCopyRecords
	})
	cp.stop()
	t.Logf("copied: %d records in %d committed transactions; session restarts: %d", cp.copied.Load(), cp.txns.Load(), len(cp.failureList()))
	for _, f := range cp.failureList() {
		t.Logf("  session failure: %s", f)
	}

	// Sentinels, so the reader knows the end without timing.
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for q := int32(0); q < txnCopyPartitions; q++ {
		r := &kgo.Record{Topic: out, Partition: q, Key: []byte("END"), Value: []byte("END")}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("sentinel to %s-%d: %v", out, q, err)
		}
	}
	got := readOutput(t, c, out, true)
	seen := make(map[int]int, txnCopyRecords)
	var dups, lost, reordered, foreign []string
	for q, rs := range got {
		last := -1
		for _, r := range rs {
			i, err := strconv.Atoi(strings.TrimPrefix(string(r.Key), "k-"))
			if err != nil || i < 0 || i >= txnCopyRecords || int32(i%txnCopyPartitions) != q {
				foreign = append(foreign, fmt.Sprintf("%q at %s-%d offset %d", r.Key, out, q, r.Offset))
				continue
			}
			seen[i]++
			if seen[i] == 2 {
				dups = append(dups, fmt.Sprintf("k-%d (second copy at %s-%d offset %d)", i, out, q, r.Offset))
			}
			if i < last && seen[i] == 1 {
				reordered = append(reordered, fmt.Sprintf("k-%d at offset %d after k-%d", i, r.Offset, last))
			}
			if i > last {
				last = i
			}
		}
	}
	for i := 0; i < txnCopyRecords; i++ {
		if seen[i] == 0 {
			lost = append(lost, "k-"+strconv.Itoa(i))
		}
	}
	n := 0
	for _, rs := range got {
		n += len(rs)
	}
	t.Logf("read_committed consumer of %s: %d records; lost %d, duplicated %d, reordered %d, foreign %d", out, n, len(lost), len(dups), len(reordered), len(foreign))
	all := 0
	for _, rs := range readOutput(t, c, out, false) {
		all += len(rs)
	}
	t.Logf("read_uncommitted consumer of %s: %d records, %d of them from aborted transactions (what the faults left behind)", out, all, all-n)
	for what, l := range map[string][]string{"lost": lost, "duplicated": dups, "reordered": reordered, "unexpected": foreign} {
		if len(l) > 0 {
			if len(l) > 30 {
				l = append(l[:30], fmt.Sprintf("... and %d more", len(l)-30))
			}
			t.Errorf("%s keys (%d):\n  %s", what, len(l), strings.Join(l, "\n  "))
		}
	}
	t.Logf("scenario took %v", time.Since(start).Round(100*time.Millisecond))
}
