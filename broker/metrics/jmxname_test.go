package metrics

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// jmxRules are the rules of prometheus/jmx_exporter
// example_configs/kafka-2_0_0.yml, transcribed as data (pattern, name,
// type, label name/value templates, in the file's order) so the hand-made
// translation in rule() can be checked against the rules themselves.
var jmxRules = []struct {
	pattern, name, typ string
	labels             [][2]string
}{
	{`kafka.server<type=(.+), name=(.+), clientId=(.+), topic=(.+), partition=(.*)><>Value`, "kafka_server_$1_$2", "GAUGE", [][2]string{{"clientId", "$3"}, {"topic", "$4"}, {"partition", "$5"}}},
	{`kafka.server<type=(.+), name=(.+), clientId=(.+), brokerHost=(.+), brokerPort=(.+)><>Value`, "kafka_server_$1_$2", "GAUGE", [][2]string{{"clientId", "$3"}, {"broker", "$4:$5"}}},
	{`kafka.coordinator.(\w+)<type=(.+), name=(.+)><>Value`, "kafka_coordinator_$1_$2_$3", "GAUGE", nil},
	{`kafka.(\w+)<type=(.+), name=(.+)PerSec\w*, (.+)=(.+), (.+)=(.+)><>Count`, "kafka_$1_$2_$3_total", "COUNTER", [][2]string{{"$4", "$5"}, {"$6", "$7"}}},
	{`kafka.(\w+)<type=(.+), name=(.+)PerSec\w*, (.+)=(.+)><>Count`, "kafka_$1_$2_$3_total", "COUNTER", [][2]string{{"$4", "$5"}}},
	{`kafka.(\w+)<type=(.+), name=(.+)PerSec\w*><>Count`, "kafka_$1_$2_$3_total", "COUNTER", nil},
	{`kafka.server<type=(.+), user=(.+), client-id=(.+)><>([a-z-]+)`, "kafka_server_quota_$4", "GAUGE", [][2]string{{"resource", "$1"}, {"user", "$2"}, {"clientId", "$3"}}},
	{`kafka.server<type=(.+), client-id=(.+)><>([a-z-]+)`, "kafka_server_quota_$3", "GAUGE", [][2]string{{"resource", "$1"}, {"clientId", "$2"}}},
	{`kafka.server<type=(.+), user=(.+)><>([a-z-]+)`, "kafka_server_quota_$3", "GAUGE", [][2]string{{"resource", "$1"}, {"user", "$2"}}},
	{`kafka.(\w+)<type=(.+), name=(.+), (.+)=(.+), (.+)=(.+)><>Value`, "kafka_$1_$2_$3", "GAUGE", [][2]string{{"$4", "$5"}, {"$6", "$7"}}},
	{`kafka.(\w+)<type=(.+), name=(.+), (.+)=(.+)><>Value`, "kafka_$1_$2_$3", "GAUGE", [][2]string{{"$4", "$5"}}},
	{`kafka.(\w+)<type=(.+), name=(.+)><>Value`, "kafka_$1_$2_$3", "GAUGE", nil},
	{`kafka.(\w+)<type=(.+), name=(.+), (.+)=(.+), (.+)=(.+)><>Count`, "kafka_$1_$2_$3_count", "COUNTER", [][2]string{{"$4", "$5"}, {"$6", "$7"}}},
	{`kafka.(\w+)<type=(.+), name=(.+), (.+)=(.*), (.+)=(.+)><>(\d+)thPercentile`, "kafka_$1_$2_$3", "GAUGE", [][2]string{{"$4", "$5"}, {"$6", "$7"}, {"quantile", "0.$8"}}},
	{`kafka.(\w+)<type=(.+), name=(.+), (.+)=(.+)><>Count`, "kafka_$1_$2_$3_count", "COUNTER", [][2]string{{"$4", "$5"}}},
	{`kafka.(\w+)<type=(.+), name=(.+), (.+)=(.*)><>(\d+)thPercentile`, "kafka_$1_$2_$3", "GAUGE", [][2]string{{"$4", "$5"}, {"quantile", "0.$6"}}},
	{`kafka.(\w+)<type=(.+), name=(.+)><>Count`, "kafka_$1_$2_$3_count", "COUNTER", nil},
	{`kafka.(\w+)<type=(.+), name=(.+)><>(\d+)thPercentile`, "kafka_$1_$2_$3", "GAUGE", [][2]string{{"quantile", "0.$4"}}},
	{`kafka.(\w+)<type=(.+), name=(.+)Percent\w*><>MeanRate`, "kafka_$1_$2_$3_percent", "GAUGE", nil},
	{`kafka.(\w+)<type=(.+), name=(.+)Percent\w*><>Value`, "kafka_$1_$2_$3_percent", "GAUGE", nil},
	{`kafka.(\w+)<type=(.+), name=(.+)Percent\w*, (.+)=(.+)><>Value`, "kafka_$1_$2_$3_percent", "GAUGE", [][2]string{{"$4", "$5"}}},
}

