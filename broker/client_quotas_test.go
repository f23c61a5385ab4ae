package broker_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
)

// quotaRate is the byte rate the throughput tests hold clients to.
const quotaRate = 1 << 20

// quotaRecordSize is the value size of the test records: large enough
// that record and request overhead stays below 1 %.
const quotaRecordSize = 10 << 10

// startQuotaCluster starts brokers whose quota windows are short
// (quota.window.num=3: two whole 1 s windows plus the current one), so a
// client's allowance at start and after the quota is lifted is two
// seconds' worth and a 10 s measurement is not dominated by it; the rate
// itself is Kafka's.
func startQuotaCluster(t *testing.T, brokers int) *testcluster.Cluster {
	return testcluster.Start(t, testcluster.Options{Brokers: brokers, Overrides: map[string]string{
		"quota.window.num": "3", "quota.window.size.seconds": "1"}})
}

// writeQuotaZK writes a quota node exactly as Kafka's kafka-configs
// --zookeeper does (the node, then a version 2 change notification), from
// raw JSON, and waits until every broker applies it (want < 0: removed).
func writeQuotaZK(t *testing.T, c *testcluster.Cluster, entityType, name, config string, user, client string, want float64, kind string) {
	t.Helper()
	z := c.ZK()
	p := zkpaths.ConfigPath(entityType, name)
	data := []byte(`{"version":1,"config":{` + config + `}}`)
	if ok, _, err := z.Exists(p); err != nil {
		t.Fatal(err)
	} else if ok {
		if _, err := z.Set(p, data, -1); err != nil {
			t.Fatal(err)
		}
	} else if _, err := z.CreateRecursive(p, data, 0); err != nil {
		t.Fatal(err)
	}
	note := []byte(`{"version":2,"entity_path":"` + entityType + "/" + name + `"}`)
	if _, err := z.Create(zkpaths.ConfigChangeSeqPath(), note, 2 /* persistent sequential */); err != nil {
		t.Fatal(err)
	}
	waitQuota(t, c, kind, user, client, want)
}

// waitQuota waits until every broker resolves the quota of kind for user
// and client to want (< 0: none).
func waitQuota(t *testing.T, c *testcluster.Cluster, kind, user, client string, want float64) {
	t.Helper()
	c.WaitFor(15*time.Second, fmt.Sprintf("%s quota of %s/%s = %v on every broker", kind, user, client, want), func() bool {
		for i := 0; i < c.N(); i++ {
			ms := c.Broker(i).ClientQuotas()
			m := ms.Produce
			switch kind {
			case "consumer":
				m = ms.Fetch
			case "request":
				m = ms.Request
			case "mutation":
				m = ms.ControllerMutation
			}
			v, ok := m.Quota(user, client)
			if want < 0 && ok || want >= 0 && (!ok || v != want) {
				return false
			}
		}
		return true
	})
}

// throttleSeen is a franz-go hook recording the throttles brokers report
// in responses (throttle_time_ms).
type throttleSeen struct{ max atomic.Int64 }

func (h *throttleSeen) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	for {
		cur := h.max.Load()
		if int64(d) <= cur || h.max.CompareAndSwap(cur, int64(d)) {
			return
		}
	}
}

// rateOver measures, after warm of traffic, how many bytes count (a
// record counter) advanced per second over span.
func rateOver(count func() int64, warm, span time.Duration) float64 {
	time.Sleep(warm)
	a, start := count(), time.Now()
	time.Sleep(span)
	b := count()
	return float64(b-a) * quotaRecordSize / time.Since(start).Seconds()
}

// fullSpeed reports the rate at which count advances by n records, or
// fails when that takes longer than timeout.
func fullSpeed(t *testing.T, count func() int64, n int64, timeout time.Duration, what string) float64 {
	t.Helper()
	a, start := count(), time.Now()
	if !testcluster.Poll(timeout, func() bool { return count()-a >= n }) {
		t.Fatalf("%s: %d of %d records in %v after the quota was removed", what, count()-a, n, timeout)
	}
	return float64(count()-a) * quotaRecordSize / time.Since(start).Seconds()
}

// assertNearQuota checks a measured rate against quotaRate ±30 %.
func assertNearQuota(t *testing.T, what string, rate float64) {
	t.Helper()
	t.Logf("%s: %.2f MiB/s under a %.2f MiB/s quota", what, rate/(1<<20), float64(quotaRate)/(1<<20))
	if rate < 0.7*quotaRate || rate > 1.3*quotaRate {
		t.Errorf("%s: %.0f B/s, want %d ±30 %%", what, rate, quotaRate)
	}
}

