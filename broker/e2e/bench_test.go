package e2e_test

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster"
)

// BenchmarkThroughput measures produce and consume throughput of franz-go
// (1 KiB records, acks=1, idempotence off so both targets do the same work)
// through one Klassik broker, next to the same client against franz-go's
// in-process kfake cluster in the same run. The ratio is what to compare:
// this machine is shared and absolute numbers move.
//
//	go test -run '^$' -bench Throughput -benchtime 20000x ./broker/e2e/
func BenchmarkThroughput(b *testing.B) {
	const topic = "bench"
	value := make([]byte, 1024)
	for i := range value {
		value[i] = byte('a' + i%26)
	}

	targets := []struct {
		name  string
		start func(b *testing.B) []string
	}{
		{"klassik", func(b *testing.B) []string {
			c := testcluster.Start(b, testcluster.Options{Brokers: 1})
			c.CreateTopic(topic, 6, 1, nil)
			c.WaitLeaders(30*time.Second, topic, 6)
			return c.Bootstrap()
		}},
		{"kfake", func(b *testing.B) []string {
			f, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(6, topic))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(f.Close)
			return f.ListenAddrs()
		}},
	}
	for _, tg := range targets {
		b.Run(tg.name+"/produce", func(b *testing.B) {
			seeds := tg.start(b)
			benchProduce(b, seeds, topic, value)
		})
		b.Run(tg.name+"/consume", func(b *testing.B) {
			seeds := tg.start(b)
			benchProduceN(b, seeds, topic, value, b.N)
			b.ResetTimer()
			benchConsume(b, seeds, topic, b.N, len(value))
		})
	}
}

func benchProduce(b *testing.B, seeds []string, topic string, value []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	lat := benchProduceN(b, seeds, topic, value, b.N)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	if len(lat) > 0 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)*50/100].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}

// benchProduceN produces n records and returns each record's latency from
// Produce to acknowledgement.
func benchProduceN(b *testing.B, seeds []string, topic string, value []byte, n int) []time.Duration {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.ProducerLinger(time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	var (
		wg     sync.WaitGroup
		failed atomic.Int64
		mu     sync.Mutex
		lat    = make([]time.Duration, 0, n)
	)
	ctx := context.Background()
	for i := 0; i < n; i++ {
		wg.Add(1)
		start := time.Now()
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
			}
			d := time.Since(start)
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
			wg.Done()
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d produces failed", f, n)
	}
	return lat
}

func benchConsume(b *testing.B, seeds []string, topic string, n, size int) {
	b.ReportAllocs()
	b.SetBytes(int64(size))
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			b.Fatalf("consumed %d of %d", got, n)
		}
		got += fs.NumRecords()
	}
	b.StopTimer()
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}
