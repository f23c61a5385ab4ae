package replica

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/network"
)

// LeaderClient is one connection to a partition leader (network.Client).
type LeaderClient interface {
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
	Close() error
}

// reusingClient is a LeaderClient that can read a response into the
// caller's buffer (network.Client.RequestReusing): the fetcher keeps one
// buffer for its fetch responses instead of allocating up to
// replica.fetch.response.max.bytes per fetch.
type reusingClient interface {
	RequestReusing(ctx context.Context, req kmsg.Request, buf []byte) (kmsg.Response, []byte, error)
}

// FetcherConfig is the replica fetcher's part of the broker configuration
// (num.replica.fetchers, replica.fetch.* and replica.socket.timeout.ms).
type FetcherConfig struct {
	NumFetchers      int           // num.replica.fetchers (default 1)
	MinBytes         int32         // replica.fetch.min.bytes (1)
	MaxBytes         int32         // replica.fetch.max.bytes, per partition (1048576)
	ResponseMaxBytes int32         // replica.fetch.response.max.bytes (10485760)
	MaxWait          time.Duration // replica.fetch.wait.max.ms (500)
	Backoff          time.Duration // replica.fetch.backoff.ms (1000)
	// TruncateToHighWatermark is inter.broker.protocol.version below
	// 0.11.0-IV2 (Kafka's isOffsetForLeaderEpochSupported false): a new
	// follower truncates its log to its own high watermark and fetches from
	// there, without asking the leader (no OffsetForLeaderEpoch), as Kafka
	// did before KIP-101. The HW may be stale, so acknowledged records can
	// be lost (KIP-101's first example) or the replicas diverge (its second).
	TruncateToHighWatermark bool
	// NoLastFetchedEpoch is inter.broker.protocol.version below 2.7-IV1:
	// fetches carry LastFetchedEpoch -1, so the leader never answers a
	// diverging epoch.
	NoLastFetchedEpoch bool
	// Quota is the follower side of the replication quotas (Kafka's
	// quotas.follower): throttled partitions not caught up are left out of
	// fetch requests while it is exceeded. Nil: unthrottled.
	Quota ReplicaQuota
	// Dial connects to a leader's inter-broker endpoint (NetworkDialer in
	// the broker; an in-process client in tests). Nil: no fetcher.
	Dial   func(ctx context.Context, host string, port int32) (LeaderClient, error)
	Logger *slog.Logger
}

