package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	gometrics "github.com/rcrowley/go-metrics"
)

// quantiles are Yammer's NNthPercentile attributes with the label the
// rules give them ("0.$N").
var quantiles = [...]struct {
	p     float64
	label string
}{{0.50, "0.50"}, {0.75, "0.75"}, {0.95, "0.95"}, {0.98, "0.98"}, {0.99, "0.99"}, {0.999, "0.999"}}

var quantilePs = func() []float64 {
	ps := make([]float64, len(quantiles))
	for i, q := range quantiles {
		ps[i] = q.p
	}
	return ps
}()

// Collector exports a go-metrics registry under the names and labels the
// JMX exporter's Kafka rules give Kafka's MBeans. It is an unchecked
// collector (Describe sends nothing): the set of metrics follows the
// registry, which grows and shrinks with topics and partitions.
type Collector struct {
	reg gometrics.Registry

	// mu guards the following (Collect may run concurrently for two
	// scrapes).
	mu    sync.Mutex
	plans map[string]*plan // by go-metrics name
	descs map[descKey]*prometheus.Desc
	helps map[string]string // by family name: one help per family
	gen   uint64
}

// NewCollector returns a collector over reg.
func NewCollector(reg gometrics.Registry) *Collector {
	return &Collector{reg: reg, plans: map[string]*plan{}, descs: map[descKey]*prometheus.Desc{}, helps: map[string]string{}}
}

type kind int8

const (
	kindSkip kind = iota
	kindGauge
	kindGaugeFloat
	kindCounter
	kindMeter
	kindHistogram
	kindTimer
)

// plan is the cached translation of one go-metrics name: which
// descriptors its attributes go to and with which label values.
type plan struct {
	kind    kind
	seen    uint64
	value   *prometheus.Desc // Value, or the percentile gauge
	count   *prometheus.Desc // Count (_total or _count)
	percent *prometheus.Desc // MeanRate of a ...Percent meter
	labels  []string         // label values (percentile: without quantile)
	qlabels [len(quantiles)][]string
}

type descKey struct {
	name   string
	labels string // label names joined by NUL
}

func kindOf(m any) kind {
	switch m.(type) {
	case gometrics.Timer:
		return kindTimer
	case gometrics.Histogram:
		return kindHistogram
	case gometrics.Meter:
		return kindMeter
	case gometrics.Counter:
		return kindCounter
	case gometrics.GaugeFloat64:
		return kindGaugeFloat
	case gometrics.Gauge:
		return kindGauge
	}
	return kindSkip
}

// Describe sends nothing: an unchecked collector.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect sends every exported attribute of every metric in the registry.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	seen := 0
	c.reg.Each(func(name string, m any) {
		k := kindOf(m)
		p := c.plans[name]
		if p == nil || p.kind != k {
			p = c.plan(name, k)
			c.plans[name] = p
		}
		p.seen = c.gen
		seen++
		c.emit(ch, p, m)
	})
	if len(c.plans) > seen {
		for name, p := range c.plans {
			if p.seen != c.gen {
				delete(c.plans, name)
			}
		}
	}
}

func (c *Collector) emit(ch chan<- prometheus.Metric, p *plan, m any) {
	switch p.kind {
	case kindGauge:
		if p.value != nil {
			ch <- prometheus.MustNewConstMetric(p.value, prometheus.GaugeValue, float64(m.(gometrics.Gauge).Value()), p.labels...)
		}
	case kindGaugeFloat:
		if p.value != nil {
			ch <- prometheus.MustNewConstMetric(p.value, prometheus.GaugeValue, m.(gometrics.GaugeFloat64).Value(), p.labels...)
		}
	case kindCounter:
		if p.count != nil {
			ch <- prometheus.MustNewConstMetric(p.count, prometheus.CounterValue, float64(m.(gometrics.Counter).Count()), p.labels...)
		}
	case kindMeter:
		mt := m.(gometrics.Meter)
		if p.count != nil {
			ch <- prometheus.MustNewConstMetric(p.count, prometheus.CounterValue, float64(mt.Count()), p.labels...)
		}
		if p.percent != nil {
			ch <- prometheus.MustNewConstMetric(p.percent, prometheus.GaugeValue, mt.RateMean(), p.labels...)
		}
	case kindHistogram:
		h := m.(gometrics.Histogram)
		c.emitSampled(ch, p, h.Count(), h, 1)
	case kindTimer:
		// Timers record nanoseconds; Kafka's ...Ms timers and histograms
		// report milliseconds.
		t := m.(gometrics.Timer)
		c.emitSampled(ch, p, t.Count(), t, 1e-6)
	}
}

type percentiler interface {
	Percentiles([]float64) []float64
}

func (c *Collector) emitSampled(ch chan<- prometheus.Metric, p *plan, count int64, s percentiler, scale float64) {
	if p.count != nil {
		ch <- prometheus.MustNewConstMetric(p.count, prometheus.CounterValue, float64(count), p.labels...)
	}
	if p.value == nil {
		return
	}
	var vs []float64
	if count > 0 {
		vs = s.Percentiles(quantilePs)
	}
	for i := range quantiles {
		v := 0.0
		if vs != nil {
			v = vs[i] * scale
		}
		ch <- prometheus.MustNewConstMetric(p.value, prometheus.GaugeValue, v, p.qlabels[i]...)
	}
}

// plan translates one go-metrics name by the rules.
func (c *Collector) plan(name string, k kind) *plan {
	p := &plan{kind: kindSkip}
	b, ok := parseBean(name)
	if !ok || k == kindSkip {
		return p
	}
	p.kind = k
	help := "Kafka MBean " + b.objectName()
	switch k {
	case kindGauge, kindGaugeFloat:
		if e, ok := rule(b, attrValue); ok {
			p.value, p.labels = c.desc(e, help, nil), e.labelValues
		}
	case kindCounter, kindMeter:
		if e, ok := rule(b, attrCount); ok {
			p.count, p.labels = c.desc(e, help, nil), e.labelValues
		}
		if k == kindMeter {
			if e, ok := rule(b, attrMeanRate); ok {
				p.percent, p.labels = c.desc(e, help, nil), e.labelValues
			}
		}
	case kindHistogram, kindTimer:
		if e, ok := rule(b, attrCount); ok {
			p.count, p.labels = c.desc(e, help, nil), e.labelValues
		}
		if e, ok := rule(b, attrPercentile); ok {
			p.value = c.desc(e, help, []string{"quantile"})
			for i, q := range quantiles {
				p.qlabels[i] = append(append([]string(nil), e.labelValues...), q.label)
			}
		}
	}
	if p.value == nil && p.count == nil && p.percent == nil {
		p.kind = kindSkip
	}
	return p
}

func (c *Collector) desc(e export, help string, extra []string) *prometheus.Desc {
	names := append(append([]string(nil), e.labelNames...), extra...)
	key := descKey{name: e.name}
	for i, n := range names {
		if i > 0 {
			key.labels += "\x00"
		}
		key.labels += n
	}
	if d, ok := c.descs[key]; ok {
		return d
	}
	if h, ok := c.helps[e.name]; ok {
		help = h
	} else {
		c.helps[e.name] = help
	}
	d := prometheus.NewDesc(e.name, help, names, nil)
	c.descs[key] = d
	return d
}
