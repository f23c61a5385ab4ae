package replica

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/klassik/klassik/broker/storage"
)

// Config is the replica manager's narrow view of the broker configuration.
type Config struct {
	BrokerID int32
	// LogConfigFor returns a topic's effective log configuration (topic
	// overrides from ZooKeeper merged over the broker defaults, e.g. via
	// config.Config.LogConfig) for a log about to be created. It may read
	// ZooKeeper: LeaderAndIsr calls it for each of its topics before taking
	// any lock. Nil means storage defaults.
	LogConfigFor func(topic string) (storage.LogConfig, error)
	// BrokerEpoch returns this broker's current broker epoch (the czxid of
	// its /brokers/ids registration). Nil disables the STALE_BROKER_EPOCH
	// check (single-node setups and tests).
	BrokerEpoch func() int64
	// MinInsyncReplicas returns min.insync.replicas for a topic (topic
	// override over the broker default). It must answer from memory without
	// blocking; the manager resolves it before taking a partition lock.
	// Nil means 1.
	MinInsyncReplicas func(topic string) int
	// ReplicaLagTimeMax is replica.lag.time.max.ms: a follower that has
	// not caught up for this long leaves the ISR. 0 means 30 s.
	ReplicaLagTimeMax time.Duration
	// IsrUpdater persists ISR changes made by this broker as a leader (the
	// broker's *zkclient.Client); nil applies them locally only.
	IsrUpdater IsrUpdater
	// IsBrokerAlive tells whether a follower is a live broker (metadata
	// cache); only live brokers join an ISR. Nil: every replica is eligible.
	IsBrokerAlive func(id int32) bool
	// ReplicaFetch configures the replica fetcher the manager creates and
	// owns when Fetcher is nil and ReplicaFetch.Dial is set.
	ReplicaFetch FetcherConfig
	// ProducePurgatory holds acks=all produce requests waiting for the ISR
	// (DelayedProduce); nil means the manager creates and owns one, with
	// PurgatoryClock.
	ProducePurgatory *purgatory.Purgatory
	// Metrics is the registry for IsrShrinksPerSec, IsrExpandsPerSec and
	// UnderReplicatedPartitions; nil disables them.
	Metrics gometrics.Registry
	// DisableRequestMetrics leaves out the per-request BrokerTopicMetrics
	// (for measuring what they cost; not a broker config key).
	DisableRequestMetrics bool
	// MaxSessions is max.incremental.fetch.session.cache.slots (default
	// 1000); 0 means the default, negative disables fetch sessions.
	MaxSessions int
	// LeaderQuota is the leader side of the replication quotas (Kafka's
	// quotas.leader): records of throttled partitions are left out of
	// responses to followers outside the ISR while it is exceeded. Nil:
	// unthrottled.
	LeaderQuota ReplicaQuota
	// LogDirs moves replicas between log directories (AlterReplicaLogDirs,
	// DescribeLogDirs; alterlogdirs.go): the broker's *storage.LogManager.
	// Nil: neither API is served.
	LogDirs LogDirStore
	// AlterLogDirsRate returns replica.alter.log.dirs.io.max.bytes.per.second,
	// read at every copy step so a dynamic change applies at once; nil or
	// <= 0: unlimited.
	AlterLogDirsRate func() int64
	// AlterLogDirsChunkBytes is the most one copy step reads
	// (replica.fetch.max.bytes); 0: 1 MiB.
	AlterLogDirsChunkBytes int32
	// Fetcher receives follower partitions (nil: followers do not fetch).
	Fetcher FollowerFetcher
	// OnLeadershipChange is called after LeaderAndIsr (partitions that
	// became leader or follower) and after StopReplica with delete
	// (resignations), in request order, with the control lock held: it must
	// not block (hand work to another goroutine) and must not call back into
	// the control requests. The group and transaction coordinators use it to
	// load or unload their internal-topic partitions (Kafka's
	// onLeadershipChange / onResignation).
	OnLeadershipChange func([]LeadershipChange)
	// OnPartitionsDeleted is called (outside locks) with the partitions that
	// UpdateMetadata reported as deleted, e.g. for the group coordinator.
	OnPartitionsDeleted func([]common.TopicPartition)
	// FetchPurgatory holds parked fetches; nil means the manager creates
	// (and on Shutdown shuts down) its own, with PurgatoryClock (nil: the
	// wall clock; tests pass a purgatory.FakeClock to expire max_wait_ms
	// without sleeping).
	FetchPurgatory *purgatory.Purgatory
	PurgatoryClock purgatory.Clock
	// DisableSendfile makes Fetch read record data into memory and return a
	// plain *kmsg.FetchResponse instead of a *network.FileFetchResponse.
	DisableSendfile bool
	// Clock is injectable for tests; nil means time.Now.
	Clock func() time.Time
	// Logger and StateChangeLogger (Kafka's state.change.logger); nil means
	// slog.Default().
	Logger            *slog.Logger
	StateChangeLogger *slog.Logger
}

