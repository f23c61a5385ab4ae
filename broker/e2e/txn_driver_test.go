package e2e_test

// The transactions suite (KIP-98, KIP-447) as real clients use it: for each
// client (txn_franz_go_test.go, txn_sarama_test.go,
// txn_confluent_kafka_test.go, txn_kafkajs_test.go) one transactional
// producer runs the same story on a 3-partition, RF=3 output topic of a
// 3-broker cluster:
//
//	A  9 records, committed
//	B  9 records plus offsets {p: 10} for the group on the input topic,
//	   aborted: the group's offsets stay uncommitted
//	C  30 records (one per input record), offsets {p: 10}, committed: the
//	   group's offsets become 10
//	F  9 records written by the first producer, then a second producer
//	   with the same transactional.id initialises (the coordinator aborts
//	   F), and the first producer's commit fails with the client's fenced
//	   error
//	E  9 records by the second producer, committed
//
// Record i of transaction L has key "L-i", value "<client>-L-i" and goes
// to partition i % 3. After the story the test appends a non-transactional
// sentinel "END" to every partition, so a consumer knows it has read
// everything when it has seen each partition's sentinel (no timing). The
// client's own consumer then reads every partition from the start with
// read_committed and with read_uncommitted; the invariants:
//
//   - read_committed sees, per partition and in offset order, exactly
//     A, C, E (their records of that partition, in index order);
//   - read_uncommitted sees exactly A, B, C, F, E the same way;
//   - the group's committed offsets are absent after B's abort and 10 per
//     partition after C's commit;
//   - the first producer's commit after the second producer's
//     initialisation fails with the fenced error for its EndTxn version
//     (PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH before v2: KIP-588;
//     see fencedErrors).
//
// franz-go's consumer checks the same two sequences as a cross-check, so a
// failure shows whether the broker or the client's filtering of aborted
// records is at fault; on failure the partitions' high watermarks and last
// stable offsets are logged.
//
// Clients report on stdout, one line each (scripts in testdata/clients,
// the Go clients through txnOut):
//
//	STEP <what>                  progress, e.g. "STEP commit A"
//	OFFSETS <label> <p>:<o>,...  the group's committed offsets (-1: none)
//	FENCED <error>               the first producer's fenced error
//	REC <p> <offset> <key> <value>   a record read (consume mode)

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/broker/testcluster/proc"
)

const (
	txnPartitions = 3
	txnSmall      = 9  // records in A, B, F and E
	txnInput      = 30 // input records, and records in C
	txnSentinel   = "END"
)

// txnCluster is what the suite needs of a cluster (a
// *testcluster.Cluster).
type txnCluster interface {
	Bootstrap() []string
	Client(opts ...kgo.Opt) *kgo.Client
	Admin(opts ...kgo.Opt) *kadm.Client
	CreateTopic(topic string, partitions int32, rf int16, configs map[string]*string)
	WaitLeaders(timeout time.Duration, topic string, partitions int32)
}

// txnSpec names one client's topics, group and transactional id.
type txnSpec struct {
	client    string
	bootstrap string
	topic     string // output
	input     string
	group     string
	txnID     string
}

func newTxnSpec(c txnCluster, client string) txnSpec {
	return txnSpec{client: client, bootstrap: strings.Join(c.Bootstrap(), ","),
		topic: "txn-" + client, input: "txn-" + client + "-in",
		group: "txn-" + client + "-group", txnID: "txn-" + client + "-id"}
}

// args is the scripts' command line after the mode.
func (s txnSpec) args() []string {
	return []string{"--bootstrap", s.bootstrap, "--topic", s.topic, "--input", s.input, "--group", s.group,
		"--txn-id", s.txnID, "--prefix", s.client, "--partitions", strconv.Itoa(txnPartitions),
		"--small", strconv.Itoa(txnSmall), "--input-count", strconv.Itoa(txnInput)}
}

// txnRecord is one expected or read record.
type txnRecord struct {
	p          int32
	offset     int64
	key, value string
}

func (r txnRecord) String() string { return r.key + "=" + r.value }

