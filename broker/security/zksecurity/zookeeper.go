package zksecurity

import (
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// ZooKeeper client security, as Kafka's KafkaServer.initZkClient and its
// ZooKeeper tools decide it: a session is authenticated by a TLS client
// certificate (zookeeper.ssl.client.enable with a key store, KIP-515) or by
// the JAAS "Client" section (ZooKeeperLogin); zookeeper.set.acl then makes
// that identity the owner of every znode (zkclient/acl.go), and asking for
// secure ACLs without either is a start-up error with Kafka's message.

// ZooKeeperClientOptions returns the zkclient options of a broker's (or a
// tool's) ZooKeeper session: TLS from sec.TLS, digest credentials from
// login (nil: none) and secure ACLs when setACL is true.
func ZooKeeperClientOptions(sec config.ZooKeeperSecurityConfig, setACL bool, login *security.ZooKeeperLogin) ([]zkclient.Option, error) {
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
		if !sec.ZooKeeperTLSClientAuth() && login == nil {
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
	"and no JAAS " + security.ZooKeeperClientContext + " section with digest credentials was found (-D" + security.JavaLoginConfigPropertyZK + " in KAFKA_OPTS)"

// ZooKeeperTLSConfig builds the client TLS configuration of the
// zookeeper.ssl.* keys: the key store is the client certificate (its
// subject DN becomes the session's x509 identity), the trust store checks
// ZooKeeper's certificate (system roots when unset), the host name is
// checked unless zookeeper.ssl.endpoint.identification.algorithm is not
// HTTPS, and the protocols and cipher suites are the enabled ones.
func ZooKeeperTLSConfig(t *config.ZooKeeperTLSConfig) (*tls.Config, error) {
	c, err := zkLoadStores(t)
	if err != nil {
		return nil, err
	}
	for _, p := range t.EnabledProtocols {
		v, ok := zkTLSVersions[p]
		if !ok {
			return nil, fmt.Errorf("zookeeper.ssl.enabled.protocols: %q is not supported", p)
		}
		if c.MinVersion == 0 || v.min < c.MinVersion {
			c.MinVersion = v.min
		}
		if v.max > c.MaxVersion {
			c.MaxVersion = v.max
		}
	}
	for _, name := range t.CipherSuites {
		id, ok := config.CipherSuiteID(name)
		if !ok {
			return nil, fmt.Errorf("zookeeper.ssl.cipher.suites: %q is not supported", name)
		}
		c.CipherSuites = append(c.CipherSuites, id)
	}
	return c, nil
}

// zkTLSVersions maps Java's protocol names to Go's version range ("TLS"
// means any version the platform offers).
var zkTLSVersions = map[string]struct{ min, max uint16 }{
	"TLSv1":   {tls.VersionTLS10, tls.VersionTLS10},
	"TLSv1.1": {tls.VersionTLS11, tls.VersionTLS11},
	"TLSv1.2": {tls.VersionTLS12, tls.VersionTLS12},
	"TLSv1.3": {tls.VersionTLS13, tls.VersionTLS13},
	"TLS":     {tls.VersionTLS12, tls.VersionTLS13},
}
