package faulttest_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/faulttest"
)

// BenchmarkReplicatedProduce measures produce throughput of 1 KiB records
// on one 3-broker process cluster, in the same run: RF=1 with acks=1
// against RF=3 with acks=all (min.insync.replicas=2), both idempotent-off
// plain producers with the same batching, over 3 partitions each led by a
// different broker. rf3-acksall reports the ratio of its throughput to
// rf1-acks1's as rf3/rf1 (run the two together, e.g.
// go test -run '^$' -bench ReplicatedProduce -benchtime 20000x ./broker/faulttest/).
func BenchmarkReplicatedProduce(b *testing.B) {
	c := faulttest.Start(b, faulttest.Options{Brokers: 3})
	c.CreateTopic("bench-rf1", faulttest.RoundRobin(3, 3, 1), nil)
	c.CreateTopic("bench-rf3", faulttest.RoundRobin(3, 3, 3), nil)
	// Incompressible values and no compression: the benchmark measures
	// bytes moved and replicated, not how well snappy does on a pattern.
	value := make([]byte, 1024)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range value {
		value[i] = byte(rng.Uint32())
	}
	var rf1Rate float64
	run := func(b *testing.B, topic string, acks kgo.Acks) float64 {
		cl := c.Client(
			kgo.RequiredAcks(acks),
			kgo.DisableIdempotentWrite(), // acks=1 cannot be idempotent; keep both sides equal
			kgo.ProducerBatchCompression(kgo.NoCompression()),
			kgo.ProducerLinger(5*time.Millisecond),
			kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
			kgo.MaxBufferedRecords(10000),
			kgo.RecordDeliveryTimeout(60*time.Second),
		)
		// Warm up: metadata, connections and producer state.
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: value}).FirstErr(); err != nil {
			b.Fatalf("warm-up produce to %s: %v", topic, err)
		}
		var wg sync.WaitGroup
		var failed atomic.Int64
		var firstErr atomic.Value
		b.SetBytes(int64(len(value)))
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			wg.Add(1)
			cl.Produce(context.Background(), &kgo.Record{Topic: topic, Value: value}, func(_ *kgo.Record, err error) {
				defer wg.Done()
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		b.StopTimer()
		if n := failed.Load(); n > 0 {
			b.Fatalf("%d of %d records failed: %v", n, b.N, firstErr.Load())
		}
		rate := float64(b.N) / elapsed.Seconds()
		b.ReportMetric(rate, "records/s")
		return rate
	}
	b.Run("rf1-acks1", func(b *testing.B) {
		rf1Rate = run(b, "bench-rf1", kgo.LeaderAck())
	})
	b.Run("rf3-acksall", func(b *testing.B) {
		rate := run(b, "bench-rf3", kgo.AllISRAcks())
		if rf1Rate > 0 && b.N > 1 {
			b.ReportMetric(rate/rf1Rate, "rf3/rf1")
			b.Logf("rf1-acks1 %.0f records/s, rf3-acksall %.0f records/s, ratio %.2f", rf1Rate, rate, rate/rf1Rate)
		}
	})
}
