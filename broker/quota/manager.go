package quota

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
)

// Kind is the quota a Manager enforces (Kafka's QuotaType of the client
// quotas).
type Kind int

const (
	Produce Kind = iota
	Fetch
	Request
	ControllerMutation
)

// String is Kafka's QuotaType name, the metric group of the kind.
func (k Kind) String() string {
	return [...]string{"Produce", "Fetch", "Request", "ControllerMutation"}[k]
}

// ConfigKey is the quota's key in a user or client config node.
func (k Kind) ConfigKey() string {
	return [...]string{ProducerByteRate, ConsumerByteRate, RequestPercentage, ControllerMutationRate}[k]
}

// The quota keys of /config/users and /config/clients nodes (Kafka's
// QuotaConfigs).
const (
	ProducerByteRate       = "producer_byte_rate"
	ConsumerByteRate       = "consumer_byte_rate"
	RequestPercentage      = "request_percentage"
	ControllerMutationRate = "controller_mutation_rate"
	// IPConnectionRate is the key of /config/ips nodes.
	IPConnectionRate = "connection_creation_rate"
)

// Which levels have had a quota (Kafka's QuotaTypes): with one level only,
// every client of an entity shares one sensor without searching the
// overrides.
const (
	clientIDLevel   = 1
	userLevel       = 2
	userClientLevel = 4
)

// sensorExpiry is how long an idle client's sensor is kept (Kafka:
// InactiveSensorExpirationTimeSeconds).
const sensorExpiry = time.Hour

// tags identify the sensor a request is recorded in (Kafka's quota metric
// tags user and client-id): the entity whose quota applies, with "" for
// the half that does not matter, so every client under one user quota
// shares the user's sensor.
type tags struct{ user, client string }

// sensor is one entity's recorded usage.
type sensor struct {
	rate   *rate       // produce, fetch, request
	bucket tokenBucket // controller mutations
	lastMs int64       // last use, for expiry
	// throttle-time: the average throttle time given to it.
	throttleSum   float64
	throttleCount int64

	// What the metrics read without the manager's lock: the rate (or
	// tokens) measured at the last request and the average throttle.
	value, throttleAvg atomic.Uint64 // float64 bits
	metricNames        []string
}

// Manager is Kafka's ClientQuotaManager for one Kind (with
// ClientRequestQuotaManager's and ControllerMutationQuotaManager's
// differences): the quota overrides from ZooKeeper, the precedence that
// picks one for a request, and one windowed rate (a token bucket for
// controller mutations) per entity.
type Manager struct {
	kind     Kind
	num      int
	windowMs int64
	// staticDefault is quota.producer.default / quota.consumer.default
	// (math.Inf when unset), the last resort of a client id.
	staticDefault float64
	reg           gometrics.Registry // nil: no metrics

	// mu guards the following.
	mu        sync.Mutex
	overrides map[Entity]float64
	levels    int
	sensors   map[tags]*sensor
	records   int // since the last expiry scan
}

func newManager(kind Kind, num int, window time.Duration, staticDefault int64) *Manager {
	m := &Manager{kind: kind, num: max(num, 1), windowMs: max(window.Milliseconds(), 1), staticDefault: math.Inf(1),
		overrides: map[Entity]float64{}, sensors: map[tags]*sensor{}}
	if staticDefault > 0 && staticDefault != math.MaxInt64 {
		m.staticDefault = float64(staticDefault)
		m.levels = clientIDLevel
	}
	return m
}

// Enabled reports whether any quota of this kind was ever set (Kafka's
// quotasEnabled: until a restart, even after every quota is removed).
func (m *Manager) Enabled() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.levels != 0
}

// Update sets (v non-nil) or removes the quota of e (Kafka's updateQuota).
func (m *Manager) Update(e Entity, v *float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case e.User.Set && e.Client.Set:
		m.levels |= userClientLevel
	case e.User.Set:
		m.levels |= userLevel
	case e.Client.Set:
		m.levels |= clientIDLevel
	}
	if v == nil {
		delete(m.overrides, e)
	} else {
		m.overrides[e] = *v
	}
}