var groupRef = regexp.MustCompile(`\$(\d+)`)

// applyJMXRules is the exporter's matching: the MBean as
// domain<key=value, ...><>attribute, the first rule whose pattern matches
// the whole string, names made safe and lower-cased, empty labels dropped.
func applyJMXRules(t *testing.T, b bean, attr string) (export, bool) {
	t.Helper()
	props := []string{"type=" + b.typ, "name=" + b.name}
	for _, tg := range b.tags {
		props = append(props, tg.key+"="+tg.value)
	}
	s := "kafka." + b.domain + "<" + strings.Join(props, ", ") + "><>" + attr
	// Java's "$1_" is group 1 then "_"; Go's template needs "${1}_".
	tmpl := func(s string) string { return groupRef.ReplaceAllString(s, "$${$1}") }
	for _, r := range jmxRules {
		re := regexp.MustCompile("^(?:" + r.pattern + ")$")
		m := re.FindStringSubmatchIndex(s)
		if m == nil {
			continue
		}
		e := export{name: safe(string(re.ExpandString(nil, tmpl(r.name), s, m))), counter: r.typ == "COUNTER"}
		for _, l := range r.labels {
			e.addLabel(string(re.ExpandString(nil, tmpl(l[0]), s, m)), string(re.ExpandString(nil, tmpl(l[1]), s, m)))
		}
		return e, true
	}
	return export{}, false
}

// metricNames are go-metrics names as Klassik registers them, one of each
// shape (the broker test checks the full set a live broker registers).
var metricNames = []string{
	"kafka.server.BrokerTopicMetrics.MessagesInPerSec",
	"kafka.server.BrokerTopicMetrics.MessagesInPerSec.topic=a.b-c_d",
	"kafka.server.BrokerTopicMetrics.TotalFetchRequestsPerSec.topic=t",
	"kafka.server.ReplicaManager.UnderReplicatedPartitions",
	"kafka.server.ReplicaManager.IsrShrinksPerSec",
	"kafka.server.DelayedOperationPurgatory.PurgatorySize.delayedOperation=Produce",
	"kafka.server.FetcherLagMetrics.ConsumerLag.clientId=ReplicaFetcherThread-0-1.topic=t.x.partition=3",
	"kafka.server.SessionExpireListener.ZooKeeperExpiresPerSec",
	"kafka.server.KafkaRequestHandlerPool.RequestHandlerAvgIdlePercent",
	"kafka.network.RequestMetrics.RequestsPerSec.request=Produce.version=9",
	"kafka.network.RequestMetrics.TotalTimeMs.request=FetchConsumer",
	"kafka.network.RequestChannel.RequestQueueSize",
	"kafka.controller.KafkaController.ActiveControllerCount",
	"kafka.controller.ControllerStats.LeaderElectionRateAndTimeMs",
	"kafka.controller.ControllerStats.UncleanLeaderElectionsPerSec",
	"kafka.controller.ControllerEventManager.EventQueueTimeMs",
	"kafka.log.Log.LogEndOffset.topic=t.partition=0",
	"kafka.log.LogFlushStats.LogFlushRateAndTimeMs",
	"kafka.cluster.Partition.UnderReplicated.topic=t.partition=0",
	"kafka.coordinator.group.GroupMetadataManager.NumGroupsStable",
	"kafka.coordinator.transaction.TransactionMarkerChannelManager.LogAppendRetryQueueSize",
	"kafka.server.FetcherStats.RequestsPerSec.clientId=c.brokerHost=h.brokerPort=9092", // Value: special case
	"kafka.server.Other.Lag.a=1.b=2.c=3",
}

