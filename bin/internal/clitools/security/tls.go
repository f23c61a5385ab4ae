package security

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// tlsConfig builds the client's TLS configuration from the ssl.*
// properties, with Kafka's defaults: JKS stores, hostname verification
// (ssl.endpoint.identification.algorithm=https), TLSv1.2 and TLSv1.3.
// Without a truststore the system's roots are trusted, as the JVM's
// default truststore is.
func tlsConfig(props map[string]string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if err := tlsVersions(cfg, props); err != nil {
		return nil, err
	}
	if err := cipherSuites(cfg, props["ssl.cipher.suites"]); err != nil {
		return nil, err
	}
	roots, err := trustStore(props)
	if err != nil {
		return nil, err
	}
	cfg.RootCAs = roots
	cert, ok, err := keyStore(props)
	if err != nil {
		return nil, err
	}
	if ok {
		cfg.Certificates = []tls.Certificate{cert}
	}
	switch alg := strings.TrimSpace(props["ssl.endpoint.identification.algorithm"]); {
	case strings.EqualFold(alg, "https"):
	case alg == "" && hasKey(props, "ssl.endpoint.identification.algorithm"):
		// The chain is still verified, against the truststore, but not
		// the broker's host name.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = verifyChainOnly(roots)
	case alg == "":
	default:
		return nil, unsupported("ssl.endpoint.identification.algorithm", alg)
	}
	return cfg, nil
}

func hasKey(props map[string]string, k string) bool { _, ok := props[k]; return ok }

// verifyChainOnly verifies the peer's chain against roots (nil: the
// system's) without checking its names.
func verifyChainOnly(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: the broker sent no certificate")
		}
		opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(opts)
		return err
	}
}

var tlsVersionByName = map[string]uint16{
	"TLSv1": tls.VersionTLS10, "TLSv1.1": tls.VersionTLS11, "TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13,
}

// tlsVersions applies ssl.enabled.protocols (default TLSv1.2,TLSv1.3);
// ssl.protocol (TLSv1.3 by default) names the highest one the JVM's
// SSLContext offers, so "TLSv1.2" there caps the version.
func tlsVersions(cfg *tls.Config, props map[string]string) error {
	if v, ok := props["ssl.enabled.protocols"]; ok && strings.TrimSpace(v) != "" {
		var lo, hi uint16
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			ver, ok := tlsVersionByName[p]
			if !ok {
				return unsupported("ssl.enabled.protocols", v)
			}
			if lo == 0 || ver < lo {
				lo = ver
			}
			if ver > hi {
				hi = ver
			}
		}
		cfg.MinVersion, cfg.MaxVersion = lo, hi
	}
	switch p := strings.TrimSpace(props["ssl.protocol"]); p {
	case "", "TLS", "TLSv1.3":
	default:
		ver, ok := tlsVersionByName[p]
		if !ok {
			return unsupported("ssl.protocol", p)
		}
		if cfg.MaxVersion == 0 || ver < cfg.MaxVersion {
			cfg.MaxVersion = ver
		}
	}
	if cfg.MaxVersion != 0 && cfg.MaxVersion < cfg.MinVersion {
		return fmt.Errorf("ssl.protocol %s is below every protocol of ssl.enabled.protocols", props["ssl.protocol"])
	}
	return nil
}

// cipherSuites applies ssl.cipher.suites (IANA names, as the JVM spells
// them). TLS 1.3 suites are accepted and left to Go, which does not let
// them be chosen.
func cipherSuites(cfg *tls.Config, list string) error {
	if strings.TrimSpace(list) == "" {
		return nil
	}
	byName := map[string]uint16{}
	for _, cs := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		byName[cs.Name] = cs.ID
	}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		switch n {
		case "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256":
			continue
		}
		id, ok := byName[n]
		if !ok {
			return fmt.Errorf("ssl.cipher.suites: cipher suite %s is not supported", n)
		}
		cfg.CipherSuites = append(cfg.CipherSuites, id)
	}
	return nil
}

