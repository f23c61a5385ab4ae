package replica

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/klassik/klassik/broker/storage"
)

func TestProduceFetchRoundTrip(t *testing.T) {
	m, _ := newT0Leader(t)

	r := produceOne(t, m, 1, "t", 0, makeBatch(1000, "a", "b"))
	if r.ErrorCode != 0 || r.BaseOffset != 0 || r.LogStartOffset != 0 || r.LogAppendTime != -1 {
		t.Fatalf("first produce: %+v", r)
	}
	r = produceOne(t, m, -1, "t", 0, makeBatch(2000, "c"))
	if r.ErrorCode != 0 || r.BaseOffset != 2 {
		t.Fatalf("second produce (acks=all): %+v", r)
	}

	fp := onlyFetchPartition(t, doFetch(t, m, fetchReq("t", 0, 0)))
	if fp.ErrorCode != 0 || fp.HighWatermark != 3 || fp.LastStableOffset != 3 || fp.LogStartOffset != 0 || fp.PreferredReadReplica != -1 {
		t.Fatalf("fetch partition: %+v", fp)
	}
	offs, vals, err := batchValues(fp.RecordBatches)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(vals, []string{"a", "b", "c"}) || !slices.Equal(offs, []int64{0, 1, 2}) {
		t.Fatalf("fetched %v at %v", vals, offs)
	}
	if fp.AbortedTransactions != nil {
		t.Fatalf("read_uncommitted must answer null aborted transactions, got %v", fp.AbortedTransactions)
	}

	// The leader epoch is stamped into every batch.
	p, _ := m.Partition(common.TopicPartition{Topic: "t", Partition: 0})
	if e, _ := p.Log().LatestEpoch(); e != 0 {
		t.Fatalf("latest epoch %d", e)
	}

	// read_committed: same data (no transactions), empty aborted list.
	fp = onlyFetchPartition(t, doFetch(t, m, fetchReq("t", 0, 2, func(r *kmsg.FetchRequest) { r.IsolationLevel = 1 })))
	_, vals, _ = batchValues(fp.RecordBatches)
	if !slices.Equal(vals, []string{"c"}) || fp.AbortedTransactions == nil || len(fp.AbortedTransactions) != 0 {
		t.Fatalf("read_committed fetch: vals %v aborted %v", vals, fp.AbortedTransactions)
	}

	// Fetch at the log end: no data, no error, records not null.
	fp = onlyFetchPartition(t, doFetch(t, m, fetchReq("t", 0, 3)))
	if fp.ErrorCode != 0 || fp.RecordBatches == nil || len(fp.RecordBatches) != 0 {
		t.Fatalf("fetch at end: %+v", fp)
	}
}

