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
	"metadata.log.dir":                                     true,
	"metrics.num.samples":                                  true,
	"metrics.recording.level":                              true,
	"metrics.sample.window.ms":                             true,
	"node.id":                                              true,
	"num.replica.alter.log.dirs.threads":                   true,
	"principal.builder.class":                              true,
	"process.roles":                                        true,
	"queued.max.request.bytes":                             true,
	"replica.selector.class":                               true,
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

// refusedKafkaKeys are Kafka-only keys whose setting would leave the cluster
// in another state than the operator believes if it were ignored (a
// plug-in that refuses requests, a quota, KRaft mode, a second controller
// listener, delegation tokens). Setting one, to any value, is a start-up
// error naming it and saying why; the rest of kafkaOnlyKeys tune parts
// Klassik does not have and are only reported.
var refusedKafkaKeys = map[string]string{
	"principal.builder.class":        "custom principal builders cannot be loaded; principals are User:<SASL user> or the client certificate's DN mapped by ssl.principal.mapping.rules",
	"create.topic.policy.class.name": "topic creation policies cannot be loaded; every CreateTopics the policy would refuse would be allowed",
	"alter.config.policy.class.name": "config alteration policies cannot be loaded; every config change the policy would refuse would be allowed",
	"client.quota.callback.class":    "custom client quota callbacks cannot be loaded; quotas follow Kafka's default precedence over /config/users and /config/clients",
	"replica.selector.class":         "fetching from the closest replica (KIP-392) is not implemented; consumers always fetch from the leader",
	"process.roles":                  "KRaft mode is not implemented; Klassik runs only with ZooKeeper (zookeeper.connect)",
	"node.id":                        "KRaft mode is not implemented; use broker.id",
	"controller.quorum.voters":       "KRaft mode is not implemented; the controller is elected through ZooKeeper's /controller",
	"controller.listener.names":      "KRaft mode is not implemented",
	"control.plane.listener.name":    "a separate controller listener (KIP-291) is not implemented; controller requests use the inter-broker listener",
	"delegation.token.master.key":    "delegation tokens are not implemented",
	"delegation.token.secret.key":    "delegation tokens are not implemented",
	"kafka.metrics.reporters":        "Java metrics reporters cannot be loaded; metrics are exported for Prometheus on klassik.http.listener",
}

// validateUnimplemented refuses the set keys of refusedKafkaKeys.
func (c *Config) validateUnimplemented(add func(key, format string, args ...any)) {
	for _, name := range c.ignored {
		if why, ok := refusedKafkaKeys[name]; ok {
			add(name, "not supported by Klassik: %s; remove the setting", why)
		}
	}
}