// storeType is ssl.<which>store.type upper-cased, JKS by default.
func storeType(props map[string]string, which string) string {
	t := strings.ToUpper(strings.TrimSpace(props["ssl."+which+".type"]))
	if t == "" {
		return "JKS"
	}
	return t
}

// trustStore loads the truststore: ssl.truststore.certificates (PEM
// inline) or ssl.truststore.location; nil when neither is set.
func trustStore(props map[string]string) (*x509.CertPool, error) {
	typ := storeType(props, "truststore")
	loc := strings.TrimSpace(props["ssl.truststore.location"])
	inline := strings.TrimSpace(props["ssl.truststore.certificates"])
	if inline != "" {
		if typ != "PEM" {
			return nil, fmt.Errorf("SSL trust store certificates can be specified only for PEM, but trust store type is %s.", typ)
		}
		if loc != "" {
			return nil, fmt.Errorf("Both SSL trust store location and separate trust certificates are specified.")
		}
		return pemPool([]byte(inline), "ssl.truststore.certificates")
	}
	if loc == "" {
		return nil, nil
	}
	certs, err := loadTrustStore(typ, loc, props["ssl.truststore.password"])
	if err != nil {
		return nil, fmt.Errorf("Failed to load SSL keystore %s of type %s: %w", loc, typ, err)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

func pemPool(data []byte, what string) (*x509.CertPool, error) {
	certs, err := pemCerts(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// keyStore loads the client's certificate and key: ssl.keystore.location
// or, for PEM, ssl.keystore.certificate.chain with ssl.keystore.key; ok is
// false when none is set.
func keyStore(props map[string]string) (cert tls.Certificate, ok bool, err error) {
	typ := storeType(props, "keystore")
	loc := strings.TrimSpace(props["ssl.keystore.location"])
	chain := strings.TrimSpace(props["ssl.keystore.certificate.chain"])
	key := strings.TrimSpace(props["ssl.keystore.key"])
	keyPass := props["ssl.key.password"]
	if chain != "" || key != "" {
		if typ != "PEM" {
			return cert, false, fmt.Errorf("SSL private key can be specified only for PEM, but key store type is %s.", typ)
		}
		if loc != "" {
			return cert, false, fmt.Errorf("Both SSL key store location and separate private key are specified.")
		}
		if chain == "" || key == "" {
			return cert, false, fmt.Errorf("SSL key store needs both ssl.keystore.certificate.chain and ssl.keystore.key")
		}
		cert, err = pemKeyPair([]byte(chain+"\n"+key), keyPass)
		return cert, err == nil, err
	}
	if loc == "" {
		return cert, false, nil
	}
	if cert, err = loadKeyStore(typ, loc, props["ssl.keystore.password"], keyPass); err != nil {
		return cert, false, fmt.Errorf("Failed to load SSL keystore %s of type %s: %w", loc, typ, err)
	}
	return cert, true, nil
}

// loadTrustStore reads every certificate of a truststore file.
func loadTrustStore(typ, path, password string) ([]*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "PEM":
		return pemCerts(data)
	}
	return nil, fmt.Errorf("keystore type %s is not supported", typ)
}

// loadKeyStore reads the one private key entry of a keystore file.
func loadKeyStore(typ, path, storePass, keyPass string) (tls.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return tls.Certificate{}, err
	}
	switch typ {
	case "PEM":
		return pemKeyPair(data, keyPass)
	}
	return tls.Certificate{}, fmt.Errorf("keystore type %s is not supported", typ)
}

func pemCerts(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return certs, nil
}

// pemKeyPair reads certificates and one private key from PEM data.
func pemKeyPair(data []byte, keyPass string) (tls.Certificate, error) {
	var certPEM, keyPEM []byte
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch {
		case b.Type == "CERTIFICATE":
			certPEM = append(certPEM, pem.EncodeToMemory(b)...)
		case b.Type == "ENCRYPTED PRIVATE KEY":
			return tls.Certificate{}, errors.New("encrypted PEM private keys are not supported yet")
		case strings.HasSuffix(b.Type, "PRIVATE KEY"):
			keyPEM = pem.EncodeToMemory(b)
		}
	}
	_ = keyPass
	return tls.X509KeyPair(certPEM, keyPEM)
}
