package security

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Kafka's SSL keys (SslConfigs and BrokerSecurityConfigs, 2.8), without a
// prefix. A tool's client properties use them as they are; a broker reads
// them with listener.name.<listener>. overrides (ListenerProperties); the
// ZooKeeper client reads the zookeeper.-prefixed family.
const (
	KeySSLProtocol                   = "ssl.protocol"
	KeySSLEnabledProtocols           = "ssl.enabled.protocols"
	KeySSLCipherSuites               = "ssl.cipher.suites"
	KeySSLKeystoreType               = "ssl.keystore.type"
	KeySSLKeystoreLocation           = "ssl.keystore.location"
	KeySSLKeystorePassword           = "ssl.keystore.password"
	KeySSLKeyPassword                = "ssl.key.password"
	KeySSLKeystoreKey                = "ssl.keystore.key"
	KeySSLKeystoreCertificateChain   = "ssl.keystore.certificate.chain"
	KeySSLTruststoreType             = "ssl.truststore.type"
	KeySSLTruststoreLocation         = "ssl.truststore.location"
	KeySSLTruststorePassword         = "ssl.truststore.password"
	KeySSLTruststoreCertificates     = "ssl.truststore.certificates"
	KeySSLClientAuth                 = "ssl.client.auth"
	KeySSLEndpointIdentification     = "ssl.endpoint.identification.algorithm"
	KeySSLPrincipalMappingRules      = "ssl.principal.mapping.rules"
	KeySSLKeymanagerAlgorithm        = "ssl.keymanager.algorithm"
	KeySSLTrustmanagerAlgorithm      = "ssl.trustmanager.algorithm"
	KeySSLProvider                   = "ssl.provider"
	KeySSLEngineFactoryClass         = "ssl.engine.factory.class"
	KeySSLSecureRandomImplementation = "ssl.secure.random.implementation"
	KeySecurityProviders             = "security.providers"
)

// Kafka's defaults for the keys that have one.
const (
	DefaultSSLProtocol               = "TLSv1.3"
	DefaultSSLEnabledProtocols       = "TLSv1.2,TLSv1.3"
	DefaultSSLEndpointIdentification = "https"
	DefaultSSLClientAuth             = "none"
	DefaultSSLKeymanagerAlgorithm    = "SunX509"
	DefaultSSLTrustmanagerAlgorithm  = "PKIX"
)

// UnsupportedSSLKeys are the SSL keys whose only accepted value is Kafka's
// default (the value shown; "" means unset): they name Java providers,
// engine factories and algorithms that have no Go counterpart. Setting one
// to anything else is a start-up error naming the key.
var UnsupportedSSLKeys = map[string]string{
	KeySSLKeymanagerAlgorithm:        DefaultSSLKeymanagerAlgorithm,
	KeySSLTrustmanagerAlgorithm:      DefaultSSLTrustmanagerAlgorithm,
	KeySSLProvider:                   "",
	KeySSLEngineFactoryClass:         "",
	KeySSLSecureRandomImplementation: "",
	KeySecurityProviders:             "",
}

// SSLSettings are the SSL keys of one endpoint (a listener or a client),
// parsed. Build them with ParseSSLSettings.
type SSLSettings struct {
	KeyStore     KeyStoreSpec
	TrustStore   TrustStoreSpec
	Protocol     string
	MinVersion   uint16
	MaxVersion   uint16
	CipherSuites []uint16 // nil: Go's defaults
	// ClientAuth is ssl.client.auth: none, requested or required.
	ClientAuth string
	// EndpointIdentification is ssl.endpoint.identification.algorithm:
	// "https" verifies the server's host name, "" does not.
	EndpointIdentification string
	PrincipalMappingRules  string
}