// NetworkDialer dials leaders with dial (the inter-broker listener's TLS
// and SASL login; network.PlainDialer for PLAINTEXT); timeout is
// replica.socket.timeout.ms (connect and per-request deadline).
func NetworkDialer(dial network.DialFunc, clientID string, timeout time.Duration) func(ctx context.Context, host string, port int32) (LeaderClient, error) {
	return func(ctx context.Context, host string, port int32) (LeaderClient, error) {
		c, err := dial(ctx, net.JoinHostPort(host, strconv.Itoa(int(port))), clientID, timeout)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// FetcherManager is Kafka's ReplicaFetcherManager: it assigns follower
// partitions to fetcher goroutines, num.replica.fetchers per source broker
// (a partition goes to hash(partition) mod n), starts a goroutine when a
// (leader, fetcher id) pair gets its first partition and stops it when its
// last partition goes. It owns every goroutine it starts; Shutdown stops
// and waits for all of them.
type FetcherManager struct {
	cfg FetcherConfig
	m   *Manager
	log *slog.Logger

	// mu guards the following.
	mu          sync.Mutex
	threads     map[fetcherKey]*fetcherThread
	closed      bool
	numFetchers int // num.replica.fetchers in force (Resize changes it)
}

type fetcherKey struct {
	leader int32
	host   string
	port   int32
	id     int
}

// NewFetcherManager returns a fetcher manager feeding m's follower logs.
func NewFetcherManager(cfg FetcherConfig, m *Manager) *FetcherManager {
	if cfg.NumFetchers <= 0 {
		cfg.NumFetchers = 1
	}
	if cfg.MinBytes <= 0 {
		cfg.MinBytes = 1
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 1048576
	}
	if cfg.ResponseMaxBytes <= 0 {
		cfg.ResponseMaxBytes = 10485760
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 500 * time.Millisecond
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = m.log
	}
	if cfg.Quota == nil {
		cfg.Quota = unboundedQuota{}
	}
	return &FetcherManager{cfg: cfg, m: m, log: cfg.Logger.With("component", "replica-fetcher-manager"), threads: make(map[fetcherKey]*fetcherThread),
		numFetchers: cfg.NumFetchers}
}

// fetcherID is Kafka's getFetcherId: abs(31 * topic.hashCode + partition)
// mod num.replica.fetchers, with Java's String.hashCode.
func fetcherID(tp common.TopicPartition, n int) int {
	var h int32
	for _, c := range tp.Topic { // UTF-16 units for the BMP, as Java
		h = 31*h + int32(c)
	}
	v := 31*h + tp.Partition
	if v < 0 {
		v = -v
		if v < 0 { // MinInt32
			v = 0
		}
	}
	return int(v) % n
}

// AddPartitions starts fetching each partition from its leader; a
// partition already fetched by another goroutine (an older leader) moves.
// Every partition starts in the Truncating state: the fetcher asks the
// leader where its log stops agreeing (OffsetForLeaderEpoch) before it
// fetches (the pre-2.7 protocol, Klassik's default), or, with
// TruncateToHighWatermark, truncates to its own high watermark.
func (f *FetcherManager) AddPartitions(parts map[common.TopicPartition]FollowerStart) {
	var idle []*fetcherThread
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	for tp, st := range parts {
		key := fetcherKey{st.LeaderID, st.LeaderHost, st.LeaderPort, fetcherID(tp, f.numFetchers)}
		for k, t := range f.threads {
			if k != key && t.remove(tp) && t.empty() {
				delete(f.threads, k)
				idle = append(idle, t)
			}
		}
		t := f.threads[key]
		if t == nil {
			t = newFetcherThread(f, key)
			f.threads[key] = t
			t.start()
		}
		t.add(tp, st)
	}
	f.mu.Unlock()
	for _, t := range idle {
		t.stop()
	}
}

// RemovePartitions stops fetching the partitions; goroutines left without
// partitions stop (Kafka's shutdownIdleFetcherThreads). When it returns,
// no goroutine will start new work for them; a response in flight is
// dropped by the leader-epoch check of the follower log.
func (f *FetcherManager) RemovePartitions(tps []common.TopicPartition) {
	var idle []*fetcherThread
	f.mu.Lock()
	for k, t := range f.threads {
		for _, tp := range tps {
			t.remove(tp)
		}
		if t.empty() {
			delete(f.threads, k)
			idle = append(idle, t)
		}
	}
	f.mu.Unlock()
	for _, t := range idle {
		t.stop()
	}
}

// removeFailed is called by a goroutine that gives up on a partition
// (fenced with its own current epoch, or no longer following).
func (f *FetcherManager) removeFailed(t *fetcherThread, tp common.TopicPartition, epoch int32, why string) {
	t.mu.Lock()
	if s := t.parts[tp]; s != nil && s.leaderEpoch == epoch {
		delete(t.parts, tp)
	}
	t.mu.Unlock()
	f.log.Info("partition removed from replica fetcher", "topic", tp.Topic, "partition", tp.Partition,
		"leader_epoch", epoch, "reason", why)
}

// Shutdown stops every fetcher goroutine and waits for them. All are told
// to stop before the first is waited for, so the wait is the slowest
// one's, not the sum; each stops after the partition it is applying (see
// stopping).
func (f *FetcherManager) Shutdown() {
	f.mu.Lock()
	f.closed = true
	threads := f.threads
	f.threads = make(map[fetcherKey]*fetcherThread)
	f.mu.Unlock()
	for _, t := range threads {
		t.cancel()
	}
	for _, t := range threads {
		t.stop()
	}
}

// Fetching reports, for tests and tools, the partitions being fetched and
// whether each is still truncating.
func (f *FetcherManager) Fetching() map[common.TopicPartition]bool {
	out := make(map[common.TopicPartition]bool)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.threads {
		t.mu.Lock()
		for tp, s := range t.parts {
			out[tp] = s.truncating
		}
		t.mu.Unlock()
	}
	return out
}

// fetchState is Kafka's PartitionFetchState.
type fetchState struct {
	leaderEpoch int32
	truncating  bool
	delayUntil  time.Time
	topicID     [16]byte
	// lag is the leader's HW minus the next fetch offset after the last
	// fetch that returned records (Kafka's PartitionFetchState.lag), -1
	// until one did; 0 is "in sync" for the follower throttle.
	lag int64
}

// fetcherThread is Kafka's ReplicaFetcherThread: one goroutine fetching a
// set of partitions from one leader over one connection.
type fetcherThread struct {
	f      *FetcherManager
	key    fetcherKey
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{} // partitions added

	// mu guards the following.
	mu    sync.Mutex
	parts map[common.TopicPartition]*fetchState

	client LeaderClient // used only by the goroutine
	// respBuf is the fetch response buffer of a reusingClient, used only by
	// the goroutine: a response's records alias it until they are
	// appended, and the next fetch reads into it again.
	respBuf []byte
}

func newFetcherThread(f *FetcherManager, key fetcherKey) *fetcherThread {
	ctx, cancel := context.WithCancel(context.Background())
	return &fetcherThread{
		f: f, key: key, ctx: ctx, cancel: cancel,
		log:   f.log.With("leader", key.leader, "fetcher_id", key.id),
		done:  make(chan struct{}),
		wake:  make(chan struct{}, 1),
		parts: make(map[common.TopicPartition]*fetchState),
	}
}

func (t *fetcherThread) start() { go t.run() }

// stopping reports that the goroutine is asked to stop. The loops that
// apply a response partition by partition (truncations, appends) check it
// before each partition: a stop then waits for one partition's work, not
// for a whole response's (after a controlled shutdown, a truncation of
// thousands of partitions that just became followers took seconds). What
// is left undone is redone from the logs by the next start.
func (t *fetcherThread) stopping() bool { return t.ctx.Err() != nil }

func (t *fetcherThread) stop() {
	t.cancel()
	<-t.done
}

func (t *fetcherThread) add(tp common.TopicPartition, st FollowerStart) {
	t.mu.Lock()
	if s := t.parts[tp]; s != nil && s.leaderEpoch == st.LeaderEpoch {
		t.mu.Unlock()
		return // same epoch: keep the state, fetching goes on where it was
	}
	t.parts[tp] = &fetchState{leaderEpoch: st.LeaderEpoch, truncating: true, topicID: st.TopicID, lag: -1}
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

func (t *fetcherThread) remove(tp common.TopicPartition) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.parts[tp]
	delete(t.parts, tp)
	t.f.m.metrics.lags.remove(tp)
	return ok
}

func (t *fetcherThread) empty() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.parts) == 0
}

