package security

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// Store types of ssl.keystore.type and ssl.truststore.type.
const (
	StoreTypeJKS    = "JKS"
	StoreTypePKCS12 = "PKCS12"
	StoreTypePEM    = "PEM"
)

// KeyStoreSpec is what Kafka's ssl.keystore.* keys say about a key store.
// Empty strings are Kafka's null.
type KeyStoreSpec struct {
	Type     string // ssl.keystore.type (JKS when empty)
	Location string // ssl.keystore.location
	Password string // ssl.keystore.password
	// KeyPassword is ssl.key.password: the private key's password in a
	// JKS store (the store password when empty) and the password of an
	// encrypted PKCS#8 key in PEM.
	KeyPassword string
	// Key and CertificateChain are ssl.keystore.key and
	// ssl.keystore.certificate.chain: PEM text given inline (KIP-651).
	Key              string
	CertificateChain string
}

// TrustStoreSpec is what Kafka's ssl.truststore.* keys say about a trust
// store. Empty strings are Kafka's null.
type TrustStoreSpec struct {
	Type         string // ssl.truststore.type (JKS when empty)
	Location     string // ssl.truststore.location
	Password     string // ssl.truststore.password
	Certificates string // ssl.truststore.certificates (inline PEM)
}

// Configured reports whether any key store key is set.
func (s KeyStoreSpec) Configured() bool {
	return s.Location != "" || s.Key != "" || s.CertificateChain != ""
}

// Configured reports whether any trust store key is set.
func (s TrustStoreSpec) Configured() bool {
	return s.Location != "" || s.Certificates != ""
}

func storeType(t string) string {
	if t == "" {
		return StoreTypeJKS
	}
	return strings.ToUpper(strings.TrimSpace(t))
}

// LoadKeyStore loads the private key and certificate chain a TLS endpoint
// presents, following the combinations Kafka's DefaultSslEngineFactory
// accepts: a JKS or PKCS12 file with its password, a PEM file with an
// encrypted key and ssl.key.password, or the PEM key and chain inline.
// ok is false when no key store is configured (a client that presents no
// certificate).
func LoadKeyStore(s KeyStoreSpec) (cert tls.Certificate, ok bool, err error) {
	typ := storeType(s.Type)
	switch {
	case s.Key != "":
		switch {
		case typ != StoreTypePEM:
			return cert, false, fmt.Errorf("ssl.keystore.key can be specified only for PEM, but ssl.keystore.type is %s", typ)
		case s.CertificateChain == "":
			return cert, false, errors.New("ssl.keystore.key is specified, but ssl.keystore.certificate.chain is not")
		case s.Location != "":
			return cert, false, errors.New("both ssl.keystore.location and ssl.keystore.key are specified")
		case s.Password != "":
			return cert, false, errors.New("ssl.keystore.password cannot be specified with PEM format, only ssl.key.password may be specified")
		}
		cert, err = pemKeyPair("ssl.keystore.key", []byte(s.CertificateChain), []byte(s.Key), s.KeyPassword)
		if err != nil {
			return cert, false, fmt.Errorf("invalid PEM key store configs: %w", err)
		}
		return cert, true, nil
	case s.CertificateChain != "":
		return cert, false, errors.New("ssl.keystore.certificate.chain is specified, but ssl.keystore.key is not")
	case s.Location == "" && s.Password != "":
		return cert, false, errors.New("ssl.keystore.password is specified, but ssl.keystore.location is not")
	case s.Location == "":
		return cert, false, nil
	}
	if typ == StoreTypePEM {
		if s.Password != "" {
			return cert, false, errors.New("ssl.keystore.password cannot be specified with PEM format, only ssl.key.password may be specified")
		}
		if s.KeyPassword == "" {
			return cert, false, fmt.Errorf("PEM key store %s is specified, but ssl.key.password is not", s.Location)
		}
	} else if s.Password == "" {
		return cert, false, fmt.Errorf("key store %s is specified, but ssl.keystore.password is not", s.Location)
	}
	data, err := os.ReadFile(s.Location)
	if err != nil {
		return cert, false, fmt.Errorf("failed to load SSL keystore %s of type %s: %w", s.Location, typ, err)
	}
	switch typ {
	case StoreTypePEM:
		cert, err = pemKeyPair(s.Location, data, data, s.KeyPassword)
	case StoreTypeJKS:
		cert, err = jksKeyPair(data, s.Password, s.KeyPassword)
	case StoreTypePKCS12:
		cert, err = pkcs12KeyPair(data, s.Password)
	default:
		return cert, false, fmt.Errorf("ssl.keystore.type %s is not supported (JKS, PKCS12 or PEM)", typ)
	}
	if err != nil {
		return cert, false, fmt.Errorf("failed to load SSL keystore %s of type %s: %w", s.Location, typ, err)
	}
	return cert, true, nil
}