// ParseSSLSettings reads the SSL keys from props, each looked up as
// prefix+key (prefix "" for a client's properties, "zookeeper." for
// zookeeper.ssl.*). Absent keys take Kafka's defaults. Every problem is
// reported with the full key name.
func ParseSSLSettings(props map[string]string, prefix string) (SSLSettings, error) {
	get := func(k string) (string, bool) {
		v, ok := props[prefix+k]
		return strings.TrimSpace(v), ok
	}
	str := func(k, def string) string {
		if v, ok := get(k); ok {
			return v
		}
		return def
	}
	var errs []error
	s := SSLSettings{
		KeyStore: KeyStoreSpec{
			Type: str(KeySSLKeystoreType, StoreTypeJKS), Location: str(KeySSLKeystoreLocation, ""),
			Password: props[prefix+KeySSLKeystorePassword], KeyPassword: props[prefix+KeySSLKeyPassword],
			Key: props[prefix+KeySSLKeystoreKey], CertificateChain: props[prefix+KeySSLKeystoreCertificateChain],
		},
		TrustStore: TrustStoreSpec{
			Type: str(KeySSLTruststoreType, StoreTypeJKS), Location: str(KeySSLTruststoreLocation, ""),
			Password: props[prefix+KeySSLTruststorePassword], Certificates: props[prefix+KeySSLTruststoreCertificates],
		},
		Protocol:               str(KeySSLProtocol, DefaultSSLProtocol),
		ClientAuth:             strings.ToLower(str(KeySSLClientAuth, DefaultSSLClientAuth)),
		EndpointIdentification: str(KeySSLEndpointIdentification, DefaultSSLEndpointIdentification),
		PrincipalMappingRules:  str(KeySSLPrincipalMappingRules, DefaultSSLPrincipalMappingRules),
	}
	for _, t := range []struct{ key, v string }{{KeySSLKeystoreType, s.KeyStore.Type}, {KeySSLTruststoreType, s.TrustStore.Type}} {
		switch strings.ToUpper(t.v) {
		case StoreTypeJKS, StoreTypePKCS12, StoreTypePEM:
		default:
			errs = append(errs, fmt.Errorf("%s%s: store type %q is not supported (JKS, PKCS12 or PEM)", prefix, t.key, t.v))
		}
	}
	if _, ok := sslProtocols[s.Protocol]; !ok && s.Protocol != "TLS" && s.Protocol != "SSL" {
		errs = append(errs, fmt.Errorf("%s%s: %q is not a TLS protocol Klassik supports (TLSv1.3, TLSv1.2, TLSv1.1, TLSv1, TLS)", prefix, KeySSLProtocol, s.Protocol))
	}
	var err error
	s.MinVersion, s.MaxVersion, err = ParseEnabledProtocols(str(KeySSLEnabledProtocols, DefaultSSLEnabledProtocols))
	if err != nil {
		errs = append(errs, fmt.Errorf("%s%s: %w", prefix, KeySSLEnabledProtocols, err))
	}
	if v := str(KeySSLCipherSuites, ""); v != "" {
		var tls13 bool
		s.CipherSuites, tls13, err = ParseCipherSuites(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s%s: %w", prefix, KeySSLCipherSuites, err))
		} else if !tls13 && s.MaxVersion == tls.VersionTLS13 {
			// Java negotiates TLS 1.3 only with a TLS 1.3 suite enabled.
			s.MaxVersion = tls.VersionTLS12
		}
	}
	switch s.ClientAuth {
	case "none", "requested", "required":
	default:
		errs = append(errs, fmt.Errorf("%s%s: %q is not one of none, requested, required", prefix, KeySSLClientAuth, s.ClientAuth))
	}
	switch strings.ToLower(s.EndpointIdentification) {
	case "", "https":
		s.EndpointIdentification = strings.ToLower(s.EndpointIdentification)
	default:
		errs = append(errs, fmt.Errorf("%s%s: %q is not supported (https, or empty to disable host name verification)", prefix, KeySSLEndpointIdentification, s.EndpointIdentification))
	}
	if _, err := NewSslPrincipalMapper(s.PrincipalMappingRules); err != nil {
		errs = append(errs, fmt.Errorf("%s%s: %w", prefix, KeySSLPrincipalMappingRules, err))
	}
	keys := make([]string, 0, len(UnsupportedSSLKeys))
	for k := range UnsupportedSSLKeys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if msg := CheckUnsupportedSSLKey(k, props[prefix+k]); msg != "" {
			errs = append(errs, fmt.Errorf("%s%s: %s", prefix, k, msg))
		}
	}
	return s, errors.Join(errs...)
}