// current returns the state of tp if it still has epoch.
func (t *fetcherThread) current(tp common.TopicPartition, epoch int32) *fetchState {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.parts[tp]; s != nil && s.leaderEpoch == epoch {
		return s
	}
	return nil
}

func (t *fetcherThread) delay(tp common.TopicPartition, epoch int32) {
	t.mu.Lock()
	if s := t.parts[tp]; s != nil && s.leaderEpoch == epoch {
		s.delayUntil = time.Now().Add(t.f.cfg.Backoff)
	}
	t.mu.Unlock()
}

func (t *fetcherThread) setLag(tp common.TopicPartition, epoch int32, lag int64) {
	t.mu.Lock()
	if s := t.parts[tp]; s != nil && s.leaderEpoch == epoch {
		s.lag = lag
	}
	t.mu.Unlock()
}

func (t *fetcherThread) setFetching(tp common.TopicPartition, epoch int32) {
	t.mu.Lock()
	if s := t.parts[tp]; s != nil && s.leaderEpoch == epoch {
		s.truncating = false
	}
	t.mu.Unlock()
}

// sleep waits for d, a new partition, or stop.
func (t *fetcherThread) sleep(d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-t.ctx.Done():
	case <-t.wake:
	case <-timer.C:
	}
}

func (t *fetcherThread) run() {
	defer close(t.done)
	defer func() {
		if t.client != nil {
			t.client.Close()
		}
	}()
	for t.ctx.Err() == nil {
		if t.client == nil {
			c, err := t.f.cfg.Dial(t.ctx, t.key.host, t.key.port)
			if err != nil {
				if t.ctx.Err() == nil {
					t.log.Warn("connecting to leader", "addr", net.JoinHostPort(t.key.host, strconv.Itoa(int(t.key.port))), "err", err)
				}
				t.sleep(t.f.cfg.Backoff)
				continue
			}
			t.client = c
		}
		if err := t.maybeTruncate(); err != nil {
			t.requestFailed(err)
			continue
		}
		fetched, err := t.maybeFetch()
		if err != nil {
			t.requestFailed(err)
			continue
		}
		if !fetched {
			t.sleep(t.f.cfg.Backoff)
		}
	}
}

