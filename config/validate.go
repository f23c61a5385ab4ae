package config

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Validate checks the cross-key rules of Kafka's KafkaConfig.validateValues
// plus the per-key ranges, and returns every problem at once as a
// *ValidationError (nil when the configuration is usable).
func (c *Config) Validate() error {
	var ps []Problem
	add := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	c.validateKeys(add)
	c.validateIdentity(add)
	c.validateLogs(add)
	c.validateLimits(add)
	c.validateConnectionQuotas(add)
	c.validateListeners(add)
	c.validateSSL(add)
	c.validateVersions(add)
	c.validateProtocolCombinations(add)
	c.validateSASL(add)
	c.validateZooKeeperSecurity(add)
	c.validateUnimplemented(add)
	if len(ps) == 0 {
		return nil
	}
	return &ValidationError{Problems: ps}
}

// validateKeys runs every key's own check again, for Configs built or
// changed in code.
func (c *Config) validateKeys(add func(key, format string, args ...any)) {
	for i := range brokerKeys {
		k := &brokerKeys[i]
		if k.check == nil {
			continue
		}
		s := k.get(c)
		if s == "" && k.Nullable {
			continue
		}
		probe := *c
		if err := k.set(&probe, s); err != nil {
			add(k.Name, "%s", err.Error())
		}
	}
}

// validateIdentity checks zookeeper.connect and broker.id.
func (c *Config) validateIdentity(add func(key, format string, args ...any)) {
	if strings.TrimSpace(c.ZookeeperConnect) == "" {
		add("zookeeper.connect", "missing required configuration which has no default value")
	} else if msg := checkZkConnect(c.ZookeeperConnect); msg != "" {
		add("zookeeper.connect", "%s", msg)
	}

	if c.BrokerIDGenerationEnable {
		if c.BrokerID < -1 || c.BrokerID > c.ReservedBrokerMaxID {
			add("broker.id", "%d: must be greater than or equal to -1 and not greater than reserved.broker.max.id (%d)", c.BrokerID, c.ReservedBrokerMaxID)
		}
	} else if c.BrokerID < 0 {
		add("broker.id", "%d: must be greater than or equal to 0 when broker.id.generation.enable is false", c.BrokerID)
	}
}

// validateLogs checks the log roll, retention, directories and cleaner
// buffer.
func (c *Config) validateLogs(add func(key, format string, args ...any)) {
	if c.EffectiveLogRollMs() < 1 {
		add("log.roll.ms", "must be greater than or equal to 1")
	}
	if c.EffectiveLogRollJitterMs() < 0 {
		add("log.roll.jitter.ms", "must be greater than or equal to 0")
	}
	if ms := rawRetentionMs(c); ms < 1 && ms >= 0 {
		add(retentionKey(c), "must be unlimited (-1) or greater than or equal to 1")
	}
	if len(c.LogDirList()) == 0 {
		key := "log.dir"
		if c.IsSet("log.dirs") {
			key = "log.dirs"
		}
		add(key, "at least one log directory must be defined via log.dirs or log.dir")
	}
	seenDirs := map[string]bool{}
	for _, d := range c.LogDirList() {
		clean := filepath.Clean(d)
		if seenDirs[clean] {
			key := "log.dirs"
			if c.LogDirs == "" {
				key = "log.dir"
			}
			add(key, "duplicate log directory %s", d)
		}
		seenDirs[clean] = true
	}
	if c.LogCleanerThreads > 0 && c.LogCleanerDedupeBufferSize/int64(c.LogCleanerThreads) <= 1024*1024 {
		add("log.cleaner.dedupe.buffer.size", "must be at least 1MB per cleaner thread")
	}
}

// validateLimits checks the rules that tie keys to each other (replica
// fetch timeouts, offsets acks, group session bounds) and the values that
// must fit a protocol short.
func (c *Config) validateLimits(add func(key, format string, args ...any)) {
	if c.ReplicaFetchWaitMaxMs > c.ReplicaSocketTimeoutMs {
		add("replica.socket.timeout.ms", "must be at least replica.fetch.wait.max.ms (%d) to prevent unnecessary socket timeouts", c.ReplicaFetchWaitMaxMs)
	}
	if int64(c.ReplicaFetchWaitMaxMs) > c.ReplicaLagTimeMaxMs {
		add("replica.fetch.wait.max.ms", "must be less than or equal to replica.lag.time.max.ms (%d) to prevent frequent changes in ISR", c.ReplicaLagTimeMaxMs)
	}
	if c.OffsetsCommitRequiredAcks < -1 || c.OffsetsCommitRequiredAcks > c.OffsetsTopicReplicationFactor {
		add("offsets.commit.required.acks", "must be greater or equal -1 and less or equal to offsets.topic.replication.factor")
	}
	if c.GroupMinSessionTimeoutMs > c.GroupMaxSessionTimeoutMs {
		add("group.min.session.timeout.ms", "must not be greater than group.max.session.timeout.ms (%d)", c.GroupMaxSessionTimeoutMs)
	}
	if c.DefaultReplicationFactor > 32767 {
		add("default.replication.factor", "must fit in a short (at most 32767)")
	}
	if c.MinInsyncReplicas > 32767 {
		add("min.insync.replicas", "must be at most 32767")
	}
}