// LeadershipChange is one partition whose role changed.
type LeadershipChange struct {
	common.TopicPartition
	Leader      bool  // true: this broker now leads it; false: follower or removed
	LeaderEpoch int32 // -1 when unknown (StopReplica before v3)
}

// Manager is Kafka's ReplicaManager: it owns the Partition objects of this
// broker, applies the controller's LeaderAndIsr/StopReplica/UpdateMetadata
// requests, and serves the data-path APIs (Produce, Fetch, ListOffsets,
// OffsetForLeaderEpoch, DeleteRecords).
type Manager struct {
	cfg   Config
	logs  LogStore
	meta  MetadataCache
	log   *slog.Logger
	state *slog.Logger

	// mu guards the following.
	mu              sync.RWMutex
	partitions      map[common.TopicPartition]*Partition
	controllerEpoch int32               // highest controller epoch seen; -1 initially
	topicNames      map[[16]byte]string // topic id → name (LeaderAndIsr v5+, UpdateMetadata v7+)
	topicIDs        map[string][16]byte // name → topic id
	// offline holds the replicas on failed log directories (offline.go);
	// they are not in partitions.
	offline map[common.TopicPartition]struct{}
	// controlMu serialises LeaderAndIsr, StopReplica and UpdateMetadata (Kafka's
	// replicaStateChangeLock); taken before mu and before any Partition.mu.
	controlMu sync.Mutex

	fetches     *purgatory.Purgatory // parked fetches (DelayedFetch)
	ownFetches  bool                 // created here, so shut down here
	produces    *purgatory.Purgatory // acks=all produce (DelayedProduce)
	ownProduces bool
	sessions    *sessionCache
	fetcher     *FetcherManager // created here (Config.ReplicaFetch), nil otherwise
	metrics     replicaMetrics
	// reassigning counts hosted partitions with replicas being added
	// (partitionmetrics.go); written under their Partition.mu.
	reassigning atomic.Int32

	// isrNotifyMu guards the following (a leaf lock).
	isrNotifyMu        sync.Mutex
	isrChanged         map[common.TopicPartition]struct{}
	lastIsrChange      time.Time
	lastIsrPropagation time.Time

	logDirMovers logDirMovers // ReplicaAlterLogDirs movers (alterlogdirs.go)

	// isrWriter queues ISR changes for the writer goroutine (isrwriter.go).
	isrWriter isrWriter

	startOnce sync.Once
	isrWG     sync.WaitGroup // the ISR maintenance and ISR writer goroutines
	closeOnce sync.Once
	done      chan struct{}
}

// New builds a manager over any LogStore and the broker's metadata cache
// (required: it tells unhosted partitions from unknown ones).
func New(cfg Config, logs LogStore, meta MetadataCache) *Manager {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.StateChangeLogger == nil {
		cfg.StateChangeLogger = cfg.Logger.With("logger", "state.change.logger")
	}
	if cfg.MaxSessions == 0 {
		cfg.MaxSessions = 1000
	}
	if cfg.LeaderQuota == nil {
		cfg.LeaderQuota = unboundedQuota{}
	}
	if cfg.ReplicaLagTimeMax <= 0 {
		cfg.ReplicaLagTimeMax = 30 * time.Second
	}
	if meta == nil {
		panic("replica: New without a metadata cache")
	}
	m := &Manager{
		cfg:             cfg,
		logs:            logs,
		meta:            meta,
		log:             cfg.Logger.With("broker", cfg.BrokerID),
		state:           cfg.StateChangeLogger.With("broker", cfg.BrokerID),
		partitions:      make(map[common.TopicPartition]*Partition),
		controllerEpoch: -1,
		topicNames:      make(map[[16]byte]string),
		topicIDs:        make(map[string][16]byte),
		fetches:         cfg.FetchPurgatory,
		sessions:        newSessionCache(cfg.MaxSessions, cfg.Clock),
		produces:        cfg.ProducePurgatory,
		isrChanged:      make(map[common.TopicPartition]struct{}),
		done:            make(chan struct{}),
	}
	if m.fetches == nil {
		m.fetches = purgatory.New("Fetch", cfg.PurgatoryClock)
		m.ownFetches = true
	}
	if m.produces == nil {
		m.produces = purgatory.New("Produce", cfg.PurgatoryClock)
		m.ownProduces = true
	}
	m.metrics = newReplicaMetrics(cfg.Metrics, m)
	// As Kafka, the 60 s maximum notification delay counts from start-up.
	m.lastIsrPropagation = cfg.Clock()
	if cfg.Fetcher == nil && cfg.ReplicaFetch.Dial != nil {
		m.fetcher = NewFetcherManager(cfg.ReplicaFetch, m)
		m.cfg.Fetcher = m.fetcher
	}
	return m
}