func (t *fetcherThread) requestFailed(err error) {
	if t.ctx.Err() != nil {
		return
	}
	t.log.Warn("request to leader failed; reconnecting after backoff", "err", err)
	t.client.Close()
	t.client = nil
	t.sleep(t.f.cfg.Backoff)
}

type partSnap struct {
	tp      common.TopicPartition
	epoch   int32
	topicID [16]byte
	inSync  bool // lag known and 0 (the follower throttle spares it)
}

// followedPart is a partition of a snapshot and its follower log state.
type followedPart struct {
	ps partSnap
	st followerLogState
}

// followed returns the log state of each partition in parts that this
// broker still follows at the snapshot's epoch; the others leave the
// thread.
func (t *fetcherThread) followed(parts []partSnap) []followedPart {
	var out []followedPart
	for _, ps := range parts {
		st, err := t.f.m.followerState(ps.tp, ps.epoch)
		if err != nil {
			t.f.removeFailed(t, ps.tp, ps.epoch, "not following at this epoch")
			continue
		}
		out = append(out, followedPart{ps, st})
	}
	return out
}

func (t *fetcherThread) snapshot(truncating bool) []partSnap {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []partSnap
	for tp, s := range t.parts {
		if s.truncating == truncating && !now.Before(s.delayUntil) {
			out = append(out, partSnap{tp, s.leaderEpoch, s.topicID, s.lag == 0})
		}
	}
	return out
}

// maybeTruncate is the Truncating state: ask the
// leader where each partition's latest local epoch ends and truncate there
// (a log without epochs, or every log under TruncateToHighWatermark,
// truncates to its own high watermark without asking).
func (t *fetcherThread) maybeTruncate() error {
	parts := t.snapshot(true)
	if len(parts) == 0 {
		return nil
	}
	m := t.f.m
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version = 3
	req.ReplicaID = m.cfg.BrokerID
	type asked struct {
		partSnap
		hw int64
	}
	index := make(map[common.TopicPartition]asked)
	for _, fp := range t.followed(parts) {
		if t.stopping() {
			return nil
		}
		ps, st := fp.ps, fp.st
		if st.latestEpoch < 0 || t.f.cfg.TruncateToHighWatermark {
			// No epochs to ask about, or a protocol that does not ask:
			// truncate to the HW and fetch.
			reason := "no leader epochs"
			if t.f.cfg.TruncateToHighWatermark {
				reason = "high watermark (inter.broker.protocol.version below 0.11.0-IV2)"
			}
			if err := m.truncateFollower(ps.tp, ps.epoch, st.hw, reason); err != nil {
				t.partitionError(ps.tp, ps.epoch, err)
				continue
			}
			t.setFetching(ps.tp, ps.epoch)
			continue
		}
		index[ps.tp] = asked{ps, st.hw}
		rt := findOrAddOFLETopic(req, ps.tp.Topic)
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition = ps.tp.Partition
		rp.CurrentLeaderEpoch = ps.epoch
		rp.LeaderEpoch = st.latestEpoch
		rt.Partitions = append(rt.Partitions, rp)
	}
	if len(index) == 0 {
		return nil
	}
	raw, err := t.client.Request(t.ctx, req)
	if err != nil {
		return err
	}
	resp, ok := raw.(*kmsg.OffsetForLeaderEpochResponse)
	if !ok {
		return errors.New("replica: unexpected OffsetForLeaderEpoch response type")
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if t.stopping() {
				return nil
			}
			tp := common.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}
			a, ok := index[tp]
			if !ok || t.current(tp, a.epoch) == nil {
				continue
			}
			if rp.ErrorCode != 0 {
				t.fetchErrorCode(tp, a.epoch, rp.ErrorCode)
				continue
			}
			off, done, err := m.truncateByEpoch(tp, a.epoch, rp.LeaderEpoch, rp.EndOffset, a.hw)
			if err != nil {
				t.partitionError(tp, a.epoch, err)
				continue
			}
			if done {
				t.log.Debug("truncation done", "topic", tp.Topic, "partition", tp.Partition, "offset", off)
				t.setFetching(tp, a.epoch)
			}
		}
	}
	return nil
}

