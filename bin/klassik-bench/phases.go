package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The client side of every figure is the same franz-go client with the
// same options against Klassik and against kfake: no compression (the
// values are incompressible anyway, and the figures are about bytes
// moved) and no idempotence (acks=1 cannot be idempotent; both sides do
// the same work).
func producerOpts(seeds []string, topic string, acks kgo.Acks) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(acks),
		kgo.DisableIdempotentWrite(),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RecordDeliveryTimeout(2 * time.Minute),
	}
}

// throughput is one closed-loop produce or consume run.
type throughput struct {
	records int
	bytes   int64
	elapsed time.Duration
}

func (t throughput) mbps() float64 { return float64(t.bytes) / 1e6 / t.elapsed.Seconds() }
func (t throughput) rps() float64  { return float64(t.records) / t.elapsed.Seconds() }

// window marks the steady part of a client's run for an allocation
// meter: begin is called once the client is set up, end after its last
// record and before it closes.
type window interface {
	begin()
	end()
}

// settle collects the driver's garbage before a measured run: the run
// before it (a kfake baseline holds every record it was sent) leaves
// gigabytes in the driver's heap, whose collection would otherwise fall
// in the middle of this run, on one of the two CPUs it measures on.
func settle() { runtime.GC() }

// warmUp sends one record to every partition of topic with acks and
// waits for each acknowledgement, before a measured run: a topic just
// created may still have followers whose first fetch came before their
// leader had taken the partition over and that now wait out
// replica.fetch.backoff.ms (1 s by default, as in Kafka) before fetching
// again. An acks=all record acknowledged on every partition means every
// ISR member is fetching, so the run measures the cluster's steady state,
// not the topic's first second.
func warmUp(ctx context.Context, seeds []string, topic string, value []byte, acks kgo.Acks) error {
	cl, err := kgo.NewClient(append(producerOpts(seeds, topic, acks), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	details, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err == nil {
		err = details.Error()
	}
	if err != nil {
		return fmt.Errorf("warm-up: partitions of %s: %w", topic, err)
	}
	var rs []*kgo.Record
	for _, p := range details[topic].Partitions.Numbers() {
		rs = append(rs, &kgo.Record{Value: value, Partition: p})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("warm-up produce to %s: %w", topic, err)
	}
	return nil
}

// produceClosed produces n records of value as fast as the client's
// buffer allows (kgo's default linger and batching) and times the first
// Produce to the last acknowledgement. One acknowledged record per
// partition first warms up the topic, and one more through the measuring
// client its metadata and connections, outside the timing; w (nil for
// none) begins after it and ends at the last acknowledgement, both
// outside the timing too.
func produceClosed(ctx context.Context, seeds []string, topic string, value []byte, n int, acks kgo.Acks, w window, extra ...kgo.Opt) (throughput, error) {
	settle()
	cl, err := kgo.NewClient(append(producerOpts(seeds, topic, acks), extra...)...)
	if err != nil {
		return throughput{}, err
	}
	defer cl.Close()
	if err := warmUp(ctx, seeds, topic, value, acks); err != nil {
		return throughput{}, err
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
		return throughput{}, fmt.Errorf("warm-up produce to %s: %w", topic, err)
	}
	var (
		wg       sync.WaitGroup
		failed   atomic.Int64
		firstErr atomic.Pointer[error]
	)
	if w != nil {
		w.begin()
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, &err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if w != nil {
		w.end()
	}
	if f := failed.Load(); f > 0 {
		return throughput{}, fmt.Errorf("%d of %d records to %s failed: %w", f, n, topic, *firstErr.Load())
	}
	return throughput{records: n, bytes: int64(n) * int64(len(value)), elapsed: elapsed}, nil
}

// consumeAll reads the topic from the start with a new client (no group)
// until it has n records, timing the first poll to the last record. w
// (nil for none) begins after the first poll that returned records, by
// when the client has its connections, metadata, start offsets and fetch
// session and has had its first Fetch answered, and ends at the last
// record; the timing is not meant to be used with a w.
func consumeAll(ctx context.Context, seeds []string, topic string, n int, w window, extra ...kgo.Opt) (throughput, error) {
	settle()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, extra...)...)
	if err != nil {
		return throughput{}, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var got int
	var bytes int64
	start := time.Now()
	for got < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return throughput{}, fmt.Errorf("consumed %d of %d records of %s: %w", got, n, topic, ctx.Err())
		}
		if err := fs.Err0(); err != nil && !errors.Is(err, context.Canceled) {
			return throughput{}, fmt.Errorf("consuming %s: %w", topic, err)
		}
		before := got
		fs.EachRecord(func(r *kgo.Record) {
			got++
			bytes += int64(len(r.Value))
		})
		if w != nil && before == 0 && got > 0 {
			w.begin()
		}
	}
	if w != nil {
		w.end()
	}
	return throughput{records: got, bytes: bytes, elapsed: time.Since(start)}, nil
}