func TestProduceErrorsPerPartition(t *testing.T) {
	m, store := newTestManager(t, nil)
	store.maxMsg = 200
	makeLeader(t, m, "t", 0, 0)
	// Partition 1 is led by broker 2: this broker is a follower.
	resp := m.LeaderAndIsr(context.Background(), lairReq(1, "t", topicIDFor("t"), 1, 2, 0, []int32{2, 1}, []int32{2, 1}))
	if c := lairCode(t, resp); c != 0 {
		t.Fatalf("follower LeaderAndIsr: %d", c)
	}

	corrupt := makeBatch(1, "x")
	corrupt[len(corrupt)-1] ^= 0xff
	big := makeBatch(1, strings.Repeat("z", 500))

	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks = 1
	add := func(topic string, partition int32, recs []byte) { addProduceTopic(req, topic, partition, recs) }
	add("t", 0, makeBatch(1, "ok"))
	add("t", 1, makeBatch(1, "follower"))
	add("unknown", 0, makeBatch(1, "u"))
	add("t", 0, corrupt)
	add("t", 0, big)
	makeLeader(t, m, "__consumer_offsets", 0, 0)
	add("__consumer_offsets", 0, makeBatch(1, "internal"))
	add("__transaction_state", 0, makeBatch(1, "unknown internal"))
	out := m.Produce(context.Background(), req)
	want := []int16{0, kerr.NotLeaderForPartition.Code, kerr.UnknownTopicOrPartition.Code,
		kerr.CorruptMessage.Code, kerr.MessageTooLarge.Code, kerr.InvalidTopicException.Code,
		kerr.UnknownTopicOrPartition.Code}
	for i, w := range want {
		got := out.Topics[i].Partitions[0]
		if got.ErrorCode != w {
			t.Errorf("partition %d: error %d, want %d", i, got.ErrorCode, w)
		}
		if w != 0 && (got.BaseOffset != -1 || got.LogStartOffset != -1) {
			t.Errorf("partition %d: failed partition must report offsets -1: %+v", i, got)
		}
		if w != 0 && got.ErrorMessage == nil && w != kerr.InvalidTopicException.Code {
			t.Errorf("partition %d: v8+ failed partition should carry an error message", i)
		}
	}
	// Only the good batch was written.
	store.wantLogEnd(t, "t", 1, "only the good batch is written")

	// acks outside {-1,0,1}: every partition INVALID_REQUIRED_ACKS.
	r := produceOne(t, m, 2, "t", 0, makeBatch(1, "x"))
	if r.ErrorCode != kerr.InvalidRequiredAcks.Code {
		t.Fatalf("acks=2: %+v", r)
	}

	// A transactional batch without a transactional id.
	tx := makeBatch(1, "tx")
	tx[21+1] |= attrTransactional // attributes low byte; CRC not rechecked before this rule
	r = produceOne(t, m, 1, "t", 0, tx)
	if r.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("transactional without id: %+v", r)
	}
	// The admin client may write to internal topics.
	ctx := ContextWithClientID(context.Background(), "__admin_client")
	out = m.Produce(ctx, produceReq(1, "__consumer_offsets", 0, makeBatch(1, "x")))
	if c := out.Topics[0].Partitions[0].ErrorCode; c != 0 {
		t.Fatalf("admin client to internal topic: %d", c)
	}
	store.wantLogEnd(t, "t", 1, "rejected requests must not append")
}

func TestProduceAcksZero(t *testing.T) {
	m, store := newT0Leader(t)
	if resp := m.Produce(context.Background(), produceReq(0, "t", 0, makeBatch(1, "a"))); resp != nil {
		t.Fatalf("acks=0 must not answer, got %+v", resp)
	}
	store.wantLogEnd(t, "t", 1, "an acks=0 produce appends")
	resp, err := m.ProduceOrClose(context.Background(), produceReq(0, "t", 0, makeBatch(1, "b")))
	if resp != nil || err != nil {
		t.Fatalf("acks=0 success: %v %v", resp, err)
	}
	resp, err = m.ProduceOrClose(context.Background(), produceReq(0, "nope", 0, makeBatch(1, "b")))
	if resp != nil || !errors.Is(err, ErrAcksZeroFailed) {
		t.Fatalf("acks=0 failure must close the connection: %v %v", resp, err)
	}
}

func TestProduceMinInsyncReplicas(t *testing.T) {
	m, store := newTestManager(t, func(c *Config) {
		c.MinInsyncReplicas = func(topic string) int {
			if topic == "strict" {
				return 2
			}
			return 1
		}
	})
	makeLeader(t, m, "strict", 0, 0) // ISR = {1}
	r := produceOne(t, m, -1, "strict", 0, makeBatch(1, "a"))
	if r.ErrorCode != kerr.NotEnoughReplicas.Code {
		t.Fatalf("acks=all with ISR 1 < min.insync.replicas 2: %+v", r)
	}
	store.wantLogEnd(t, "strict", 0, "NOT_ENOUGH_REPLICAS must not append")
	// acks=1 ignores min.insync.replicas.
	if r := produceOne(t, m, 1, "strict", 0, makeBatch(1, "a")); r.ErrorCode != 0 {
		t.Fatalf("acks=1: %+v", r)
	}
	// With two replicas in the ISR acks=all succeeds.
	resp := m.LeaderAndIsr(context.Background(), lairReq(1, "strict", topicIDFor("strict"), 0, 1, 1, []int32{1, 2}, []int32{1, 2}))
	if c := lairCode(t, resp); c != 0 {
		t.Fatal(c)
	}
	// acks=all now waits until follower 2 has the record: its fetch at
	// offset 2 (the log end after the append) tells the leader so.
	got := make(chan kmsg.ProduceResponseTopicPartition, 1)
	go func() { got <- produceOne(t, m, -1, "strict", 0, makeBatch(1, "b")) }()
	waitFor(t, "append of b", func() bool {
		return store.logs[common.TopicPartition{Topic: "strict", Partition: 0}].LogEndOffset() == 2
	})
	select {
	case r := <-got:
		t.Fatalf("acks=all answered before the follower had the record: %+v", r)
	default:
	}
	followerFetch(t, m, 2, "strict", 0, 2, 1)
	if r := <-got; r.ErrorCode != 0 || r.BaseOffset != 1 {
		t.Fatalf("acks=all with ISR 2: %+v", r)
	}
}

