package main

import (
	"context"
	"time"
)

// throttler is Kafka's ThroughputThrottler (org.apache.kafka.tools): a
// negative target never throttles; otherwise, once the rate so far
// (computed in float, as Kafka computes it) exceeds the target, every
// call to throttle adds 1/target seconds to a sleep deficit and sleeps it
// off as soon as it reaches 2 ms. A target of 0 stops the sender for good
// (until ctx ends).
type throttler struct {
	startMs      int64
	target       int64
	sleepTimeNs  int64
	sleepDeficit int64
	// sleep waits d or until ctx ends and returns the time it took.
	sleep func(ctx context.Context, d time.Duration) time.Duration
}

const minSleepNs = 2 * int64(time.Millisecond)

func newThrottler(target, startMs int64) *throttler {
	t := &throttler{startMs: startMs, target: target, sleepTimeNs: 1<<63 - 1, sleep: sleepCtx}
	if target > 0 {
		t.sleepTimeNs = int64(time.Second) / target
	}
	return t
}

// shouldThrottle: amountSoFar sends by sendStartMs are above the target
// rate. Java divides in float: (sendStartMs - startMs) / 1000.f, then
// amountSoFar / elapsedSec.
func (t *throttler) shouldThrottle(amountSoFar, sendStartMs int64) bool {
	if t.target < 0 {
		return false
	}
	elapsedSec := float32(sendStartMs-t.startMs) / 1000
	return elapsedSec > 0 && float32(amountSoFar)/elapsedSec > float32(t.target)
}

func (t *throttler) throttle(ctx context.Context) {
	if t.target == 0 {
		<-ctx.Done()
		return
	}
	t.sleepDeficit += t.sleepTimeNs
	if t.sleepDeficit < minSleepNs {
		return
	}
	slept := t.sleep(ctx, time.Duration(t.sleepDeficit))
	if ctx.Err() != nil {
		// Cut short: keep what is still owed, as Kafka does on an interrupt.
		if int64(slept) <= t.sleepDeficit {
			t.sleepDeficit -= int64(slept)
		}
		return
	}
	t.sleepDeficit = 0
}

func sleepCtx(ctx context.Context, d time.Duration) time.Duration {
	start := time.Now()
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
	case <-tm.C:
	}
	return time.Since(start)
}
