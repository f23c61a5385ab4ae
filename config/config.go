package config

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Config is the broker configuration: one field per server.properties key
// Klassik implements, named after the key. Nullable Kafka keys (no default)
// are pointers; read them through the accessor methods, which apply Kafka's
// precedence rules (log.roll.ms over log.roll.hours, log.retention.ms over
// minutes over hours, log.dirs over log.dir, ...).
//
// A Config is built by Defaults, Load or FromMap and is not modified
// afterwards; it is safe to share between goroutines once built.
type Config struct {
	// ZooKeeper
	ZookeeperConnect             string // zookeeper.connect
	ZookeeperSessionTimeoutMs    int32  // zookeeper.session.timeout.ms
	ZookeeperConnectionTimeoutMs *int32 // zookeeper.connection.timeout.ms (nil: session timeout)
	ZookeeperMaxInFlightRequests int32  // zookeeper.max.in.flight.requests

	// ZooKeeper security (KIP-515 TLS, secure ACLs); see zookeeper_security.go
	ZookeeperSetACL                             bool     // zookeeper.set.acl
	ZookeeperSSLClientEnable                    bool     // zookeeper.ssl.client.enable
	ZookeeperClientCnxnSocket                   string   // zookeeper.clientCnxnSocket
	ZookeeperSSLKeystoreLocation                string   // zookeeper.ssl.keystore.location
	ZookeeperSSLKeystorePassword                string   // zookeeper.ssl.keystore.password
	ZookeeperSSLKeystoreType                    string   // zookeeper.ssl.keystore.type ("": from the file name)
	ZookeeperSSLTruststoreLocation              string   // zookeeper.ssl.truststore.location
	ZookeeperSSLTruststorePassword              string   // zookeeper.ssl.truststore.password
	ZookeeperSSLTruststoreType                  string   // zookeeper.ssl.truststore.type ("": from the file name)
	ZookeeperSSLProtocol                        string   // zookeeper.ssl.protocol
	ZookeeperSSLEnabledProtocols                []string // zookeeper.ssl.enabled.protocols (nil: zookeeper.ssl.protocol)
	ZookeeperSSLCipherSuites                    []string // zookeeper.ssl.cipher.suites (nil: Go's defaults)
	ZookeeperSSLEndpointIdentificationAlgorithm string   // zookeeper.ssl.endpoint.identification.algorithm
	ZookeeperSSLCrlEnable                       bool     // zookeeper.ssl.crl.enable (true is an error)
	ZookeeperSSLOcspEnable                      bool     // zookeeper.ssl.ocsp.enable (true is an error)

	// General
	BrokerID                 int32  // broker.id
	BrokerIDGenerationEnable bool   // broker.id.generation.enable
	ReservedBrokerMaxID      int32  // reserved.broker.max.id
	BrokerRack               string // broker.rack ("" = none)
	MessageMaxBytes          int32  // message.max.bytes
	NumNetworkThreads        int32  // num.network.threads
	NumIOThreads             int32  // num.io.threads
	BackgroundThreads        int32  // background.threads
	QueuedMaxRequests        int32  // queued.max.requests
	RequestTimeoutMs         int32  // request.timeout.ms

	// Socket server
	Listeners                    string // listeners
	AdvertisedListeners          string // advertised.listeners ("" = listeners)
	ListenerSecurityProtocolMap  string // listener.security.protocol.map
	InterBrokerListenerName      string // inter.broker.listener.name ("" = from security.inter.broker.protocol)
	SecurityInterBrokerProtocol  string // security.inter.broker.protocol
	SocketSendBufferBytes        int32  // socket.send.buffer.bytes (-1 = OS default)
	SocketReceiveBufferBytes     int32  // socket.receive.buffer.bytes (-1 = OS default)
	SocketRequestMaxBytes        int32  // socket.request.max.bytes
	MaxConnectionsPerIP          int32  // max.connections.per.ip
	MaxConnections               int32  // max.connections
	MaxConnectionsPerIPOverrides string // max.connections.per.ip.overrides (host:count,...)
	MaxConnectionCreationRate    int32  // max.connection.creation.rate
	ConnectionsMaxIdleMs         int64  // connections.max.idle.ms
	Port                         int32  // port (deprecated; used only when listeners is unset)
	HostName                     string // host.name (deprecated; used only when listeners is unset)
	AdvertisedHostName           string // advertised.host.name (deprecated)
	AdvertisedPort               *int32 // advertised.port (deprecated)

	// TLS (Kafka's SslConfigs / BrokerSecurityConfigs); read per listener
	// with SSLProperties, which adds the listener.name.<listener>.ssl.*
	// overrides.
	SSLProtocol                   string   // ssl.protocol
	SSLEnabledProtocols           []string // ssl.enabled.protocols
	SSLCipherSuites               []string // ssl.cipher.suites (empty = Go's defaults)
	SSLKeystoreType               string   // ssl.keystore.type
	SSLKeystoreLocation           string   // ssl.keystore.location
	SSLKeystorePassword           string   // ssl.keystore.password
	SSLKeyPassword                string   // ssl.key.password
	SSLKeystoreKey                string   // ssl.keystore.key
	SSLKeystoreCertificateChain   string   // ssl.keystore.certificate.chain
	SSLTruststoreType             string   // ssl.truststore.type
	SSLTruststoreLocation         string   // ssl.truststore.location
	SSLTruststorePassword         string   // ssl.truststore.password
	SSLTruststoreCertificates     string   // ssl.truststore.certificates
	SSLClientAuth                 string   // ssl.client.auth
	SSLEndpointIdentification     string   // ssl.endpoint.identification.algorithm
	SSLPrincipalMappingRules      string   // ssl.principal.mapping.rules
	SSLKeymanagerAlgorithm        string   // ssl.keymanager.algorithm (Kafka's default only)
	SSLTrustmanagerAlgorithm      string   // ssl.trustmanager.algorithm (Kafka's default only)
	SSLProvider                   string   // ssl.provider (unset only)
	SSLEngineFactoryClass         string   // ssl.engine.factory.class (unset only)
	SSLSecureRandomImplementation string   // ssl.secure.random.implementation (unset only)
	SecurityProviders             string   // security.providers (unset only)

	// Log
	NumPartitions                           int32    // num.partitions
	LogDir                                  string   // log.dir
	LogDirs                                 string   // log.dirs ("" = log.dir)
	LogSegmentBytes                         int32    // log.segment.bytes
	LogRollMs                               *int64   // log.roll.ms
	LogRollHours                            int32    // log.roll.hours
	LogRollJitterMs                         *int64   // log.roll.jitter.ms
	LogRollJitterHours                      int32    // log.roll.jitter.hours
	LogRetentionMs                          *int64   // log.retention.ms
	LogRetentionMinutes                     *int32   // log.retention.minutes
	LogRetentionHours                       int32    // log.retention.hours
	LogRetentionBytes                       int64    // log.retention.bytes
	LogRetentionCheckIntervalMs             int64    // log.retention.check.interval.ms
	LogCleanupPolicy                        []string // log.cleanup.policy
	LogCleanerThreads                       int32    // log.cleaner.threads
	LogCleanerIOMaxBytesPerSecond           float64  // log.cleaner.io.max.bytes.per.second
	LogCleanerDedupeBufferSize              int64    // log.cleaner.dedupe.buffer.size
	LogCleanerIOBufferSize                  int32    // log.cleaner.io.buffer.size
	LogCleanerIOBufferLoadFactor            float64  // log.cleaner.io.buffer.load.factor
	LogCleanerBackoffMs                     int64    // log.cleaner.backoff.ms
	LogCleanerMinCleanableRatio             float64  // log.cleaner.min.cleanable.ratio
	LogCleanerEnable                        bool     // log.cleaner.enable
	LogCleanerDeleteRetentionMs             int64    // log.cleaner.delete.retention.ms
	LogCleanerMinCompactionLagMs            int64    // log.cleaner.min.compaction.lag.ms
	LogCleanerMaxCompactionLagMs            int64    // log.cleaner.max.compaction.lag.ms
	LogIndexSizeMaxBytes                    int32    // log.index.size.max.bytes
	LogIndexIntervalBytes                   int32    // log.index.interval.bytes
	LogFlushIntervalMessages                int64    // log.flush.interval.messages
	LogSegmentDeleteDelayMs                 int64    // log.segment.delete.delay.ms
	LogFlushSchedulerIntervalMs             int64    // log.flush.scheduler.interval.ms
	LogFlushIntervalMs                      *int64   // log.flush.interval.ms (nil: scheduler interval)
	LogFlushOffsetCheckpointIntervalMs      int32    // log.flush.offset.checkpoint.interval.ms
	LogFlushStartOffsetCheckpointIntervalMs int32    // log.flush.start.offset.checkpoint.interval.ms
	LogPreallocate                          bool     // log.preallocate
	NumRecoveryThreadsPerDataDir            int32    // num.recovery.threads.per.data.dir
	AutoCreateTopicsEnable                  bool     // auto.create.topics.enable
	MinInsyncReplicas                       int32    // min.insync.replicas
	LogMessageFormatVersion                 string   // log.message.format.version
	LogMessageTimestampType                 string   // log.message.timestamp.type
	LogMessageTimestampDifferenceMaxMs      int64    // log.message.timestamp.difference.max.ms
	LogMessageDownconversionEnable          bool     // log.message.downconversion.enable
	CompressionType                         string   // compression.type
	DeleteTopicEnable                       bool     // delete.topic.enable

	// Replication and controller
	ControllerSocketTimeoutMs                   int32  // controller.socket.timeout.ms
	DefaultReplicationFactor                    int32  // default.replication.factor
	ReplicaLagTimeMaxMs                         int64  // replica.lag.time.max.ms
	ReplicaSocketTimeoutMs                      int32  // replica.socket.timeout.ms
	ReplicaSocketReceiveBufferBytes             int32  // replica.socket.receive.buffer.bytes
	ReplicaFetchMaxBytes                        int32  // replica.fetch.max.bytes
	ReplicaFetchWaitMaxMs                       int32  // replica.fetch.wait.max.ms
	ReplicaFetchBackoffMs                       int32  // replica.fetch.backoff.ms
	ReplicaFetchMinBytes                        int32  // replica.fetch.min.bytes
	ReplicaFetchResponseMaxBytes                int32  // replica.fetch.response.max.bytes
	NumReplicaFetchers                          int32  // num.replica.fetchers
	NumReplicationQuotaSamples                  int32  // replication.quota.window.num
	ReplicationQuotaWindowSizeSeconds           int32  // replication.quota.window.size.seconds
	ReplicaHighWatermarkCheckpointIntervalMs    int64  // replica.high.watermark.checkpoint.interval.ms
	FetchPurgatoryPurgeIntervalRequests         int32  // fetch.purgatory.purge.interval.requests
	ProducerPurgatoryPurgeIntervalRequests      int32  // producer.purgatory.purge.interval.requests
	DeleteRecordsPurgatoryPurgeIntervalRequests int32  // delete.records.purgatory.purge.interval.requests
	AutoLeaderRebalanceEnable                   bool   // auto.leader.rebalance.enable
	LeaderImbalancePerBrokerPercentage          int32  // leader.imbalance.per.broker.percentage
	LeaderImbalanceCheckIntervalSeconds         int64  // leader.imbalance.check.interval.seconds
	UncleanLeaderElectionEnable                 bool   // unclean.leader.election.enable
	InterBrokerProtocolVersion                  string // inter.broker.protocol.version
	ControlledShutdownEnable                    bool   // controlled.shutdown.enable
	ControlledShutdownMaxRetries                int32  // controlled.shutdown.max.retries
	ControlledShutdownRetryBackoffMs            int64  // controlled.shutdown.retry.backoff.ms
	MaxIncrementalFetchSessionCacheSlots        int32  // max.incremental.fetch.session.cache.slots
	FetchMaxBytes                               int32  // fetch.max.bytes

	// Group coordinator and offsets
	GroupMinSessionTimeoutMs        int32 // group.min.session.timeout.ms
	GroupMaxSessionTimeoutMs        int32 // group.max.session.timeout.ms
	GroupInitialRebalanceDelayMs    int32 // group.initial.rebalance.delay.ms
	GroupMaxSize                    int32 // group.max.size
	OffsetMetadataMaxBytes          int32 // offset.metadata.max.bytes
	OffsetsLoadBufferSize           int32 // offsets.load.buffer.size
	OffsetsTopicReplicationFactor   int16 // offsets.topic.replication.factor
	OffsetsTopicNumPartitions       int32 // offsets.topic.num.partitions
	OffsetsTopicSegmentBytes        int32 // offsets.topic.segment.bytes
	OffsetsTopicCompressionCodec    int32 // offsets.topic.compression.codec
	OffsetsRetentionMinutes         int32 // offsets.retention.minutes
	OffsetsRetentionCheckIntervalMs int64 // offsets.retention.check.interval.ms
	OffsetsCommitTimeoutMs          int32 // offsets.commit.timeout.ms
	OffsetsCommitRequiredAcks       int16 // offsets.commit.required.acks

	// Transactions
	TransactionalIDExpirationMs                          int32 // transactional.id.expiration.ms
	TransactionMaxTimeoutMs                              int32 // transaction.max.timeout.ms
	TransactionStateLogMinISR                            int32 // transaction.state.log.min.isr
	TransactionStateLogLoadBufferSize                    int32 // transaction.state.log.load.buffer.size
	TransactionStateLogReplicationFactor                 int16 // transaction.state.log.replication.factor
	TransactionStateLogNumPartitions                     int32 // transaction.state.log.num.partitions
	TransactionStateLogSegmentBytes                      int32 // transaction.state.log.segment.bytes
	TransactionAbortTimedOutTransactionCleanupIntervalMs int32 // transaction.abort.timed.out.transaction.cleanup.interval.ms
	TransactionRemoveExpiredTransactionCleanupIntervalMs int32 // transaction.remove.expired.transaction.cleanup.interval.ms
	ProducerIDExpirationMs                               int32 // producer.id.expiration.ms

	// Client quotas (see broker/quota)
	QuotaProducerDefault             int64 // quota.producer.default (deprecated; math.MaxInt64 = none)
	QuotaConsumerDefault             int64 // quota.consumer.default (deprecated; math.MaxInt64 = none)
	QuotaWindowNum                   int32 // quota.window.num
	QuotaWindowSizeSeconds           int32 // quota.window.size.seconds
	ControllerQuotaWindowNum         int32 // controller.quota.window.num
	ControllerQuotaWindowSizeSeconds int32 // controller.quota.window.size.seconds

	// Authorizer (Kafka's AclAuthorizer; see broker/security/authorizer)
	AuthorizerClassName       string // authorizer.class.name ("" = no authorizer)
	SuperUsers                string // super.users (semicolon-separated principals)
	AllowEveryoneIfNoACLFound bool   // allow.everyone.if.no.acl.found

	// Metrics
	MetricReporters []string // metric.reporters (Java class names; recorded, not loaded)
	HTTPListener    string   // klassik.http.listener (host:port; "" = no HTTP listener)
	HTTPAuth        string   // klassik.http.auth ("" = open, "basic")
	HTTPPprof       bool     // klassik.http.pprof.enable (/debug/pprof/ on the HTTP listener)

	// SASL (see sasl.go)
	SaslEnabledMechanisms            []string // sasl.enabled.mechanisms
	SaslMechanismInterBrokerProtocol string   // sasl.mechanism.inter.broker.protocol
	SaslJaasConfig                   string   // sasl.jaas.config ("" = none)
	ConnectionsMaxReauthMs           int64    // connections.max.reauth.ms (0 = no re-authentication)
	SaslServerMaxReceiveSize         int32    // sasl.server.max.receive.size
	ConnectionFailedAuthDelayMs      int32    // connection.failed.authentication.delay.ms

	// Dynamic-only broker configs (set only in /config/brokers; see
	// dynamic_keys.go); Long.MaxValue = unlimited.
	LeaderReplicationThrottledRate         int64 // leader.replication.throttled.rate
	FollowerReplicationThrottledRate       int64 // follower.replication.throttled.rate
	ReplicaAlterLogDirsIOMaxBytesPerSecond int64 // replica.alter.log.dirs.io.max.bytes.per.second

	// Password encoder of dynamic password configs (passwordencoder.go)
	PasswordEncoderSecret              string // password.encoder.secret ("" = none)
	PasswordEncoderOldSecret           string // password.encoder.old.secret ("" = none)
	PasswordEncoderKeyFactoryAlgorithm string // password.encoder.keyfactory.algorithm ("" = PBKDF2WithHmacSHA512)
	PasswordEncoderCipherAlgorithm     string // password.encoder.cipher.algorithm
	PasswordEncoderKeyLength           int32  // password.encoder.key.length
	PasswordEncoderIterations          int32  // password.encoder.iterations

	// explicit records which keys the file or the overrides set; it drives
	// IsSet (DescribeConfigs' STATIC_BROKER_CONFIG versus DEFAULT_CONFIG).
	explicit map[string]bool
	// ignored lists the Kafka keys that were set but that Klassik does not
	// implement; they are accepted with a warning.
	ignored []string
	// listenerProps holds every listener.name.<listener>.<key> as given
	// (see SSLProperties).
	listenerProps map[string]string
	// props is the key/value map this Config was built from (FromMap's
	// argument); Dynamic layers the /config/brokers values over it.
	props map[string]string
	// source records the keys whose value comes from a dynamic layer (see
	// Dynamic); nil for a static Config.
	source map[string]Source
}