// CheckUnsupportedSSLKey returns why value is refused for one of
// UnsupportedSSLKeys ("" when it is Kafka's default or unset).
func CheckUnsupportedSSLKey(key, value string) string {
	def, ok := UnsupportedSSLKeys[key]
	value = strings.TrimSpace(value)
	if !ok || value == "" || value == def {
		return ""
	}
	if def == "" {
		return fmt.Sprintf("%q is not supported by Klassik (Java providers and engine factories cannot be loaded); remove the key", value)
	}
	return fmt.Sprintf("%q is not supported by Klassik; only Kafka's default %s is", value, def)
}

var sslProtocols = map[string]uint16{
	"TLSv1":   tls.VersionTLS10,
	"TLSv1.1": tls.VersionTLS11,
	"TLSv1.2": tls.VersionTLS12,
	"TLSv1.3": tls.VersionTLS13,
}

// ParseEnabledProtocols maps ssl.enabled.protocols (Java's names) to a
// version range; Go enables a contiguous range, so a list with a gap is
// refused.
func ParseEnabledProtocols(list string) (min, max uint16, err error) {
	var got []uint16
	for _, p := range splitList(list) {
		v, ok := sslProtocols[p]
		if !ok {
			return 0, 0, fmt.Errorf("protocol %q is not supported (TLSv1.3, TLSv1.2, TLSv1.1, TLSv1)", p)
		}
		got = append(got, v)
	}
	if len(got) == 0 {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	slices.Sort(got)
	got = slices.Compact(got)
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			return 0, 0, fmt.Errorf("%q leaves a gap between versions; Go enables a contiguous range", list)
		}
	}
	return got[0], got[len(got)-1], nil
}

// ParseCipherSuites maps ssl.cipher.suites (Java's JSSE names, which are
// the IANA names; the old SSL_ prefix is read as TLS_) to Go's suite ids.
// A suite Go does not implement is an error naming it. TLS 1.3 suites are
// not configurable in Go: naming any of them keeps TLS 1.3 on (tls13
// reports whether one was named).
func ParseCipherSuites(list string) (ids []uint16, tls13 bool, err error) {
	byName := map[string]*tls.CipherSuite{}
	for _, cs := range tls.CipherSuites() {
		byName[cs.Name] = cs
	}
	for _, cs := range tls.InsecureCipherSuites() {
		byName[cs.Name] = cs
	}
	var missing []string
	for _, name := range splitList(list) {
		n := name
		if strings.HasPrefix(n, "SSL_") {
			n = "TLS_" + n[4:]
		}
		cs, ok := byName[n]
		if !ok {
			missing = append(missing, name)
			continue
		}
		if slices.Contains(cs.SupportedVersions, tls.VersionTLS13) {
			tls13 = true
			continue
		}
		ids = append(ids, cs.ID)
	}
	if len(missing) > 0 {
		return nil, false, fmt.Errorf("cipher suite %s is not supported by Go's crypto/tls", strings.Join(missing, ", "))
	}
	if len(ids) == 0 && !tls13 {
		return nil, false, errors.New("no cipher suite named")
	}
	return ids, tls13, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (s SSLSettings) base() *tls.Config {
	return &tls.Config{MinVersion: s.MinVersion, MaxVersion: s.MaxVersion, CipherSuites: s.CipherSuites}
}

// ServerTLSConfig builds the *tls.Config of an SSL or SASL_SSL listener.
// It needs a key store; the trust store (system roots when unset) checks
// client certificates as ssl.client.auth asks.
func (s SSLSettings) ServerTLSConfig() (*tls.Config, error) {
	cert, ok, err := LoadKeyStore(s.KeyStore)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("a TLS listener needs a key store: set ssl.keystore.location (or ssl.keystore.key and ssl.keystore.certificate.chain)")
	}
	pool, _, err := LoadTrustStore(s.TrustStore)
	if err != nil {
		return nil, err
	}
	c := s.base()
	c.Certificates = []tls.Certificate{cert}
	c.ClientCAs = pool
	switch s.ClientAuth {
	case "required":
		c.ClientAuth = tls.RequireAndVerifyClientCert
	case "requested":
		c.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		c.ClientAuth = tls.NoClientCert
	}
	return c, nil
}