var attrNames = map[attribute]string{attrValue: "Value", attrCount: "Count", attrPercentile: "99thPercentile", attrMeanRate: "MeanRate"}

// rule() gives every name and attribute what the exporter's rules give it.
func TestRuleMatchesJMXExporterRules(t *testing.T) {
	for _, n := range metricNames {
		b, ok := parseBean(n)
		if !ok {
			t.Errorf("%s: not parsed", n)
			continue
		}
		for a, an := range attrNames {
			got, gotOK := rule(b, a)
			want, wantOK := applyJMXRules(t, b, an)
			if len(b.tags) > 2 && (a == attrMeanRate || a == attrCount && strings.Contains(b.name, "PerSec")) {
				wantOK = false // deliberately not exported, see rule()
			}
			if !gotOK && !wantOK {
				continue
			}
			if a == attrPercentile && wantOK {
				// the rule adds quantile itself; rule() leaves it to the caller
				want.labelNames, want.labelValues = want.labelNames[:len(want.labelNames)-1], want.labelValues[:len(want.labelValues)-1]
			}
			if gotOK != wantOK || got.name != want.name || got.counter != want.counter ||
				!slices.Equal(got.labelNames, want.labelNames) || !slices.Equal(got.labelValues, want.labelValues) {
				t.Errorf("%s <>%s: got %+v (%v), rules give %+v (%v)", n, an, got, gotOK, want, wantOK)
			}
		}
	}
}

func TestParseBean(t *testing.T) {
	b, ok := parseBean("kafka.server.FetcherLagMetrics.ConsumerLag.clientId=ReplicaFetcherThread-0-1.topic=t.x.partition=3")
	want := bean{domain: "server", typ: "FetcherLagMetrics", name: "ConsumerLag",
		tags: []tag{{"clientId", "ReplicaFetcherThread-0-1"}, {"topic", "t.x"}, {"partition", "3"}}}
	if !ok || b.domain != want.domain || b.typ != want.typ || b.name != want.name || !slices.Equal(b.tags, want.tags) {
		t.Fatalf("got %+v %v", b, ok)
	}
	b, ok = parseBean("kafka.coordinator.group.GroupMetadataManager.NumGroups")
	if !ok || b.domain != "coordinator.group" || b.typ != "GroupMetadataManager" || b.name != "NumGroups" {
		t.Fatalf("got %+v", b)
	}
	for _, n := range []string{"kafka.server.socket-server-metrics.connection-count", "transaction-coordinator-metrics.partition-load-time", "kafka.X", "kafka.a.b"} {
		if b, ok := parseBean(n); ok {
			t.Errorf("%s parsed as %+v", n, b)
		}
	}
}

// The Collector also works in a client_golang registry (NewRegistry):
// Gather accepts its samples and serves them under the Kafka names.
func TestCollectorInRegistry(t *testing.T) {
	reg := brokerShapedRegistry(10, 2)
	fams, err := NewRegistry(reg).Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"kafka_log_log_size": false, "kafka_server_brokertopicmetrics_messagesin_total": false,
		"kafka_network_requestmetrics_totaltimems": false, "go_goroutines": false}
	for _, f := range fams {
		if _, ok := want[f.GetName()]; ok {
			want[f.GetName()] = true
		}
	}
	for n, ok := range want {
		if !ok {
			t.Errorf("%s not gathered", n)
		}
	}
}