// Defaults returns Kafka 2.8's broker defaults. zookeeper.connect has no
// default, so the result does not pass Validate until it is set.
func Defaults() *Config {
	c := &Config{explicit: map[string]bool{}}
	for i := range brokerKeys {
		k := &brokerKeys[i]
		if k.Nullable && k.Default == "" {
			continue
		}
		if err := k.set(c, k.Default); err != nil {
			// The table is static; a bad default is a programming error
			// caught by TestDefaultsParse.
			panic(fmt.Sprintf("config: default of %s: %v", k.Name, err))
		}
	}
	for i := range dynamicOnlyKeys {
		k := &dynamicOnlyKeys[i]
		if err := k.set(c, k.Default); err != nil {
			panic(fmt.Sprintf("config: default of %s: %v", k.Name, err))
		}
	}
	return c
}

// Load reads a broker configuration file and applies overrides on top (the
// --override key=value arguments of kafka-server-start.sh). Files ending in
// .yaml or .yml are read as YAML with the same keys; any other file uses the
// Java properties syntax. Unknown keys, unparsable values and every Validate
// problem are reported together in one *ValidationError. Kafka keys that
// Klassik accepts but does not implement are logged once as a warning with
// slog.Default and listed by IgnoredKeys.
func Load(path string, overrides map[string]string) (*Config, error) {
	props, err := readFile(path)
	if err != nil {
		return nil, err
	}
	for k, v := range overrides {
		props[k] = v
	}
	c, err := FromMap(props)
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", path, err)
	}
	if len(c.ignored) > 0 {
		slog.Warn("these Kafka configs are accepted but not implemented by Klassik and have no effect",
			"file", path, "keys", strings.Join(c.ignored, ","))
	}
	return c, nil
}

func readFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		props, err := ParseYAML(f)
		if err != nil {
			return nil, fmt.Errorf("config: %s: %w", path, err)
		}
		return props, nil
	default:
		props, err := ParseProperties(f)
		if err != nil {
			return nil, fmt.Errorf("config: %s: %w", path, err)
		}
		return props, nil
	}
}

// FromMap builds a Config from key/value strings over Defaults, then
// validates it. All problems are returned at once as a *ValidationError.
func FromMap(props map[string]string) (*Config, error) {
	return fromMap(props, false)
}

// fromMap is FromMap; dynamic allows the dynamic-only keys (Dynamic's
// layered maps), which a static configuration refuses.
func fromMap(props map[string]string, dynamic bool) (*Config, error) {
	c := Defaults()
	c.props = make(map[string]string, len(props))
	for k, v := range props {
		c.props[k] = v
	}
	var problems []Problem
	if !dynamic {
		problems = append(problems, validateDynamicOnlyStatic(props)...)
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, name := range keys {
		value := props[name]
		if handled, msg := c.takeListenerKey(name, value); handled {
			if msg != "" {
				problems = append(problems, Problem{Key: name, Msg: msg})
			}
			continue
		}
		k := lookupBrokerKey(name)
		if k == nil {
			if strings.HasPrefix(name, saslListenerPrefix) {
				c.setListenerProp(name, value)
				if implementedListenerKey(name) {
					c.explicit[name] = true
					continue
				}
			}
			if isKnownUnimplemented(name) {
				c.ignored = append(c.ignored, name)
				continue
			}
			problems = append(problems, Problem{Key: name, Msg: "unknown configuration (not a Kafka broker config; check the spelling)"})
			continue
		}
		if err := k.set(c, value); err != nil {
			problems = append(problems, Problem{Key: name, Msg: err.Error()})
			continue
		}
		c.explicit[name] = true
	}
	c.applyDeprecatedListenerKeys()
	if err := c.Validate(); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			problems = append(problems, ve.Problems...)
		} else {
			return nil, err
		}
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Problems: dedupProblems(problems)}
	}
	return c, nil
}