// endOffset is the log end offset of partition 0 of topic.
func endOffset(adm *kadm.Client, topic string) func() int64 {
	return func() int64 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		offs, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return -1
		}
		o, _ := offs.Lookup(topic, 0)
		return o.Offset
	}
}

// fillTopic writes n records of quotaRecordSize with a client id that has
// no quota.
func fillTopic(t *testing.T, c *testcluster.Cluster, topic string, n int) {
	t.Helper()
	cl := c.Client(kgo.ClientID("filler"), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.DefaultProduceTopic(topic))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	val := make([]byte, quotaRecordSize)
	var wg sync.WaitGroup
	var failed atomic.Value
	for range n {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Value: val}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Store(err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("filling %s: %v", topic, err)
	}
}

// TestClientQuotasHoldClientsToTheirByteRate: franz-go and kcat producers
// and consumers, each with a 1 MiB/s producer_byte_rate or
// consumer_byte_rate on its client id (written into ZooKeeper in Kafka's
// format or with AlterClientQuotas), move 1 MiB/s ±30 % over 10 s, are
// told so in throttle_time_ms, and run clearly faster (over twice the
// quota) once the quota is removed. A throttled produce is still appended
// and acknowledged: the producers see no error.
func TestClientQuotasHoldClientsToTheirByteRate(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatal("kcat is required and was not found: apt-get install -y kcat (or run bin/klassik-install-deps.sh)")
	}
	c := startQuotaCluster(t, 1)
	for _, topic := range []string{"q-franz-p", "q-franz-c", "q-kcat-p", "q-kcat-c"} {
		c.CreateTopic(topic, 1, 1, nil)
	}
	fillTopic(t, c, "q-franz-c", 8000)
	fillTopic(t, c, "q-kcat-c", 8000)
	adm := c.Admin()
	boot := strings.Join(c.Bootstrap(), ",")
	quotaJSON := func(key string) string { return fmt.Sprintf(`"%s":"%d"`, key, quotaRate) }

	t.Run("franz-go producer", func(t *testing.T) {
		t.Parallel()
		writeQuotaZK(t, c, "clients", "franz-producer", quotaJSON("producer_byte_rate"), "ANONYMOUS", "franz-producer", quotaRate, "producer")
		seen := &throttleSeen{}
		cl := c.Client(kgo.ClientID("franz-producer"), kgo.WithHooks(seen), kgo.ProducerBatchCompression(kgo.NoCompression()),
			kgo.DefaultProduceTopic("q-franz-p"), kgo.MaxBufferedRecords(64))
		ctx, cancel := context.WithCancel(context.Background())
		var produceErr atomic.Value
		done := make(chan struct{})
		go func() {
			defer close(done)
			val := make([]byte, quotaRecordSize)
			for ctx.Err() == nil {
				cl.Produce(ctx, &kgo.Record{Value: val}, func(_ *kgo.Record, err error) {
					if err != nil && ctx.Err() == nil {
						produceErr.Store(err)
					}
				})
			}
		}()
		defer func() { cancel(); <-done; cl.Close() }()
		count := endOffset(adm, "q-franz-p")
		assertNearQuota(t, "franz-go producer", rateOver(count, 2*time.Second, 10*time.Second))
		if seen.max.Load() == 0 {
			t.Error("franz-go was never told throttle_time_ms")
		}
		// Kafka's kafka-configs deletes the node when its last key goes.
		writeQuotaZK(t, c, "clients", "franz-producer", "", "ANONYMOUS", "franz-producer", -1, "producer")
		if r := fullSpeed(t, count, 800, 30*time.Second, "franz-go producer"); r < 2*quotaRate {
			t.Errorf("franz-go producer without its quota: %.0f B/s, want over %d", r, 2*quotaRate)
		}
		if err, _ := produceErr.Load().(error); err != nil {
			t.Errorf("a throttled produce failed: %v", err)
		}
	})

	t.Run("franz-go consumer", func(t *testing.T) {
		t.Parallel()
		alterQuota(t, adm, "client-id", "franz-consumer", "consumer_byte_rate", quotaRate, false)
		waitQuota(t, c, "consumer", "ANONYMOUS", "franz-consumer", quotaRate)
		seen := &throttleSeen{}
		cl := c.Client(kgo.ClientID("franz-consumer"), kgo.WithHooks(seen), kgo.ConsumeTopics("q-franz-c"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		var n atomic.Int64
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			for ctx.Err() == nil {
				f := cl.PollFetches(ctx)
				n.Add(int64(f.NumRecords()))
			}
		}()
		defer func() { cancel(); <-done; cl.Close() }()
		assertNearQuota(t, "franz-go consumer", rateOver(n.Load, 2*time.Second, 10*time.Second))
		if seen.max.Load() == 0 {
			t.Error("franz-go was never told throttle_time_ms")
		}
		alterQuota(t, adm, "client-id", "franz-consumer", "consumer_byte_rate", 0, true)
		waitQuota(t, c, "consumer", "ANONYMOUS", "franz-consumer", -1)
		if r := fullSpeed(t, n.Load, 800, 30*time.Second, "franz-go consumer"); r < 2*quotaRate {
			t.Errorf("franz-go consumer without its quota: %.0f B/s, want over %d", r, 2*quotaRate)
		}
	})

	t.Run("kcat producer", func(t *testing.T) {
		t.Parallel()
		writeQuotaZK(t, c, "clients", "kcat-producer", quotaJSON("producer_byte_rate"), "ANONYMOUS", "kcat-producer", quotaRate, "producer")
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, kcat, "-P", "-b", boot, "-t", "q-kcat-p", "-p", "0", "-v",
			"-X", "client.id=kcat-producer", "-X", "queue.buffering.max.kbytes=2048", "-X", "linger.ms=5")
		stdin, _ := cmd.StdinPipe()
		stderr := &lockedBuffer{}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			line := []byte(strings.Repeat("k", quotaRecordSize-1) + "\n")
			for ctx.Err() == nil {
				if _, err := stdin.Write(line); err != nil {
					return
				}
			}
		}()
		defer func() { cancel(); _ = cmd.Wait() }()
		count := endOffset(adm, "q-kcat-p")
		assertNearQuota(t, "kcat producer", rateOver(count, 2*time.Second, 10*time.Second))
		if !strings.Contains(stderr.String(), "throttled request for") {
			t.Errorf("kcat never reported a throttle; stderr:\n%s", tail(stderr.String()))
		}
		writeQuotaZK(t, c, "clients", "kcat-producer", "", "ANONYMOUS", "kcat-producer", -1, "producer")
		if r := fullSpeed(t, count, 800, 30*time.Second, "kcat producer"); r < 2*quotaRate {
			t.Errorf("kcat producer without its quota: %.0f B/s, want over %d", r, 2*quotaRate)
		}
	})

	t.Run("kcat consumer", func(t *testing.T) {
		t.Parallel()
		alterQuota(t, adm, "client-id", "kcat-consumer", "consumer_byte_rate", quotaRate, false)
		waitQuota(t, c, "consumer", "ANONYMOUS", "kcat-consumer", quotaRate)
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, kcat, "-C", "-b", boot, "-t", "q-kcat-c", "-p", "0", "-o", "beginning", "-u", "-v",
			"-f", "%o\n", "-X", "client.id=kcat-consumer")
		stdout, _ := cmd.StdoutPipe()
		stderr := &lockedBuffer{}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var n atomic.Int64
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				n.Add(1)
			}
		}()
		defer func() { cancel(); _ = cmd.Wait() }()
		assertNearQuota(t, "kcat consumer", rateOver(n.Load, 2*time.Second, 10*time.Second))
		if !strings.Contains(stderr.String(), "throttled request for") {
			t.Errorf("kcat never reported a throttle; stderr:\n%s", tail(stderr.String()))
		}
		alterQuota(t, adm, "client-id", "kcat-consumer", "consumer_byte_rate", 0, true)
		waitQuota(t, c, "consumer", "ANONYMOUS", "kcat-consumer", -1)
		// Full speed is measured with a new kcat of the same client id:
		// librdkafka also holds back its own requests for the throttle
		// times it was told (KIP-219), so the throttled process's pace
		// after the removal says more about its client than the broker.
		cancel()
		_ = cmd.Wait()
		ctx2, cancel2 := context.WithCancel(context.Background())
		cmd2 := exec.CommandContext(ctx2, kcat, "-C", "-b", boot, "-t", "q-kcat-c", "-p", "0", "-o", "beginning", "-u", "-v",
			"-f", "%o\n", "-X", "client.id=kcat-consumer")
		stdout2, _ := cmd2.StdoutPipe()
		stderr2 := &lockedBuffer{}
		cmd2.Stderr = stderr2
		if err := cmd2.Start(); err != nil {
			t.Fatal(err)
		}
		var n2 atomic.Int64
		go func() {
			sc := bufio.NewScanner(stdout2)
			for sc.Scan() {
				n2.Add(1)
			}
		}()
		defer func() { cancel2(); _ = cmd2.Wait() }()
		defer func() {
			if t.Failed() {
				t.Logf("kcat stderr (throttled run):\n%s\nkcat stderr (after the removal):\n%s", tail(stderr.String()), tail(stderr2.String()))
			}
		}()
		if r := fullSpeed(t, n2.Load, 800, 30*time.Second, "kcat consumer"); r < 2*quotaRate {
			t.Errorf("kcat consumer without its quota: %.0f B/s, want over %d", r, 2*quotaRate)
		}
	})
}