func TestFetchLongPollWakesOnAppend(t *testing.T) {
	m, _ := newT0Leader(t)
	req := fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.MinBytes = 1; r.MaxWaitMillis = 10000 })

	type result struct {
		resp kmsg.Response
		err  error
		took time.Duration
	}
	done := make(chan result, 1)
	go func() {
		start := time.Now()
		resp, err := m.Fetch(context.Background(), req)
		done <- result{resp, err, time.Since(start)}
	}()
	// Wait until the fetch is parked, then append.
	tp := common.TopicPartition{Topic: "t", Partition: 0}
	waitFor(t, "the fetch to park", func() bool { return m.fetches.Watched(partitionKey(tp)) != 0 })
	select {
	case <-done:
		t.Fatal("fetch completed without data")
	default:
	}
	produceOne(t, m, 1, "t", 0, makeBatch(1, "wake"))
	select {
	case res := <-done:
		if res.err != nil {
			t.Fatal(res.err)
		}
		fp := onlyFetchPartition(t, decodeFetch(t, res.resp, req.Version))
		_, vals, _ := batchValues(fp.RecordBatches)
		if !slices.Equal(vals, []string{"wake"}) {
			t.Fatalf("woken fetch returned %v", vals)
		}
		if res.took >= 5*time.Second {
			t.Fatalf("fetch took %v, it should wake on the append", res.took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("parked fetch not woken by the append")
	}
	if n := m.fetches.Watched(partitionKey(tp)); n != 0 {
		t.Fatalf("%d parked fetches left behind", n)
	}
}

func TestFetchLongPollTimeout(t *testing.T) {
	m, _ := newT0Leader(t)
	start := time.Now()
	resp := doFetch(t, m, fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.MinBytes = 1; r.MaxWaitMillis = 150 }))
	took := time.Since(start)
	fp := onlyFetchPartition(t, resp)
	if fp.ErrorCode != 0 || len(fp.RecordBatches) != 0 {
		t.Fatalf("timed-out fetch: %+v", fp)
	}
	if took < 150*time.Millisecond || took > 5*time.Second {
		t.Fatalf("fetch returned after %v, want about max_wait_ms (150ms)", took)
	}

	// min_bytes larger than what arrives: still waits for the timeout.
	produceOne(t, m, 1, "t", 0, makeBatch(1, "small"))
	start = time.Now()
	resp = doFetch(t, m, fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.MinBytes = 1 << 20; r.MaxWaitMillis = 100 }))
	if time.Since(start) < 100*time.Millisecond {
		t.Fatal("fetch with unmet min_bytes returned before max_wait_ms")
	}
	if _, vals, _ := batchValues(onlyFetchPartition(t, resp).RecordBatches); !slices.Equal(vals, []string{"small"}) {
		t.Fatalf("timed-out fetch must return what is available, got %v", vals)
	}

	// Shutdown releases parked fetches.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = m.Fetch(context.Background(), fetchReq("t", 0, 1, func(r *kmsg.FetchRequest) { r.MinBytes = 1; r.MaxWaitMillis = 60000 }))
	}()
	for m.fetches.Watched(partitionKey(common.TopicPartition{Topic: "t", Partition: 0})) == 0 {
		time.Sleep(time.Millisecond)
	}
	m.Shutdown()
	waitDone(t, &wg, 5*time.Second)
}

func waitDone(t *testing.T, wg *sync.WaitGroup, d time.Duration) {
	t.Helper()
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatal("timed out waiting")
	}
}

