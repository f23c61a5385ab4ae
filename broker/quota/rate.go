package quota

// rate is Kafka's Rate over a WindowedSum (org.apache.kafka.common.metrics
// .stats.Rate, SampledStat): the values recorded in the retained samples,
// divided by the time they span, where that time is never taken as less
// than samples-1 whole windows (so a fresh client cannot look fast after
// one request). A sample is current for one window; the oldest is reused
// when a new window starts; samples untouched for samples × window are
// reset when measured.
type rate struct {
	windowMs int64
	num      int
	samples  []sample // at most num
	current  int
}

type sample struct {
	value        float64
	lastWindowMs int64
}

func newRate(num int, windowMs int64) *rate {
	return &rate{windowMs: windowMs, num: num}
}

func (r *rate) currentSample(nowMs int64) *sample {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{lastWindowMs: nowMs})
	}
	return &r.samples[r.current]
}

// record adds v at nowMs (SampledStat.record).
func (r *rate) record(v float64, nowMs int64) {
	s := r.currentSample(nowMs)
	if nowMs-s.lastWindowMs >= r.windowMs {
		r.current = (r.current + 1) % r.num
		if r.current >= len(r.samples) {
			r.samples = append(r.samples, sample{lastWindowMs: nowMs})
		} else {
			r.samples[r.current] = sample{lastWindowMs: nowMs}
		}
		s = &r.samples[r.current]
	}
	s.value += v
}

// purge resets the samples older than the whole retention
// (purgeObsoleteSamples).
func (r *rate) purge(nowMs int64) {
	expire := int64(r.num) * r.windowMs
	for i := range r.samples {
		if nowMs-r.samples[i].lastWindowMs >= expire {
			r.samples[i] = sample{lastWindowMs: nowMs}
		}
	}
}

// windowSizeMs is the time the retained samples stand for (Rate.windowSize).
func (r *rate) windowSizeMs(nowMs int64) int64 {
	r.purge(nowMs)
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{lastWindowMs: nowMs})
	}
	oldest := r.samples[0].lastWindowMs
	for _, s := range r.samples[1:] {
		if s.lastWindowMs < oldest {
			oldest = s.lastWindowMs
		}
	}
	total := nowMs - oldest
	full := total / r.windowMs
	if minFull := int64(r.num - 1); full < minFull {
		total += (minFull - full) * r.windowMs
	}
	return total
}

// measure is the rate per second at nowMs.
func (r *rate) measure(nowMs int64) float64 {
	r.purge(nowMs)
	var sum float64
	for _, s := range r.samples {
		sum += s.value
	}
	w := r.windowSizeMs(nowMs)
	if w <= 0 {
		return 0
	}
	return sum / (float64(w) / 1000)
}

// throttleMs is how long the client must stay away for the rate, measured
// at nowMs, to fall back to bound (QuotaUtils.throttleTime: with O the
// observed rate, T the bound and W the window, O·W/(W+X) = T gives
// X = (O−T)/T·W); 0 when the rate is within the bound.
func (r *rate) throttleMs(bound float64, nowMs int64) int64 {
	o := r.measure(nowMs)
	if o <= bound {
		return 0
	}
	return roundMs((o - bound) / bound * float64(r.windowSizeMs(nowMs)))
}

func roundMs(f float64) int64 {
	if f >= float64(maxThrottleMs) {
		return maxThrottleMs
	}
	return int64(f + 0.5)
}

// maxThrottleMs caps a throttle time so it fits the int32 throttle_time_ms
// of the responses.
const maxThrottleMs = 1<<31 - 1

// tokenBucket is Kafka's TokenBucket (KIP-599): credits refill at bound per
// second up to a burst of samples × window × bound; a recorded value takes
// credits and the quota is exhausted while they are below zero.
type tokenBucket struct {
	tokens       float64
	lastUpdateMs int64
}

func (b *tokenBucket) refill(bound, burst float64, nowMs int64) {
	b.tokens = min(burst, b.tokens+bound*float64(nowMs-b.lastUpdateMs)/1000)
	b.lastUpdateMs = nowMs
}

func (b *tokenBucket) record(v, bound, burst float64, nowMs int64) {
	b.refill(bound, burst, nowMs)
	b.tokens = min(burst, b.tokens-v)
}

func (b *tokenBucket) measure(bound, burst float64, nowMs int64) float64 {
	b.refill(bound, burst, nowMs)
	return b.tokens
}
