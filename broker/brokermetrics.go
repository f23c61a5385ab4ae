package broker

// WithoutRequestMetrics turns off the per-request instrumentation (the
// network's RequestMetrics and the replica manager's BrokerTopicMetrics),
// so a benchmark can measure what it costs. Not a broker config key:
// Kafka has none.
func WithoutRequestMetrics() Option { return func(o *options) { o.withoutRequestMetrics = true } }

// registerMetrics registers, in the broker's registry, the metrics of the
// components that do not take the registry in their config: the group
// coordinator's GroupMetadataManager gauges and the transaction
// coordinator's. The rest register themselves (network, replica,
// controller, storage) from their Config.Metrics.
func (b *Broker) registerMetrics() {
	b.groups.RegisterMetrics(b.metrics)
	b.txn.RegisterMetrics(b.metrics)
}