// latencies are one open-loop run's produce latencies.
type latencies struct {
	rate         float64 // records/s offered
	p50, p99, p9 time.Duration
	n            int
}

// openLoop produces at a fixed rate for d, whatever the acknowledgements
// do: every millisecond it sends the records whose time has come, and a
// record's latency runs from its scheduled send time (not from when the
// client accepted it) to its acknowledgement, so a stalled broker's
// backlog counts against it (no coordinated omission). The client does
// not linger (Kafka's producer default, linger.ms=0).
func openLoop(ctx context.Context, seeds []string, topic string, value []byte, rate float64, d time.Duration, acks kgo.Acks) (latencies, error) {
	settle()
	opts := append(producerOpts(seeds, topic, acks), kgo.ProducerLinger(0))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return latencies{}, err
	}
	defer cl.Close()
	if err := warmUp(ctx, seeds, topic, value, acks); err != nil {
		return latencies{}, err
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
		return latencies{}, fmt.Errorf("warm-up produce to %s: %w", topic, err)
	}
	total := int(rate * d.Seconds())
	if total < 1 {
		total = 1
	}
	lat := make([]time.Duration, total)
	var (
		wg       sync.WaitGroup
		failed   atomic.Int64
		firstErr atomic.Pointer[error]
	)
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	sent := 0
	for sent < total {
		due := min(total, int(time.Since(start).Seconds()*rate)+1)
		for ; sent < due; sent++ {
			i := sent
			sched := start.Add(time.Duration(i) * interval)
			wg.Add(1)
			cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
				lat[i] = time.Since(sched)
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, &err)
				}
				wg.Done()
			})
		}
		if ctx.Err() != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
	if ctx.Err() != nil {
		return latencies{}, ctx.Err()
	}
	if f := failed.Load(); f > 0 {
		return latencies{}, fmt.Errorf("%d of %d records to %s failed: %w", f, total, topic, *firstErr.Load())
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	at := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	return latencies{rate: rate, p50: at(0.50), p99: at(0.99), p9: at(0.999), n: total}, nil
}

// fake is the baseline broker: franz-go's in-memory kfake, one broker in
// the driver's process, a fresh cluster per run.
type fake struct {
	c     *kfake.Cluster
	admin *kadm.Client
	raw   *kgo.Client
}

func startFake() (*fake, error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		return nil, fmt.Errorf("kfake: %w", err)
	}
	raw, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		c.Close()
		return nil, err
	}
	return &fake{c: c, admin: kadm.NewClient(raw), raw: raw}, nil
}

func (f *fake) seeds() []string { return f.c.ListenAddrs() }

func (f *fake) createTopic(ctx context.Context, topic string, partitions int) error {
	resp, err := f.admin.CreateTopic(ctx, int32(partitions), 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("kfake: creating %s: %w", topic, err)
	}
	return nil
}

func (f *fake) close() {
	f.raw.Close()
	f.c.Close()
}
