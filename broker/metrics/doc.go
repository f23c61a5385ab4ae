// Package metrics exports a broker's go-metrics registry to Prometheus
// under the names the Prometheus JMX exporter gives Kafka's MBeans with
// its standard Kafka rules (prometheus/jmx_exporter
// example_configs/kafka-2_0_0.yml), so dashboards built for Kafka read a
// Klassik broker unchanged.
//
// Klassik registers its metrics as "kafka.<domain>.<Type>.<Name>" with
// Kafka's tags appended as ".<key>=<value>" in Kafka's order, the dotted
// form of the ObjectName kafka.<domain>:type=<Type>,name=<Name>,<key>=<value>.
// The collector reads that name back as an MBean and applies the rules to
// the attributes the Yammer MBean would have:
//
//	go-metrics   Yammer MBean   attributes exported
//	Gauge        Gauge          Value -> kafka_<domain>_<type>_<name>{tags}
//	Meter        Meter          Count -> ..._<name minus PerSec>_total{tags} (or _count)
//	Counter      Counter        Count, as a meter's
//	Histogram    Histogram      Count -> ..._<name>_count{tags};
//	Timer        Timer          NNthPercentile -> ..._<name>{tags,quantile="0.NN"}
//
// Timers record nanoseconds and are reported in milliseconds, as Kafka's
// ...Ms metrics are. Gauges whose Kafka value is a string (SessionState,
// ClusterId) have no counterpart: the rules export numbers only. Names outside the scheme (Kafka Metrics groups such
// as socket-server-metrics, whose attributes no Kafka rule matches) are not
// exported, as the exporter would not export them either.
//
// Files:
//
//	jmxname.go    go-metrics name -> MBean (parseBean); the rules (rule)
//	collector.go  Collector: the prometheus.Collector over the registry, with
//	              the translation cached per name and the samples kept in
//	              Gather's order
//	gather.go     the cached families the /metrics handler encodes (values
//	              rewritten per scrape: a 10,000-partition broker's scrape
//	              allocates almost nothing)
//	text.go       the text format written directly for the Kafka families:
//	              each sample's "name{labels} " prefix rendered once per
//	              layout, the values appended per scrape (byte-identical to
//	              expfmt's output, tested)
//	handler.go    the /metrics handler: Kafka families plus client_golang's
//	              Go runtime and process collectors; text through text.go,
//	              the other negotiated formats through expfmt
//
// No goroutines: scrapes run on the request's goroutine, one at a time.
package metrics
