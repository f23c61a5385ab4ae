package security

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// ListenerSASL is the SASL setup of one SASL_PLAINTEXT or SASL_SSL
// listener: its enabled mechanisms in configuration order, the PLAIN users
// of its JAAS context (when PLAIN is enabled) and the KIP-368 session
// lifetime of each mechanism (connections.max.reauth.ms; 0 = unlimited).
type ListenerSASL struct {
	Listener   string
	Mechanisms []string
	PlainUsers map[string]string
	MaxReauth  map[string]time.Duration
}

// Authenticators starts the SASL server exchanges of every SASL listener
// (Kafka's SaslChannelBuilder per listener with its callback handlers).
// Read-only after construction, so safe for concurrent use.
type Authenticators struct {
	listeners map[string]ListenerSASL
	cache     *CredentialCache
}

// NewAuthenticators serves ls, reading SCRAM credentials from cache.
func NewAuthenticators(ls []ListenerSASL, cache *CredentialCache) *Authenticators {
	a := &Authenticators{listeners: map[string]ListenerSASL{}, cache: cache}
	for _, l := range ls {
		a.listeners[l.Listener] = l
	}
	return a
}

// Mechanisms lists listener's enabled mechanisms (nil for a listener
// without SASL).
func (a *Authenticators) Mechanisms(listener string) []string {
	return slices.Clone(a.listeners[listener].Mechanisms)
}

// NewServer starts an exchange of mechanism on listener; the mechanism
// must be enabled there.
func (a *Authenticators) NewServer(listener, mechanism string) (SaslServer, error) {
	l, ok := a.listeners[listener]
	if !ok || !slices.Contains(l.Mechanisms, mechanism) {
		return nil, fmt.Errorf("security: mechanism %s is not enabled on listener %s", mechanism, listener)
	}
	switch mechanism {
	case MechanismPlain:
		return NewPlainServer(l.PlainUsers), nil
	case MechanismScramSHA256, MechanismScramSHA512:
		return NewScramServer(mechanism, a.cache)
	}
	return nil, fmt.Errorf("security: mechanism %s is not implemented", mechanism)
}

// MaxReauth is the session lifetime of mechanism on listener (0 =
// unlimited).
func (a *Authenticators) MaxReauth(listener, mechanism string) time.Duration {
	return a.listeners[listener].MaxReauth[mechanism]
}

// PlainUsers merges the PLAIN users of every listener (the first listener,
// by name, wins for a user defined twice).
func (a *Authenticators) PlainUsers() map[string]string {
	out := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(a.listeners)) {
		for u, p := range a.listeners[name].PlainUsers {
			if _, ok := out[u]; !ok {
				out[u] = p
			}
		}
	}
	return out
}
