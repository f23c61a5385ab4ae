package config

import (
	"fmt"
	"strings"

	"github.com/klassik/klassik/broker/security"
)

// TLS keys. The broker-wide ssl.* keys are Config fields (keys.go, group
// groupSSL); Kafka lets each listener override them with
// listener.name.<listener in lower case>.ssl.<key>, which are kept as
// given in listenerProps and checked here. SSLProperties hands both to
// broker/security, which resolves a listener's view as Kafka's
// valuesWithPrefixOverride does.

// sslCheck validates one ssl.* value with broker/security's parser, so the
// config file and a tool's client properties are read by the same rules.
func sslCheck(key string) func(any) string {
	return func(v any) string {
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case []string:
			s = strings.Join(x, ",")
		}
		_, err := security.ParseSSLSettings(map[string]string{key: s}, "")
		if err == nil {
			return ""
		}
		return strings.TrimPrefix(err.Error(), key+": ")
	}
}

const listenerPrefix = "listener.name."

// takeListenerKey records a listener.name.<listener>.<key> entry. handled
// is true for the listener's ssl.* keys, which are checked here (msg says
// what is wrong, "" when fine); other listener keys are left to the
// caller.
func (c *Config) takeListenerKey(name, value string) (handled bool, msg string) {
	rest, ok := strings.CutPrefix(name, listenerPrefix)
	if !ok {
		return false, ""
	}
	listener, key, ok := strings.Cut(rest, ".")
	if !ok || listener == "" || key == "" {
		return false, ""
	}
	if c.listenerProps == nil {
		c.listenerProps = map[string]string{}
	}
	c.listenerProps[name] = value
	if !strings.HasPrefix(key, "ssl.") {
		return false, ""
	}
	k := lookupBrokerKey(key)
	if k == nil || k.Group != groupSSL {
		return true, fmt.Sprintf("unknown configuration: %s is not a Kafka SSL config", key)
	}
	if listener != strings.ToLower(listener) {
		return true, fmt.Sprintf("Kafka reads listener overrides with the listener name in lower case (%s%s.%s)", listenerPrefix, strings.ToLower(listener), key)
	}
	probe := *c
	if err := k.set(&probe, value); err != nil {
		return true, err.Error()
	}
	return true, ""
}

// SSLProperties returns the TLS keys as Kafka properties: every ssl.* key
// with a value, plus the listener.name.<listener>.* overrides. Pass it to
// security.ServerTLSConfig / ClientTLSConfig with a listener name.
func (c *Config) SSLProperties() map[string]string {
	out := map[string]string{}
	for i := range brokerKeys {
		k := &brokerKeys[i]
		if k.Group != groupSSL {
			continue
		}
		v := k.get(c)
		if v == "" && k.Nullable {
			continue
		}
		out[k.Name] = v
	}
	for name, v := range c.listenerProps {
		out[name] = v
	}
	return out
}

// ListenerProperties returns every listener.name.<listener>.<key> given for
// one listener, keyed by <key> (the listener name is matched in lower
// case, as Kafka builds the prefix).
func (c *Config) ListenerProperties(listener string) map[string]string {
	prefix := listenerPrefix + strings.ToLower(listener) + "."
	out := map[string]string{}
	for name, v := range c.listenerProps {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			out[rest] = v
		}
	}
	return out
}

// validateSSL checks that every SSL and SASL_SSL listener has a key store
// and that its resolved TLS settings parse.
func (c *Config) validateSSL(add func(key, format string, args ...any)) {
	props := c.SSLProperties()
	for _, e := range c.ListenerEndpoints() {
		if e.SecurityProtocol != "SSL" && e.SecurityProtocol != "SASL_SSL" {
			continue
		}
		s, err := security.ParseSSLSettings(security.ListenerProperties(props, e.ListenerName), "")
		if err != nil {
			// The keys' own checks name the key; this adds the
			// listener for a bad override combination.
			add("listeners", "listener %s: %v", e.ListenerName, err)
			continue
		}
		if !s.KeyStore.Configured() {
			add("ssl.keystore.location", "listener %s (%s) needs a key store: set ssl.keystore.location (or %s%s.ssl.keystore.location), or ssl.keystore.key and ssl.keystore.certificate.chain with ssl.keystore.type=PEM",
				e.ListenerName, e.SecurityProtocol, listenerPrefix, strings.ToLower(e.ListenerName))
		}
	}
}
