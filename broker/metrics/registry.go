package metrics

import (
	"reflect"
	"sync"
	"sync/atomic"

	gometrics "github.com/rcrowley/go-metrics"
)

// Registry is a go-metrics registry that counts the times a metric is
// added or removed. A scrape of a broker with 10,000 partitions reads
// some 100,000 metrics; walking and looking up every name on each scrape
// cost more than reading the values, so the Collector walks a Registry's
// names only when its Version moved since the last scrape. It behaves as
// go-metrics' StandardRegistry otherwise (same accepted types, meters
// stopped on Unregister, lazy instantiation in GetOrRegister).
type Registry struct {
	version atomic.Uint64

	mu sync.RWMutex
	m  map[string]any
}

// NewVersionedRegistry returns an empty Registry.
func NewVersionedRegistry() *Registry { return &Registry{m: map[string]any{}} }

// Version changes whenever a metric is added or removed.
func (r *Registry) Version() uint64 { return r.version.Load() }

// Each calls f for every metric, outside the registry's lock (f may
// register and unregister).
func (r *Registry) Each(f func(string, any)) {
	r.mu.RLock()
	names := make([]string, 0, len(r.m))
	vals := make([]any, 0, len(r.m))
	for n, m := range r.m {
		names = append(names, n)
		vals = append(vals, m)
	}
	r.mu.RUnlock()
	for i, n := range names {
		f(n, vals[i])
	}
}

// Get returns the metric registered as name, nil if none.
func (r *Registry) Get(name string) any {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.m[name]
}

// GetOrRegister returns the metric registered as name, registering i (or
// what i returns, when it is a function) if there is none.
func (r *Registry) GetOrRegister(name string, i any) any {
	r.mu.RLock()
	m, ok := r.m[name]
	r.mu.RUnlock()
	if ok {
		return m
	}
	if v := reflect.ValueOf(i); v.Kind() == reflect.Func {
		i = v.Call(nil)[0].Interface()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.m[name]; ok {
		return m
	}
	r.addLocked(name, i)
	return i
}

// Register adds i as name; an existing name is a gometrics.DuplicateMetric.
func (r *Registry) Register(name string, i any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.m[name]; ok {
		return gometrics.DuplicateMetric(name)
	}
	r.addLocked(name, i)
	return nil
}

func (r *Registry) addLocked(name string, i any) {
	switch i.(type) {
	case gometrics.Counter, gometrics.Gauge, gometrics.GaugeFloat64, gometrics.Healthcheck,
		gometrics.Histogram, gometrics.Meter, gometrics.Timer:
		r.m[name] = i
		r.version.Add(1)
	}
}

// Unregister removes name, stopping it when it is stoppable (a meter).
func (r *Registry) Unregister(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removeLocked(name)
}

// UnregisterAll removes every metric.
func (r *Registry) UnregisterAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name := range r.m {
		r.removeLocked(name)
	}
}

func (r *Registry) removeLocked(name string) {
	m, ok := r.m[name]
	if !ok {
		return
	}
	if s, ok := m.(gometrics.Stoppable); ok {
		s.Stop()
	}
	delete(r.m, name)
	r.version.Add(1)
}

// RunHealthchecks runs every registered healthcheck.
func (r *Registry) RunHealthchecks() {
	r.Each(func(_ string, m any) {
		if h, ok := m.(gometrics.Healthcheck); ok {
			h.Check()
		}
	})
}

// GetAll returns every metric's values as go-metrics' StandardRegistry
// reports them.
func (r *Registry) GetAll() map[string]map[string]any {
	tmp := gometrics.NewRegistry()
	r.Each(func(name string, m any) { _ = tmp.Register(name, m) })
	return tmp.GetAll()
}

var _ gometrics.Registry = (*Registry)(nil)