// dedupProblems drops a Validate problem for a key whose value already failed
// to parse (the parse error says more).
func dedupProblems(ps []Problem) []Problem {
	var out []Problem
	seen := map[Problem]bool{}
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// IsSet reports whether key was given explicitly (file or override) rather
// than taken from the defaults.
func (c *Config) IsSet(key string) bool { return c.explicit[key] }

// IgnoredKeys lists the Kafka keys that were set but have no effect in
// Klassik (sorted).
func (c *Config) IgnoredKeys() []string { return slices.Clone(c.ignored) }

// Value returns the current value of a broker key in Kafka's text form, and
// false for a key Klassik does not implement. Nullable keys that are unset
// return "" and true.
func (c *Config) Value(key string) (string, bool) {
	k := lookupBrokerKey(key)
	if k == nil {
		return "", false
	}
	return k.get(c), true
}

// Problem is one configuration error: the key and what is wrong with it.
type Problem struct {
	Key string
	Msg string
}

// ValidationError lists every problem found in a configuration.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid configuration (%d problem", len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteString("s")
	}
	b.WriteString("):")
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  %s: %s", p.Key, p.Msg)
	}
	return b.String()
}

// Keys returns the keys that have problems, in order.
func (e *ValidationError) Keys() []string {
	var out []string
	for _, p := range e.Problems {
		out = append(out, p.Key)
	}
	return out
}