func TestFetchContextCancelled(t *testing.T) {
	m, _ := newT0Leader(t)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := m.Fetch(ctx, fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.MinBytes = 1; r.MaxWaitMillis = 60000 }))
		errc <- err
	}()
	for m.fetches.Watched(partitionKey(common.TopicPartition{Topic: "t", Partition: 0})) == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
		if n := m.fetches.Delayed(); n != 0 {
			t.Fatalf("cancelled fetch still parked in the purgatory (%d)", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled fetch did not return")
	}
}

func TestFetchErrors(t *testing.T) {
	m, _ := newTestManager(t, nil)
	makeLeader(t, m, "t", 0, 3)
	produceOne(t, m, 1, "t", 0, makeBatch(1, "a", "b"))

	cases := []struct {
		name string
		req  *kmsg.FetchRequest
		want int16
	}{
		{"offset beyond log end", fetchReq("t", 0, 3), kerr.OffsetOutOfRange.Code},
		{"negative offset", fetchReq("t", 0, -1), kerr.OffsetOutOfRange.Code},
		{"unknown topic", fetchReq("nope", 0, 0), kerr.UnknownTopicOrPartition.Code},
		{"fenced epoch", fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.Topics[0].Partitions[0].CurrentLeaderEpoch = 2 }), kerr.FencedLeaderEpoch.Code},
		{"unknown epoch", fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.Topics[0].Partitions[0].CurrentLeaderEpoch = 4 }), kerr.UnknownLeaderEpoch.Code},
		{"old version", fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.Version = 3 }), kerr.UnsupportedVersion.Code},
		{"unknown topic id", fetchReq("", 0, 0, func(r *kmsg.FetchRequest) { r.Version = 13; r.Topics[0].TopicID = [16]byte{9} }), kerr.UnknownTopicID.Code},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Errors answer immediately even with a long max wait.
			c.req.MinBytes, c.req.MaxWaitMillis = 1, 30000
			start := time.Now()
			fp := onlyFetchPartition(t, doFetch(t, m, c.req))
			if fp.ErrorCode != c.want {
				t.Fatalf("error %d, want %d", fp.ErrorCode, c.want)
			}
			if fp.HighWatermark != -1 || fp.RecordBatches == nil {
				t.Fatalf("error partition: %+v", fp)
			}
			if time.Since(start) > 10*time.Second {
				t.Fatal("error fetch was parked")
			}
		})
	}

	// Correct epoch and v13 topic ids work.
	fp := onlyFetchPartition(t, doFetch(t, m, fetchReq("", 0, 0, func(r *kmsg.FetchRequest) {
		r.Version = 13
		r.Topics[0].TopicID = topicIDFor("t")
		r.Topics[0].Partitions[0].CurrentLeaderEpoch = 3
	})))
	if _, vals, _ := batchValues(fp.RecordBatches); fp.ErrorCode != 0 || !slices.Equal(vals, []string{"a", "b"}) {
		t.Fatalf("v13 fetch: code %d vals %v", fp.ErrorCode, vals)
	}
}

func TestFetchSizeLimits(t *testing.T) {
	m, _ := newT0Leader(t)
	makeLeader(t, m, "t", 1, 0)
	big := strings.Repeat("x", 300)
	produceOne(t, m, 1, "t", 0, makeBatch(1, big))
	produceOne(t, m, 1, "t", 0, makeBatch(1, big))
	produceOne(t, m, 1, "t", 1, makeBatch(1, big))

	req := fetchReq("t", 0, 0)
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, fetchPartition(1, 0))

	// partition_max_bytes smaller than one batch: still one whole batch
	// for the first partition (KIP-74); max_bytes used up → nothing for
	// the second.
	req.Topics[0].Partitions[0].PartitionMaxBytes = 10
	req.MaxBytes = 10
	resp := doFetch(t, m, req)
	parts := resp.Topics[0].Partitions
	if _, vals, _ := batchValues(parts[0].RecordBatches); len(vals) != 1 {
		t.Fatalf("first partition should get exactly one oversized batch, got %d records", len(vals))
	}
	if len(parts[1].RecordBatches) != 0 {
		t.Fatalf("second partition should get nothing once max_bytes is used, got %d bytes", len(parts[1].RecordBatches))
	}
	// Plenty of room: everything.
	req.Topics[0].Partitions[0].PartitionMaxBytes = 1 << 20
	req.MaxBytes = 1 << 20
	resp = doFetch(t, m, req)
	parts = resp.Topics[0].Partitions
	_, v0, _ := batchValues(parts[0].RecordBatches)
	_, v1, _ := batchValues(parts[1].RecordBatches)
	if len(v0) != 2 || len(v1) != 1 {
		t.Fatalf("got %d and %d records", len(v0), len(v1))
	}
}

