package config

// SASL settings and the listener.name.<listener>.<key> family Kafka uses
// to override them per listener (and per mechanism:
// listener.name.<listener>.<mechanism>.sasl.jaas.config). Listener and
// mechanism are lower case in these names, as Kafka's ListenerName
// configPrefix writes them.

import (
	"slices"
	"strings"
)

// saslListenerPrefix starts every per-listener key.
const saslListenerPrefix = "listener.name."

// SASL mechanisms Klassik serves, in Kafka's spelling.
var supportedSaslMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// refusedSaslKeys are Kafka keys that plug Java classes into SASL; Klassik
// cannot load them, so setting one (also listener-prefixed) fails start-up
// instead of silently running without the plug-in.
var refusedSaslKeys = []string{
	"sasl.server.callback.handler.class",
	"sasl.login.callback.handler.class",
	"sasl.client.callback.handler.class",
	"sasl.login.class",
}

func (c *Config) setListenerProp(name, value string) {
	if c.listenerProps == nil {
		c.listenerProps = map[string]string{}
	}
	c.listenerProps[name] = strings.TrimSpace(value)
}

// implementedListenerKey reports whether a listener.name.* key is one
// Klassik acts on (so it is not reported as ignored).
func implementedListenerKey(name string) bool {
	rest := strings.TrimPrefix(name, saslListenerPrefix)
	_, key, ok := strings.Cut(rest, ".")
	if !ok {
		return false
	}
	if key == "sasl.enabled.mechanisms" || key == "connections.max.reauth.ms" {
		return true
	}
	if isListenerConnectionQuotaKey(key) { // connectionquotas.go
		return true
	}
	for _, m := range supportedSaslMechanisms {
		switch strings.TrimPrefix(key, strings.ToLower(m)+".") {
		case "sasl.jaas.config", "connections.max.reauth.ms":
			return strings.HasPrefix(key, strings.ToLower(m)+".")
		}
	}
	return false
}

// ListenerValue returns listener.name.<listener>.<key> (the listener name
// lower-cased, as Kafka spells the prefix).
func (c *Config) ListenerValue(listener, key string) (string, bool) {
	v, ok := c.listenerProps[saslListenerPrefix+strings.ToLower(listener)+"."+key]
	return v, ok
}

// SaslEnabledMechanismsFor is the listener's
// listener.name.<listener>.sasl.enabled.mechanisms, else
// sasl.enabled.mechanisms; the key it came from is returned for messages.
func (c *Config) SaslEnabledMechanismsFor(listener string) (mechanisms []string, key string) {
	if v, ok := c.ListenerValue(listener, "sasl.enabled.mechanisms"); ok {
		return SplitList(v), saslListenerPrefix + strings.ToLower(listener) + ".sasl.enabled.mechanisms"
	}
	return c.SaslEnabledMechanisms, "sasl.enabled.mechanisms"
}

// ConnectionsMaxReauthMsFor is connections.max.reauth.ms for a listener
// and mechanism: listener.name.<l>.<mechanism>.connections.max.reauth.ms,
// then listener.name.<l>.connections.max.reauth.ms, then the broker value
// (Kafka's SaslChannelBuilder order).
func (c *Config) ConnectionsMaxReauthMsFor(listener, mechanism string) int64 {
	for _, key := range []string{strings.ToLower(mechanism) + ".connections.max.reauth.ms", "connections.max.reauth.ms"} {
		if v, ok := c.ListenerValue(listener, key); ok {
			if n, err := parseInt(v, 64); err == nil {
				return n
			}
		}
	}
	return c.ConnectionsMaxReauthMs
}

// SaslListeners lists the listeners whose protocol is SASL_PLAINTEXT or
// SASL_SSL.
func (c *Config) SaslListeners() []Endpoint {
	var out []Endpoint
	for _, e := range c.ListenerEndpoints() {
		if e.SecurityProtocol == "SASL_PLAINTEXT" || e.SecurityProtocol == "SASL_SSL" {
			out = append(out, e)
		}
	}
	return out
}

