package config

// The broker keys that may be changed at run time through
// /config/brokers/<id> and /config/brokers/<default> (Kafka 2.8's
// DynamicBrokerConfig.AllDynamicConfigs, restricted to the keys Klassik
// implements, plus DynamicConfig.Broker's dynamic-only replication
// throttles), their update modes and Kafka's validation of a dynamic
// update (DynamicBrokerConfig.validateConfigs) with its error texts.

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Update modes of a dynamic key (kafka-configs' "per-broker" and
// "cluster-wide"; DynamicBrokerConfig.dynamicConfigUpdateModes).
const (
	UpdateModeReadOnly    = "read-only"
	UpdateModePerBroker   = "per-broker"
	UpdateModeClusterWide = "cluster-wide"
)

// dynamicLogKeys are the broker defaults of topic configs
// (LogConfig.TopicConfigSynonyms' values) except log.message.format.version,
// which Kafka excludes (DynamicLogConfig.ReconfigurableConfigs). Only the
// _ms forms of the time settings are dynamic; log.retention.hours and the
// other coarser synonyms are not.
var dynamicLogKeys = []string{
	"log.segment.bytes", "log.roll.ms", "log.roll.jitter.ms", "log.index.size.max.bytes",
	"log.flush.interval.messages", "log.flush.interval.ms", "log.retention.bytes", "log.retention.ms",
	"message.max.bytes", "log.index.interval.bytes", "log.cleaner.delete.retention.ms",
	"log.cleaner.min.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", "log.segment.delete.delay.ms",
	"log.cleaner.min.cleanable.ratio", "log.cleanup.policy", "unclean.leader.election.enable",
	"min.insync.replicas", "compression.type", "log.preallocate", "log.message.timestamp.type",
	"log.message.timestamp.difference.max.ms", "log.message.downconversion.enable",
}

// DynamicLogKeys returns the dynamic broker keys that are topic-config
// defaults (DynamicLogConfig.ReconfigurableConfigs).
func DynamicLogKeys() []string { return slices.Clone(dynamicLogKeys) }

// dynamicSecurityKeys are SslConfigs.RECONFIGURABLE_CONFIGS: updatable only
// per listener (listener.name.<l>.<key>) and per broker.
var dynamicSecurityKeys = []string{
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
	"ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.certificates",
}

// dynamicListenerKeys are the listener-level keys of
// DynamicListenerConfig.ReconfigurableConfigs Klassik implements, valid
// with the listener prefix (per broker). listeners, advertised.listeners
// and listener.security.protocol.map are not among them: Klassik cannot
// add or remove a listener of a running broker, so they are refused as not
// dynamic.
var dynamicListenerKeys = []string{
	"ssl.protocol", "ssl.cipher.suites", "ssl.enabled.protocols", "ssl.keymanager.algorithm",
	"ssl.trustmanager.algorithm", "ssl.endpoint.identification.algorithm", "ssl.client.auth",
	"sasl.mechanism.inter.broker.protocol", "sasl.jaas.config", "sasl.enabled.mechanisms",
}

// listenerMechanismKeys are set per listener and SASL mechanism
// (listener.name.<l>.<mechanism>.<key>; DynamicBrokerConfig.ListenerMechanismConfigs).
var listenerMechanismKeys = []string{"sasl.jaas.config", "connections.max.reauth.ms"}

// dynamicClusterKeys are the remaining dynamic keys: log cleaner, thread
// pools, metrics reporters and connection limits; each may be set at the
// cluster default or per broker. max.connections and
// max.connection.creation.rate may also carry a listener prefix.
var dynamicClusterKeys = []string{
	// LogCleaner.ReconfigurableConfigs
	"log.cleaner.threads", "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.load.factor",
	"log.cleaner.io.buffer.size", "log.cleaner.io.max.bytes.per.second", "log.cleaner.backoff.ms",
	// DynamicThreadPool.ReconfigurableConfigs
	"num.io.threads", "num.network.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir",
	"background.threads",
	// DynamicMetricsReporters
	"metric.reporters",
	// SocketServer.ReconfigurableConfigs
	"max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides", "max.connection.creation.rate",
}

// clusterLevelListenerKeys may be set with a listener prefix at the
// cluster default (DynamicBrokerConfig.ClusterLevelListenerConfigs).
var clusterLevelListenerKeys = []string{"max.connections", "max.connection.creation.rate"}

// Dynamic-only keys (Kafka's DynamicConfig.Broker): they exist only in
// /config/brokers; Kafka ignores them in server.properties.
const (
	LeaderReplicationThrottledRateProp         = "leader.replication.throttled.rate"
	FollowerReplicationThrottledRateProp       = "follower.replication.throttled.rate"
	ReplicaAlterLogDirsIOMaxBytesPerSecondProp = "replica.alter.log.dirs.io.max.bytes.per.second"
)

// dynamicOnlyKeys are read like broker keys (Value, Current) but are not in
// BrokerKeys: they cannot be set in server.properties.
var dynamicOnlyKeys = []Key{
	{Name: LeaderReplicationThrottledRateProp, Type: TypeLong, Default: i64(math.MaxInt64), Group: groupReplication,
		Doc:   "A long representing the upper bound (bytes/sec) on replication traffic for leaders enumerated in the property leader.replication.throttled.replicas (for each topic). This property can be only set dynamically. It is suggested that the limit be kept above 1MB/s for accurate behaviour.",
		field: func(c *Config) any { return &c.LeaderReplicationThrottledRate }, check: atLeast(0)},
	{Name: FollowerReplicationThrottledRateProp, Type: TypeLong, Default: i64(math.MaxInt64), Group: groupReplication,
		Doc:   "A long representing the upper bound (bytes/sec) on replication traffic for followers enumerated in the property follower.replication.throttled.replicas (for each topic). This property can be only set dynamically. It is suggested that the limit be kept above 1MB/s for accurate behaviour.",
		field: func(c *Config) any { return &c.FollowerReplicationThrottledRate }, check: atLeast(0)},
	{Name: ReplicaAlterLogDirsIOMaxBytesPerSecondProp, Type: TypeLong, Default: i64(math.MaxInt64), Group: groupReplication,
		Doc:   "A long representing the upper bound (bytes/sec) on disk IO used for moving replica between log directories on the same broker. This property can be only set dynamically. It is suggested that the limit be kept above 1MB/s for accurate behaviour.",
		field: func(c *Config) any { return &c.ReplicaAlterLogDirsIOMaxBytesPerSecond }, check: atLeast(0)},
}

var dynamicOnlyKeyIndex = func() map[string]int {
	m := map[string]int{}
	for i, k := range dynamicOnlyKeys {
		m[k.Name] = i
	}
	return m
}()

// DynamicOnlyKeys returns the keys that can be set only dynamically.
func DynamicOnlyKeys() []Key { return dynamicOnlyKeys }

func lookupDynamicOnlyKey(name string) *Key {
	if i, ok := dynamicOnlyKeyIndex[name]; ok {
		return &dynamicOnlyKeys[i]
	}
	return nil
}

var (
	dynamicModes = func() map[string]string {
		m := map[string]string{}
		for _, k := range dynamicLogKeys {
			m[k] = UpdateModeClusterWide
		}
		for _, k := range dynamicClusterKeys {
			m[k] = UpdateModeClusterWide
		}
		for _, k := range dynamicSecurityKeys {
			m[k] = UpdateModePerBroker
		}
		for _, k := range dynamicListenerKeys {
			m[k] = UpdateModePerBroker
		}
		for _, k := range dynamicOnlyKeys {
			m[k.Name] = UpdateModeClusterWide
		}
		return m
	}()
	securityKeySet = setOf(dynamicSecurityKeys)
)

func setOf(keys []string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// IsDynamicBrokerKey reports whether key may be set in /config/brokers
// (with its listener prefix where Kafka requires one).
func IsDynamicBrokerKey(key string) bool {
	if base, ok := listenerBaseName(key); ok {
		_, dyn := dynamicModes[base]
		return dyn
	}
	_, ok := dynamicModes[key]
	return ok
}

// DynamicUpdateMode is Kafka's update mode of a broker key: "per-broker",
// "cluster-wide" or "read-only".
func DynamicUpdateMode(key string) string {
	base := key
	if b, ok := listenerBaseName(key); ok {
		base = b
		if _, dyn := dynamicModes[base]; dyn && !slices.Contains(clusterLevelListenerKeys, base) {
			return UpdateModePerBroker
		}
	}
	if m, ok := dynamicModes[base]; ok {
		return m
	}
	return UpdateModeReadOnly
}

// listenerBaseName returns <key> of listener.name.<listener>.<key>
// (Kafka's ListenerConfigRegex: the listener name has no dot).
func listenerBaseName(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, listenerPrefix)
	if !ok {
		return "", false
	}
	_, base, ok := strings.Cut(rest, ".")
	if !ok || base == "" {
		return "", false
	}
	return base, true
}

// typeBaseName is the key whose type a dynamic key has: the base of a
// listener key, without a SASL mechanism prefix
// (listener.name.l.plain.sasl.jaas.config → sasl.jaas.config).
func typeBaseName(name string) string {
	base, ok := listenerBaseName(name)
	if !ok {
		return name
	}
	for _, m := range listenerMechanismKeys {
		if strings.HasSuffix(base, "."+m) {
			return m
		}
	}
	return base
}

// isKafkaBrokerKey reports whether name is a key of Kafka's KafkaConfig
// (implemented or not): the set DynamicConfig.Broker.nonDynamicProps is
// computed from. Custom keys and listener-prefixed keys are not.
func isKafkaBrokerKey(name string) bool {
	return lookupBrokerKey(name) != nil || kafkaOnlyKeys[name]
}

// IsPasswordConfig reports whether a dynamic key holds a password, which
// /config/brokers/<id> stores encoded (DynamicBrokerConfig.isPasswordConfig:
// the name ends with a dynamic password key).
func IsPasswordConfig(name string) bool {
	for k := range dynamicModes {
		if bk := lookupBrokerKey(k); bk != nil && bk.Type == TypePassword && strings.HasSuffix(name, k) {
			return true
		}
	}
	return false
}

// KeyType returns the type of a broker key (listener-prefixed keys have
// their base key's type); false for an unknown key.
func KeyType(name string) (Type, bool) {
	if k := lookupBrokerKey(typeBaseName(name)); k != nil {
		return k.Type, true
	}
	return 0, false
}

// KeyDoc returns the documentation of a broker key ("" when unknown).
func KeyDoc(name string) string {
	if k := lookupBrokerKey(typeBaseName(name)); k != nil {
		return k.Doc
	}
	return ""
}

// scalaSet renders names as Scala's Set.toString does, sorted so the text
// is stable: "Set(a, b)".
func scalaSet(names []string) string {
	slices.Sort(names)
	return "Set(" + strings.Join(names, ", ") + ")"
}

// ValidateDynamicBrokerConfigs checks a dynamic broker config set as
// Kafka's DynamicBrokerConfig.validateConfigs does, in its order and with
// its messages: keys that are not dynamic, security keys without a
// listener prefix, value types, and (for the cluster default, perBroker
// false) keys that may be set only per broker. Custom (non-Kafka) keys
// pass, as in Kafka.
func ValidateDynamicBrokerConfigs(props map[string]string, perBroker bool) error {
	var nonDynamic, unprefixed, brokerOnly []string
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if isKafkaBrokerKey(k) && !IsDynamicBrokerKey(k) && lookupDynamicOnlyKey(k) == nil {
			nonDynamic = append(nonDynamic, k)
		}
		if securityKeySet[k] {
			unprefixed = append(unprefixed, k)
		}
		if isPerBrokerKey(k) {
			brokerOnly = append(brokerOnly, k)
		}
	}
	if len(nonDynamic) > 0 {
		return fmt.Errorf("Cannot update these configs dynamically: %s", scalaSet(nonDynamic))
	}
	if len(unprefixed) > 0 {
		return fmt.Errorf("These security configs can be dynamically updated only per-listener using the listener prefix: %s", scalaSet(unprefixed))
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if err := checkDynamicType(typeBaseName(k), props[k]); err != nil {
			return err
		}
	}
	if !perBroker && len(brokerOnly) > 0 {
		return fmt.Errorf("Cannot update these configs at default cluster level, broker id must be specified: %s", scalaSet(brokerOnly))
	}
	return nil
}