// ---- derived values (Kafka's KafkaConfig accessors) ----

// LogDirList returns log.dirs, or log.dir when log.dirs is unset, split on
// commas.
func (c *Config) LogDirList() []string {
	if c.LogDirs != "" {
		return SplitList(c.LogDirs)
	}
	return SplitList(c.LogDir)
}

// EffectiveLogRollMs is log.roll.ms when set, else log.roll.hours in ms.
func (c *Config) EffectiveLogRollMs() int64 {
	if c.LogRollMs != nil {
		return *c.LogRollMs
	}
	return int64(c.LogRollHours) * 3600 * 1000
}

// EffectiveLogRollJitterMs is log.roll.jitter.ms when set, else
// log.roll.jitter.hours in ms.
func (c *Config) EffectiveLogRollJitterMs() int64 {
	if c.LogRollJitterMs != nil {
		return *c.LogRollJitterMs
	}
	return int64(c.LogRollJitterHours) * 3600 * 1000
}

// EffectiveLogRetentionMs applies Kafka's precedence: log.retention.ms, then
// log.retention.minutes, then log.retention.hours. Any negative value means
// unlimited and is returned as -1.
func (c *Config) EffectiveLogRetentionMs() int64 {
	var ms int64
	switch {
	case c.LogRetentionMs != nil:
		ms = *c.LogRetentionMs
	case c.LogRetentionMinutes != nil:
		ms = int64(*c.LogRetentionMinutes) * 60 * 1000
	default:
		ms = int64(c.LogRetentionHours) * 3600 * 1000
	}
	if ms < 0 {
		return -1
	}
	return ms
}