func TestFetchSessions(t *testing.T) {
	m, _ := newT0Leader(t)
	makeLeader(t, m, "t", 1, 0)
	produceOne(t, m, 1, "t", 0, makeBatch(1, "a"))
	produceOne(t, m, 1, "t", 1, makeBatch(1, "b"))

	req := fetchReq("t", 0, 0)
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, fetchPartition(1, 0))
	req.SessionID, req.SessionEpoch = 0, 0 // create a session

	resp := doFetch(t, m, req)
	if resp.SessionID == 0 {
		t.Fatal("no session created")
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("full session fetch must answer every partition: %+v", resp.Topics)
	}
	sid := resp.SessionID

	// Incremental fetch with no partitions listed, both consumers caught up
	// at the new offsets: send the updated offsets only.
	resp = doFetch(t, m, sessionFetchReq(sid, 1, map[int32]int64{0: 1, 1: 1}))
	if resp.ErrorCode != 0 || resp.SessionID != sid {
		t.Fatalf("incremental: code %d session %d", resp.ErrorCode, resp.SessionID)
	}
	if len(resp.Topics) != 0 {
		t.Fatalf("nothing changed, incremental response should be empty: %+v", resp.Topics)
	}

	// New data on partition 1 only: the next incremental (no partitions
	// listed) returns only partition 1.
	produceOne(t, m, 1, "t", 1, makeBatch(1, "c"))
	resp = doFetch(t, m, sessionFetchReq(sid, 2, nil))
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].Partition != 1 {
		t.Fatalf("expected only partition 1: %+v", resp.Topics)
	}
	if _, vals, _ := batchValues(resp.Topics[0].Partitions[0].RecordBatches); !slices.Equal(vals, []string{"c"}) {
		t.Fatalf("incremental data %v", vals)
	}

	// Forget partition 1, then produce to it: nothing comes back.
	inc3 := sessionFetchReq(sid, 3, nil)
	ft := kmsg.NewFetchRequestForgottenTopic()
	ft.Topic = "t"
	ft.Partitions = []int32{1}
	inc3.ForgottenTopics = append(inc3.ForgottenTopics, ft)
	produceOne(t, m, 1, "t", 1, makeBatch(1, "d"))
	resp = doFetch(t, m, inc3)
	if len(resp.Topics) != 0 {
		t.Fatalf("forgotten partition answered: %+v", resp.Topics)
	}

	// Wrong epoch and unknown session.
	bad := kmsg.NewPtrFetchRequest()
	bad.Version = 12
	bad.SessionID, bad.SessionEpoch = sid, 9
	if resp := doFetch(t, m, bad); resp.ErrorCode != kerr.InvalidFetchSessionEpoch.Code || len(resp.Topics) != 0 {
		t.Fatalf("wrong epoch: %+v", resp)
	}
	bad.SessionID = sid + 1
	if resp := doFetch(t, m, bad); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("unknown session: %+v", resp)
	}
	// Close the session with epoch -1: sessionless full answer.
	closeReq := fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.SessionID, r.SessionEpoch = sid, -1 })
	if resp := doFetch(t, m, closeReq); resp.SessionID != 0 || len(resp.Topics) != 1 {
		t.Fatalf("closing fetch: %+v", resp)
	}
	if _, ok := m.sessions.get(sid); ok {
		t.Fatal("session still cached after close")
	}
}