// Quota is the bound that applies to user (sanitized) and clientID, ok
// false when none does.
func (m *Manager) Quota(user, clientID string) (bound float64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.limitLocked(m.tagsLocked(user, clientID))
}

// tagsLocked picks the entity a request of user and clientID is recorded
// under (DefaultQuotaCallback.quotaMetricTags).
func (m *Manager) tagsLocked(user, clientID string) tags {
	switch m.levels {
	case 0, clientIDLevel:
		return tags{client: clientID}
	case userLevel:
		return tags{user: user}
	case userClientLevel:
		return tags{user, clientID}
	}
	u, c := Named(user), Named(clientID)
	has := func(e Entity) bool { _, ok := m.overrides[e]; return ok }
	switch {
	case has(Entity{u, c}), has(Entity{u, DefaultPart}):
		return tags{user, clientID}
	case has(Entity{User: u}):
		return tags{user: user}
	case has(Entity{DefaultPart, c}), has(Entity{DefaultPart, DefaultPart}):
		return tags{user, clientID}
	case has(Entity{User: DefaultPart}):
		return tags{user: user}
	}
	return tags{client: clientID}
}

// limitLocked is the quota of a sensor's tags, in Kafka's order of
// precedence (DefaultQuotaCallback.quotaLimit):
//
//  1. /config/users/<user>/clients/<client-id>
//  2. /config/users/<user>/clients/<default>
//  3. /config/users/<user>
//  4. /config/users/<default>/clients/<client-id>
//  5. /config/users/<default>/clients/<default>
//  6. /config/users/<default>
//  7. /config/clients/<client-id>
//  8. /config/clients/<default>
//
// then the static quota.producer.default / quota.consumer.default.
func (m *Manager) limitLocked(t tags) (float64, bool) {
	u, c := Named(t.user), Named(t.client)
	var order []Entity
	switch {
	case t.user != "" && t.client != "":
		order = []Entity{{u, c}, {u, DefaultPart}, {DefaultPart, c}, {DefaultPart, DefaultPart}}
	case t.user != "":
		order = []Entity{{User: u}, {User: DefaultPart}}
	case t.client != "":
		order = []Entity{{Client: c}, {Client: DefaultPart}}
	default:
		return 0, false
	}
	for _, e := range order {
		if v, ok := m.overrides[e]; ok {
			return v, true
		}
	}
	if t.user == "" && !math.IsInf(m.staticDefault, 1) {
		return m.staticDefault, true
	}
	return 0, false
}

// sensorLocked returns the sensor of t, creating it.
func (m *Manager) sensorLocked(t tags, nowMs int64) *sensor {
	s, ok := m.sensors[t]
	if !ok {
		s = &sensor{rate: newRate(m.num, m.windowMs)}
		m.sensors[t] = s
		m.registerLocked(t, s)
	}
	s.lastMs = nowMs
	if m.records++; m.records >= 4096 {
		m.records = 0
		for k, o := range m.sensors {
			if nowMs-o.lastMs > sensorExpiry.Milliseconds() {
				delete(m.sensors, k)
				for _, n := range o.metricNames {
					m.reg.Unregister(n)
				}
			}
		}
	}
	return s
}

// Record adds value (bytes, or percent of a thread for Request) for user
// and clientID at now and returns how long the client must be throttled
// (Kafka's maybeRecordAndGetThrottleTimeMs): the value is recorded even
// when the quota is violated. Without any quota of this kind it records
// nothing and returns 0.
func (m *Manager) Record(user, clientID string, value float64, now time.Time) time.Duration {
	nowMs := now.UnixMilli()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.levels == 0 {
		return 0
	}
	t := m.tagsLocked(user, clientID)
	s := m.sensorLocked(t, nowMs)
	s.rate.record(value, nowMs)
	s.value.Store(math.Float64bits(s.rate.measure(nowMs)))
	bound, ok := m.limitLocked(t)
	if !ok {
		return 0
	}
	ms := s.rate.throttleMs(bound, nowMs)
	if m.kind == Request {
		// ClientRequestQuotaManager bounds the throttle by one window.
		ms = min(ms, m.windowMs)
	}
	return time.Duration(ms) * time.Millisecond
}