// EffectiveLogFlushIntervalMs is log.flush.interval.ms when set, else
// log.flush.scheduler.interval.ms (Kafka's fallback).
func (c *Config) EffectiveLogFlushIntervalMs() int64 {
	if c.LogFlushIntervalMs != nil {
		return *c.LogFlushIntervalMs
	}
	return c.LogFlushSchedulerIntervalMs
}

// EffectiveZookeeperConnectionTimeoutMs is zookeeper.connection.timeout.ms,
// defaulting to the session timeout as in Kafka.
func (c *Config) EffectiveZookeeperConnectionTimeoutMs() int32 {
	if c.ZookeeperConnectionTimeoutMs != nil {
		return *c.ZookeeperConnectionTimeoutMs
	}
	return c.ZookeeperSessionTimeoutMs
}

// SecurityProtocolMap parses listener.security.protocol.map. It cannot fail
// on a validated Config.
func (c *Config) SecurityProtocolMap() map[string]string {
	m, err := ParseSecurityProtocolMap(c.ListenerSecurityProtocolMap)
	if err != nil {
		return map[string]string{}
	}
	return m
}

// ListenerEndpoints parses listeners (valid on a validated Config).
func (c *Config) ListenerEndpoints() []Endpoint {
	eps, _ := ParseEndpoints(c.Listeners, c.SecurityProtocolMap(), true)
	return eps
}

