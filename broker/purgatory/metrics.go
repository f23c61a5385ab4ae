package purgatory

import gometrics "github.com/rcrowley/go-metrics"

// RegisterMetrics registers Kafka's purgatory gauges for this purgatory in
// r: PurgatorySize (operations watched, summed over keys) and
// NumDelayedOperations (pending operations), tagged with the purgatory name
// as Kafka's delayedOperation tag.
func (p *Purgatory) RegisterMetrics(r gometrics.Registry) {
	if r == nil {
		return
	}
	prefix := "kafka.server.DelayedOperationPurgatory."
	tag := ".delayedOperation=" + p.name
	_ = r.Register(prefix+"PurgatorySize"+tag, gometrics.NewFunctionalGauge(func() int64 { return int64(p.watchedTotal()) }))
	_ = r.Register(prefix+"NumDelayedOperations"+tag, gometrics.NewFunctionalGauge(func() int64 { return int64(p.Delayed()) }))
}

func (p *Purgatory) watchedTotal() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, l := range p.watchers {
		n += l.n
	}
	return n
}

// Funcs adapts three functions to an Operation, for operations that need
// no type of their own. Nil OnCompleteFunc / OnExpirationFunc do nothing.
type Funcs struct {
	TryCompleteFunc  func() bool
	OnCompleteFunc   func()
	OnExpirationFunc func()
}

// TryComplete calls TryCompleteFunc.
func (f *Funcs) TryComplete() bool { return f.TryCompleteFunc() }

// OnComplete calls OnCompleteFunc.
func (f *Funcs) OnComplete() {
	if f.OnCompleteFunc != nil {
		f.OnCompleteFunc()
	}
}

// OnExpiration calls OnExpirationFunc.
func (f *Funcs) OnExpiration() {
	if f.OnExpirationFunc != nil {
		f.OnExpirationFunc()
	}
}
