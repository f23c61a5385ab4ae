// Package config is Klassik's broker configuration: Kafka's server.properties
// keys, defaults and validation, plus the topic-level configs.
//
// Kafka classes and their Go files (apache/kafka, branch 2.8):
//
//	kafka.server.KafkaConfig (+ Defaults)     config.go (Config, Defaults, Load, FromMap,
//	                                          derived values), keys.go (the key table:
//	                                          type, default, validator, doc), validate.go
//	                                          (validateValues: cross-key rules)
//	KafkaConfig names Klassik does not act on kafkaonly.go (accepted with a warning)
//	SslConfigs, valuesWithPrefixOverride     ssl.go (ssl.* checks, listener.name.<l>.ssl.*
//	  (listener prefixes)                     overrides, SSLProperties for broker/security)
//	java.util.Properties.load                 properties.go (ParseProperties)
//	(no Kafka counterpart)                    yaml.go (the same keys from YAML)
//	kafka.cluster.EndPoint, CoreUtils         listeners.go (listeners, advertised.listeners,
//	  .listenerListToEndPoints                listener.security.protocol.map)
//	kafka.log.LogConfig, TopicConfig          topic.go (TopicConfigs, ValidateTopicConfig,
//	                                          broker synonyms, EffectiveTopicConfig: the
//	                                          broker defaults plus topic overrides)
//	o.a.k.common.internals.Topic              topicname.go (ValidateTopicName,
//	                                          TopicNamesCollide, internal topic names)
//	kafka.server.DynamicBrokerConfig,         dynamic.go (Dynamic: the layers over the static
//	  DynamicConfig.Broker                    config, Current, Subscribe), dynamic_keys.go
//	                                          (AllDynamicConfigs ∩ Klassik's keys, update
//	                                          modes, validateConfigs' texts, the dynamic-only
//	                                          throttle rates), dynamic_persist.go (stored form)
//	kafka.utils.PasswordEncoder               passwordencoder.go
//	(narrow views: each component gets only  subconfigs.go (ZooKeeper, SocketServer,
//	 the settings it uses, never the whole)   Controller, Replica, GroupCoordinator, ...)
//
// config imports no broker package: the broker turns the effective topic
// properties into storage's types (broker/logconfig.go with
// storage.LogConfigFromProps), so dependencies point broker -> config and
// broker -> storage only.
//
// Loading: Load reads server.properties (Java properties syntax) or YAML
// (.yaml/.yml) and applies --override pairs on top. Every key is checked
// against the table in keys.go: unknown keys fail start-up, Kafka keys that
// Klassik does not implement (kafkaonly.go, built from Kafka 2.8's
// KafkaConfig, plus listener.name.* keys) are accepted and listed by
// IgnoredKeys and one warning log line. Parse errors and Validate's rules are
// collected together, so a ValidationError lists every problem, each naming
// its key.
//
// Precedence rules (Kafka's): log.roll.ms over log.roll.hours;
// log.roll.jitter.ms over log.roll.jitter.hours; log.retention.ms over
// log.retention.minutes over log.retention.hours, any negative retention
// meaning unlimited (-1); log.dirs over log.dir; log.flush.interval.ms falls
// back to log.flush.scheduler.interval.ms; zookeeper.connection.timeout.ms
// falls back to zookeeper.session.timeout.ms; advertised.listeners falls
// back to listeners; when listeners (advertised.listeners) is unset but the
// deprecated port/host.name (advertised.port/advertised.host.name) are set,
// a PLAINTEXT listener is built from them; inter.broker.listener.name falls
// back to the listener
// named by security.inter.broker.protocol. Read these through the
// Effective... accessors, never the raw fields.
//
// Describe renders every effective value like Kafka's start-up
// "KafkaConfig values:" block, for the broker's log.
//
// Goroutines: none. Invariants: a Config returned by Load or FromMap passed
// Validate and is never modified afterwards, so it may be shared freely; the
// key table's defaults are exactly Kafka 2.8's (TestDefaultsMatchKafka), and
// ../server.properties.example is generated from the table
// (go test ./config -update).
package config
