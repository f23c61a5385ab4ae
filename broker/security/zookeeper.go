package security

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/klassik/klassik/zkpaths/zkclient"
)

// ZooKeeper client security, as Kafka's KafkaServer.initZkClient and its
// ZooKeeper tools decide it: a session is authenticated by a TLS client
// certificate (zookeeper.ssl.client.enable with a key store, KIP-515) or by
// the JAAS "Client" section (ZooKeeperLogin); zookeeper.set.acl then makes
// that identity the owner of every znode (zkclient/acl.go), and asking for
// secure ACLs without either is a start-up error with Kafka's message.

// ZooKeeperSecurity are the zookeeper.set.acl and zookeeper.ssl.* settings
// (config.Config.ZooKeeperSecurity, or a tool's --zk-tls-config-file).
type ZooKeeperSecurity struct {
	SetACL bool          // zookeeper.set.acl
	TLS    *ZooKeeperTLS // nil unless zookeeper.ssl.client.enable=true
}

// ZooKeeperTLS are the zookeeper.ssl.* keys with ZooKeeper's fallbacks
// applied (store types from the file name, enabled protocols from
// zookeeper.ssl.protocol). As in ZooKeeper, a PEM key store's password is
// the password of its (then encrypted) private key.
type ZooKeeperTLS struct {
	KeystoreLocation, KeystorePassword, KeystoreType       string // type JKS, PKCS12 or PEM
	TruststoreLocation, TruststorePassword, TruststoreType string
	EnabledProtocols                                       []string // Java names (TLSv1.2, TLSv1.3, ...)
	CipherSuites                                           []string // IANA names; nil: Go's defaults
	VerifyHostname                                         bool     // zookeeper.ssl.endpoint.identification.algorithm=HTTPS
}

// TLSClientAuth is Kafka's zkTlsClientAuthEnabled: TLS on with a key store,
// so the session has an x509 identity (the socket class is checked by
// config's validation).
func (s ZooKeeperSecurity) TLSClientAuth() bool {
	return s.TLS != nil && s.TLS.KeystoreLocation != ""
}

// ZooKeeperClientOptions returns the zkclient options of a broker's (or a
// tool's) ZooKeeper session: TLS from sec.TLS, digest credentials from
// login (nil: none) and secure ACLs when setACL is true.
func ZooKeeperClientOptions(sec ZooKeeperSecurity, setACL bool, login *ZooKeeperLogin) ([]zkclient.Option, error) {
	var opts []zkclient.Option
	if sec.TLS != nil {
		cfg, err := ZooKeeperTLSConfig(sec.TLS)
		if err != nil {
			return nil, err
		}
		opts = append(opts, zkclient.WithTLS(cfg))
	}
	if login != nil {
		opts = append(opts, zkclient.WithDigestAuth(login.User, login.Password))
	}
	if setACL {
		if !sec.TLSClientAuth() && login == nil {
			return nil, errors.New(SecureACLsWithoutIdentity)
		}
		opts = append(opts, zkclient.WithSecureACLs(true))
	}
	return opts, nil
}

// SecureACLsWithoutIdentity is the start-up error of zookeeper.set.acl=true
// without a ZooKeeper identity (Kafka's SecurityException text, with the
// JAAS part naming what Klassik reads).
const SecureACLsWithoutIdentity = "zookeeper.set.acl is true, but ZooKeeper client TLS configuration identifying at least " +
	"zookeeper.ssl.client.enable, zookeeper.clientCnxnSocket, and zookeeper.ssl.keystore.location was not present " +
	"and no JAAS " + ZooKeeperClientContext + " section with digest credentials was found (-D" + JavaLoginConfigProperty + " in KAFKA_OPTS)"

// ZooKeeperTLSConfig builds the client TLS configuration of the
// zookeeper.ssl.* keys with the listeners' loaders (LoadKeyStore,
// LoadTrustStore): the key store is the client certificate (its subject DN
// becomes the session's x509 identity), the trust store checks ZooKeeper's
// certificate (system roots when unset), the host name is checked unless
// zookeeper.ssl.endpoint.identification.algorithm is not HTTPS, and the
// protocols and cipher suites are the enabled ones.
func ZooKeeperTLSConfig(t *ZooKeeperTLS) (*tls.Config, error) {
	s := SSLSettings{
		TrustStore:             TrustStoreSpec{Type: t.TruststoreType, Location: t.TruststoreLocation, Password: t.TruststorePassword},
		EndpointIdentification: DefaultSSLEndpointIdentification,
	}
	if !t.VerifyHostname {
		s.EndpointIdentification = ""
	}
	if strings.EqualFold(t.TruststoreType, StoreTypePEM) {
		s.TrustStore.Password = "" // ZooKeeper ignores it for PEM
	}
	switch {
	case t.KeystoreLocation == "":
	case strings.EqualFold(t.KeystoreType, StoreTypePEM) && t.KeystorePassword == "":
		// An unencrypted PEM key, which ZooKeeper accepts: handed over as
		// the inline form, which needs no key password.
		data, err := os.ReadFile(t.KeystoreLocation)
		if err != nil {
			return nil, fmt.Errorf("zookeeper.ssl.keystore.location: %w", err)
		}
		s.KeyStore = KeyStoreSpec{Type: StoreTypePEM, Key: string(data), CertificateChain: string(data)}
	case strings.EqualFold(t.KeystoreType, StoreTypePEM):
		s.KeyStore = KeyStoreSpec{Type: StoreTypePEM, Location: t.KeystoreLocation, KeyPassword: t.KeystorePassword}
	default:
		s.KeyStore = KeyStoreSpec{Type: t.KeystoreType, Location: t.KeystoreLocation, Password: t.KeystorePassword}
	}
	var err error
	if s.MinVersion, s.MaxVersion, err = ParseEnabledProtocols(strings.Join(t.EnabledProtocols, ",")); err != nil {
		return nil, fmt.Errorf("zookeeper.ssl.enabled.protocols: %w", err)
	}
	if len(t.CipherSuites) > 0 {
		if s.CipherSuites, _, err = ParseCipherSuites(strings.Join(t.CipherSuites, ",")); err != nil {
			return nil, fmt.Errorf("zookeeper.ssl.cipher.suites: %w", err)
		}
	}
	cfg, err := s.ClientTLSConfig()
	if err != nil {
		return nil, fmt.Errorf("zookeeper.ssl: %w", err)
	}
	return cfg, nil
}
