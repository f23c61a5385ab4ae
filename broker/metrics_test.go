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
	name   string
	typ    dto.MetricType
	labels []string // each must appear as the label set of some sample
}

const (
	counter = dto.MetricType_COUNTER
	gauge   = dto.MetricType_GAUGE
)

var quantileLabels = []string{"0.50", "0.75", "0.95", "0.98", "0.99", "0.999"}

// servedMetrics are the names the JMX exporter's Kafka rules give the
// Kafka 2.8 MBeans Klassik has an equivalent for, as a leader of a
// replicated partition serving a produce, a fetch and a group serves them.
var servedMetrics = []servedMetric{
	// kafka.controller
	{"kafka_controller_kafkacontroller_activecontrollercount", gauge, []string{""}},
	{"kafka_controller_kafkacontroller_offlinepartitionscount", gauge, []string{""}},
	{"kafka_controller_kafkacontroller_preferredreplicaimbalancecount", gauge, []string{""}},
	{"kafka_controller_kafkacontroller_globaltopiccount", gauge, []string{""}},
	{"kafka_controller_kafkacontroller_globalpartitioncount", gauge, []string{""}},
	{"kafka_controller_kafkacontroller_activebrokercount", gauge, []string{""}},
	{"kafka_controller_kafkacontroller_topicstodeletecount", gauge, []string{""}},
	{"kafka_controller_controllerstats_leaderelectionrateandtimems", gauge, []string{"quantile"}},
	{"kafka_controller_controllerstats_leaderelectionrateandtimems_count", counter, []string{""}},
	{"kafka_controller_controllerstats_uncleanleaderelections_total", counter, []string{""}},
	{"kafka_controller_controllerstats_topicchangerateandtimems_count", counter, []string{""}},
	{"kafka_controller_controllereventmanager_eventqueuesize", gauge, []string{""}},
	{"kafka_controller_controllereventmanager_eventqueuetimems", gauge, []string{"quantile"}},
	{"kafka_controller_controllereventmanager_eventqueuetimems_count", counter, []string{""}},
	// kafka.server ReplicaManager
	{"kafka_server_replicamanager_underreplicatedpartitions", gauge, []string{""}},
	{"kafka_server_replicamanager_isrshrinks_total", counter, []string{""}},
	{"kafka_server_replicamanager_isrexpands_total", counter, []string{""}},
	// purgatories
	{"kafka_server_delayedoperationpurgatory_purgatorysize", gauge, []string{"delayedOperation"}},
	{"kafka_server_delayedoperationpurgatory_numdelayedoperations", gauge, []string{"delayedOperation"}},
	// kafka.network RequestMetrics
	{"kafka_network_requestmetrics_totaltimems", gauge, []string{"quantile,request"}},
	{"kafka_network_requestmetrics_totaltimems_count", counter, []string{"request"}},
	// group coordinator
	{"kafka_coordinator_group_groupmetadatamanager_numgroups", gauge, []string{""}},
	{"kafka_coordinator_group_groupmetadatamanager_numgroupsstable", gauge, []string{""}},
	{"kafka_coordinator_group_groupmetadatamanager_numgroupspreparingrebalance", gauge, []string{""}},
	{"kafka_coordinator_group_groupmetadatamanager_numgroupscompletingrebalance", gauge, []string{""}},
	{"kafka_coordinator_group_groupmetadatamanager_numgroupsempty", gauge, []string{""}},
	{"kafka_coordinator_group_groupmetadatamanager_numgroupsdead", gauge, []string{""}},
	{"kafka_coordinator_group_groupmetadatamanager_numoffsets", gauge, []string{""}},
	// Go runtime and process
	{"go_goroutines", gauge, []string{""}},
	{"go_memstats_alloc_bytes", gauge, []string{""}},
	{"process_cpu_seconds_total", counter, []string{""}},
	{"process_resident_memory_bytes", gauge, []string{""}},
}

// checkServed reports every servedMetrics entry missing from fams or
// served with another type or other labels.
func checkServed(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	for _, want := range servedMetrics {
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
		"replica.fetch.wait.max.ms": "200",
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

	after := scrape(t, c.HTTPAddr(leader))
	checkServed(t, after)

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
	grew("kafka_network_requestmetrics_totaltimems_count", records, "request", "Produce")
	grew("kafka_network_requestmetrics_totaltimems_count", 1, "request", "Fetch")
	if v := value(after, "kafka_network_requestmetrics_totaltimems", "request", "Produce", "quantile", "0.99"); v <= 0 {
		t.Errorf("Produce TotalTimeMs 0.99 quantile %v, want > 0", v)
	}
	if v := value(after, "kafka_coordinator_group_groupmetadatamanager_numgroups"); v < 0 {
		t.Errorf("numgroups %v", v)
	}
}
