package broker

// SASL wiring (Kafka's SaslChannelBuilder per listener, as KafkaServer
// creates them): the JAAS context of every SASL listener and enabled
// mechanism is resolved at start-up — a missing or unsupported one stops
// the broker — the PLAIN users come from it, SCRAM credentials from the
// CredentialCache, and the broker's own login for the inter-broker
// listener from its JAAS username/password.

import (
	"fmt"
	"time"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/security"
)

// WithSystemProperties passes the JVM system properties Kafka reads from
// KAFKA_OPTS (-Dname=value), e.g. java.security.auth.login.config, the
// JAAS file.
func WithSystemProperties(props map[string]string) Option {
	return func(o *options) { o.systemProperties = props }
}

// WithCredentialCache makes the broker use cache for SCRAM credentials
// (tests share one, pre-filled, between brokers; /config/users still
// fills it).
func WithCredentialCache(cache *security.CredentialCache) Option {
	return func(o *options) { o.credentials = cache }
}

// PasswordVerifier checks a user's PLAIN or SCRAM password (the HTTP
// listener's basic authentication).
func (b *Broker) PasswordVerifier() *security.PasswordVerifier { return b.passwords }

// setupSASL resolves the SASL configuration of every SASL listener and the
// inter-broker login, and builds the inter-broker dialer. It runs in New,
// so a bad JAAS configuration is a start-up error before anything starts.
func (b *Broker) setupSASL() error {
	cfg := b.cfg
	jaas := security.NewServerJaas(security.JaasSources{
		ListenerMechanism: func(listener, mechanism string) (string, bool) {
			return cfg.ListenerValue(listener, mechanism+".sasl.jaas.config")
		},
		Global: cfg.SaslJaasConfig,
		File:   b.opts.systemProperties[security.JavaLoginConfigProperty],
	})
	var ls []security.ListenerSASL
	for _, e := range cfg.SaslListeners() {
		mechs, _ := cfg.SaslEnabledMechanismsFor(e.ListenerName)
		l := security.ListenerSASL{Listener: e.ListenerName, Mechanisms: mechs, MaxReauth: map[string]time.Duration{}}
		for _, m := range mechs {
			jc, err := jaas.Context(e.ListenerName, m)
			if err != nil {
				return fmt.Errorf("broker: SASL listener %s, mechanism %s: %w", e.ListenerName, m, err)
			}
			if m == security.MechanismPlain {
				l.PlainUsers = jc.PlainUsers()
			}
			if ms := cfg.ConnectionsMaxReauthMsFor(e.ListenerName, m); ms > 0 {
				l.MaxReauth[m] = time.Duration(ms) * time.Millisecond
			}
		}
		ls = append(ls, l)
	}
	if b.opts.credentials != nil {
		b.credentials = b.opts.credentials
	}
	if b.credentials == nil {
		b.credentials = security.NewCredentialCache()
	}
	b.authenticators = security.NewAuthenticators(ls, b.credentials)
	b.passwords = security.NewPasswordVerifier(b.authenticators.PlainUsers(), b.credentials)

	var login *network.SASLClient
	if cfg.InterBrokerUsesSasl() {
		ibl, mech := cfg.EffectiveInterBrokerListenerName(), cfg.SaslMechanismInterBrokerProtocol
		jc, err := jaas.Context(ibl, mech)
		if err != nil {
			return fmt.Errorf("broker: inter-broker SASL login (listener %s, sasl.mechanism.inter.broker.protocol %s): %w", ibl, mech, err)
		}
		user, pass, err := jc.Login(mech)
		if err != nil {
			return fmt.Errorf("broker: inter-broker SASL login (listener %s): %w", ibl, err)
		}
		login = &network.SASLClient{Mechanism: mech, Username: user, Password: pass}
	}
	// The TLS configuration of an SSL/SASL_SSL inter-broker listener is
	// the TLS part's (b.interBrokerTLS); nil dials plain TCP.
	b.interBrokerDial = network.InterBrokerDialer(b.interBrokerTLS, login)
	return nil
}
