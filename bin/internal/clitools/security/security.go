package security

import (
	"crypto/tls"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	brokersecurity "github.com/klassik/klassik/broker/security"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Security protocols (Kafka's SecurityProtocol).
const (
	Plaintext     = "PLAINTEXT"
	SSL           = "SSL"
	SaslPlaintext = "SASL_PLAINTEXT"
	SaslSSL       = "SASL_SSL"
)

// SASL mechanisms the tools speak.
const (
	MechanismPlain       = "PLAIN"
	MechanismScramSHA256 = "SCRAM-SHA-256"
	MechanismScramSHA512 = "SCRAM-SHA-512"
)

// Settings are a client configuration's security settings.
type Settings struct {
	// Protocol is security.protocol, upper-cased (default PLAINTEXT).
	Protocol string
	// Mechanism is sasl.mechanism under SASL_*, "" otherwise.
	Mechanism string
	// Username and Password come from the login module under SASL_*.
	Username, Password string
	// TLS is the client's TLS configuration under SSL and SASL_SSL, nil
	// otherwise.
	TLS *tls.Config
}

// UsesSASL tells whether the protocol authenticates with SASL.
func (s *Settings) UsesSASL() bool { return s.Protocol == SaslPlaintext || s.Protocol == SaslSSL }

// UsesTLS tells whether the protocol runs over TLS.
func (s *Settings) UsesTLS() bool { return s.Protocol == SSL || s.Protocol == SaslSSL }

// Opts are the franz-go options of s: a TLS dialer and the SASL
// mechanism, none for PLAINTEXT.
func (s *Settings) Opts() []kgo.Opt {
	var opts []kgo.Opt
	if s.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(s.TLS))
	}
	if m := s.mechanism(); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts
}

func (s *Settings) mechanism() sasl.Mechanism {
	switch s.Mechanism {
	case MechanismPlain:
		return plain.Auth{User: s.Username, Pass: s.Password}.AsMechanism()
	case MechanismScramSHA256:
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha256Mechanism()
	case MechanismScramSHA512:
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha512Mechanism()
	}
	return nil
}

// Opts parses props (Parse) and returns the franz-go options.
func Opts(props map[string]string) ([]kgo.Opt, error) {
	s, err := Parse(props)
	if err != nil {
		return nil, err
	}
	return s.Opts(), nil
}

// RequirePlaintext refuses a security.protocol other than PLAINTEXT for a
// client that can only speak plain text (what names it, e.g. the old
// consumer of --zookeeper, which Kafka never secured).
func RequirePlaintext(props map[string]string, what string) error {
	p := strings.ToUpper(strings.TrimSpace(props["security.protocol"]))
	if p == "" || p == Plaintext {
		return nil
	}
	return fmt.Errorf("client property security.protocol=%s is not supported by %s, which connects over PLAINTEXT only", props["security.protocol"], what)
}

// Parse reads the security properties of a client configuration. Keys
// other than security.*, sasl.* and ssl.* are not looked at.
func Parse(props map[string]string) (*Settings, error) {
	s := &Settings{Protocol: Plaintext}
	if v, ok := props["security.protocol"]; ok {
		s.Protocol = strings.ToUpper(strings.TrimSpace(v))
	}
	switch s.Protocol {
	case Plaintext, SSL, SaslPlaintext, SaslSSL:
	default:
		return nil, fmt.Errorf("Invalid value %s for configuration security.protocol: String must be one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", props["security.protocol"])
	}
	if v := strings.TrimSpace(props["security.providers"]); v != "" {
		return nil, unsupported("security.providers", v)
	}
	if err := checkKeys(props, s); err != nil {
		return nil, err
	}
	if s.UsesSASL() {
		if err := s.parseSASL(props); err != nil {
			return nil, err
		}
	}
	if s.UsesTLS() {
		cfg, err := tlsConfig(props)
		if err != nil {
			return nil, err
		}
		s.TLS = cfg
	}
	return s, nil
}

func (s *Settings) parseSASL(props map[string]string) error {
	// Kafka's default mechanism is GSSAPI (Kerberos).
	s.Mechanism = "GSSAPI"
	if v, ok := props["sasl.mechanism"]; ok {
		s.Mechanism = strings.TrimSpace(v)
	}
	switch s.Mechanism {
	case MechanismPlain, MechanismScramSHA256, MechanismScramSHA512:
	default:
		return fmt.Errorf("sasl.mechanism %s is not supported by Klassik's tools (they speak PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512)", s.Mechanism)
	}
	login, err := clientLogin(props["sasl.jaas.config"])
	if err != nil {
		return err
	}
	s.Username, s.Password = login.username, login.password
	return nil
}

// saslKeys are the sasl.* keys the tools act on; the ssl.* keys are read
// by broker/security's ParseSSLSettings, which also refuses the Java-only
// ones (ssl.provider, ssl.engine.factory.class, a non-default key or
// trust manager algorithm).
var saslKeys = map[string]bool{"sasl.mechanism": true, "sasl.jaas.config": true}

// ignoredPrefixes are keys the tools may leave alone: they only tune what
// the tools do not do (Kerberos and OAuth logins and their re-login), or
// are a broker's (ssl.client.auth, ssl.principal.mapping.rules), which
// Kafka's clients ignore too.
var ignoredPrefixes = []string{"sasl.kerberos.", "sasl.login.refresh.", "sasl.oauthbearer.",
	"ssl.client.auth", "ssl.principal.mapping.rules"}

// checkKeys fails on the first (in key order) sasl.* or ssl.* property of a
// layer s uses that the tools cannot honour.
func checkKeys(props map[string]string, s *Settings) error {
	var keys []string
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.TrimSpace(props[k])
		switch {
		case v == "" || hasAnyPrefix(k, ignoredPrefixes):
			// unset, or nothing the tools do
		case strings.HasPrefix(k, "sasl.") && s.UsesSASL() && !saslKeys[k]:
			return unsupported(k, v)
		case strings.HasPrefix(k, "ssl.") && s.UsesTLS() && !isSSLKey(k):
			return unsupported(k, v)
		}
	}
	return nil
}

// isSSLKey tells whether broker/security's ParseSSLSettings reads k.
func isSSLKey(k string) bool {
	switch k {
	case brokersecurity.KeySSLProtocol, brokersecurity.KeySSLEnabledProtocols, brokersecurity.KeySSLCipherSuites,
		brokersecurity.KeySSLKeystoreType, brokersecurity.KeySSLKeystoreLocation, brokersecurity.KeySSLKeystorePassword,
		brokersecurity.KeySSLKeyPassword, brokersecurity.KeySSLKeystoreKey, brokersecurity.KeySSLKeystoreCertificateChain,
		brokersecurity.KeySSLTruststoreType, brokersecurity.KeySSLTruststoreLocation, brokersecurity.KeySSLTruststorePassword,
		brokersecurity.KeySSLTruststoreCertificates, brokersecurity.KeySSLEndpointIdentification:
		return true
	}
	_, checked := brokersecurity.UnsupportedSSLKeys[k]
	return checked
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func unsupported(key, value string) error {
	return fmt.Errorf("client property %s=%s is not supported by Klassik's tools", key, value)
}