func TestFetchSessionCacheEviction(t *testing.T) {
	m, _ := newTestManager(t, func(c *Config) { c.MaxSessions = 2 })
	makeLeader(t, m, "t", 0, 0)
	for i := 0; i < 3; i++ {
		resp := doFetch(t, m, fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.SessionEpoch = 0 }))
		if resp.SessionID == 0 {
			t.Fatal("no session")
		}
	}
	if n := m.sessions.len(); n != 2 {
		t.Fatalf("%d sessions cached, cap is 2", n)
	}
	m2, _ := newTestManager(t, func(c *Config) { c.MaxSessions = -1 })
	makeLeader(t, m2, "t", 0, 0)
	if resp := doFetch(t, m2, fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.SessionEpoch = 0 })); resp.SessionID != 0 {
		t.Fatal("sessions disabled but one was created")
	}
}

func TestFollowerFetchReadsToLogEnd(t *testing.T) {
	m, _ := newTestManager(t, nil)
	// ISR {1,2}: broker 2 is a replica and may fetch.
	makeLeader(t, m, "t", 0, 0, 1, 2)
	produceOne(t, m, 1, "t", 0, makeBatch(1, "a"))
	p, _ := m.Partition(common.TopicPartition{Topic: "t", Partition: 0})
	// Pretend the HW lags so the difference between consumer and follower
	// reads is visible.
	p.Log().(*memLog).mu.Lock()
	p.Log().(*memLog).hw = 0
	p.Log().(*memLog).mu.Unlock()

	if fp := onlyFetchPartition(t, doFetch(t, m, fetchReq("t", 0, 0))); len(fp.RecordBatches) != 0 {
		t.Fatal("consumer read beyond the high watermark")
	}
	fp := onlyFetchPartition(t, doFetch(t, m, fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.ReplicaID = 2 })))
	if _, vals, _ := batchValues(fp.RecordBatches); !slices.Equal(vals, []string{"a"}) {
		t.Fatalf("follower fetch got %v", vals)
	}
	// A broker outside the replica set.
	fp = onlyFetchPartition(t, doFetch(t, m, fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.ReplicaID = 7 })))
	if fp.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("non-replica follower fetch: %d", fp.ErrorCode)
	}
	// The follower claims an epoch above every cached one: undefined end
	// offset → OFFSET_OUT_OF_RANGE.
	fp = onlyFetchPartition(t, doFetch(t, m, fetchReq("t", 0, 1, func(r *kmsg.FetchRequest) {
		r.ReplicaID = 2
		r.Topics[0].Partitions[0].LastFetchedEpoch = 5
	})))
	if fp.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("undefined epoch: %+v", fp)
	}
	// New leader epoch 2 starting at offset 1; a follower that fetched
	// epoch 1 (never cached: the leader went 0 → 2) up to offset 3 diverges
	// at the end of epoch 0, which is offset 1.
	resp := m.LeaderAndIsr(context.Background(), lairReq(1, "t", topicIDFor("t"), 0, 1, 2, []int32{1, 2}, []int32{1, 2}))
	if c := lairCode(t, resp); c != 0 {
		t.Fatal(c)
	}
	fp = onlyFetchPartition(t, doFetch(t, m, fetchReq("t", 0, 1, func(r *kmsg.FetchRequest) {
		r.ReplicaID = 2
		r.Topics[0].Partitions[0].FetchOffset = 1
		r.Topics[0].Partitions[0].LastFetchedEpoch = 1
	})))
	if fp.ErrorCode != 0 || fp.DivergingEpoch.Epoch != 0 || fp.DivergingEpoch.EndOffset != 1 || len(fp.RecordBatches) != 0 {
		t.Fatalf("diverging epoch: %+v", fp)
	}
}

func TestProduceZstdNeedsV7(t *testing.T) {
	m, store := newT0Leader(t)
	z := makeBatch(1, "z")
	z[22] |= compressionZstd // attributes low byte: codec bits
	req := produceReq(1, "t", 0, z)
	req.Version = 6
	if c := m.Produce(context.Background(), req).Topics[0].Partitions[0].ErrorCode; c != kerr.UnsupportedCompressionType.Code {
		t.Fatalf("zstd with Produce v6: %d", c)
	}
	store.wantLogEnd(t, "t", 0, "a rejected zstd batch must not append")
}

