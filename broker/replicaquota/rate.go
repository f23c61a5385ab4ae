package replicaquota

import "time"

// sample is one time window of a sampledRate.
type sample struct {
	start  time.Time // Kafka's lastWindowMs: when the window began
	events int64
	bytes  float64
}

// sampledRate is the windowed byte rate replication quotas are measured
// with: Kafka's SimpleRate over a SampledStat of sum (a ring of at most
// n windows of length w). The rate is the sum over the live windows
// divided by the time since the oldest window began, but at least one
// window (SimpleRate's window size; Kafka's plain Rate, used for client
// quotas, pads to n-1 windows instead). A window older than n*w is
// cleared before every measurement. Not safe for concurrent use.
type sampledRate struct {
	n       int
	w       time.Duration
	samples []sample
	current int
}

func newSampledRate(n int, w time.Duration) *sampledRate {
	if n < 1 {
		n = 1
	}
	if w <= 0 {
		w = time.Second
	}
	return &sampledRate{n: n, w: w}
}

// record adds v bytes at now; a full window moves on to the next one
// (reusing the oldest once n exist).
func (r *sampledRate) record(v float64, now time.Time) {
	s := r.cur(now)
	if now.Sub(s.start) >= r.w {
		r.current = (r.current + 1) % r.n
		if r.current >= len(r.samples) {
			r.samples = append(r.samples, sample{start: now})
		} else {
			r.samples[r.current] = sample{start: now}
		}
		s = &r.samples[r.current]
	}
	s.bytes += v
	s.events++
}

func (r *sampledRate) cur(now time.Time) *sample {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{start: now})
	}
	return &r.samples[r.current]
}

// purge clears the windows that began n*w or more before now (they
// restart at now), so an idle period does not count.
func (r *sampledRate) purge(now time.Time) {
	expire := time.Duration(r.n) * r.w
	for i := range r.samples {
		if now.Sub(r.samples[i].start) >= expire {
			r.samples[i] = sample{start: now}
		}
	}
}

// measure is the rate in bytes per second at now.
func (r *sampledRate) measure(now time.Time) float64 {
	r.purge(now)
	var sum float64
	for _, s := range r.samples {
		sum += s.bytes
	}
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{start: now})
	}
	oldest := r.samples[0].start
	for _, s := range r.samples[1:] {
		if s.start.Before(oldest) {
			oldest = s.start
		}
	}
	elapsed := max(now.Sub(oldest), r.w)
	return sum / elapsed.Seconds()
}