// txnExpected is what a consumer of the given isolation must read, per
// partition, before the sentinel.
func txnExpected(client string, committed bool) map[int32][]txnRecord {
	labels := []string{"A", "B", "C", "F", "E"}
	if committed {
		labels = []string{"A", "C", "E"}
	}
	want := map[int32][]txnRecord{}
	for _, l := range labels {
		n := txnSmall
		if l == "C" {
			n = txnInput
		}
		for i := 0; i < n; i++ {
			p := int32(i % txnPartitions)
			want[p] = append(want[p], txnRecord{p: p, key: fmt.Sprintf("%s-%d", l, i), value: fmt.Sprintf("%s-%s-%d", client, l, i)})
		}
	}
	return want
}

// startTxnCluster starts three brokers with a replicated
// __transaction_state (10 partitions, RF 3, min ISR 2) and
// __consumer_offsets, no initial rebalance delay, and timed-out
// transactions looked for every 500 ms.
func startTxnCluster(t testing.TB) *testcluster.Cluster {
	t.Helper()
	return testcluster.Start(t, testcluster.Options{Brokers: 3, Racks: []string{"a", "b", "c"}, Overrides: map[string]string{
		"group.initial.rebalance.delay.ms":         "0",
		"offsets.topic.replication.factor":         "3",
		"offsets.topic.num.partitions":             "6",
		"transaction.state.log.replication.factor": "3",
		"transaction.state.log.min.isr":            "2",
		"transaction.state.log.num.partitions":     "10",
		// Abandoned transactions are aborted within a second of their
		// timeout (TestTxnInterleavedAndTimedOut).
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
	}})
}

// prepareTxnTopics creates the output and input topics (3 partitions, RF
// 3) and writes the 30 input records "in-<i>" (partition i % 3, so 10 per
// partition) without a transaction.
func prepareTxnTopics(t *testing.T, c txnCluster, s txnSpec) {
	t.Helper()
	for _, topic := range []string{s.topic, s.input} {
		c.CreateTopic(topic, txnPartitions, 3, nil)
		c.WaitLeaders(30*time.Second, topic, txnPartitions)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prod := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for i := 0; i < txnInput; i++ {
		recs = append(recs, &kgo.Record{Topic: s.input, Partition: int32(i % txnPartitions),
			Key: []byte(fmt.Sprintf("in-%d", i)), Value: []byte(fmt.Sprintf("in-%d", i))})
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("producing the input records: %v", err)
	}
}

// appendSentinels writes a non-transactional "END" record to every
// partition of the output topic.
func appendSentinels(t *testing.T, c txnCluster, s txnSpec) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prod := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := int32(0); p < txnPartitions; p++ {
		r := &kgo.Record{Topic: s.topic, Partition: p, Key: []byte(txnSentinel), Value: []byte(txnSentinel)}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("producing the sentinel to %s-%d: %v", s.topic, p, err)
		}
	}
}

// clientLog returns a buffer for a client library's log that is printed
// (its tail) when the test fails.
func clientLog(t *testing.T, client string) *lockedBuffer {
	b := &lockedBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s client log (tail):\n%s", client, proc.TailString(b.String(), 80))
		}
	})
	return b
}

// kgoLogger logs franz-go at info level into b.
func kgoLogger(b *lockedBuffer) kgo.Opt {
	return kgo.WithLogger(kgo.BasicLogger(b, kgo.LogLevelInfo, nil))
}

// txnLines is a client's parsed report.
type txnLines struct {
	steps   []string
	offsets map[string]map[int32]int64 // by label
	fenced  []string
	recs    []txnRecord
	other   []string
}