func TestAppendToLocalLogAndUnderReplicated(t *testing.T) {
	m, _ := newTestManager(t, nil)
	makeLeader(t, m, "__consumer_offsets", 0, 0)
	tp := common.TopicPartition{Topic: "__consumer_offsets", Partition: 0}
	// Coordinators write internal topics directly.
	info, err := m.AppendToLocalLog(tp, makeBatch(1, "offset-commit"), -1)
	if err != nil || info.FirstOffset != 0 {
		t.Fatalf("internal append: %+v %v", info, err)
	}
	if p, _ := m.Partition(tp); p.State().HighWatermark != 1 {
		t.Fatal("internal append did not advance the HW")
	}
	if _, err := m.AppendToLocalLog(common.TopicPartition{Topic: "nope", Partition: 0}, makeBatch(1, "x"), 1); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("unknown partition: %v", err)
	}
	if n := m.UnderReplicatedPartitions(); n != 0 {
		t.Fatalf("under-replicated %d", n)
	}
	resp := m.LeaderAndIsr(context.Background(), lairReq(1, "u", topicIDFor("u"), 0, 1, 0, []int32{1}, []int32{1, 2}))
	if c := lairCode(t, resp); c != 0 {
		t.Fatal(c)
	}
	if n := m.UnderReplicatedPartitions(); n != 1 {
		t.Fatalf("under-replicated %d, want 1 (ISR {1} of replicas {1,2})", n)
	}
}

func TestReadCommittedStopsAtLastStableOffset(t *testing.T) {
	m, store := newT0Leader(t)
	produceOne(t, m, 1, "t", 0, makeBatch(1, "a"))
	produceOne(t, m, 1, "t", 0, makeBatch(1, "b"))
	produceOne(t, m, 1, "t", 0, makeBatch(1, "c"))
	l := store.logs[common.TopicPartition{Topic: "t", Partition: 0}]
	l.mu.Lock()
	l.lso = 1 // a transaction is open from offset 1
	l.aborted = []memAborted{{storage.AbortedTxn{ProducerID: 7, FirstOffset: 0}, 0}}
	l.mu.Unlock()

	fp := onlyFetchPartition(t, doFetch(t, m, fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.IsolationLevel = 1 })))
	if _, vals, _ := batchValues(fp.RecordBatches); !slices.Equal(vals, []string{"a"}) {
		t.Fatalf("read_committed returned %v, want only what is below the LSO", vals)
	}
	if fp.LastStableOffset != 1 || fp.HighWatermark != 3 {
		t.Fatalf("lso %d hw %d", fp.LastStableOffset, fp.HighWatermark)
	}
	if len(fp.AbortedTransactions) != 1 || fp.AbortedTransactions[0].ProducerID != 7 {
		t.Fatalf("aborted transactions %+v", fp.AbortedTransactions)
	}
	fp = onlyFetchPartition(t, doFetch(t, m, fetchReq("t", 0, 0)))
	if _, vals, _ := batchValues(fp.RecordBatches); len(vals) != 3 || fp.AbortedTransactions != nil {
		t.Fatalf("read_uncommitted: %v, aborted %v", vals, fp.AbortedTransactions)
	}

	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version = 7
	lo.ReplicaID = -1
	lo.IsolationLevel = 1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -1
	rp.CurrentLeaderEpoch = -1
	rt.Partitions = append(rt.Partitions, rp)
	lo.Topics = append(lo.Topics, rt)
	if off := m.ListOffsets(context.Background(), lo).Topics[0].Partitions[0].Offset; off != 1 {
		t.Fatalf("read_committed latest offset %d, want the LSO 1", off)
	}
	lo.IsolationLevel = 0
	if off := m.ListOffsets(context.Background(), lo).Topics[0].Partitions[0].Offset; off != 3 {
		t.Fatalf("read_uncommitted latest offset %d, want the HW 3", off)
	}
}