func findOrAddOFLETopic(req *kmsg.OffsetForLeaderEpochRequest, topic string) *kmsg.OffsetForLeaderEpochRequestTopic {
	for i := range req.Topics {
		if req.Topics[i].Topic == topic {
			return &req.Topics[i]
		}
	}
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = topic
	req.Topics = append(req.Topics, rt)
	return &req.Topics[len(req.Topics)-1]
}

// fetchErrorCode handles a per-partition error from the leader:
// FENCED_LEADER_EPOCH with our own current epoch
// means our view is stale, so the partition leaves this goroutine until the
// next LeaderAndIsr; everything else is retried after the backoff.
func (t *fetcherThread) fetchErrorCode(tp common.TopicPartition, epoch int32, code int16) {
	if code == kerr.FencedLeaderEpoch.Code {
		if p, ok := t.f.m.Partition(tp); ok && p.State().LeaderEpoch == epoch {
			t.f.removeFailed(t, tp, epoch, "fenced leader epoch")
			return
		}
	}
	t.delay(tp, epoch)
}

func (t *fetcherThread) partitionError(tp common.TopicPartition, epoch int32, err error) {
	if errors.Is(err, errNotFollowing) {
		t.f.removeFailed(t, tp, epoch, "not following at this epoch")
		return
	}
	t.log.Warn("replicating partition", "topic", tp.Topic, "partition", tp.Partition, "err", err)
	t.delay(tp, epoch)
}

// maybeFetch sends one Fetch for every partition in the Fetching state and
// applies the response. It reports whether a
// request was sent.
func (t *fetcherThread) maybeFetch() (bool, error) {
	parts := t.snapshot(false)
	if len(parts) == 0 {
		return false, nil
	}
	m := t.f.m
	cfg := t.f.cfg
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID = m.cfg.BrokerID
	req.MaxWaitMillis = int32(cfg.MaxWait / time.Millisecond)
	req.MinBytes = cfg.MinBytes
	req.MaxBytes = cfg.ResponseMaxBytes
	req.IsolationLevel = 0
	req.SessionID = 0
	req.SessionEpoch = -1 // sessionless full fetches
	sent := make(map[common.TopicPartition]partSnap)
	for _, fp := range t.followed(parts) {
		ps, st := fp.ps, fp.st
		if t.shouldFollowerThrottle(ps) {
			continue // fetched again once the rate is back under the bound
		}
		sent[ps.tp] = ps
		var rt *kmsg.FetchRequestTopic
		for i := range req.Topics {
			if req.Topics[i].Topic == ps.tp.Topic {
				rt = &req.Topics[i]
			}
		}
		if rt == nil {
			req.Topics = append(req.Topics, kmsg.NewFetchRequestTopic())
			rt = &req.Topics[len(req.Topics)-1]
			rt.Topic = ps.tp.Topic
			rt.TopicID = ps.topicID
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = ps.tp.Partition
		rp.CurrentLeaderEpoch = ps.epoch
		rp.FetchOffset = st.leo
		rp.LastFetchedEpoch = st.latestEpoch
		if cfg.NoLastFetchedEpoch {
			rp.LastFetchedEpoch = -1
		}
		rp.LogStartOffset = st.logStart
		rp.PartitionMaxBytes = cfg.MaxBytes
		rt.Partitions = append(rt.Partitions, rp)
	}
	if len(sent) == 0 {
		return false, nil
	}
	var raw kmsg.Response
	var err error
	if rc, ok := t.client.(reusingClient); ok {
		raw, t.respBuf, err = rc.RequestReusing(t.ctx, req, t.respBuf)
	} else {
		raw, err = t.client.Request(t.ctx, req)
	}
	if err != nil {
		return true, err
	}
	resp, ok := raw.(*kmsg.FetchResponse)
	if !ok {
		return true, errors.New("replica: unexpected Fetch response type")
	}
	if resp.ErrorCode != 0 {
		t.log.Warn("fetch from leader failed", "err", kerr.ErrorForCode(resp.ErrorCode))
		for tp, ps := range sent {
			t.delay(tp, ps.epoch)
		}
		return true, nil
	}
	for _, rt := range resp.Topics {
		for i := range rt.Partitions {
			if t.stopping() {
				return true, nil
			}
			rp := &rt.Partitions[i]
			tp := common.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}
			ps, ok := sent[tp]
			if !ok {
				continue
			}
			if s := t.current(tp, ps.epoch); s == nil || s.truncating {
				continue // removed, re-added or truncating meanwhile
			}
			t.handleFetched(tp, ps.epoch, rp)
		}
	}
	return true, nil
}

