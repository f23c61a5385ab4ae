package e2e_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster"
)

// BenchmarkTxnProduce measures franz-go's produce throughput of 1 KiB
// incompressible records (acks=all, no compression, 5 ms linger, three
// partitions round-robin) through one Klassik broker, in the same run:
// idempotent without transactions, then transactional with 100 and with
// 10,000 records per transaction (BeginTransaction, the records,
// EndTransaction(TryCommit), which flushes). Each reports MB/s and
// records/s; the transactional ones also txn/idempotent, their throughput
// over the idempotent one's (the aim: at least 0.8 with 10,000 per
// transaction). Run them together and with enough records for several
// large transactions:
//
//	go test -run '^$' -bench TxnProduce -benchtime 200000x ./broker/e2e/
//
// The broker is alone, so __transaction_state and __consumer_offsets
// get replication factor 1 and min ISR 1.
func BenchmarkTxnProduce(b *testing.B) {
	const topic = "bench-txn"
	c := testcluster.Start(b, testcluster.Options{Brokers: 1, Overrides: map[string]string{
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
		"transaction.state.log.num.partitions":     "10",
		"offsets.topic.replication.factor":         "1",
	}})
	c.CreateTopic(topic, 3, 1, nil)
	c.WaitLeaders(30*time.Second, topic, 3)
	value := make([]byte, 1024)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range value {
		value[i] = byte(rng.Uint32())
	}
	opts := func(txnID string) []kgo.Opt {
		o := []kgo.Opt{
			kgo.DefaultProduceTopic(topic),
			kgo.ProducerBatchCompression(kgo.NoCompression()),
			kgo.ProducerLinger(5 * time.Millisecond),
			kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
			kgo.MaxBufferedRecords(10000),
			kgo.RecordDeliveryTimeout(60 * time.Second),
		}
		if txnID != "" {
			o = append(o, kgo.TransactionalID(txnID), kgo.TransactionTimeout(60*time.Second))
		}
		return o
	}
	report := func(b *testing.B, elapsed time.Duration) float64 {
		mbps := float64(b.N) * float64(len(value)) / 1e6 / elapsed.Seconds()
		b.ReportMetric(mbps, "MB/s")
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
		return mbps
	}
	// produce sends n records and waits for every acknowledgement.
	produce := func(b *testing.B, cl *kgo.Client, n int) {
		var wg sync.WaitGroup
		var failed atomic.Int64
		var firstErr atomic.Value
		for i := 0; i < n; i++ {
			wg.Add(1)
			cl.Produce(context.Background(), &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
				defer wg.Done()
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			})
		}
		wg.Wait()
		if f := failed.Load(); f > 0 {
			b.Fatalf("%d of %d records failed: %v", f, n, firstErr.Load())
		}
	}

	var idempotent float64 // MB/s of the idempotent run
	b.Run("idempotent", func(b *testing.B) {
		cl := c.Client(opts("")...)
		produce(b, cl, 1) // warm-up: metadata, connections, producer id
		b.ResetTimer()
		start := time.Now()
		produce(b, cl, b.N)
		elapsed := time.Since(start)
		b.StopTimer()
		idempotent = report(b, elapsed)
	})
	for _, per := range []int{100, 10000} {
		name := map[int]string{100: "txn-100", 10000: "txn-10000"}[per]
		b.Run(name, func(b *testing.B) {
			cl := c.Client(opts("bench-" + name)...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			txn := func(n int) {
				if err := cl.BeginTransaction(); err != nil {
					b.Fatalf("BeginTransaction: %v", err)
				}
				produce(b, cl, n)
				if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
					b.Fatalf("EndTransaction: %v", err)
				}
			}
			txn(1) // warm-up: the coordinator, __transaction_state, the producer id
			b.ResetTimer()
			start := time.Now()
			for done := 0; done < b.N; done += per {
				txn(min(per, b.N-done))
			}
			elapsed := time.Since(start)
			b.StopTimer()
			mbps := report(b, elapsed)
			if idempotent > 0 && b.N > 1 {
				b.ReportMetric(mbps/idempotent, "txn/idempotent")
				b.Logf("%s: %.1f MB/s, idempotent %.1f MB/s, ratio %.2f", name, mbps, idempotent, mbps/idempotent)
			}
		})
	}
}