func parseTxnLines(t *testing.T, out []byte) txnLines {
	t.Helper()
	l := txnLines{offsets: map[string]map[int32]int64{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		kw, rest, _ := strings.Cut(line, " ")
		switch kw {
		case "STEP":
			l.steps = append(l.steps, rest)
		case "FENCED":
			l.fenced = append(l.fenced, rest)
		case "OFFSETS":
			label, list, _ := strings.Cut(rest, " ")
			m := map[int32]int64{}
			for _, po := range strings.Split(list, ",") {
				if po == "" {
					continue
				}
				ps, os, ok := strings.Cut(po, ":")
				p, err1 := strconv.ParseInt(ps, 10, 32)
				o, err2 := strconv.ParseInt(os, 10, 64)
				if !ok || err1 != nil || err2 != nil {
					t.Fatalf("bad OFFSETS line %q", line)
				}
				m[int32(p)] = o
			}
			l.offsets[label] = m
		case "REC":
			f := strings.SplitN(rest, " ", 4)
			if len(f) != 4 {
				t.Fatalf("bad REC line %q", line)
			}
			p, err1 := strconv.ParseInt(f[0], 10, 32)
			o, err2 := strconv.ParseInt(f[1], 10, 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("bad REC line %q", line)
			}
			l.recs = append(l.recs, txnRecord{p: int32(p), offset: o, key: f[2], value: f[3]})
		default:
			l.other = append(l.other, line)
		}
	}
	return l
}

// runClient runs a client process and returns its stdout; a failure names
// the last step it reported, with its stderr and the partitions' offsets.
func runTxnClient(t *testing.T, c txnCluster, s txnSpec, timeout time.Duration, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		l := parseTxnLines(t, stdout.Bytes())
		last := "none"
		if len(l.steps) > 0 {
			last = l.steps[len(l.steps)-1]
		}
		t.Fatalf("%s client %s: %v (ctx: %v); last step reported: %s\nstderr:\n%s\nstdout (tail):\n%s\n%s",
			s.client, strings.Join(args[:2], " "), err, ctx.Err(), last, tailLines(stderr.String()), tailLines(stdout.String()), txnOffsetsReport(c, s))
	}
	t.Cleanup(func() {
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("%s client %s stderr (tail):\n%s", s.client, args[1], tailLines(stderr.String()))
		}
	})
	return stdout.Bytes()
}

// txnOffsetsReport lists each output partition's high watermark and last
// stable offset, and the group's committed offsets, for failure messages.
func txnOffsetsReport(c txnCluster, s txnSpec) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	ru := kadm.NewClient(c.Client())
	rc := kadm.NewClient(c.Client(kgo.FetchIsolationLevel(kgo.ReadCommitted())))
	hw, err1 := ru.ListEndOffsets(ctx, s.topic)
	lso, err2 := rc.ListEndOffsets(ctx, s.topic)
	fmt.Fprintf(&b, "%s: ", s.topic)
	if err1 != nil || err2 != nil {
		fmt.Fprintf(&b, "ListOffsets: %v / %v", err1, err2)
	}
	for p := int32(0); p < txnPartitions; p++ {
		h, _ := hw.Lookup(s.topic, p)
		l, _ := lso.Lookup(s.topic, p)
		fmt.Fprintf(&b, "p%d high watermark %d (%v) last stable %d (%v); ", p, h.Offset, h.Err, l.Offset, l.Err)
	}
	offs, err := ru.FetchOffsets(ctx, s.group)
	fmt.Fprintf(&b, "\ngroup %s committed: %v", s.group, describeOffsets(offs, s.input, err))
	return b.String()
}

func describeOffsets(offs kadm.OffsetResponses, topic string, err error) string {
	if err != nil {
		return err.Error()
	}
	var parts []string
	for p := int32(0); p < txnPartitions; p++ {
		if o, ok := offs.Lookup(topic, p); ok {
			parts = append(parts, fmt.Sprintf("%d:%d(%v)", p, o.At, o.Err))
		} else {
			parts = append(parts, fmt.Sprintf("%d:-1", p))
		}
	}
	return strings.Join(parts, ",")
}

