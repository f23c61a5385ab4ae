package metrics

import (
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	gometrics "github.com/rcrowley/go-metrics"
	"google.golang.org/protobuf/proto"
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
//
// A broker with 10,000 partitions has some 50,000 samples, so the
// translation of each name, its descriptor and label pairs are cached,
// and the samples are sent in the order the registry's Gather sorts them
// into (family, then label values), kept sorted across scrapes and
// re-sorted only when names come or go: sorting sorted input is linear.
type Collector struct {
	reg gometrics.Registry
	// versioned is reg when it counts its changes (a *Registry).
	versioned interface{ Version() uint64 }

	// mu guards the following (two scrapes may run at once).
	mu     sync.Mutex
	plans  map[string]*plan // by go-metrics name
	descs  map[descKey]*prometheus.Desc
	helps  map[string]string // by family name: one help per family
	order  []sampleRef       // every sample of every plan, in Gather's order
	dirty  bool              // plans changed since order was built
	layout uint64            // bumped by each sortOrder
	gen    uint64
	fams   []*dto.MetricFamily // cached for the handler, see gatherLocked
	vals   []*float64          // the value of each c.order sample in fams
	// famsLayout and textLayout are the layouts fams and the text
	// prefixes (text.go) were built for.
	famsLayout, textLayout uint64
	text                   textLayout
	// walked and walkedVersion: the versioned registry's version at the
	// last walk of its names.
	walked        bool
	walkedVersion uint64
}

// NewCollector returns a collector over reg.
func NewCollector(reg gometrics.Registry) *Collector {
	c := &Collector{reg: reg, plans: map[string]*plan{}, descs: map[descKey]*prometheus.Desc{}, helps: map[string]string{}}
	c.versioned, _ = reg.(interface{ Version() uint64 })
	return c
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

// Which sample of a plan a sampleRef is.
const (
	sampleValue    = -1 // Value
	sampleCount    = -2 // Count (_total or _count)
	samplePercent  = -3 // MeanRate of a ...Percent meter
	sampleQuantile = 0  // 0..5: the percentiles
)

// plan is the cached translation of one go-metrics name: the descriptors
// its attributes go to and their label pairs.
type plan struct {
	kind    kind
	seen    uint64
	value   *prometheus.Desc // Value, or the percentile gauge
	count   *prometheus.Desc // Count (_total or _count)
	percent *prometheus.Desc // MeanRate of a ...Percent meter
	pairs   []*dto.LabelPair // sorted by name (percentiles: without quantile)
	qpairs  [len(quantiles)][]*dto.LabelPair

	valueName, countName, percentName string // family names

	// Per scrape, under Collector.mu.
	m      any // the registry's metric
	valGen uint64
	// qCount is the count the percentiles in vals.q were read at.
	qValid bool
	qCount int64
	vals   struct {
		value, count, percent float64
		q                     [len(quantiles)]float64
	}
}

type sampleRef struct {
	p     *plan
	which int8
}

func (r sampleRef) desc() *prometheus.Desc {
	switch r.which {
	case sampleCount:
		return r.p.count
	case samplePercent:
		return r.p.percent
	}
	return r.p.value
}

func (r sampleRef) labelPairs() []*dto.LabelPair {
	if r.which >= sampleQuantile {
		return r.p.qpairs[r.which]
	}
	return r.p.pairs
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
	c.refreshPlansLocked()
	if c.dirty {
		c.sortOrder()
	}
	samples := make([]sample, len(c.order))
	for i, r := range c.order {
		p := r.p
		if p.valGen != c.gen {
			p.valGen = c.gen
			p.read()
		}
		s := &samples[i]
		s.desc, s.pairs = r.desc(), r.labelPairs()
		switch r.which {
		case sampleValue:
			s.v = p.vals.value
		case sampleCount:
			s.v, s.counter = p.vals.count, true
		case samplePercent:
			s.v = p.vals.percent
		default:
			s.v = p.vals.q[r.which]
		}
		ch <- s
	}
	c.releaseLocked()
}

// read takes the current values of p.m.
func (p *plan) read() {
	v := &p.vals
	switch m := p.m.(type) {
	case gometrics.Timer:
		// Timers record nanoseconds; Kafka's ...Ms timers and histograms
		// report milliseconds.
		v.count = float64(m.Count())
		p.readPercentiles(m.Count(), m, 1e-6)
	case gometrics.Histogram:
		v.count = float64(m.Count())
		p.readPercentiles(m.Count(), m, 1)
	case gometrics.Meter:
		v.count, v.percent = float64(m.Count()), m.RateMean()
	case gometrics.Counter:
		v.count = float64(m.Count())
	case gometrics.GaugeFloat64:
		v.value = m.Value()
	case gometrics.Gauge:
		v.value = float64(m.Value())
	}
}

type percentiler interface {
	Percentiles([]float64) []float64
}

func (p *plan) readPercentiles(count int64, s percentiler, scale float64) {
	if p.value == nil {
		return
	}
	if count == 0 {
		p.vals.q = [len(quantiles)]float64{}
		return
	}
	// A sample's reservoir changes only on Update, which moves the count:
	// an unchanged count means unchanged percentiles, and sorting the
	// reservoir of every idle request timer dominated a scrape.
	if p.qValid && p.qCount == count {
		return
	}
	p.qValid, p.qCount = true, count
	for i, v := range s.Percentiles(quantilePs) {
		p.vals.q[i] = v * scale
	}
}

// sortOrder rebuilds c.order: every sample of every plan, sorted as
// client_golang's Gather sorts families and their metrics (by family
// name, then number of labels, then label values in label-name order).
func (c *Collector) sortOrder() {
	c.order = c.order[:0]
	for _, p := range c.plans {
		if p.value != nil {
			if p.kind == kindHistogram || p.kind == kindTimer {
				for i := range quantiles {
					c.order = append(c.order, sampleRef{p, int8(i)})
				}
			} else {
				c.order = append(c.order, sampleRef{p, sampleValue})
			}
		}
		if p.count != nil {
			c.order = append(c.order, sampleRef{p, sampleCount})
		}
		if p.percent != nil {
			c.order = append(c.order, sampleRef{p, samplePercent})
		}
	}
	slices.SortFunc(c.order, func(a, b sampleRef) int {
		if n := strings.Compare(familyName(a), familyName(b)); n != 0 {
			return n
		}
		la, lb := a.labelPairs(), b.labelPairs()
		if len(la) != len(lb) {
			return len(la) - len(lb)
		}
		for i := range la {
			if n := strings.Compare(la[i].GetValue(), lb[i].GetValue()); n != 0 {
				return n
			}
		}
		return 0
	})
	c.compactPlans()
	c.dirty = false
	c.layout++
}

// compactPlans moves the plans into one slice in the order of their first
// sample. A scrape visits each plan from each of its families in c.order;
// with 100,000 plans scattered over the heap, the cache misses of those
// visits were most of a scrape, while families list partitions in the same
// order, so in one slice the visits run through memory in sequence.
func (c *Collector) compactPlans() {
	idx := make(map[*plan]int, len(c.plans))
	arena := make([]plan, 0, len(c.plans))
	for _, r := range c.order {
		if _, ok := idx[r.p]; !ok {
			idx[r.p] = len(arena)
			arena = append(arena, *r.p)
		}
	}
	for i := range c.order {
		c.order[i].p = &arena[idx[c.order[i].p]]
	}
	for name, p := range c.plans {
		if j, ok := idx[p]; ok {
			c.plans[name] = &arena[j]
		}
	}
}

// familyName is the family a sample belongs to.
func familyName(r sampleRef) string {
	switch r.which {
	case sampleCount:
		return r.p.countName
	case samplePercent:
		return r.p.percentName
	}
	return r.p.valueName
}

// sample is one exported sample; its label pairs are the plan's, shared
// by every scrape (they are only read).
type sample struct {
	desc    *prometheus.Desc
	pairs   []*dto.LabelPair
	counter bool
	v       float64
}

func (s *sample) Desc() *prometheus.Desc { return s.desc }

func (s *sample) Write(m *dto.Metric) error {
	m.Label = s.pairs
	if s.counter {
		m.Counter = &dto.Counter{Value: proto.Float64(s.v)}
	} else {
		m.Gauge = &dto.Gauge{Value: proto.Float64(s.v)}
	}
	return nil
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
			p.value, p.valueName, p.pairs = c.desc(e, help), e.name, labelPairs(e)
		}
	case kindCounter, kindMeter:
		if e, ok := rule(b, attrCount); ok {
			p.count, p.countName, p.pairs = c.desc(e, help), e.name, labelPairs(e)
		}
		if k == kindMeter {
			if e, ok := rule(b, attrMeanRate); ok {
				p.percent, p.percentName, p.pairs = c.desc(e, help), e.name, labelPairs(e)
			}
		}
	case kindHistogram, kindTimer:
		if e, ok := rule(b, attrCount); ok {
			p.count, p.countName, p.pairs = c.desc(e, help), e.name, labelPairs(e)
		}
		if e, ok := rule(b, attrPercentile); ok {
			q := e
			q.labelNames = append(slices.Clip(e.labelNames), "quantile")
			p.value, p.valueName = c.desc(q, help), e.name
			for i, qu := range quantiles {
				q.labelValues = append(slices.Clip(e.labelValues), qu.label)
				p.qpairs[i] = labelPairs(q)
			}
		}
	}
	if p.value == nil && p.count == nil && p.percent == nil {
		p.kind = kindSkip
	}
	return p
}

// labelPairs are e's labels as sorted label pairs.
func labelPairs(e export) []*dto.LabelPair {
	ps := make([]*dto.LabelPair, len(e.labelNames))
	for i := range e.labelNames {
		ps[i] = &dto.LabelPair{Name: proto.String(e.labelNames[i]), Value: proto.String(e.labelValues[i])}
	}
	slices.SortFunc(ps, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	return ps
}

func (c *Collector) desc(e export, help string) *prometheus.Desc {
	key := descKey{name: e.name, labels: strings.Join(e.labelNames, "\x00")}
	if d, ok := c.descs[key]; ok {
		return d
	}
	if h, ok := c.helps[e.name]; ok {
		help = h
	} else {
		c.helps[e.name] = help
	}
	d := prometheus.NewDesc(e.name, help, e.labelNames, nil)
	c.descs[key] = d
	return d
}