// alterQuota sets (or removes) one quota key of a single-type entity
// with AlterClientQuotas.
func alterQuota(t *testing.T, adm *kadm.Client, typ, name, key string, v float64, remove bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: typ, Name: &name}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: key, Value: v, Remove: remove}},
	}})
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("AlterClientQuotas %s=%s %s: %v %+v", typ, name, key, err, res)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// TestClientQuotaAPIsAndPrecedence: AlterClientQuotas writes Kafka's nodes
// (every broker applies them), DescribeClientQuotas reads them back with
// Kafka's filters, a <user, client-id> quota beats the client-id default
// on the data path, and a controller_mutation_rate refuses the topic
// creation that finds it exhausted with THROTTLING_QUOTA_EXCEEDED.
func TestClientQuotaAPIsAndPrecedence(t *testing.T) {
	c := startQuotaCluster(t, 2)
	adm := c.Admin()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	str := func(s string) *string { return &s }
	entries := []kadm.AlterClientQuotaEntry{
		{Entity: kadm.ClientQuotaEntity{{Type: "client-id"}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 65536}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: str("ANONYMOUS")}, {Type: "client-id", Name: str("vip")}},
			Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 104857600}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: str("ANONYMOUS")}, {Type: "client-id", Name: str("creator")}},
			Ops: []kadm.AlterClientQuotaOp{{Key: "controller_mutation_rate", Value: 1}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: str("bob")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "request_percentage", Value: 25.5}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "ip", Name: str("10.9.8.7")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "connection_creation_rate", Value: 20}}},
	}
	res, err := adm.AlterClientQuotas(ctx, entries)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("AlterClientQuotas %v: %v %s", r.Entity, r.Err, r.ErrMessage)
		}
	}
	// Kafka's node layout and JSON.
	for p, want := range map[string]string{
		"/config/clients/<default>":               `{"version":1,"config":{"producer_byte_rate":"65536"}}`,
		"/config/users/ANONYMOUS/clients/vip":     `{"version":1,"config":{"producer_byte_rate":"104857600"}}`,
		"/config/users/bob":                       `{"version":1,"config":{"request_percentage":"25.5"}}`,
		"/config/ips/10.9.8.7":                    `{"version":1,"config":{"connection_creation_rate":"20"}}`,
		"/config/users/ANONYMOUS/clients/creator": `{"version":1,"config":{"controller_mutation_rate":"1.0"}}`,
	} {
		data, _, err := c.ZK().Get(p)
		if err != nil || string(data) != want {
			t.Errorf("%s = %s (%v), want %s", p, data, err, want)
		}
	}
	waitQuota(t, c, "producer", "ANONYMOUS", "other", 65536)
	waitQuota(t, c, "producer", "ANONYMOUS", "vip", 104857600)
	waitQuota(t, c, "request", "bob", "any", 25.5)
	waitQuota(t, c, "mutation", "ANONYMOUS", "creator", 1)

	described, err := adm.DescribeClientQuotas(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range described {
		got = append(got, d.Entity.String()+" "+fmt.Sprint(d.Values))
	}
	sort.Strings(got) // Kafka answers in no particular order
	want := []string{
		"{client-id=<default>} [producer_byte_rate=65536.000000]",
		"{ip=10.9.8.7} [connection_creation_rate=20.000000]",
		"{user=ANONYMOUS, client-id=creator} [controller_mutation_rate=1.000000]",
		"{user=ANONYMOUS, client-id=vip} [producer_byte_rate=104857600.000000]",
		"{user=bob} [request_percentage=25.500000]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("DescribeClientQuotas:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	strict, err := adm.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{
		{Type: "user", MatchName: str("ANONYMOUS"), MatchType: 0}, {Type: "client-id", MatchType: 2}})
	if err != nil || len(strict) != 2 {
		t.Errorf("strict user=ANONYMOUS, any client-id: %v %v", strict, err)
	}

	// Precedence on the data path: vip (a <user, client-id> quota of
	// 100 MiB/s) is never throttled for 1 MiB; any other client id gets
	// the 64 KiB/s default and is told so.
	produce := func(client string, n int, stopOnThrottle bool) time.Duration {
		seen := &throttleSeen{}
		cl := c.Client(kgo.ClientID(client), kgo.WithHooks(seen), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.DefaultProduceTopic("prec"))
		defer cl.Close()
		val := make([]byte, quotaRecordSize)
		for i := 0; i < n && !(stopOnThrottle && seen.max.Load() > 0); i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: val}).FirstErr(); err != nil {
				t.Fatalf("%s: produce: %v", client, err)
			}
		}
		return time.Duration(seen.max.Load())
	}
	c.CreateTopic("prec", 1, 1, nil)
	if d := produce("vip", 100, false); d != 0 {
		t.Errorf("vip throttled %v under its 100 MiB/s <user, client-id> quota", d)
	}
	if d := produce("other", 200, true); d == 0 {
		t.Error("a client id under the 64 KiB/s default was never throttled")
	}

	// Kafka's quota metrics, on the partition leader's registry.
	c.WaitFor(5*time.Second, "the throttle-time metric of client other", func() bool {
		for i := 0; i < c.N(); i++ {
			if g, ok := c.Broker(i).Metrics().Get("kafka.server.Produce.throttle-time.user=.client-id=other").(interface{ Value() float64 }); ok && g.Value() > 0 {
				return true
			}
		}
		return false
	})

	// request_percentage: a client allowed a millionth of a thread is
	// throttled (throttle_time_ms of Metadata) within a few requests.
	busy := kadm.ClientQuotaEntity{{Type: "user", Name: str("ANONYMOUS")}, {Type: "client-id", Name: str("busy")}}
	if res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: busy,
		Ops: []kadm.AlterClientQuotaOp{{Key: "request_percentage", Value: 0.0001}}}}); err != nil || res[0].Err != nil {
		t.Fatalf("request_percentage: %v %v", err, res)
	}
	waitQuota(t, c, "request", "ANONYMOUS", "busy", 0.0001)
	busyClient := c.Client(kgo.ClientID("busy"))
	if !testcluster.Poll(20*time.Second, func() bool {
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, busyClient)
		return err == nil && resp.ThrottleMillis > 0
	}) {
		t.Error("a client over its request_percentage was never throttled")
	}

	// controller_mutation_rate 1/s: a burst of 11 partitions
	// (controller.quota.window.num 11 × 1 s); the strict quota
	// (CreateTopics v6+) lets the 12-partition topic through and refuses
	// the next creation.
	creator := kadm.NewClient(c.Client(kgo.ClientID("creator")))
	if r, err := creator.CreateTopic(ctx, 12, 1, nil, "mut-1"); err != nil || r.Err != nil {
		t.Fatalf("first creation: %v %v", err, r.Err)
	}
	// (kadm's single-topic call returns the topic's error as its own.)
	r, _ := creator.CreateTopic(ctx, 1, 1, nil, "mut-2")
	if !errors.Is(r.Err, kerr.ThrottlingQuotaExceeded) || r.ErrMessage != "The throttling quota has been exceeded." {
		t.Fatalf("creation past the quota: %v %q, want THROTTLING_QUOTA_EXCEEDED", r.Err, r.ErrMessage)
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "mut-3", 1, 1
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, c.Client(kgo.ClientID("creator")))
	if err != nil || resp.ThrottleMillis <= 0 || resp.Topics[0].ErrorCode != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("CreateTopics past the quota: %v, throttle_time_ms %d, code %d", err, resp.ThrottleMillis, resp.Topics[0].ErrorCode)
	}
}
