package security

import (
	"crypto/tls"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
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

// honoured are the sasl.* and ssl.* keys the tools act on.
var honoured = map[string]bool{
	"sasl.mechanism": true, "sasl.jaas.config": true,
	"ssl.protocol": true, "ssl.enabled.protocols": true, "ssl.cipher.suites": true,
	"ssl.endpoint.identification.algorithm": true,
	"ssl.truststore.location":               true, "ssl.truststore.password": true, "ssl.truststore.type": true,
	"ssl.truststore.certificates": true,
	"ssl.keystore.location":       true, "ssl.keystore.password": true, "ssl.keystore.type": true,
	"ssl.keystore.key": true, "ssl.keystore.certificate.chain": true, "ssl.key.password": true,
}

// harmless are keys the tools may ignore: they only tune what Klassik's
// tools do not do (Kerberos and OAuth logins, JVM key managers at their
// defaults, timeouts of a re-login).
var harmless = map[string]string{
	"ssl.keymanager.algorithm":   "SunX509",
	"ssl.trustmanager.algorithm": "PKIX",
}

var harmlessPrefixes = []string{"sasl.kerberos.", "sasl.login.refresh.", "sasl.oauthbearer."}

// checkKeys fails on the first (in key order) sasl.* or ssl.* property of a
// layer s uses that the tools cannot honour.
func checkKeys(props map[string]string, s *Settings) error {
	var keys []string
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		isSASL, isSSL := strings.HasPrefix(k, "sasl."), strings.HasPrefix(k, "ssl.")
		if !(isSASL && s.UsesSASL() || isSSL && s.UsesTLS()) || honoured[k] {
			continue
		}
		v := strings.TrimSpace(props[k])
		if def, ok := harmless[k]; ok && (v == "" || v == def) {
			continue
		}
		if hasAnyPrefix(k, harmlessPrefixes) {
			continue
		}
		if v == "" {
			continue // a Java class or setting left unset
		}
		return unsupported(k, v)
	}
	return nil
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