// Shutdown stops the replica fetchers, the ISR maintenance goroutine and
// the ISR writer (waiting for them: a batch of ISR writes in flight is
// finished, changes still queued are dropped), refuses new long polls and, for the purgatories the
// manager created, shuts them down so every parked fetch answers with what
// it has and every parked acks=all produce with its current statuses.
func (m *Manager) Shutdown() {
	m.closeOnce.Do(func() {
		// Each phase's duration is logged, so a slow exit shows which
		// part it waited for.
		var kv []any
		last := time.Now()
		phase := func(name string) {
			now := time.Now()
			kv = append(kv, name, now.Sub(last).Milliseconds())
			last = now
		}
		close(m.done)
		m.stopIsrWriter()
		m.isrWG.Wait()
		phase("isr_writer_ms")
		m.stopLogDirMovers()
		phase("log_dir_movers_ms")
		if m.fetcher != nil {
			m.fetcher.Shutdown()
		}
		phase("fetchers_ms")
		if m.ownFetches {
			m.fetches.Shutdown()
		}
		phase("fetch_purgatory_ms")
		if m.ownProduces {
			m.produces.Shutdown()
		}
		phase("produce_purgatory_ms")
		m.log.Info("replica manager shutdown phases", kv...)
	})
}

// ControllerEpoch returns the highest controller epoch seen.
func (m *Manager) ControllerEpoch() int32 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.controllerEpoch
}

// Partition returns the hosted partition tp.
func (m *Manager) Partition(tp common.TopicPartition) (*Partition, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, ok := m.partitions[tp]
	return p, ok
}

// Partitions returns every hosted partition.
func (m *Manager) Partitions() []*Partition {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Collect(maps.Values(m.partitions))
}

func (m *Manager) topicName(id [16]byte) (string, bool) {
	m.mu.RLock()
	n, ok := m.topicNames[id]
	m.mu.RUnlock()
	if ok {
		return n, true
	}
	return m.meta.TopicName(id)
}

func (m *Manager) topicID(name string) [16]byte {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.topicIDs[name]
}

// rememberTopicIDLocked records a name ↔ id pair; zero ids are ignored.
func (m *Manager) rememberTopicIDLocked(name string, id [16]byte) {
	if id == ([16]byte{}) || name == "" {
		return
	}
	if old, ok := m.topicIDs[name]; ok && old != id {
		delete(m.topicNames, old) // the topic was deleted and re-created
	}
	m.topicIDs[name] = id
	m.topicNames[id] = name
}

// logConfig is the configuration a new log of topic gets. Never call it
// holding a lock: it may read ZooKeeper.
func (m *Manager) logConfig(topic string) (storage.LogConfig, error) {
	if m.cfg.LogConfigFor == nil {
		return storage.DefaultLogConfig(), nil
	}
	return m.cfg.LogConfigFor(topic)
}

// minISR is min.insync.replicas of topic; resolve it before taking a
// partition lock.
func (m *Manager) minISR(topic string) int {
	if m.cfg.MinInsyncReplicas == nil {
		return 1
	}
	return m.cfg.MinInsyncReplicas(topic)
}

// errorCode maps an error from a lower layer to a protocol error code.
// Protocol outcomes travel as kerr values; anything else is logged and
// answered as UNKNOWN_SERVER_ERROR; disk errors as KAFKA_STORAGE_ERROR.
func (m *Manager) errorCode(err error, tp common.TopicPartition, op string) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	var pe *fs.PathError
	var errno syscall.Errno
	if errors.As(err, &pe) || errors.As(err, &errno) {
		// A disk error: the client should refresh metadata and go to
		// another replica, as Kafka does for an offline log dir.
		m.log.Error("storage error", "op", op, "topic", tp.Topic, "partition", tp.Partition, "err", err)
		return kerr.KafkaStorageError.Code
	}
	m.log.Error("unexpected error", "op", op, "topic", tp.Topic, "partition", tp.Partition, "err", err)
	return kerr.UnknownServerError.Code
}

func isInternalTopic(topic string) bool {
	return topic == "__consumer_offsets" || topic == "__transaction_state"
}

type clientIDKey struct{}

// ContextWithClientID attaches the request's client id; Produce uses it to
// let only "__admin_client" write to internal topics, as Kafka does.
func ContextWithClientID(ctx context.Context, clientID string) context.Context {
	return context.WithValue(ctx, clientIDKey{}, clientID)
}

func clientIDFrom(ctx context.Context) string {
	s, _ := ctx.Value(clientIDKey{}).(string)
	return s
}

// UnderReplicatedPartitions counts the partitions this broker leads whose
// ISR is smaller than their replica set (Kafka's UnderReplicatedPartitions
// gauge).
func (m *Manager) UnderReplicatedPartitions() int {
	n := 0
	for _, p := range m.Partitions() {
		p.mu.RLock()
		if p.isLeaderLocked() && len(p.isr) < len(p.replicas) {
			n++
		}
		p.mu.RUnlock()
	}
	return n
}
