package quota

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Config is what the quota managers take from the broker configuration.
type Config struct {
	// ProducerDefault and ConsumerDefault are the deprecated static
	// quota.producer.default / quota.consumer.default (math.MaxInt64 =
	// none).
	ProducerDefault, ConsumerDefault int64
	// WindowNum and Window are quota.window.num and
	// quota.window.size.seconds (produce, fetch, request).
	WindowNum int
	Window    time.Duration
	// ControllerWindowNum and ControllerWindow are
	// controller.quota.window.num and controller.quota.window.size.seconds.
	ControllerWindowNum int
	ControllerWindow    time.Duration
	// Metrics receives each entity's quota metrics; nil registers none.
	Metrics gometrics.Registry
}

// Managers are the client quota managers of one broker (Kafka's
// QuotaFactory.QuotaManagers without the replication quotas).
type Managers struct {
	Produce, Fetch, Request, ControllerMutation *Manager
}

// New builds the managers; no quota applies until Update sets one, except
// the static defaults.
func New(cfg Config) *Managers {
	ms := &Managers{
		Produce:            newManager(Produce, cfg.WindowNum, cfg.Window, cfg.ProducerDefault),
		Fetch:              newManager(Fetch, cfg.WindowNum, cfg.Window, cfg.ConsumerDefault),
		Request:            newManager(Request, cfg.WindowNum, cfg.Window, math.MaxInt64),
		ControllerMutation: newManager(ControllerMutation, cfg.ControllerWindowNum, cfg.ControllerWindow, math.MaxInt64),
	}
	for _, m := range []*Manager{ms.Produce, ms.Fetch, ms.Request, ms.ControllerMutation} {
		m.reg = cfg.Metrics
	}
	return ms
}

// ByKind returns the manager of k.
func (ms *Managers) ByKind(k Kind) *Manager {
	return [...]*Manager{ms.Produce, ms.Fetch, ms.Request, ms.ControllerMutation}[k]
}

// UpdateEntity applies the whole config node of e (Kafka's
// QuotaConfigHandler.updateQuotaConfig): each quota key present sets that
// quota, each absent one removes it. producer_byte_rate and
// consumer_byte_rate are whole numbers, the others may have a fraction. A
// value that does not parse leaves that quota as it was and is reported.
func (ms *Managers) UpdateEntity(e Entity, config map[string]string) error {
	var errs []error
	for _, k := range []Kind{Produce, Fetch, Request, ControllerMutation} {
		s, ok := config[k.ConfigKey()]
		if !ok {
			ms.ByKind(k).Update(e, nil)
			continue
		}
		v, err := ParseValue(k.ConfigKey(), s)
		if err != nil {
			errs = append(errs, fmt.Errorf("quota: %s of %s: %w", k.ConfigKey(), e, err))
			continue
		}
		ms.ByKind(k).Update(e, &v)
	}
	return errors.Join(errs...)
}

// ParseValue reads a stored quota value as Kafka does: the byte rates as a
// long, request_percentage and controller_mutation_rate as a double.
func ParseValue(key, s string) (float64, error) {
	switch key {
	case ProducerByteRate, ConsumerByteRate:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a long", s)
		}
		return float64(n), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return 0, fmt.Errorf("%q is not a double", s)
	}
	return f, nil
}

// Mutation is the controller mutation quota of one request (Kafka's
// ControllerMutationQuota). The nil *Mutation is unbounded.
type Mutation struct {
	m              *Manager
	user, clientID string
	strict         bool
	now            func() time.Time

	throttle   time.Duration
	recordedAt time.Time
}

// ErrThrottlingQuotaExceeded is returned by a strict Mutation whose quota
// is exhausted: the mutation must not happen. Its text is Kafka's
// error_message; it unwraps to kerr.ThrottlingQuotaExceeded.
var ErrThrottlingQuotaExceeded error = throttlingError{}

type throttlingError struct{}

func (throttlingError) Error() string { return "The throttling quota has been exceeded." }
func (throttlingError) Unwrap() error { return kerr.ThrottlingQuotaExceeded }

// NewMutation returns the quota of one CreateTopics, CreatePartitions or
// DeleteTopics request: strict for the versions that know
// THROTTLING_QUOTA_EXCEEDED (KIP-599), which refuse a mutation once the
// quota is exhausted; permissive for older ones, which only throttle. nil
// when no controller mutation quota was ever set.
func (ms *Managers) NewMutation(user, clientID string, strict bool) *Mutation {
	if ms == nil || !ms.ControllerMutation.Enabled() {
		return nil
	}
	return &Mutation{m: ms.ControllerMutation, user: user, clientID: clientID, strict: strict, now: time.Now}
}

// Record takes permits (partitions created or deleted); a strict quota
// that is exhausted returns ErrThrottlingQuotaExceeded and takes nothing.
func (q *Mutation) Record(permits float64) error {
	if q == nil {
		return nil
	}
	now := q.now()
	d, exceeded := q.m.mutate(q.user, q.clientID, permits, q.strict, now)
	if d > 0 {
		q.throttle, q.recordedAt = d, now
	}
	if exceeded {
		return ErrThrottlingQuotaExceeded
	}
	return nil
}

// ThrottleTime is the throttle of the last violation less the time since,
// for the response (a request may have waited for leaders meanwhile).
func (q *Mutation) ThrottleTime() time.Duration {
	if q == nil || q.throttle == 0 {
		return 0
	}
	return max(0, q.throttle-q.now().Sub(q.recordedAt))
}
