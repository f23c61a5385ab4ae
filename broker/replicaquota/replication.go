package replicaquota

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klassik/klassik/broker/common"
)

// Unlimited is the rate of a manager without a throttle (Kafka's
// DefaultReplicationThrottledRate, Long.MaxValue).
const Unlimited int64 = math.MaxInt64

// Config is the windowing of a replication quota:
// replication.quota.window.num and replication.quota.window.size.seconds.
type Config struct {
	Samples int           // windows kept (Kafka's default 11)
	Window  time.Duration // length of one window (1 s)
	// Clock is injectable for tests; nil means time.Now.
	Clock func() time.Time
}

// Manager is Kafka's ReplicationQuotaManager for one direction (the
// leader's responses to followers, or the follower's fetches): the set of
// throttled partitions of this broker, kept per topic from the topic
// configs, and one windowed byte rate compared with the bound from the
// broker config. Record counts bytes whatever the rate; the callers leave
// a throttled partition out while IsQuotaExceeded. Safe for concurrent
// use.
type Manager struct {
	clock func() time.Time

	// mu guards the following.
	mu    sync.Mutex
	bound int64 // bytes per second; Unlimited: never exceeded
	rate  *sampledRate

	// throttledMu guards the following (a leaf lock).
	throttledMu sync.RWMutex
	throttled   map[string]throttledSet
}

// throttledSet is one topic's throttled partitions on this broker.
type throttledSet struct {
	all        bool // "*"
	partitions []int32
}

// New returns a manager without a bound and without throttled partitions.
func New(cfg Config) *Manager {
	if cfg.Samples <= 0 {
		cfg.Samples = 11
	}
	if cfg.Window <= 0 {
		cfg.Window = time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	return &Manager{clock: cfg.Clock, bound: Unlimited, rate: newSampledRate(cfg.Samples, cfg.Window),
		throttled: map[string]throttledSet{}}
}

// UpdateQuota sets the bound in bytes per second (negative or Unlimited:
// none). The measured rate is kept, as Kafka keeps its sensor.
func (m *Manager) UpdateQuota(bytesPerSecond int64) {
	if bytesPerSecond < 0 {
		bytesPerSecond = Unlimited
	}
	m.mu.Lock()
	m.bound = bytesPerSecond
	m.mu.Unlock()
}

// UpperBound is the bound in force (Unlimited without one).
func (m *Manager) UpperBound() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bound
}

// Record adds bytes replicated for a throttled partition; it never
// refuses (Kafka records with checkQuotas false).
func (m *Manager) Record(bytes int64) {
	if bytes <= 0 {
		return
	}
	now := m.clock()
	m.mu.Lock()
	m.rate.record(float64(bytes), now)
	m.mu.Unlock()
}

// IsQuotaExceeded reports whether the measured rate is above the bound.
func (m *Manager) IsQuotaExceeded() bool {
	now := m.clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bound == Unlimited {
		return false
	}
	return m.rate.measure(now) > float64(m.bound)
}

// Rate is the measured rate in bytes per second (Kafka's byte-rate
// metric).
func (m *Manager) Rate() float64 {
	now := m.clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rate.measure(now)
}

// IsThrottled reports whether tp is in this manager's throttled set.
func (m *Manager) IsThrottled(tp common.TopicPartition) bool {
	m.throttledMu.RLock()
	s, ok := m.throttled[tp.Topic]
	m.throttledMu.RUnlock()
	return ok && (s.all || slices.Contains(s.partitions, tp.Partition))
}

// MarkThrottled replaces the topic's throttled partitions.
func (m *Manager) MarkThrottled(topic string, partitions []int32) {
	m.throttledMu.Lock()
	m.throttled[topic] = throttledSet{partitions: slices.Clone(partitions)}
	m.throttledMu.Unlock()
}

// MarkAllThrottled throttles every partition of the topic ("*").
func (m *Manager) MarkAllThrottled(topic string) {
	m.throttledMu.Lock()
	m.throttled[topic] = throttledSet{all: true}
	m.throttledMu.Unlock()
}

// RemoveThrottle unthrottles the topic.
func (m *Manager) RemoveThrottle(topic string) {
	m.throttledMu.Lock()
	delete(m.throttled, topic)
	m.throttledMu.Unlock()
}

// ApplyTopicConfig is the throttled-replica part of Kafka's
// TopicConfigHandler for one direction: key's value in the topic's
// overrides ("*", or "partition:broker" pairs of which those naming
// brokerID count) replaces the topic's throttled set; a missing or empty
// value removes it. An invalid value removes it too and is returned as an
// error (the topic config validation refuses it before it is written).
func (m *Manager) ApplyTopicConfig(topic, key string, overrides map[string]string, brokerID int32) error {
	v := strings.TrimSpace(overrides[key])
	if v == "" {
		m.RemoveThrottle(topic)
		return nil
	}
	all, parts, err := ParseThrottledReplicas(v, brokerID)
	if err != nil {
		m.RemoveThrottle(topic)
		return fmt.Errorf("%s of topic %s: %w", key, topic, err)
	}
	if all {
		m.MarkAllThrottled(topic)
	} else {
		m.MarkThrottled(topic, parts)
	}
	return nil
}

// ParseThrottledReplicas reads a leader/follower.replication.throttled.replicas
// value (Kafka's parseThrottledPartitions): "*" throttles every partition;
// otherwise a comma-separated list of "partition:broker" pairs, of which
// the partitions paired with brokerID are returned. An empty value is no
// partition.
func ParseThrottledReplicas(value string, brokerID int32) (all bool, partitions []int32, err error) {
	value = strings.TrimSpace(value)
	switch value {
	case "":
		return false, nil, nil
	case "*":
		return true, nil, nil
	}
	for _, item := range strings.Split(value, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue // Kafka's validator accepts empty items
		}
		p, b, ok := strings.Cut(item, ":")
		if !ok {
			return false, nil, fmt.Errorf("%q is not partition:broker or *", item)
		}
		pn, err1 := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		bn, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 32)
		if err1 != nil || err2 != nil || pn < 0 || bn < 0 {
			return false, nil, fmt.Errorf("%q is not partition:broker or *", item)
		}
		if int32(bn) == brokerID && !slices.Contains(partitions, int32(pn)) {
			partitions = append(partitions, int32(pn))
		}
	}
	return false, partitions, nil
}
