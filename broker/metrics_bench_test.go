package broker_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker"
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/testcluster"
)

// produceConsume produces n records of size bytes to topic (acks=all,
// pipelined) and consumes them back, returning the time taken.
func produceConsume(b *testing.B, c *testcluster.Cluster, topic string, n, size int) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prod := c.Client(kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(time.Millisecond))
	// Consume from the log's current end, so only the new records count.
	l, ok := c.Broker(0).LogManager().GetLog(common.TopicPartition{Topic: topic})
	if !ok {
		b.Fatalf("no log of %s-0", topic)
	}
	cons := c.Client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {0: kgo.NewOffset().At(l.LogEndOffset())}}))
	value := make([]byte, size)
	start := time.Now()
	errs := make(chan error, 1)
	for range n {
		prod.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		})
	}
	if err := prod.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	got := 0
	for got < n {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			b.Fatalf("consumed %d of %d", got, n)
		}
		got += fs.NumRecords()
	}
	d := time.Since(start)
	prod.Close()
	cons.Close()
	return d
}

// BenchmarkRequestMetricsCost measures what the per-request metrics cost:
// two one-broker clusters of the same build, one with them and one
// without (broker.WithoutRequestMetrics), take turns producing and
// consuming the same load; it reports both throughputs and the cost
// (1 - on/off, in percent). Run with -benchtime=1x; each iteration is
// rounds × records.
func BenchmarkRequestMetricsCost(b *testing.B) {
	const rounds, records, size = 6, 20000, 200
	on := testcluster.Start(b, testcluster.Options{Brokers: 1})
	off := testcluster.Start(b, testcluster.Options{Brokers: 1, BrokerOptions: []broker.Option{broker.WithoutRequestMetrics()}})
	for _, c := range []*testcluster.Cluster{on, off} {
		c.CreateTopic("load", 1, 1, nil)
		c.WaitLeaders(20*time.Second, "load", 1)
		produceConsume(b, c, "load", 1000, size) // warm up
	}
	var tOn, tOff time.Duration
	b.ResetTimer()
	for range b.N {
		for r := range rounds {
			// Alternate which goes first, so drift favours neither.
			if r%2 == 0 {
				tOn += produceConsume(b, on, "load", records, size)
				tOff += produceConsume(b, off, "load", records, size)
			} else {
				tOff += produceConsume(b, off, "load", records, size)
				tOn += produceConsume(b, on, "load", records, size)
			}
		}
	}
	b.StopTimer()
	total := float64(b.N * rounds * records)
	rateOn, rateOff := total/tOn.Seconds(), total/tOff.Seconds()
	b.ReportMetric(rateOn, "records/s-on")
	b.ReportMetric(rateOff, "records/s-off")
	b.ReportMetric(100*(1-rateOn/rateOff), "%cost")
}

// BenchmarkScrapeBroker10kPartitions times one scrape of /metrics of a
// real broker leading 10,000 partitions (twenty topics), the HTTP round
// trip and the read of the body included.
func BenchmarkScrapeBroker10kPartitions(b *testing.B) {
	const partitions = 10000
	c := testcluster.Start(b, testcluster.Options{Brokers: 1, HTTP: true})
	for i := range 20 { // twenty topics: one CreateTopics of 10,000 partitions times out
		c.CreateTopic(fmt.Sprintf("wide-%d", i), partitions/20, 1, nil)
	}
	c.WaitFor(5*time.Minute, "10,000 logs", func() bool {
		return len(c.Broker(0).LogManager().AllLogs()) >= partitions
	})
	url := "http://" + c.HTTPAddr(0) + "/metrics"
	scrapeOnce := func() int {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept", "text/plain")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("scrape: %v %s", err, resp.Status)
		}
		return int(n)
	}
	size := scrapeOnce() // the first builds the name cache
	b.ResetTimer()
	for range b.N {
		scrapeOnce()
	}
	b.StopTimer()
	b.ReportMetric(float64(size), "bytes/scrape")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/scrape")
}
