package e2e_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster"
)

// BenchmarkTxnProduce measures franz-go's produce throughput of 1 KiB
// incompressible records (acks=all, no compression, 5 ms linger, three
// partitions round-robin) through one Klassik broker: transactional with
// 100 and with 10,000 records per transaction (BeginTransaction, the
// records, Flush, EndTransaction(TryCommit)) against idempotent produce
// without transactions in the same run. This machine is shared and a
// lone run's throughput moves by a factor of two, so each sub-benchmark
// alternates in four rounds between a quarter of its records produced
// idempotently and a quarter transactionally (separate clients and
// topics), and reports:
//
//	MB/s, records/s     the transactional throughput
//	idempotent-MB/s     the interleaved idempotent throughput
//	txn/idempotent      their ratio (the aim: at least 0.8 with
//	                    10,000 records per transaction)
//	retries/txn         franz-go's CONCURRENT_TRANSACTIONS retries per
//	                    transaction (see concurrentTxnCounter)
//
// Run with enough records for several large transactions per round:
//
//	go test -run '^$' -bench TxnProduce -benchtime 200000x ./broker/e2e/
//
// The broker is alone, so __transaction_state and __consumer_offsets
// get replication factor 1 and min ISR 1.
func BenchmarkTxnProduce(b *testing.B) {
	c := testcluster.Start(b, testcluster.Options{Brokers: 1, Overrides: map[string]string{
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
		"transaction.state.log.num.partitions":     "10",
		"offsets.topic.replication.factor":         "1",
	}})
	value := make([]byte, 1024)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range value {
		value[i] = byte(rng.Uint32())
	}
	newClient := func(topic, txnID string, extra ...kgo.Opt) *kgo.Client {
		c.CreateTopic(topic, 3, 1, nil)
		c.WaitLeaders(30*time.Second, topic, 3)
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
		return c.Client(append(o, extra...)...)
	}
	// send produces n records and returns a wait for every
	// acknowledgement.
	send := func(b *testing.B, cl *kgo.Client, n int) (wait func()) {
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
		return func() {
			wg.Wait()
			if f := failed.Load(); f > 0 {
				b.Fatalf("%d of %d records failed: %v", f, n, firstErr.Load())
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	// txn produces n records in one transaction.
	txn := func(b *testing.B, cl *kgo.Client, n int) {
		if err := cl.BeginTransaction(); err != nil {
			b.Fatalf("BeginTransaction: %v", err)
		}
		wait := send(b, cl, n)
		// franz-go's EndTransaction does not flush: records still
		// buffered would go into the next transaction. Flush sends
		// them without waiting out the linger, as a Java producer's
		// commitTransaction does.
		if err := cl.Flush(ctx); err != nil {
			b.Fatalf("Flush: %v", err)
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			b.Fatalf("EndTransaction: %v", err)
		}
		wait()
	}

	for _, per := range []int{100, 10000} {
		name := map[int]string{100: "txn-100", 10000: "txn-10000"}[per]
		b.Run(name, func(b *testing.B) {
			// b.Run calls this once with b.N = 1 first: topics per run.
			suffix := name + "-" + strconv.Itoa(b.N)
			idem := newClient("bench-idem-"+suffix, "")
			retries := &concurrentTxnCounter{}
			tx := newClient("bench-"+suffix, "bench-"+name, kgo.WithLogger(retries))
			// Warm-up: metadata, connections, producer ids, the
			// coordinator and __transaction_state.
			send(b, idem, 1)()
			txn(b, tx, 1)
			retries.n.Store(0)
			const rounds = 4
			var idemTime, txnTime time.Duration
			txns := 0
			b.ResetTimer()
			for r := 0; r < rounds; r++ {
				n := b.N/rounds + min(1, max(0, b.N%rounds-r)) // the round's share
				start := time.Now()
				b.StopTimer() // only the transactional rounds count as the benchmark's time
				send(b, idem, n)()
				b.StartTimer()
				idemTime += time.Since(start)
				start = time.Now()
				for done := 0; done < n; done += per {
					txn(b, tx, min(per, n-done))
					txns++
				}
				txnTime += time.Since(start)
			}
			b.StopTimer()
			mb := float64(b.N) * float64(len(value)) / 1e6
			txnRate, idemRate := mb/txnTime.Seconds(), mb/idemTime.Seconds()
			b.ReportMetric(txnRate, "MB/s")
			b.ReportMetric(float64(b.N)/txnTime.Seconds(), "records/s")
			b.ReportMetric(idemRate, "idempotent-MB/s")
			b.ReportMetric(float64(retries.n.Load())/float64(max(1, txns)), "retries/txn")
			if b.N > 1 {
				b.ReportMetric(txnRate/idemRate, "txn/idempotent")
				b.Logf("%s: %.1f MB/s transactional, %.1f MB/s idempotent, ratio %.2f, %d transactions, %d CONCURRENT_TRANSACTIONS retries",
					name, txnRate, idemRate, txnRate/idemRate, txns, retries.n.Load())
			}
		})
	}
}

// concurrentTxnCounter is a franz-go logger that counts the client's
// retries of CONCURRENT_TRANSACTIONS (logged at debug level): the
// coordinator answers it to the next transaction's AddPartitionsToTxn
// until the previous one's markers are written (EndTxn is answered once
// PrepareCommit is logged), and franz-go backs off 20 ms each time, so
// for small transactions this is what the throughput is made of.
type concurrentTxnCounter struct{ n atomic.Int64 }

func (l *concurrentTxnCounter) Level() kgo.LogLevel { return kgo.LogLevelDebug }

func (l *concurrentTxnCounter) Log(_ kgo.LogLevel, msg string, _ ...any) {
	if strings.Contains(msg, "CONCURRENT_TRANSACTIONS") {
		l.n.Add(1)
	}
}
