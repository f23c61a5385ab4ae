package config

// Connection limits of Kafka's ConnectionQuotas (SocketServer.scala):
// max.connections.per.ip with its overrides, max.connections and
// max.connection.creation.rate broker-wide and per listener
// (listener.name.<listener>.max.connections,
// listener.name.<listener>.max.connection.creation.rate), and the thread
// counts Kafka lets an operator change only within half and double of the
// current value (DynamicThreadPool).

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// ListenerConnectionQuotaKeys are the keys Kafka reads per listener for
// its connection quota (SocketServer.ListenerReconfigurableConfigs).
var ListenerConnectionQuotaKeys = []string{"max.connections", "max.connection.creation.rate"}

// validHostChars is Kafka's Utils.validHostPattern.
var validHostChars = regexp.MustCompile(`^[0-9a-zA-Z\-%._:]*$`)

// ParseMaxConnectionsPerIPOverrides reads max.connections.per.ip.overrides
// as Kafka's parseCsvMap does: comma-separated host:count pairs, the count
// after the last colon (so IPv6 addresses keep theirs).
func ParseMaxConnectionsPerIPOverrides(s string) (map[string]int, error) {
	out := map[string]int{}
	s = strings.TrimSpace(s)
	if s == "" {
		return out, nil
	}
	var invalid []string
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		i := strings.LastIndex(kv, ":")
		if i < 0 {
			return nil, fmt.Errorf("Error parsing configuration property 'max.connections.per.ip.overrides': %q is not host:count", kv)
		}
		host, count := strings.TrimSpace(kv[:i]), strings.TrimSpace(kv[i+1:])
		n, err := strconv.ParseInt(count, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("For input string: %q (max.connections.per.ip.overrides entry %s)", count, kv)
		}
		if !validHostChars.MatchString(host) {
			invalid = append(invalid, host)
			continue
		}
		out[host] = int(n)
	}
	if len(invalid) > 0 {
		return nil, fmt.Errorf("max.connections.per.ip.overrides contains invalid addresses : %s", strings.Join(invalid, ","))
	}
	return out, nil
}

func ipOverridesCheck(v any) string {
	s, _ := v.(string)
	if _, err := ParseMaxConnectionsPerIPOverrides(s); err != nil {
		return err.Error()
	}
	return ""
}

// MaxConnectionsPerIPOverridesMap is max.connections.per.ip.overrides
// parsed (Validate has checked it; an unparsable value gives none).
func (c *Config) MaxConnectionsPerIPOverridesMap() map[string]int {
	m, err := ParseMaxConnectionsPerIPOverrides(c.MaxConnectionsPerIPOverrides)
	if err != nil {
		return map[string]int{}
	}
	return m
}

// ListenerConnectionQuota returns listener.name.<listener>.max.connections
// and .max.connection.creation.rate; an unset one is unlimited
// (math.MaxInt32), as in Kafka's ListenerConnectionQuota.
func (c *Config) ListenerConnectionQuota(listener string) (maxConnections, maxCreationRate int) {
	get := func(key string) int {
		v, ok := c.ListenerValue(listener, key)
		if !ok {
			return math.MaxInt32
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return math.MaxInt32
		}
		return int(n)
	}
	return get("max.connections"), get("max.connection.creation.rate")
}

func isListenerConnectionQuotaKey(key string) bool {
	for _, k := range ListenerConnectionQuotaKeys {
		if key == k {
			return true
		}
	}
	return false
}

// validateConnectionQuotas checks KafkaConfig's rules on the connection
// limits and the listener-prefixed limits.
func (c *Config) validateConnectionQuotas(add func(key, format string, args ...any)) {
	if c.MaxConnectionsPerIP == 0 && strings.TrimSpace(c.MaxConnectionsPerIPOverrides) == "" {
		add("max.connections.per.ip", "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.")
	}
	for name, v := range c.listenerProps {
		rest, ok := strings.CutPrefix(name, listenerPrefix)
		if !ok {
			continue
		}
		_, key, _ := strings.Cut(rest, ".")
		if !isListenerConnectionQuotaKey(key) {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			add(name, "Invalid value %s for configuration %s: Not a number of type INT", v, key)
			continue
		}
		if n < 0 {
			add(name, "Invalid value %d for configuration %s: Value must be at least 0", n, key)
		}
	}
}

// ValidateDynamicChange applies the rules Kafka checks against the
// current value when a dynamic broker config changes: DynamicThreadPool's
// and LogCleaner's (log.cleaner.threads within half and double).
func ValidateDynamicChange(old, new *Config) error {
	if err := ValidateThreadPoolChange(old, new); err != nil {
		return err
	}
	// ListenerConnectionQuota.validateReconfiguration.
	for name, v := range new.listenerProps {
		rest, ok := strings.CutPrefix(name, listenerPrefix)
		if !ok || old.listenerProps[name] == v {
			continue
		}
		_, key, _ := strings.Cut(rest, ".")
		if !isListenerConnectionQuotaKey(key) {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32); err == nil && n <= 0 {
			return fmt.Errorf("Invalid %s %d", key, n)
		}
	}
	if n, o := new.LogCleanerThreads, old.LogCleanerThreads; n != o {
		switch {
		case n < 1:
			return fmt.Errorf("Log cleaner threads should be at least 1")
		case n < o/2:
			return fmt.Errorf("Log cleaner threads cannot be reduced to less than half the current value %d", o)
		case n > o*2:
			return fmt.Errorf("Log cleaner threads cannot be increased to more than double the current value %d", o)
		}
	}
	return nil
}

// ThreadPoolKeys are Kafka's DynamicThreadPool.ReconfigurableConfigs.
var ThreadPoolKeys = []string{"num.io.threads", "num.network.threads", "num.replica.fetchers",
	"num.recovery.threads.per.data.dir", "background.threads"}

// ValidateThreadPoolChange applies DynamicThreadPool's rule to a dynamic
// update from old to new: a changed thread count must be at least 1, at
// least half and at most double the current value. The error text is
// Kafka's.
func ValidateThreadPoolChange(old, new *Config) error {
	for _, k := range ThreadPoolKeys {
		ov, _ := old.Value(k)
		nv, _ := new.Value(k)
		if ov == nv {
			continue
		}
		o, err1 := strconv.Atoi(ov)
		n, err2 := strconv.Atoi(nv)
		if err1 != nil || err2 != nil {
			continue
		}
		msg := fmt.Sprintf("Dynamic thread count update validation failed for %s=%s", k, nv)
		switch {
		case n <= 0:
			return fmt.Errorf("%s, value should be at least 1", msg)
		case n < o/2:
			return fmt.Errorf("%s, value should be at least half the current value %d", msg, o)
		case n > o*2:
			return fmt.Errorf("%s, value should not be greater than double the current value %d", msg, o)
		}
	}
	return nil
}
