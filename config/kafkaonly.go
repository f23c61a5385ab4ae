package config

import (
	"slices"
	"strings"
)

// kafkaOnlyKeys lists the broker configs Kafka 2.8's KafkaConfig defines that
// Klassik does not implement (security, quotas, KRaft, JMX-era metrics,
// deprecated host/port keys). A server.properties taken from a Kafka
// installation may contain them, so they are accepted and reported as
// ignored instead of failing start-up. The list was built by comparing the
// names defined in KafkaConfig (apache/kafka branch 2.8) with BrokerKeys.
var kafkaOnlyKeys = map[string]bool{
	"alter.config.policy.class.name":                       true,
	"alter.log.dirs.replication.quota.window.num":          true,
	"alter.log.dirs.replication.quota.window.size.seconds": true,
	"broker.heartbeat.interval.ms":                         true,
	"broker.session.timeout.ms":                            true,
	"client.quota.callback.class":                          true,
	"control.plane.listener.name":                          true,
	"controller.listener.names":                            true,
	"controller.quorum.append.linger.ms":                   true,
	"controller.quorum.election.backoff.max.ms":            true,
	"controller.quorum.election.timeout.ms":                true,
	"controller.quorum.fetch.timeout.ms":                   true,
	"controller.quorum.request.timeout.ms":                 true,
	"controller.quorum.retry.backoff.ms":                   true,
	"controller.quorum.voters":                             true,
	"controller.quota.window.num":                          true,
	"controller.quota.window.size.seconds":                 true,
	"create.topic.policy.class.name":                       true,
	"delegation.token.expiry.check.interval.ms":            true,
	"delegation.token.expiry.time.ms":                      true,
	"delegation.token.master.key":                          true,
	"delegation.token.max.lifetime.ms":                     true,
	"delegation.token.secret.key":                          true,
	"initial.broker.registration.timeout.ms":               true,
	"kafka.metrics.polling.interval.secs":                  true,
	"kafka.metrics.reporters":                              true,
	"log.max.id.map.snapshots":                             true,
	"max.connection.creation.rate":                         true,
	"max.connections.per.ip.overrides":                     true,
	"metadata.log.dir":                                     true,
	"metrics.num.samples":                                  true,
	"metrics.recording.level":                              true,
	"metrics.sample.window.ms":                             true,
	"node.id":                                              true,
	"num.replica.alter.log.dirs.threads":                   true,
	"password.encoder.cipher.algorithm":                    true,
	"password.encoder.iterations":                          true,
	"password.encoder.key.length":                          true,
	"password.encoder.keyfactory.algorithm":                true,
	"password.encoder.old.secret":                          true,
	"password.encoder.secret":                              true,
	"principal.builder.class":                              true,
	"process.roles":                                        true,
	"queued.max.request.bytes":                             true,
	"quota.consumer.default":                               true,
	"quota.producer.default":                               true,
	"quota.window.num":                                     true,
	"quota.window.size.seconds":                            true,
	"replica.selector.class":                               true,
	"replication.quota.window.num":                         true,
	"replication.quota.window.size.seconds":                true,
	"sasl.client.callback.handler.class":                   true,
	"sasl.kerberos.kinit.cmd":                              true,
	"sasl.kerberos.min.time.before.relogin":                true,
	"sasl.kerberos.principal.to.local.rules":               true,
	"sasl.kerberos.service.name":                           true,
	"sasl.kerberos.ticket.renew.jitter":                    true,
	"sasl.kerberos.ticket.renew.window.factor":             true,
	"sasl.login.callback.handler.class":                    true,
	"sasl.login.class":                                     true,
	"sasl.login.refresh.buffer.seconds":                    true,
	"sasl.login.refresh.min.period.seconds":                true,
	"sasl.login.refresh.window.factor":                     true,
	"sasl.login.refresh.window.jitter":                     true,
	"sasl.mechanism.controller.protocol":                   true,
	"sasl.server.callback.handler.class":                   true,
	"socket.connection.setup.timeout.max.ms":               true,
	"socket.connection.setup.timeout.ms":                   true,
	"zookeeper.sync.time.ms":                               true,
}

// kafkaOnlyPrefixes are families of per-listener or per-mechanism keys
// Kafka accepts (listener.name.<name>.<config>, ...).
var kafkaOnlyPrefixes = []string{"listener.name."}

// isKnownUnimplemented reports whether name is a Kafka broker config that
// Klassik accepts without acting on it.
func isKnownUnimplemented(name string) bool {
	if kafkaOnlyKeys[name] {
		return true
	}
	for _, p := range kafkaOnlyPrefixes {
		if strings.HasPrefix(name, p) && len(name) > len(p) {
			return true
		}
	}
	return false
}

// KafkaOnlyKeys returns the Kafka broker keys that Klassik accepts but
// ignores, sorted.
func KafkaOnlyKeys() []string {
	out := make([]string, 0, len(kafkaOnlyKeys))
	for k := range kafkaOnlyKeys {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
