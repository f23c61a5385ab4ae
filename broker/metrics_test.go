package broker_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster"
)

// scrape GETs http://addr/metrics and parses the Prometheus text format.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain") // the classic text format
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scraping %s: %v", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("scraping %s: %s: %s", addr, resp.Status, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("scraping %s: content type %q", addr, ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing the scrape of %s: %v", addr, err)
	}
	return fams
}

// labelNames returns a sample's label names, sorted, joined by commas.
func labelNames(m *dto.Metric) string {
	var ns []string
	for _, l := range m.GetLabel() {
		ns = append(ns, l.GetName())
	}
	sort.Strings(ns)
	return strings.Join(ns, ",")
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

// find returns the samples of family name whose labels include every
// name=value pair of match.
func find(fams map[string]*dto.MetricFamily, name string, match ...string) []*dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	var out []*dto.Metric
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(match); i += 2 {
			if labelValue(m, match[i]) != match[i+1] {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// value is the sum of the matching samples (0 when none).
func value(fams map[string]*dto.MetricFamily, name string, match ...string) float64 {
	v := 0.0
	for _, m := range find(fams, name, match...) {
		v += sampleValue(m)
	}
	return v
}

// servedMetric is one family the scrape must serve: its type and the label
// names (sorted, comma-joined) of at least one of its samples.
type servedMetric struct {
	name     string
	typ      dto.MetricType
	labels   []string // each must appear as the label set of some sample
	follower bool     // served by the follower (the others: by the leader)
}

const (
	counter = dto.MetricType_COUNTER
	gauge   = dto.MetricType_GAUGE
)

var quantileLabels = []string{"0.50", "0.75", "0.95", "0.98", "0.99", "0.999"}

// servedMetrics are the names the JMX exporter's Kafka rules give the
// Kafka 2.8 MBeans Klassik has an equivalent for, as the leader (or the
// follower) of a replicated partition serving produces, fetches and a
// group serves them.
var servedMetrics = func() []servedMetric {
	ms := []servedMetric{
		// kafka.controller
		{"kafka_controller_kafkacontroller_activecontrollercount", gauge, []string{""}, false},
		{"kafka_controller_kafkacontroller_offlinepartitionscount", gauge, []string{""}, false},
		{"kafka_controller_kafkacontroller_preferredreplicaimbalancecount", gauge, []string{""}, false},
		{"kafka_controller_kafkacontroller_globaltopiccount", gauge, []string{""}, false},
		{"kafka_controller_kafkacontroller_globalpartitioncount", gauge, []string{""}, false},
		{"kafka_controller_kafkacontroller_controllerstate", gauge, []string{""}, false},
		{"kafka_controller_kafkacontroller_topicstodeletecount", gauge, []string{""}, false},
		{"kafka_controller_kafkacontroller_replicastodeletecount", gauge, []string{""}, false},
		{"kafka_controller_kafkacontroller_topicsineligibletodeletecount", gauge, []string{""}, false},
		{"kafka_controller_kafkacontroller_replicasineligibletodeletecount", gauge, []string{""}, false},
		{"kafka_controller_controllerstats_uncleanleaderelections_total", counter, []string{""}, false},
		{"kafka_controller_controllereventmanager_eventqueuesize", gauge, []string{""}, false},
		{"kafka_controller_controllereventmanager_eventqueuetimems", gauge, []string{"quantile"}, false},
		{"kafka_controller_controllereventmanager_eventqueuetimems_count", counter, []string{""}, false},
		{"kafka_controller_controllerchannelmanager_totalqueuesize", gauge, []string{""}, false},
		// (QueueSize and RequestRateAndQueueTimeMs per broker_id: the
		// controller only, checked in TestMetricsScrape)
		// kafka.server ReplicaManager
		{"kafka_server_replicamanager_underreplicatedpartitions", gauge, []string{""}, false},
		{"kafka_server_replicamanager_partitioncount", gauge, []string{""}, false},
		{"kafka_server_replicamanager_leadercount", gauge, []string{""}, false},
		{"kafka_server_replicamanager_underminisrpartitioncount", gauge, []string{""}, false},
		{"kafka_server_replicamanager_atminisrpartitioncount", gauge, []string{""}, false},
		{"kafka_server_replicamanager_isrshrinks_total", counter, []string{""}, false},
		{"kafka_server_replicamanager_isrexpands_total", counter, []string{""}, false},
		{"kafka_server_replicamanager_failedisrupdates_total", counter, []string{""}, false},
		{"kafka_server_replicamanager_reassigningpartitions", gauge, []string{""}, false},
		{"kafka_server_replicamanager_offlinereplicacount", gauge, []string{""}, false},
		// kafka.cluster Partition (leader and follower)
		{"kafka_cluster_partition_underreplicated", gauge, []string{"partition,topic"}, false},
		{"kafka_cluster_partition_insyncreplicascount", gauge, []string{"partition,topic"}, false},
		{"kafka_cluster_partition_underminisr", gauge, []string{"partition,topic"}, false},
		{"kafka_cluster_partition_atminisr", gauge, []string{"partition,topic"}, false},
		{"kafka_cluster_partition_replicascount", gauge, []string{"partition,topic"}, false},
		{"kafka_cluster_partition_laststableoffsetlag", gauge, []string{"partition,topic"}, false},
		{"kafka_cluster_partition_insyncreplicascount", gauge, []string{"partition,topic"}, true},
		// kafka.server KafkaServer
		{"kafka_server_kafkaserver_brokerstate", gauge, []string{""}, false},
		{"kafka_server_kafkaserver_linux_disk_read_bytes", gauge, []string{""}, false},
		{"kafka_server_kafkaserver_linux_disk_write_bytes", gauge, []string{""}, false},
		// kafka.server BrokerTopicMetrics (all-topics and per-topic)
		{"kafka_server_brokertopicmetrics_replicationbytesin_total", counter, []string{""}, true},
		{"kafka_server_brokertopicmetrics_replicationbytesout_total", counter, []string{""}, false},
		{"kafka_server_brokertopicmetrics_reassignmentbytesin_total", counter, []string{""}, false},
		{"kafka_server_brokertopicmetrics_reassignmentbytesout_total", counter, []string{""}, false},
		{"kafka_server_brokertopicmetrics_invalidmagicnumberrecords_total", counter, []string{""}, false},
		{"kafka_server_brokertopicmetrics_invalidmessagecrcrecords_total", counter, []string{""}, false},
		{"kafka_server_brokertopicmetrics_invalidoffsetorsequencerecords_total", counter, []string{""}, false},
		{"kafka_server_brokertopicmetrics_nokeycompactedtopicrecords_total", counter, []string{""}, false},
		// purgatories
		{"kafka_server_delayedoperationpurgatory_purgatorysize", gauge, []string{"delayedOperation"}, false},
		{"kafka_server_delayedoperationpurgatory_numdelayedoperations", gauge, []string{"delayedOperation"}, false},
		{"kafka_server_delayedfetchmetrics_expires_total", counter, []string{"fetcherType"}, false},
		{"kafka_server_delayedproducemetrics_expires_total", counter, []string{""}, false},
		// replica fetcher
		{"kafka_server_fetcherlagmetrics_consumerlag", gauge, []string{"clientId,partition,topic"}, true},
		{"kafka_server_replicafetchermanager_maxlag", gauge, []string{"clientId"}, true},
		{"kafka_server_replicafetchermanager_failedpartitionscount", gauge, []string{"clientId"}, true},
		{"kafka_server_replicafetchermanager_deadthreadcount", gauge, []string{"clientId"}, true},
		// ZooKeeper client
		{"kafka_server_sessionexpirelistener_zookeeperexpires_total", counter, []string{""}, false},
		{"kafka_server_sessionexpirelistener_zookeeperdisconnects_total", counter, []string{""}, false},
		{"kafka_server_sessionexpirelistener_zookeepersyncconnects_total", counter, []string{""}, false},
		{"kafka_server_sessionexpirelistener_zookeeperauthfailures_total", counter, []string{""}, false},
		{"kafka_server_sessionexpirelistener_zookeeperreadonlyconnects_total", counter, []string{""}, false},
		{"kafka_server_sessionexpirelistener_zookeepersaslauthentications_total", counter, []string{""}, false},
		{"kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms", gauge, []string{"quantile"}, false},
		{"kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms_count", counter, []string{""}, false},
		// kafka.log
		{"kafka_log_log_size", gauge, []string{"partition,topic"}, false},
		{"kafka_log_log_logendoffset", gauge, []string{"partition,topic"}, false},
		{"kafka_log_log_logstartoffset", gauge, []string{"partition,topic"}, false},
		{"kafka_log_log_numlogsegments", gauge, []string{"partition,topic"}, false},
		{"kafka_log_logflushstats_logflushrateandtimems", gauge, []string{"quantile"}, false},
		{"kafka_log_logflushstats_logflushrateandtimems_count", counter, []string{""}, false},
		{"kafka_log_logmanager_offlinelogdirectorycount", gauge, []string{""}, false},
		{"kafka_log_logcleaner_max_buffer_utilization_percent", gauge, []string{""}, false},
		{"kafka_log_logcleaner_cleaner_recopy_percent", gauge, []string{""}, false},
		{"kafka_log_logcleaner_max_clean_time_secs", gauge, []string{""}, false},
		{"kafka_log_logcleaner_deadthreadcount", gauge, []string{""}, false},
		{"kafka_log_logcleanermanager_max_dirty_percent", gauge, []string{""}, false},
		{"kafka_log_logcleanermanager_time_since_last_run_ms", gauge, []string{""}, false},
		{"kafka_log_logmanager_logdirectoryoffline", gauge, []string{"logDirectory"}, false},
		// kafka.network RequestMetrics
		{"kafka_network_requestmetrics_requests_total", counter, []string{"request,version"}, false},
		{"kafka_network_requestmetrics_requestbytes", gauge, []string{"quantile,request"}, false},
		{"kafka_network_requestmetrics_requestbytes_count", counter, []string{"request"}, false},
		{"kafka_network_requestmetrics_errors_total", counter, []string{"error,request"}, false},
		// group coordinator
		{"kafka_coordinator_group_groupmetadatamanager_numgroups", gauge, []string{""}, false},
		{"kafka_coordinator_group_groupmetadatamanager_numgroupsstable", gauge, []string{""}, false},
		{"kafka_coordinator_group_groupmetadatamanager_numgroupspreparingrebalance", gauge, []string{""}, false},
		{"kafka_coordinator_group_groupmetadatamanager_numgroupscompletingrebalance", gauge, []string{""}, false},
		{"kafka_coordinator_group_groupmetadatamanager_numgroupsempty", gauge, []string{""}, false},
		{"kafka_coordinator_group_groupmetadatamanager_numgroupsdead", gauge, []string{""}, false},
		{"kafka_coordinator_group_groupmetadatamanager_numoffsets", gauge, []string{""}, false},
		// Go runtime and process
		{"go_goroutines", gauge, []string{""}, false},
		{"go_memstats_alloc_bytes", gauge, []string{""}, false},
		{"go_gc_duration_seconds", dto.MetricType_SUMMARY, []string{""}, false},
		{"process_cpu_seconds_total", counter, []string{""}, false},
		{"process_resident_memory_bytes", gauge, []string{""}, false},
		{"process_open_fds", gauge, []string{""}, false},
	}
	for _, n := range []string{"messagesin", "bytesin", "bytesout", "bytesrejected", "failedproducerequests",
		"failedfetchrequests", "totalproducerequests", "totalfetchrequests", "producemessageconversions", "fetchmessageconversions"} {
		ms = append(ms, servedMetric{"kafka_server_brokertopicmetrics_" + n + "_total", counter, []string{"", "topic"}, false})
	}
	for _, n := range []string{"requestqueuetimems", "localtimems", "remotetimems", "responsequeuetimems", "responsesendtimems", "totaltimems"} {
		ms = append(ms,
			servedMetric{"kafka_network_requestmetrics_" + n, gauge, []string{"quantile,request"}, false},
			servedMetric{"kafka_network_requestmetrics_" + n + "_count", counter, []string{"request"}, false})
	}
	for _, n := range []string{"leaderelection", "partitionreassignment", "topicchange", "topicdeletion", "isrchange",
		"controlledshutdown", "autoleaderbalance", "controllerchange"} {
		ms = append(ms,
			servedMetric{"kafka_controller_controllerstats_" + n + "rateandtimems", gauge, []string{"quantile"}, false},
			servedMetric{"kafka_controller_controllerstats_" + n + "rateandtimems_count", counter, []string{""}, false})
	}
	return ms
}()

// checkServed reports every servedMetrics entry of the leader (or the
// follower) missing from fams or served with another type or other labels.
func checkServed(t *testing.T, fams map[string]*dto.MetricFamily, follower bool) {
	t.Helper()
	for _, want := range servedMetrics {
		if want.follower != follower {
			continue
		}
		f := fams[want.name]
		if f == nil {
			t.Errorf("%s: not served", want.name)
			continue
		}
		if f.GetType() != want.typ {
			t.Errorf("%s: type %v, want %v", want.name, f.GetType(), want.typ)
		}
		var sets []string
		for _, m := range f.GetMetric() {
			sets = append(sets, labelNames(m))
		}
		for _, l := range want.labels {
			if !slices.Contains(sets, l) {
				t.Errorf("%s: no sample with labels {%s}; label sets served: %v", want.name, l, slices.Compact(slices.Sorted(slices.Values(sets))))
			}
		}
		for _, m := range f.GetMetric() {
			if q := labelValue(m, "quantile"); q != "" && !slices.Contains(quantileLabels, q) {
				t.Errorf("%s: quantile %q", want.name, q)
			}
		}
	}
}

// A broker's /metrics serves every metric under the JMX exporter's Kafka
// name with Kafka's labels, and the counters move with the load: the
// leader's messagesin_total grows by the records produced.
func TestMetricsScrape(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, HTTP: true, Overrides: map[string]string{
		"replica.fetch.wait.max.ms":   "200",
		"log.flush.interval.messages": "50",
	}})
	const topic, records = "scraped", 200
	c.CreateTopic(topic, 1, 2, nil)
	c.WaitFor(20*time.Second, topic+" led with a full ISR", func() bool {
		st, ok := c.PartitionState(topic, 0)
		return ok && st.Leader >= 0 && len(st.ISR) == 2
	})
	st, _ := c.PartitionState(topic, 0)
	leader := c.Index(st.Leader)
	before := scrape(t, c.HTTPAddr(leader))

	prod := c.Client(kgo.DefaultProduceTopic(topic))
	ctx := ctxT(t, 30*time.Second)
	for i := range records {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "record-%d", i)}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	cons := c.Client(kgo.ConsumerGroup("scrapers"), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	for got < records {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", got, records, err)
		}
		got += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}

	// A request's metrics are recorded once its response is written, so
	// the consumer may hold its last fetch's answer a moment before they
	// are: wait for them.
	c.WaitFor(10*time.Second, "the consumer fetches recorded", func() bool {
		return value(scrape(t, c.HTTPAddr(leader)), "kafka_network_requestmetrics_requests_total", "request", "FetchConsumer") >
			value(before, "kafka_network_requestmetrics_requests_total", "request", "FetchConsumer")
	})
	after := scrape(t, c.HTTPAddr(leader))
	checkServed(t, after, false)
	follower := 1 - leader
	c.WaitFor(20*time.Second, "the follower's fetcher lag gauge", func() bool {
		return len(find(scrape(t, c.HTTPAddr(follower)), "kafka_server_fetcherlagmetrics_consumerlag", "topic", topic, "partition", "0")) == 1
	})
	fols := scrape(t, c.HTTPAddr(follower))
	checkServed(t, fols, true)
	lag := find(fols, "kafka_server_fetcherlagmetrics_consumerlag", "topic", topic, "partition", "0")[0]
	if id := labelValue(lag, "clientId"); id != fmt.Sprintf("ReplicaFetcherThread-0-%d", st.Leader) {
		t.Errorf("fetcher lag clientId %q", id)
	}
	if v := value(fols, "kafka_server_brokertopicmetrics_replicationbytesin_total"); v <= 0 {
		t.Errorf("follower's replicationbytesin_total %v", v)
	}

	active := 0.0
	for i := range c.N() {
		active += value(scrape(t, c.HTTPAddr(i)), "kafka_controller_kafkacontroller_activecontrollercount")
	}
	if active != 1 {
		t.Errorf("activecontrollercount summed over the brokers = %v, want 1", active)
	}
	grew := func(name string, min float64, match ...string) {
		t.Helper()
		d := value(after, name, match...) - value(before, name, match...)
		if d < min {
			t.Errorf("%s%v grew by %v under load, want at least %v", name, match, d, min)
		}
	}
	if d := value(after, "kafka_server_brokertopicmetrics_messagesin_total", "topic", topic) -
		value(before, "kafka_server_brokertopicmetrics_messagesin_total", "topic", topic); d != records {
		t.Errorf("messagesin_total{topic=%q} grew by %v, want %d", topic, d, records)
	}
	grew("kafka_server_brokertopicmetrics_messagesin_total", records)
	grew("kafka_server_brokertopicmetrics_bytesin_total", records*10, "topic", topic)
	grew("kafka_server_brokertopicmetrics_totalproducerequests_total", records, "topic", topic)
	grew("kafka_server_brokertopicmetrics_bytesout_total", records*10, "topic", topic)
	grew("kafka_server_brokertopicmetrics_totalfetchrequests_total", 1, "topic", topic)
	grew("kafka_server_brokertopicmetrics_replicationbytesout_total", records*10)
	grew("kafka_network_requestmetrics_requests_total", records, "request", "Produce")
	grew("kafka_network_requestmetrics_requests_total", 1, "request", "FetchConsumer")
	grew("kafka_network_requestmetrics_requests_total", 1, "request", "FetchFollower")
	grew("kafka_network_requestmetrics_totaltimems_count", records, "request", "Produce")
	grew("kafka_network_requestmetrics_remotetimems_count", records, "request", "Produce")
	grew("kafka_network_requestmetrics_totaltimems_count", 1, "request", "FetchConsumer")
	grew("kafka_network_requestmetrics_totaltimems_count", 1, "request", "FetchFollower")
	grew("kafka_network_requestmetrics_requestbytes_count", records, "request", "Produce")
	if v := value(after, "kafka_network_requestmetrics_totaltimems", "request", "Produce", "quantile", "0.99"); v <= 0 {
		t.Errorf("Produce TotalTimeMs 0.99 quantile %v, want > 0", v)
	}
	// acks=all (franz-go's default) waits for the follower: remote time.
	if v := value(after, "kafka_network_requestmetrics_remotetimems", "request", "Produce", "quantile", "0.99"); v <= 0 {
		t.Errorf("Produce RemoteTimeMs 0.99 quantile %v, want > 0", v)
	}
	if v := value(after, "kafka_log_log_logendoffset", "topic", topic, "partition", "0"); v != records {
		t.Errorf("logendoffset %v, want %d", v, records)
	}
	if v := value(after, "kafka_log_log_size", "topic", topic, "partition", "0"); v < records*10 {
		t.Errorf("log size %v", v)
	}
	if v := value(after, "kafka_server_sessionexpirelistener_zookeepersyncconnects_total"); v < 1 {
		t.Errorf("zookeepersyncconnects_total %v, want ≥ 1", v)
	}
	if v := value(after, "kafka_server_replicamanager_leadercount"); v < 1 {
		t.Errorf("leadercount %v", v)
	}
	// ErrorsPerSec: every produced partition answered NONE; fetches count
	// under Fetch, which also gets the time breakdown of both kinds.
	grew("kafka_network_requestmetrics_errors_total", records, "request", "Produce", "error", "NONE")
	grew("kafka_network_requestmetrics_errors_total", 1, "request", "Fetch", "error", "NONE")
	grew("kafka_network_requestmetrics_requests_total", 2, "request", "Fetch")
	grew("kafka_network_requestmetrics_totaltimems_count", 2, "request", "Fetch")
	if len(find(after, "kafka_network_requestmetrics_errors_total", "request", "FetchConsumer")) != 0 {
		t.Error("ErrorsPerSec under FetchConsumer; Kafka counts fetch errors under Fetch")
	}
	// Every ZooKeeper request is timed; log.flush.interval.messages=50
	// flushes the log every 50 records.
	grew("kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms_count", 1)
	grew("kafka_log_logflushstats_logflushrateandtimems_count", records/50)
	if v := value(after, "kafka_server_kafkaserver_brokerstate"); v != 3 {
		t.Errorf("brokerstate %v, want 3 (RUNNING)", v)
	}
	// The leader's partition view, and the follower's zeros.
	for name, want := range map[string]float64{"insyncreplicascount": 2, "replicascount": 2, "underreplicated": 0,
		"underminisr": 0, "atminisr": 0, "laststableoffsetlag": 0} {
		if v := find(after, "kafka_cluster_partition_"+name, "topic", topic, "partition", "0"); len(v) != 1 || sampleValue(v[0]) != want {
			t.Errorf("leader's partition %s %v, want %v", name, v, want)
		}
	}
	if v := value(fols, "kafka_cluster_partition_insyncreplicascount", "topic", topic, "partition", "0"); v != 0 {
		t.Errorf("follower's insyncreplicascount %v, want 0 (Kafka's gauge is the leader's)", v)
	}
	// The follower's idle long polls (replica.fetch.wait.max.ms=200) expire
	// in the leader's fetch purgatory.
	c.WaitFor(20*time.Second, "an expired follower fetch on the leader", func() bool {
		return value(scrape(t, c.HTTPAddr(leader)), "kafka_server_delayedfetchmetrics_expires_total", "fetcherType", "follower") >= 1
	})
	// The controller's channel to each broker: UpdateMetadata and
	// LeaderAndIsr for the topic waited in its queues.
	ctrl, _ := c.Controller()
	cfams := scrape(t, c.HTTPAddr(c.Index(ctrl)))
	for i := range c.N() {
		id := fmt.Sprint(c.BrokerID(i))
		if v := value(cfams, "kafka_controller_controllerchannelmanager_requestrateandqueuetimems_count", "broker_id", id); v < 1 {
			t.Errorf("controller's requestrateandqueuetimems_count{broker_id=%s} %v, want ≥ 1", id, v)
		}
		if len(find(cfams, "kafka_controller_controllerchannelmanager_queuesize", "broker_id", id)) != 1 {
			t.Errorf("controller serves no queuesize{broker_id=%s}", id)
		}
		if len(find(cfams, "kafka_controller_controllerchannelmanager_requestrateandqueuetimems", "broker_id", id, "quantile", "0.99")) != 1 {
			t.Errorf("controller serves no requestrateandqueuetimems{broker_id=%s,quantile=0.99}", id)
		}
	}
}