// AdvertisedEndpoints parses advertised.listeners, falling back to
// listeners as Kafka does.
func (c *Config) AdvertisedEndpoints() []Endpoint {
	if c.AdvertisedListeners == "" {
		return c.ListenerEndpoints()
	}
	eps, _ := ParseEndpoints(c.AdvertisedListeners, c.SecurityProtocolMap(), false)
	return eps
}

// EffectiveInterBrokerListenerName is inter.broker.listener.name, or the
// listener named after security.inter.broker.protocol when unset.
func (c *Config) EffectiveInterBrokerListenerName() string {
	if c.InterBrokerListenerName != "" {
		return strings.ToUpper(c.InterBrokerListenerName)
	}
	return strings.ToUpper(c.SecurityInterBrokerProtocol)
}

// InterBrokerEndpoint returns the advertised endpoint other brokers and the
// controller use to reach this broker.
func (c *Config) InterBrokerEndpoint() (Endpoint, bool) {
	name := c.EffectiveInterBrokerListenerName()
	for _, e := range c.AdvertisedEndpoints() {
		if e.ListenerName == name {
			return e, true
		}
	}
	return Endpoint{}, false
}

// Rack returns broker.rack as a pointer (nil when unset), the form the
// assignment and the /brokers/ids JSON use.
func (c *Config) Rack() *string {
	if c.BrokerRack == "" {
		return nil
	}
	r := c.BrokerRack
	return &r
}

// unlimitedInt64 is Kafka's Long.MaxValue default ("never").
const unlimitedInt64 = math.MaxInt64

// Describe renders every implemented key and its current value, sorted, in
// the layout of the "KafkaConfig values:" block Kafka logs at start-up
// ("\tkey = value", unset keys as null). Ignored Kafka keys are listed last.
func (c *Config) Describe() string {
	names := make([]string, 0, len(brokerKeys))
	for _, k := range brokerKeys {
		names = append(names, k.Name)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("KafkaConfig values: \n")
	for _, n := range names {
		k := lookupBrokerKey(n)
		v := k.get(c)
		if v == "" && k.Nullable {
			v = "null"
		} else if k.Type == TypePassword {
			v = "[hidden]"
		}
		fmt.Fprintf(&b, "\t%s = %s\n", n, v)
	}
	if len(c.ignored) > 0 {
		fmt.Fprintf(&b, "ignored (not implemented by Klassik): %s\n", strings.Join(c.ignored, ", "))
	}
	return b.String()
}

// applyDeprecatedListenerKeys derives listeners and advertised.listeners
// from the pre-0.10 keys port, host.name, advertised.host.name and
// advertised.port when the modern keys are not set, as Kafka 2.8 still does,
// so that an old server.properties keeps its port.
func (c *Config) applyDeprecatedListenerKeys() {
	if !c.IsSet("listeners") && (c.IsSet("port") || c.IsSet("host.name")) {
		c.Listeners = fmt.Sprintf("PLAINTEXT://%s:%d", bracketHost(c.HostName), c.Port)
	}
	if !c.IsSet("advertised.listeners") && (c.IsSet("advertised.host.name") || c.IsSet("advertised.port")) {
		host, port := c.HostName, c.Port
		if c.AdvertisedHostName != "" {
			host = c.AdvertisedHostName
		}
		if c.AdvertisedPort != nil {
			port = *c.AdvertisedPort
		}
		c.AdvertisedListeners = fmt.Sprintf("PLAINTEXT://%s:%d", bracketHost(host), port)
	}
}

func bracketHost(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}