// validateVersions checks that the protocol version keys name a Kafka
// version.
func (c *Config) validateVersions(add func(key, format string, args ...any)) {
	for _, key := range []string{"log.message.format.version", "inter.broker.protocol.version"} {
		v, _ := c.Value(key)
		if !validAPIVersion(v) {
			add(key, "%q is not a valid Kafka version (e.g. 2.8 or 2.8-IV1)", v)
		}
	}
}

func (c *Config) validateListeners(add func(key, format string, args ...any)) {
	protocols, err := ParseSecurityProtocolMap(c.ListenerSecurityProtocolMap)
	if err != nil {
		add("listener.security.protocol.map", "%s", err.Error())
		return
	}
	listeners, err := ParseEndpoints(c.Listeners, protocols, true)
	if err != nil {
		add("listeners", "%s", err.Error())
	} else if len(listeners) == 0 {
		add("listeners", "at least one listener must be defined")
	}
	advertised := listeners
	if c.AdvertisedListeners != "" {
		advertised, err = ParseEndpoints(c.AdvertisedListeners, protocols, false)
		if err != nil {
			add("advertised.listeners", "%s", err.Error())
		}
	}
	listenerNames := map[string]bool{}
	for _, e := range listeners {
		listenerNames[e.ListenerName] = true
	}
	advNames := map[string]bool{}
	var advList []string
	for _, e := range advertised {
		advNames[e.ListenerName] = true
		advList = append(advList, e.ListenerName)
		if e.Host == "0.0.0.0" {
			add("advertised.listeners", "%s cannot use the nonroutable meta-address 0.0.0.0; use a routable IP address", e)
		}
		if c.AdvertisedListeners != "" && !listenerNames[e.ListenerName] {
			add("advertised.listeners", "listener name %s is not defined in listeners", e.ListenerName)
		}
	}
	if c.InterBrokerListenerName != "" && c.IsSet("security.inter.broker.protocol") {
		add("inter.broker.listener.name", "only one of inter.broker.listener.name and security.inter.broker.protocol should be set")
	}
	ibl := c.EffectiveInterBrokerListenerName()
	if len(advertised) > 0 && !advNames[ibl] {
		key := "inter.broker.listener.name"
		if c.InterBrokerListenerName == "" {
			key = "security.inter.broker.protocol"
		}
		slices.Sort(advList)
		add(key, "%s must be a listener name defined in advertised.listeners; the valid options are %s", ibl, strings.Join(advList, ","))
	}
}

// checkZkConnect checks host:port[,host:port...][/chroot].
func checkZkConnect(s string) string {
	hosts, chroot, hasChroot := strings.Cut(s, "/")
	if hasChroot {
		chroot = "/" + chroot
		if chroot == "/" || strings.HasSuffix(chroot, "/") || strings.Contains(chroot, "//") {
			return fmt.Sprintf("%q has an invalid chroot path %q", s, chroot)
		}
	}
	for _, hp := range strings.Split(hosts, ",") {
		hp = strings.TrimSpace(hp)
		host, port, ok := strings.Cut(hp, ":")
		if i := strings.LastIndex(hp, ":"); i >= 0 {
			host, port, ok = hp[:i], hp[i+1:], true
		}
		if hp == "" || host == "" {
			return fmt.Sprintf("%q is not host:port[,host:port...][/chroot]", s)
		}
		if ok {
			n, err := strconv.Atoi(port)
			if err != nil || n <= 0 || n > 65535 {
				return fmt.Sprintf("%q has an invalid port %q", s, port)
			}
		}
	}
	return ""
}

func rawRetentionMs(c *Config) int64 {
	switch {
	case c.LogRetentionMs != nil:
		return *c.LogRetentionMs
	case c.LogRetentionMinutes != nil:
		return int64(*c.LogRetentionMinutes) * 60 * 1000
	default:
		return int64(c.LogRetentionHours) * 3600 * 1000
	}
}

func retentionKey(c *Config) string {
	switch {
	case c.LogRetentionMs != nil:
		return "log.retention.ms"
	case c.LogRetentionMinutes != nil:
		return "log.retention.minutes"
	default:
		return "log.retention.hours"
	}
}

// apiVersionRE matches Kafka's ApiVersion strings: 0.8.0 ... 0.11.0, 1.0 ...
// 3.x, optionally with an -IVn suffix.
var apiVersionRE = regexp.MustCompile(`^(0\.(8|9|10|11)\.[0-9](-IV[0-9]+)?|0\.(8|9|10|11)(\.[0-9])?|[1-9][0-9]*\.[0-9]+(\.[0-9]+)?(-IV[0-9]+)?)$`)

func validAPIVersion(s string) bool { return apiVersionRE.MatchString(s) }
