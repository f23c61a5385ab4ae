package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
)

// brokerShapedRegistry returns a registry shaped like a broker hosting
// partitions partitions of topics topics (half led, half followed):
// Kafka's four per-log gauges and six Partition gauges for each, a
// fetcher lag gauge for each followed one, BrokerTopicMetrics for each topic and for all, a full set
// of RequestMetrics (with a few versions each, and recorded samples) and
// the controller's and ReplicaManager's gauges and timers.
func brokerShapedRegistry(partitions, topics int) gometrics.Registry {
	r := NewVersionedRegistry()
	var v atomic.Int64
	v.Store(12345)
	for p := range partitions {
		topic := "topic-" + strconv.Itoa(p%topics)
		tag := ".topic=" + topic + ".partition=" + strconv.Itoa(p/topics)
		for _, n := range []string{"Size", "NumLogSegments", "LogStartOffset", "LogEndOffset"} {
			r.Register("kafka.log.Log."+n+tag, gometrics.NewFunctionalGauge(v.Load))
		}
		if p%2 == 1 {
			r.Register("kafka.server.FetcherLagMetrics.ConsumerLag.clientId=ReplicaFetcherThread-0-2"+tag, gometrics.NewFunctionalGauge(v.Load))
		}
		// Kafka's six kafka.cluster Partition gauges, each reading the
		// partition under its lock, as broker/replica's do.
		var mu sync.RWMutex
		locked := func() int64 {
			mu.RLock()
			defer mu.RUnlock()
			return v.Load()
		}
		for _, n := range []string{"UnderReplicated", "InSyncReplicasCount", "UnderMinIsr", "AtMinIsr", "ReplicasCount", "LastStableOffsetLag"} {
			r.Register("kafka.cluster.Partition."+n+tag, gometrics.NewFunctionalGauge(locked))
		}
	}
	btm := []string{"MessagesInPerSec", "BytesInPerSec", "BytesOutPerSec", "BytesRejectedPerSec",
		"FailedProduceRequestsPerSec", "FailedFetchRequestsPerSec", "TotalProduceRequestsPerSec", "TotalFetchRequestsPerSec"}
	for t := -1; t < topics; t++ {
		tag := ""
		if t >= 0 {
			tag = ".topic=topic-" + strconv.Itoa(t)
		}
		for _, n := range btm {
			gometrics.GetOrRegisterMeter("kafka.server.BrokerTopicMetrics."+n+tag, r).Mark(100)
		}
	}
	for k := range 60 {
		tag := ".request=Api" + strconv.Itoa(k)
		for _, n := range []string{"RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs", "ResponseQueueTimeMs", "ResponseSendTimeMs", "TotalTimeMs"} {
			t := gometrics.GetOrRegisterTimer("kafka.network.RequestMetrics."+n+tag, r)
			for i := range 1028 {
				t.Update(time.Duration(i) * time.Microsecond)
			}
		}
		gometrics.GetOrRegisterHistogram("kafka.network.RequestMetrics.RequestBytes"+tag, r, gometrics.NewExpDecaySample(1028, 0.015)).Update(100)
		for ver := range 3 {
			gometrics.GetOrRegisterMeter("kafka.network.RequestMetrics.RequestsPerSec"+tag+".version="+strconv.Itoa(ver), r).Mark(1)
		}
		for _, e := range []string{"NONE", "NOT_LEADER_OR_FOLLOWER"} {
			gometrics.GetOrRegisterMeter("kafka.network.RequestMetrics.ErrorsPerSec"+tag+".error="+e, r).Mark(1)
		}
	}
	for _, n := range []string{"ActiveControllerCount", "OfflinePartitionsCount", "PreferredReplicaImbalanceCount", "GlobalTopicCount"} {
		gometrics.GetOrRegisterGauge("kafka.controller.KafkaController."+n, r).Update(1)
	}
	for _, n := range []string{"UnderReplicatedPartitions", "PartitionCount", "LeaderCount"} {
		r.Register("kafka.server.ReplicaManager."+n, gometrics.NewFunctionalGauge(v.Load))
	}
	return r
}

// BenchmarkScrapeBrokerShaped10k times one scrape (through the /metrics
// handler, text format) of a registry shaped like a broker with 10,000
// partitions over 100 topics, without the broker's other work (see
// broker.BenchmarkScrapeBroker10kPartitions for a real one).
func BenchmarkScrapeBrokerShaped10k(b *testing.B) {
	h := Handler(brokerShapedRegistry(10000, 100))
	scrape := func() int {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept", "text/plain")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("scrape: %d %s", w.Code, w.Body.String()[:200])
		}
		return w.Body.Len()
	}
	size := scrape() // builds the translation cache
	cpu0 := processCPU()
	b.ResetTimer()
	for range b.N {
		scrape()
	}
	b.StopTimer()
	b.ReportMetric(float64(size), "bytes/scrape")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/scrape")
	// CPU time is steadier than wall time on a shared machine.
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/scrape")
	_ = io.Discard
}

// processCPU is the process's user plus system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