func TestFetchMaxWaitWithFakeClock(t *testing.T) {
	clock := purgatory.NewFakeClock(time.Unix(1000, 0))
	m, _ := newTestManager(t, func(c *Config) { c.PurgatoryClock = clock })
	makeLeader(t, m, "t", 0, 0)
	done := make(chan kmsg.Response, 1)
	go func() {
		raw, _ := m.Fetch(context.Background(), fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.MinBytes = 1; r.MaxWaitMillis = 600000 }))
		done <- raw
	}()
	waitFor(t, "the fetch to arm its max_wait_ms timer", func() bool { return clock.Pending() != 0 })
	select {
	case <-done:
		t.Fatal("fetch returned before max_wait_ms")
	default:
	}
	clock.Advance(10 * time.Minute)
	select {
	case raw := <-done:
		fp := onlyFetchPartition(t, decodeFetch(t, raw, 12))
		if fp.ErrorCode != 0 || len(fp.RecordBatches) != 0 {
			t.Fatalf("expired fetch: %+v", fp)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("fetch not released when max_wait_ms elapsed")
	}
	if n := m.fetches.Delayed(); n != 0 {
		t.Fatalf("%d delayed fetches left", n)
	}
}

// Under a small max_bytes, an incremental session rotates the partitions
// that returned data to the end, so every partition gets its turn.
func TestFetchSessionRotatesPartitions(t *testing.T) {
	m, _ := newT0Leader(t)
	makeLeader(t, m, "t", 1, 0)
	big := strings.Repeat("x", 200)
	for i := 0; i < 3; i++ {
		produceOne(t, m, 1, "t", 0, makeBatch(1, big))
		produceOne(t, m, 1, "t", 1, makeBatch(1, big))
	}
	req := fetchReq("t", 0, 3) // partition 0 at its end: nothing to read
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, fetchPartition(1, 0))
	req.SessionEpoch = 0
	sid := doFetch(t, m, req).SessionID

	// Move partition 0 back to offset 0: both partitions now have data
	// and max_bytes fits one batch only.
	inc := func(epoch int32, offsets map[int32]int64) *kmsg.FetchResponse {
		r := sessionFetchReq(sid, epoch, offsets)
		r.MaxBytes = 10
		return doFetch(t, m, r)
	}
	withData := func(resp *kmsg.FetchResponse) []int32 {
		var out []int32
		for _, tt := range resp.Topics {
			for _, p := range tt.Partitions {
				if len(p.RecordBatches) > 0 {
					out = append(out, p.Partition)
				}
			}
		}
		return out
	}
	first := withData(inc(1, map[int32]int64{0: 0, 1: 0}))
	second := withData(inc(2, map[int32]int64{0: 1, 1: 1}))
	if len(first) != 1 || len(second) != 1 || first[0] == second[0] {
		t.Fatalf("partitions with data: first %v, second %v; want each partition in turn", first, second)
	}
}

// "While epochStartOffset > HW, ListOffsets(LATEST or a timestamp beyond
// the fetchable end) for clients answers OFFSET_NOT_AVAILABLE".
func TestListOffsetsWhileHighWatermarkLagsEpochStart(t *testing.T) {
	m, store := newT0Leader(t)
	produceOne(t, m, 1, "t", 0, makeBatch(1000, "a", "b", "c"))
	makeLeader(t, m, "t", 0, 1) // epoch 1 starts at offset 3
	l := store.logs[common.TopicPartition{Topic: "t", Partition: 0}]
	l.mu.Lock()
	l.hw = 1 // as after an election, before followers report
	l.mu.Unlock()

	code := func(version int16, ts int64, replicaID int32) int16 {
		req := listOffsetsReq(version, "t", 0, ts)
		req.ReplicaID = replicaID
		return m.ListOffsets(context.Background(), req).Topics[0].Partitions[0].ErrorCode
	}
	if c := code(7, -1, -1); c != kerr.OffsetNotAvailable.Code {
		t.Errorf("latest v7: %d", c)
	}
	if c := code(4, -1, -1); c != kerr.LeaderNotAvailable.Code {
		t.Errorf("latest v4: %d", c)
	}
	if c := code(7, 1000, -1); c != 0 {
		// offset 0 is below the HW: answerable
		t.Errorf("timestamp below the HW: %d", c)
	}
	if c := code(7, 5000, -1); c != kerr.OffsetNotAvailable.Code {
		t.Errorf("timestamp beyond the fetchable end: %d", c)
	}
	if c := code(7, -2, -1); c != 0 {
		t.Errorf("earliest: %d", c)
	}
	if c := code(7, -1, 2); c != 0 {
		t.Errorf("a broker (replica id 2) sees the log end: %d", c)
	}
}