// checkDynamicType parses v with the key's type and range, answering with
// ConfigDef's messages ("Invalid value x for configuration k: ...").
func checkDynamicType(name, v string) error {
	k := lookupBrokerKey(name)
	if k == nil {
		return nil // custom keys are not checked (Kafka: customPropsAllowed)
	}
	bad := func(reason string) error {
		return fmt.Errorf("Invalid value %s for configuration %s: %s", v, name, reason)
	}
	s := strings.TrimSpace(v)
	var parsed any
	switch k.Type {
	case TypeBoolean:
		if _, err := parseBool(s); err != nil {
			return bad("Expected value to be either true or false")
		}
		return nil
	case TypeInt, TypeShort, TypeLong:
		bits := map[Type]int{TypeInt: 32, TypeShort: 16, TypeLong: 64}[k.Type]
		i, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return bad("Not a number of type " + strings.ToUpper(k.Type.String()))
		}
		parsed = i
	case TypeDouble:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) {
			return bad("Not a number of type DOUBLE")
		}
		parsed = f
	default:
		return nil
	}
	if k.check != nil {
		if msg := k.check(parsed); msg != "" {
			if after, ok := strings.CutPrefix(msg, "must be at least "); ok {
				return bad("Value must be at least " + after)
			}
			return bad(msg)
		}
	}
	return nil
}

// validateDynamicOnlyStatic refuses the dynamic-only keys in a static
// configuration: Kafka ignores them there, so accepting them would leave
// the operator believing a throttle is in force.
func validateDynamicOnlyStatic(props map[string]string) []Problem {
	var ps []Problem
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if lookupDynamicOnlyKey(k) != nil {
			ps = append(ps, Problem{Key: k, Msg: fmt.Sprintf("can only be set dynamically (Kafka ignores it in server.properties); use kafka-configs.sh --entity-type brokers --alter --add-config %s=<bytes/sec>", k)})
		}
	}
	return ps
}