// groupOffsetsLine formats the group's committed offsets on the input
// topic's partitions as an OFFSETS line's list (-1 for none). The
// OffsetFetch names the partitions and sets require_stable (KIP-447):
// EndTxn is answered once the coordinator has logged
// PrepareCommit/PrepareAbort, before its markers reach
// __consumer_offsets, and until then a partition with a pending
// transactional offset answers UNSTABLE_OFFSET_COMMIT (a fetch of all the
// group's partitions would instead omit it, as Kafka's does). That error,
// and a coordinator still being created, loaded or moved, are retried
// here until ctx ends.
func groupOffsetsLine(ctx context.Context, cl *kgo.Client, group, topic string) (string, error) {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = group
	req.RequireStable = true
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic = topic
	for p := int32(0); p < txnPartitions; p++ {
		rt.Partitions = append(rt.Partitions, p)
	}
	req.Topics = append(req.Topics, rt)
	retriable := func(err error) bool {
		return errors.Is(err, kerr.UnstableOffsetCommit) || errors.Is(err, kerr.CoordinatorNotAvailable) ||
			errors.Is(err, kerr.CoordinatorLoadInProgress) || errors.Is(err, kerr.NotCoordinator)
	}
	for {
		resp, err := req.RequestWith(ctx, cl)
		var parts []string
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err == nil {
			got := map[int32]int64{}
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					if perr := kerr.ErrorForCode(p.ErrorCode); perr != nil && err == nil {
						err = fmt.Errorf("partition %d: %w", p.Partition, perr)
					}
					got[p.Partition] = p.Offset
				}
			}
			for p := int32(0); p < txnPartitions; p++ {
				at, ok := got[p]
				if !ok || at < 0 {
					at = -1
				}
				parts = append(parts, fmt.Sprintf("%d:%d", p, at))
			}
		}
		if err == nil {
			return strings.Join(parts, ","), nil
		}
		if !retriable(err) {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%w (retried until the deadline)", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// fencedErrors is each client's rendering of the error Kafka 2.8 answers
// the fenced producer's EndTxn with: PRODUCER_FENCED (90) from EndTxn v2
// on, INVALID_PRODUCER_EPOCH (47) before (KIP-588). franz-go and sarama
// send EndTxn v3; kafkajs v1; librdkafka turns either into its local
// _FENCED.
var fencedErrors = map[string]*regexp.Regexp{
	"franz-go":        regexp.MustCompile(`PRODUCER_FENCED`),
	"sarama":          regexp.MustCompile(`^PRODUCER_FENCED`),
	"kafkajs":         regexp.MustCompile(`INVALID_PRODUCER_EPOCH`),
	"confluent-kafka": regexp.MustCompile(`^_FENCED`),
}

// verifyTxnProduce checks a client's produce report: every step, the
// group's offsets after B's abort and C's commit, and the fenced error.
func verifyTxnProduce(t *testing.T, s txnSpec, l txnLines) {
	t.Helper()
	t.Logf("%s steps: %s", s.client, strings.Join(l.steps, "; "))
	for _, o := range l.other {
		t.Logf("%s: %s", s.client, o)
	}
	var problems []string
	for _, want := range []string{"commit A", "abort B", "commit C", "written F", "init second", "commit E"} {
		found := false
		for _, st := range l.steps {
			found = found || st == want
		}
		if !found {
			problems = append(problems, fmt.Sprintf("step %q not reported", want))
		}
	}
	check := func(label string, want int64) {
		got, ok := l.offsets[label]
		if !ok {
			problems = append(problems, fmt.Sprintf("no OFFSETS %s line", label))
			return
		}
		for p := int32(0); p < txnPartitions; p++ {
			if o, ok := got[p]; !ok || o != want {
				problems = append(problems, fmt.Sprintf("group offset of %s-%d %s: %d, want %d", s.input, p, label, o, want))
			}
		}
	}
	check("after-abort", -1)
	check("after-commit", int64(txnInput/txnPartitions))
	switch {
	case len(l.fenced) == 0:
		problems = append(problems, "the first producer was not fenced (no FENCED line)")
	case !fencedErrors[s.client].MatchString(l.fenced[0]):
		problems = append(problems, fmt.Sprintf("the first producer failed with %q, not the fenced error %s", l.fenced[0], fencedErrors[s.client]))
	default:
		t.Logf("%s: the first producer was fenced: %s", s.client, l.fenced[0])
	}
	if len(problems) > 0 {
		t.Errorf("%s transactional producer:\n  %s", s.client, strings.Join(problems, "\n  "))
	}
}

// verifyTxnRead compares what a consumer read (sentinels included) with
// the expected records per partition.
func verifyTxnRead(t *testing.T, s txnSpec, who string, committed bool, recs []txnRecord) {
	t.Helper()
	level := "read_uncommitted"
	if committed {
		level = "read_committed"
	}
	want := txnExpected(s.client, committed)
	got := map[int32][]txnRecord{}
	var problems []string
	ended := map[int32]bool{}
	for _, r := range recs {
		if r.key == txnSentinel {
			if ended[r.p] {
				problems = append(problems, fmt.Sprintf("partition %d: sentinel twice (offset %d)", r.p, r.offset))
			}
			ended[r.p] = true
			continue
		}
		if ended[r.p] {
			problems = append(problems, fmt.Sprintf("partition %d: %s at offset %d after the sentinel", r.p, r, r.offset))
			continue
		}
		got[r.p] = append(got[r.p], r)
	}
	for p := int32(0); p < txnPartitions; p++ {
		if !ended[p] {
			problems = append(problems, fmt.Sprintf("partition %d: sentinel not read", p))
		}
		g, w := got[p], want[p]
		for i := 0; i < len(g) || i < len(w); i++ {
			switch {
			case i >= len(w):
				problems = append(problems, fmt.Sprintf("partition %d: unexpected %s at offset %d (after all %d expected)", p, g[i], g[i].offset, len(w)))
			case i >= len(g):
				problems = append(problems, fmt.Sprintf("partition %d: missing %s (read only %d of %d)", p, w[i], len(g), len(w)))
			case g[i].key != w[i].key || g[i].value != w[i].value:
				problems = append(problems, fmt.Sprintf("partition %d: record %d is %s at offset %d, want %s", p, i, g[i], g[i].offset, w[i]))
			}
		}
	}
	if len(problems) > 0 {
		if len(problems) > 40 {
			problems = append(problems[:40], fmt.Sprintf("... and %d more", len(problems)-40))
		}
		t.Errorf("%s %s consumer of %s: %d records read; violations:\n  %s", who, level, s.topic, len(recs), strings.Join(problems, "\n  "))
		return
	}
	n := 0
	for _, w := range want {
		n += len(w)
	}
	t.Logf("%s %s consumer: exactly the %d expected records, in order on each partition", who, level, n)
}

// kgoReadTxn reads every partition of the output topic from the start
// with franz-go at the given isolation until each partition's sentinel.
func kgoReadTxn(t *testing.T, c txnCluster, s txnSpec, committed bool) []txnRecord {
	t.Helper()
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	parts := map[int32]kgo.Offset{}
	for p := int32(0); p < txnPartitions; p++ {
		parts[p] = kgo.NewOffset().AtStart()
	}
	cl := c.Client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{s.topic: parts}),
		kgo.FetchIsolationLevel(iso), kgo.FetchMaxWait(500*time.Millisecond))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []txnRecord
	ended := map[int32]bool{}
	for len(ended) < txnPartitions {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Errorf("franz-go consumer (committed=%v): sentinels of %d of %d partitions read before the deadline; %d records; %s",
				committed, len(ended), txnPartitions, len(recs), txnOffsetsReport(c, s))
			return recs
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("franz-go fetch %s-%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			recs = append(recs, txnRecord{p: r.Partition, offset: r.Offset, key: string(r.Key), value: string(r.Value)})
			if string(r.Key) == txnSentinel {
				ended[r.Partition] = true
			}
		})
	}
	return recs
}

// verifyTxnStory runs the checks shared by every client once its produce
// report is in: the report, then the sentinels, then consume (the
// client's own consumer at both isolation levels, nil for franz-go) and
// franz-go's cross-check.
func verifyTxnStory(t *testing.T, c txnCluster, s txnSpec, produced txnLines, consume func(committed bool) []txnRecord) {
	t.Helper()
	verifyTxnProduce(t, s, produced)
	appendSentinels(t, c, s)
	for _, committed := range []bool{true, false} {
		if consume == nil { // franz-go: its consumer is the cross-check
			verifyTxnRead(t, s, "franz-go", committed, kgoReadTxn(t, c, s, committed))
			continue
		}
		verifyTxnRead(t, s, s.client, committed, consume(committed))
		verifyTxnRead(t, s, "franz-go (cross-check)", committed, kgoReadTxn(t, c, s, committed))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	line, err := groupOffsetsLine(ctx, c.Client(), s.group, s.input)
	if want := "0:10,1:10,2:10"; err != nil || line != want {
		t.Errorf("group %s committed offsets at the end: %s (%v), want %s", s.group, line, err, want)
	}
	if t.Failed() {
		t.Logf("offsets at the end: %s", txnOffsetsReport(c, s))
	}
}