func (t *fetcherThread) handleFetched(tp common.TopicPartition, epoch int32, rp *kmsg.FetchResponseTopicPartition) {
	m := t.f.m
	switch {
	case rp.ErrorCode == 0 && rp.DivergingEpoch.EndOffset >= 0:
		// The leader says our last epoch ends earlier there: truncate by
		// epoch and fetch again (the next fetch re-checks divergence).
		st, err := m.followerState(tp, epoch)
		if err != nil {
			t.partitionError(tp, epoch, err)
			return
		}
		if _, _, err := m.truncateByEpoch(tp, epoch, rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset, st.hw); err != nil {
			t.partitionError(tp, epoch, err)
		}
	case rp.ErrorCode == 0:
		st, err := m.appendFromLeader(tp, epoch, rp.RecordBatches, rp.HighWatermark, rp.LogStartOffset)
		if err != nil {
			t.partitionError(tp, epoch, err)
			break
		}
		m.metrics.followerFetched(t.key, tp, len(rp.RecordBatches), rp.HighWatermark, st.leo, m.isAddingReplica(tp, m.cfg.BrokerID))
		if n := len(rp.RecordBatches); n > 0 {
			t.setLag(tp, epoch, max(0, rp.HighWatermark-st.leo))
			// In-sync or not, a throttled partition's bytes count.
			if q := t.f.cfg.Quota; q.IsThrottled(tp) {
				q.Record(int64(n))
			}
		}
	case rp.ErrorCode == kerr.OffsetOutOfRange.Code:
		if err := t.handleOutOfRange(tp, epoch); err != nil {
			t.partitionError(tp, epoch, err)
		}
	default:
		t.fetchErrorCode(tp, epoch, rp.ErrorCode)
	}
}

// handleOutOfRange answers OFFSET_OUT_OF_RANGE: a leader with a shorter log
// (after an unclean election) makes the follower truncate to its end; a
// leader whose log starts beyond the follower's end makes it restart its
// log there.
func (t *fetcherThread) handleOutOfRange(tp common.TopicPartition, epoch int32) error {
	m := t.f.m
	st, err := m.followerState(tp, epoch)
	if err != nil {
		return err
	}
	leaderEnd, err := t.leaderOffset(tp, epoch, -1)
	if err != nil {
		return err
	}
	if leaderEnd < st.leo {
		return m.truncateFollower(tp, epoch, leaderEnd, "leader log end below follower log end")
	}
	leaderStart, err := t.leaderOffset(tp, epoch, -2)
	if err != nil {
		return err
	}
	if leaderStart > st.leo {
		return m.restartFollowerLog(tp, epoch, leaderStart)
	}
	return nil
}

// leaderOffset asks the leader for its latest (-1) or earliest (-2) offset
// with ListOffsets as a replica.
func (t *fetcherThread) leaderOffset(tp common.TopicPartition, epoch int32, ts int64) (int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 4
	req.ReplicaID = t.f.m.cfg.BrokerID
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = tp.Topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = tp.Partition
	rp.CurrentLeaderEpoch = epoch
	rp.Timestamp = ts
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	raw, err := t.client.Request(t.ctx, req)
	if err != nil {
		return 0, err
	}
	resp, ok := raw.(*kmsg.ListOffsetsResponse)
	if !ok || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return 0, errors.New("replica: malformed ListOffsets response")
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		return 0, kerr.ErrorForCode(p.ErrorCode)
	}
	return p.Offset, nil
}
