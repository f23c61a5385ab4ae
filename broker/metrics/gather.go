package metrics

import (
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// gatherLocked returns the Kafka families, sorted by name with their
// metrics in Gather's order, for the /metrics handler. The families and
// their metrics are cached and only their values are written on each
// call, so a scrape of a large broker allocates little; the caller holds
// c.mu until it has encoded them (the next call overwrites the values).
func (c *Collector) gatherLocked() []*dto.MetricFamily {
	c.refreshPlansLocked()
	if c.dirty {
		c.sortOrder()
	}
	if c.fams == nil || c.famsLayout != c.layout {
		c.buildFamilies()
		c.famsLayout = c.layout
	}
	for i, r := range c.order {
		*c.vals[i] = c.readLocked(r)
	}
	c.releaseLocked()
	return c.fams
}

// readLocked is r's value in this scrape generation, reading its metric
// once per generation.
func (c *Collector) readLocked(r sampleRef) float64 {
	p := r.p
	if p.valGen != c.gen {
		p.valGen = c.gen
		p.read()
	}
	return r.value()
}

// releaseLocked drops the registry's metrics the plans held for the
// scrape. A versioned registry's metrics are kept until its version moves,
// so that the next scrape need not walk it.
func (c *Collector) releaseLocked() {
	if c.versioned != nil {
		return
	}
	for _, p := range c.plans {
		p.m = nil
	}
}

// value is the sample's current value (after plan.read).
func (r sampleRef) value() float64 {
	v := &r.p.vals
	switch r.which {
	case sampleValue:
		return v.value
	case sampleCount:
		return v.count
	case samplePercent:
		return v.percent
	}
	return v.q[r.which]
}

// buildFamilies rebuilds the cached families from c.order.
func (c *Collector) buildFamilies() {
	c.fams = c.fams[:0]
	c.vals = c.vals[:0]
	var f *dto.MetricFamily
	for _, r := range c.order {
		name := familyName(r)
		if f == nil || f.GetName() != name {
			t := dto.MetricType_GAUGE
			if r.which == sampleCount {
				t = dto.MetricType_COUNTER
			}
			f = &dto.MetricFamily{Name: proto.String(name), Help: proto.String(c.helps[name]), Type: t.Enum()}
			c.fams = append(c.fams, f)
		}
		v := new(float64)
		m := &dto.Metric{Label: r.labelPairs()}
		if f.GetType() == dto.MetricType_COUNTER {
			m.Counter = &dto.Counter{Value: v}
		} else {
			m.Gauge = &dto.Gauge{Value: v}
		}
		f.Metric = append(f.Metric, m)
		c.vals = append(c.vals, v)
	}
}

// mergeFamilies merges two name-sorted family lists.
func mergeFamilies(a, b []*dto.MetricFamily) []*dto.MetricFamily {
	out := make([]*dto.MetricFamily, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	slices.SortStableFunc(out, func(x, y *dto.MetricFamily) int { return strings.Compare(x.GetName(), y.GetName()) })
	return out
}

// refreshPlansLocked starts a new scrape generation: it gives every metric
// now in the registry its plan (made afresh when the name is new or its
// kind changed), drops the plans of metrics that left the registry, and
// marks the order dirty when either happened.
func (c *Collector) refreshPlansLocked() {
	c.gen++
	if c.versioned != nil {
		v := c.versioned.Version()
		if c.walked && v == c.walkedVersion {
			return
		}
		// Read before the walk: a change during it moves the version
		// again, and the next scrape walks once more.
		c.walked, c.walkedVersion = true, v
	}
	seen := 0
	c.reg.Each(func(name string, m any) {
		k := kindOf(m)
		p := c.plans[name]
		if p == nil || p.kind != k {
			p = c.plan(name, k)
			c.plans[name] = p
			c.dirty = true
		}
		p.seen, p.m = c.gen, m
		seen++
	})
	if len(c.plans) > seen {
		for name, p := range c.plans {
			if p.seen != c.gen {
				p.m = nil
				delete(c.plans, name)
				c.dirty = true
			}
		}
	}
}