// LoadTrustStore loads the certificates a TLS endpoint trusts. ok is false
// when no trust store is configured, which means the system roots (Java's
// default cacerts).
func LoadTrustStore(s TrustStoreSpec) (pool *x509.CertPool, ok bool, err error) {
	typ := storeType(s.Type)
	var certs []*x509.Certificate
	switch {
	case s.Certificates != "":
		switch {
		case typ != StoreTypePEM:
			return nil, false, fmt.Errorf("ssl.truststore.certificates can be specified only for PEM, but ssl.truststore.type is %s", typ)
		case s.Location != "":
			return nil, false, errors.New("both ssl.truststore.location and ssl.truststore.certificates are specified")
		case s.Password != "":
			return nil, false, errors.New("ssl.truststore.password cannot be specified for PEM format")
		}
		certs, err = pemCertificates([]byte(s.Certificates))
		if err != nil {
			return nil, false, fmt.Errorf("invalid ssl.truststore.certificates: %w", err)
		}
	case s.Location == "" && s.Password != "":
		return nil, false, errors.New("ssl.truststore.password is specified, but ssl.truststore.location is not")
	case s.Location == "":
		return nil, false, nil
	default:
		if typ == StoreTypePEM && s.Password != "" {
			return nil, false, errors.New("ssl.truststore.password cannot be specified for PEM format")
		}
		data, rerr := os.ReadFile(s.Location)
		if rerr != nil {
			return nil, false, fmt.Errorf("failed to load SSL truststore %s of type %s: %w", s.Location, typ, rerr)
		}
		switch typ {
		case StoreTypePEM:
			certs, err = pemCertificates(data)
		case StoreTypeJKS:
			certs, err = jksCertificates(data, s.Password)
		case StoreTypePKCS12:
			certs, err = pkcs12.DecodeTrustStore(data, s.Password)
		default:
			return nil, false, fmt.Errorf("ssl.truststore.type %s is not supported (JKS, PKCS12 or PEM)", typ)
		}
		if err != nil {
			return nil, false, fmt.Errorf("failed to load SSL truststore %s of type %s: %w", s.Location, typ, err)
		}
		if len(certs) == 0 {
			return nil, false, fmt.Errorf("SSL truststore %s holds no certificate", s.Location)
		}
	}
	pool = x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, true, nil
}

// jksMagic starts every JKS file. Java's JKS KeyStore also reads PKCS12
// files (keystore.type.compat), so a JKS-typed store without it is read as
// PKCS12, as keytool's default output since Java 9 is.
var jksMagic = []byte{0xfe, 0xed, 0xfe, 0xed}

func jksKeyPair(data []byte, password, keyPassword string) (tls.Certificate, error) {
	if !bytes.HasPrefix(data, jksMagic) {
		return pkcs12KeyPair(data, password)
	}
	ks := keystore.New(keystore.WithOrderedAliases())
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		return tls.Certificate{}, jksLoadError(err)
	}
	if keyPassword == "" {
		keyPassword = password
	}
	var found []string
	for _, alias := range ks.Aliases() {
		if ks.IsPrivateKeyEntry(alias) {
			found = append(found, alias)
		}
	}
	if len(found) == 0 {
		return tls.Certificate{}, errors.New("no private key entry in the key store")
	}
	// Java's SunX509 key manager picks a key per handshake; Klassik takes
	// the first alias in order and says so when there are more.
	entry, err := ks.GetPrivateKeyEntry(found[0], []byte(keyPassword))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("private key %q cannot be recovered (wrong ssl.key.password?): %w", found[0], err)
	}
	key, err := x509.ParsePKCS8PrivateKey(entry.PrivateKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("private key %q: %w", found[0], err)
	}
	var chain [][]byte
	for _, c := range entry.CertificateChain {
		chain = append(chain, c.Content)
	}
	return certificateFromParts(key, chain)
}

func jksCertificates(data []byte, password string) ([]*x509.Certificate, error) {
	if !bytes.HasPrefix(data, jksMagic) {
		return pkcs12.DecodeTrustStore(data, password)
	}
	ks := keystore.New(keystore.WithOrderedAliases())
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		// Without a password Java reads a trust store unchecked; the
		// reader has loaded the entries before it compares the digest.
		if password != "" || !strings.Contains(err.Error(), "invalid digest") {
			return nil, jksLoadError(err)
		}
	}
	var certs []*x509.Certificate
	for _, alias := range ks.Aliases() {
		var der []byte
		switch {
		case ks.IsTrustedCertificateEntry(alias):
			e, err := ks.GetTrustedCertificateEntry(alias)
			if err != nil {
				return nil, err
			}
			der = e.Certificate.Content
		case ks.IsPrivateKeyEntry(alias):
			// Java's trust manager also trusts the certificate of a key
			// entry.
			chain, err := ks.GetPrivateKeyEntryCertificateChain(alias)
			if err != nil || len(chain) == 0 {
				continue
			}
			der = chain[0].Content
		default:
			continue
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, fmt.Errorf("certificate %q: %w", alias, err)
		}
		certs = append(certs, c)
	}
	return certs, nil
}