// InterBrokerUsesSasl reports whether the inter-broker listener is a SASL
// one.
func (c *Config) InterBrokerUsesSasl() bool {
	ibl := c.EffectiveInterBrokerListenerName()
	for _, e := range c.SaslListeners() {
		if e.ListenerName == ibl {
			return true
		}
	}
	return false
}

// validateSASL checks the mechanisms of every SASL listener, the
// inter-broker mechanism and the refused plug-in keys.
func (c *Config) validateSASL(add func(key, format string, args ...any)) {
	if int64(c.ConnectionFailedAuthDelayMs) >= c.ConnectionsMaxIdleMs {
		add("connection.failed.authentication.delay.ms", "%d should always be less than connections.max.idle.ms=%d to prevent failed authentication responses from timing out",
			c.ConnectionFailedAuthDelayMs, c.ConnectionsMaxIdleMs)
	}
	for _, name := range c.ignored {
		key := name
		if rest, ok := strings.CutPrefix(name, saslListenerPrefix); ok {
			if _, k, ok := strings.Cut(rest, "."); ok {
				key = k
				// listener.name.<l>.<mechanism>.<key>
				if i := strings.Index(k, ".sasl."); i >= 0 && !strings.HasPrefix(k, "sasl.") {
					key = k[i+1:]
				}
			}
		}
		if slices.Contains(refusedSaslKeys, key) {
			add(name, "custom SASL classes cannot be loaded by Klassik; remove the setting (Klassik implements PLAIN and SCRAM with Kafka's built-in callback handlers and logins)")
		}
	}
	for k, v := range c.listenerProps {
		if rest, _ := strings.CutPrefix(k, saslListenerPrefix); strings.Count(rest, ".") == 3 && strings.HasSuffix(rest, ".sasl.jaas.config") {
			add(k, "a broker's JAAS configuration must name the SASL mechanism: use %s<mechanism>.sasl.jaas.config (e.g. %s)",
				strings.TrimSuffix(k, "sasl.jaas.config"), strings.TrimSuffix(k, "sasl.jaas.config")+"plain.sasl.jaas.config")
		}
		if strings.HasSuffix(k, ".sasl.enabled.mechanisms") {
			for _, m := range SplitList(v) {
				if !slices.Contains(supportedSaslMechanisms, m) {
					add(k, "%s: SASL mechanism %s is not supported by Klassik (supported: %s)", v, m, strings.Join(supportedSaslMechanisms, ", "))
				}
			}
		}
	}
	for _, e := range c.SaslListeners() {
		mechs, key := c.SaslEnabledMechanismsFor(e.ListenerName)
		if len(mechs) == 0 {
			add(key, "no SASL mechanism is enabled for listener %s (%s)", e.ListenerName, e.SecurityProtocol)
		}
		if key != "sasl.enabled.mechanisms" {
			continue // checked above
		}
		for _, m := range mechs {
			if slices.Contains(supportedSaslMechanisms, m) {
				continue
			}
			why := "is not supported by Klassik"
			if m == "GSSAPI" {
				why = "(Kerberos, Kafka's default) is not supported by Klassik"
			}
			add(key, "%s: SASL mechanism %s %s, but listener %s is %s; set sasl.enabled.mechanisms to some of %s",
				strings.Join(mechs, ","), m, why, e.ListenerName, e.SecurityProtocol, strings.Join(supportedSaslMechanisms, ", "))
		}
	}
	if c.InterBrokerUsesSasl() {
		ibl := c.EffectiveInterBrokerListenerName()
		mechs, _ := c.SaslEnabledMechanismsFor(ibl)
		m := c.SaslMechanismInterBrokerProtocol
		switch {
		case !slices.Contains(supportedSaslMechanisms, m):
			add("sasl.mechanism.inter.broker.protocol", "%s is not supported by Klassik for the SASL inter-broker listener %s (supported: %s)", m, ibl, strings.Join(supportedSaslMechanisms, ", "))
		case !slices.Contains(mechs, m):
			add("sasl.mechanism.inter.broker.protocol", "must be included in sasl.enabled.mechanisms when SASL is used for inter-broker communication")
		}
	}
}