// Unrecord takes back a value recorded for a response that was not sent
// (Kafka's unrecordQuotaSensor).
func (m *Manager) Unrecord(user, clientID string, value float64, now time.Time) {
	nowMs := now.UnixMilli()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.levels == 0 {
		return
	}
	m.sensorLocked(m.tagsLocked(user, clientID), nowMs).rate.record(-value, nowMs)
}

// MaxValueInWindow is the most that can be recorded at once without being
// throttled with nothing else recorded in the window (Kafka's
// getMaxValueInQuotaWindow: quota × (samples−1) × window): the cap of a
// consumer's fetch size. +Inf without a quota.
func (m *Manager) MaxValueInWindow(user, clientID string) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.levels == 0 {
		return math.Inf(1)
	}
	bound, ok := m.limitLocked(m.tagsLocked(user, clientID))
	if !ok {
		return math.Inf(1)
	}
	return bound * float64(m.num-1) * float64(m.windowMs) / 1000
}

// Throttled records that user and clientID were throttled for d (the
// throttle-time metric, Kafka's throttle()).
func (m *Manager) Throttled(user, clientID string, d time.Duration, now time.Time) {
	if d <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sensorLocked(m.tagsLocked(user, clientID), now.UnixMilli())
	s.throttleSum += float64(d.Milliseconds())
	s.throttleCount++
	s.throttleAvg.Store(math.Float64bits(s.throttleSum / float64(s.throttleCount)))
}

// registerLocked adds a new sensor's metrics under Kafka's names
// (kafka.server:type=Produce|Fetch|Request|ControllerMutation, tags user
// and client-id): byte-rate (request-time for Request, tokens for
// ControllerMutation) as measured at the entity's last request, and
// throttle-time, the average throttle given. The gauges read atomics, so
// the registry never waits for m.mu.
func (m *Manager) registerLocked(t tags, s *sensor) {
	if m.reg == nil {
		return
	}
	name := [...]string{"byte-rate", "byte-rate", "request-time", "tokens"}[m.kind]
	suffix := ".user=" + t.user + ".client-id=" + t.client
	for _, g := range []struct {
		n string
		v *atomic.Uint64
	}{{name, &s.value}, {"throttle-time", &s.throttleAvg}} {
		full := "kafka.server." + m.kind.String() + "." + g.n + suffix
		v := g.v
		if err := m.reg.Register(full, gometrics.NewFunctionalGaugeFloat64(func() float64 { return math.Float64frombits(v.Load()) })); err == nil {
			s.metricNames = append(s.metricNames, full)
		}
	}
}

// mutate takes permits from the token bucket of user and clientID
// (ControllerMutationQuotaManager). strict checks before taking: when the
// bucket is already below zero nothing is taken and exceeded is true. The
// throttle is the time the bucket needs to climb back to zero.
func (m *Manager) mutate(user, clientID string, permits float64, strict bool, now time.Time) (throttle time.Duration, exceeded bool) {
	nowMs := now.UnixMilli()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.levels == 0 {
		return 0, false
	}
	t := m.tagsLocked(user, clientID)
	s := m.sensorLocked(t, nowMs)
	bound, ok := m.limitLocked(t)
	if !ok || bound <= 0 {
		return 0, false
	}
	burst := float64(m.num) * float64(m.windowMs) / 1000 * bound
	if strict {
		if tokens := s.bucket.measure(bound, burst, nowMs); tokens < 0 {
			return time.Duration(roundMs(-tokens/bound*1000)) * time.Millisecond, true
		}
	}
	s.bucket.record(permits, bound, burst, nowMs)
	s.value.Store(math.Float64bits(s.bucket.tokens))
	if strict {
		// Kafka's strict quota lets the request that empties the bucket
		// through unthrottled; the next one is refused.
		return 0, false
	}
	if tokens := s.bucket.measure(bound, burst, nowMs); tokens < 0 {
		return time.Duration(roundMs(-tokens/bound*1000)) * time.Millisecond, false
	}
	return 0, false
}