func jksLoadError(err error) error {
	if strings.Contains(err.Error(), "invalid digest") {
		return errors.New("keystore was tampered with, or password was incorrect")
	}
	return err
}

func pkcs12KeyPair(data []byte, password string) (tls.Certificate, error) {
	key, leaf, rest, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		if errors.Is(err, pkcs12.ErrIncorrectPassword) {
			return tls.Certificate{}, errors.New("keystore password was incorrect")
		}
		return tls.Certificate{}, err
	}
	chain := [][]byte{leaf.Raw}
	for _, c := range rest {
		chain = append(chain, c.Raw)
	}
	return certificateFromParts(key, chain)
}

// certificateFromParts puts the certificate whose public key matches key
// first, as a TLS chain must begin with the leaf.
func certificateFromParts(key any, chain [][]byte) (tls.Certificate, error) {
	signer, ok := key.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, fmt.Errorf("unsupported private key type %T", key)
	}
	if len(chain) == 0 {
		return tls.Certificate{}, errors.New("the private key has no certificate")
	}
	leafAt := -1
	var leaf *x509.Certificate
	for i, der := range chain {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("certificate %d of the chain: %w", i, err)
		}
		if publicKeysEqual(c.PublicKey, signer.Public()) {
			leafAt, leaf = i, c
			break
		}
	}
	if leafAt < 0 {
		return tls.Certificate{}, errors.New("no certificate of the chain matches the private key")
	}
	ordered := [][]byte{chain[leafAt]}
	for i, der := range chain {
		if i != leafAt {
			ordered = append(ordered, der)
		}
	}
	return tls.Certificate{Certificate: ordered, PrivateKey: key, Leaf: leaf}, nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	switch k := a.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		return k.(equaler).Equal(b)
	}
	return false
}

// pemCertificates returns every CERTIFICATE block of data; at least one
// must be there.
func pemCertificates(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", len(certs)+1, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("at least one certificate expected, but none found")
	}
	return certs, nil
}

// pemKeyPair reads a PEM chain and a PKCS#8 private key: an ENCRYPTED
// PRIVATE KEY when keyPassword is set (Kafka requires the password for a
// PEM key store file), a plain PRIVATE KEY otherwise. Like Kafka, only
// PKCS#8 is read, not the older "RSA PRIVATE KEY" / "EC PRIVATE KEY" forms.
func pemKeyPair(what string, chainPEM, keyPEM []byte, keyPassword string) (tls.Certificate, error) {
	certs, err := pemCertificates(chainPEM)
	if err != nil {
		return tls.Certificate{}, err
	}
	var keys []*pem.Block
	var other []string
	for rest := keyPEM; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch b.Type {
		case "PRIVATE KEY", "ENCRYPTED PRIVATE KEY":
			keys = append(keys, b)
		case "CERTIFICATE":
		default:
			other = append(other, b.Type)
		}
	}
	switch {
	case len(keys) == 0 && len(other) > 0:
		return tls.Certificate{}, fmt.Errorf("%s: no PKCS#8 private key found (found %s; convert it with openssl pkcs8 -topk8)", what, strings.Join(other, ", "))
	case len(keys) == 0:
		return tls.Certificate{}, fmt.Errorf("%s: private key not provided", what)
	case len(keys) > 1:
		return tls.Certificate{}, fmt.Errorf("%s: expected one private key, but found %d", what, len(keys))
	}
	der := keys[0].Bytes
	if keyPassword != "" {
		if keys[0].Type != "ENCRYPTED PRIVATE KEY" {
			return tls.Certificate{}, fmt.Errorf("%s: ssl.key.password is set, but the private key is not encrypted", what)
		}
		der, err = decryptPKCS8(der, keyPassword)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("%s: %w", what, err)
		}
	} else if keys[0].Type == "ENCRYPTED PRIVATE KEY" {
		return tls.Certificate{}, fmt.Errorf("%s: the private key is encrypted, but ssl.key.password is not set", what)
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: private key could not be loaded: %w", what, err)
	}
	chain := make([][]byte, len(certs))
	for i, c := range certs {
		chain[i] = c.Raw
	}
	return certificateFromParts(key, chain)
}