// ClientTLSConfig builds the *tls.Config of a client: the trust store
// verifies the server (system roots when unset), the key store, when set,
// is the client certificate, and ssl.endpoint.identification.algorithm=""
// turns the host name check off (the chain is still verified).
func (s SSLSettings) ClientTLSConfig() (*tls.Config, error) {
	pool, _, err := LoadTrustStore(s.TrustStore)
	if err != nil {
		return nil, err
	}
	c := s.base()
	c.RootCAs = pool
	cert, ok, err := LoadKeyStore(s.KeyStore)
	if err != nil {
		return nil, err
	}
	if ok {
		c.Certificates = []tls.Certificate{cert}
	}
	if s.EndpointIdentification == "" {
		c.InsecureSkipVerify = true // replaced by the chain check below
		c.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			return verifyChainOnly(raw, pool)
		}
	}
	return c, nil
}

// verifyChainOnly verifies a server chain against roots without a host
// name, as Java does with endpoint identification off.
func verifyChainOnly(raw [][]byte, roots *x509.CertPool) error {
	if len(raw) == 0 {
		return errors.New("tls: server sent no certificate")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, der := range raw {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return fmt.Errorf("tls: server certificate %d: %w", i, err)
		}
		certs[i] = c
	}
	opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	_, err := certs[0].Verify(opts)
	return err
}

// PrincipalMapper returns the mapper of ssl.principal.mapping.rules.
func (s SSLSettings) PrincipalMapper() (*SslPrincipalMapper, error) {
	return NewSslPrincipalMapper(s.PrincipalMappingRules)
}

// ListenerProperties resolves the properties a listener sees, as Kafka's
// valuesWithPrefixOverride does: every listener.name.<listener in lower
// case>.<key> replaces <key>.
func ListenerProperties(props map[string]string, listener string) map[string]string {
	prefix := "listener.name." + strings.ToLower(listener) + "."
	out := make(map[string]string, len(props))
	for k, v := range props {
		out[k] = v
	}
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" {
			out[rest] = v
		}
	}
	return out
}

// ServerTLSConfig builds an SSL listener's TLS configuration and principal
// mapper from broker properties (ssl.* with the listener's
// listener.name.<listener>.ssl.* overrides).
func ServerTLSConfig(props map[string]string, listener string) (*tls.Config, *SslPrincipalMapper, error) {
	return ServerTLSConfigFor(props, listener, "SSL")
}

// ServerTLSConfigFor is ServerTLSConfig for a listener of securityProtocol
// (SSL or SASL_SSL). On SASL_SSL, as in Kafka 2.8 (KIP-684), the clients
// authenticate with SASL and ssl.client.auth applies only when it is set
// with the listener prefix; the broker-wide value is ignored there.
func ServerTLSConfigFor(props map[string]string, listener, securityProtocol string) (*tls.Config, *SslPrincipalMapper, error) {
	lp := ListenerProperties(props, listener)
	if securityProtocol == "SASL_SSL" {
		if _, ok := props["listener.name."+strings.ToLower(listener)+"."+KeySSLClientAuth]; !ok {
			lp[KeySSLClientAuth] = "none"
		}
	}
	s, err := ParseSSLSettings(lp, "")
	if err != nil {
		return nil, nil, fmt.Errorf("listener %s: %w", listener, err)
	}
	c, err := s.ServerTLSConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("listener %s: %w", listener, err)
	}
	m, err := s.PrincipalMapper()
	if err != nil {
		return nil, nil, fmt.Errorf("listener %s: %w", listener, err)
	}
	return c, m, nil
}

// ClientTLSConfig builds a client's TLS configuration from properties
// read with prefix (see ParseSSLSettings).
func ClientTLSConfig(props map[string]string, prefix string) (*tls.Config, error) {
	s, err := ParseSSLSettings(props, prefix)
	if err != nil {
		return nil, err
	}
	return s.ClientTLSConfig()
}
