package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/klassik/klassik/broker/security"
)

// ZooKeeper security keys of Kafka 2.8 (KIP-515 TLS, zookeeper.set.acl).
// Kafka passes them on to ZooKeeper's Java client; Klassik's Go client
// honours the same meaning: the zookeeper.ssl.* keys configure crypto/tls
// (broker/security.ZooKeeperTLSConfig), and zookeeper.set.acl puts Kafka's
// ACLs on every node (zkpaths/zkclient/acl.go). Kafka also reads these
// settings from ZooKeeper's Java system properties
// (-Dzookeeper.ssl.keyStore.location, ...) when the key is absent; Klassik
// reads only the keys.

// Socket classes of zookeeper.clientCnxnSocket. Klassik's client behaves as
// the NIO class without TLS and as the Netty class with it.
const (
	ZkClientCnxnSocketNetty = "org.apache.zookeeper.ClientCnxnSocketNetty"
	ZkClientCnxnSocketNIO   = "org.apache.zookeeper.ClientCnxnSocketNIO"
)

// ZooKeeperTLSKeys are the keys a --zk-tls-config-file may set (Kafka's
// ZkSslConfigToSystemPropertyMap); a tool ignores every other key there.
var ZooKeeperTLSKeys = []string{
	"zookeeper.ssl.client.enable", "zookeeper.clientCnxnSocket",
	"zookeeper.ssl.keystore.location", "zookeeper.ssl.keystore.password", "zookeeper.ssl.keystore.type",
	"zookeeper.ssl.truststore.location", "zookeeper.ssl.truststore.password", "zookeeper.ssl.truststore.type",
	"zookeeper.ssl.protocol", "zookeeper.ssl.enabled.protocols", "zookeeper.ssl.cipher.suites",
	"zookeeper.ssl.endpoint.identification.algorithm", "zookeeper.ssl.crl.enable", "zookeeper.ssl.ocsp.enable",
}

// ZooKeeperSecurity returns the ZooKeeper security settings.
func (c *Config) ZooKeeperSecurity() security.ZooKeeperSecurity {
	s := security.ZooKeeperSecurity{SetACL: c.ZookeeperSetACL}
	if !c.ZookeeperSSLClientEnable {
		return s
	}
	t := &security.ZooKeeperTLS{
		KeystoreLocation: c.ZookeeperSSLKeystoreLocation, KeystorePassword: c.ZookeeperSSLKeystorePassword,
		KeystoreType:       zkStoreType(c.ZookeeperSSLKeystoreType, c.ZookeeperSSLKeystoreLocation),
		TruststoreLocation: c.ZookeeperSSLTruststoreLocation, TruststorePassword: c.ZookeeperSSLTruststorePassword,
		TruststoreType:   zkStoreType(c.ZookeeperSSLTruststoreType, c.ZookeeperSSLTruststoreLocation),
		EnabledProtocols: c.ZookeeperSSLEnabledProtocols, CipherSuites: c.ZookeeperSSLCipherSuites,
		VerifyHostname: strings.EqualFold(c.ZookeeperSSLEndpointIdentificationAlgorithm, "HTTPS"),
	}
	if len(t.EnabledProtocols) == 0 {
		t.EnabledProtocols = []string{c.ZookeeperSSLProtocol}
	}
	s.TLS = t
	return s
}

// ZooKeeperSecurityFromProperties reads the ZooKeeperTLSKeys of props (a
// tool's --zk-tls-config-file) with the broker's types, defaults and
// checks; other keys are ignored, as Kafka's tools do.
func ZooKeeperSecurityFromProperties(props map[string]string) (security.ZooKeeperSecurity, error) {
	c := Defaults()
	var ps []Problem
	for _, name := range ZooKeeperTLSKeys {
		v, ok := props[name]
		if !ok {
			continue
		}
		if err := lookupBrokerKey(name).set(c, v); err != nil {
			ps = append(ps, Problem{Key: name, Msg: err.Error()})
		}
	}
	c.validateZooKeeperSecurity(func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
	})
	if len(ps) > 0 {
		return security.ZooKeeperSecurity{}, &ValidationError{Problems: ps}
	}
	return c.ZooKeeperSecurity(), nil
}

// zkStoreType is ZooKeeper's KeyStoreFileType.fromPropertyValueOrFileName:
// the type given (any case), else from the file's extension; "" when
// neither tells (reported by validateZooKeeperSecurity).
func zkStoreType(typ, location string) string {
	if typ != "" {
		return strings.ToUpper(typ)
	}
	switch strings.ToLower(filepath.Ext(location)) {
	case ".jks":
		return "JKS"
	case ".p12", ".pfx":
		return "PKCS12"
	case ".pem":
		return "PEM"
	}
	return ""
}

var zkTLSProtocols = []string{"TLSv1.3", "TLSv1.2", "TLSv1.1", "TLSv1", "TLS"}

// validateZooKeeperSecurity reports the zookeeper.* security values
// Klassik cannot honour.
func (c *Config) validateZooKeeperSecurity(add func(key, format string, args ...any)) {
	if c.ZookeeperSSLCrlEnable {
		add("zookeeper.ssl.crl.enable", "certificate revocation lists are not implemented; set it to false")
	}
	if c.ZookeeperSSLOcspEnable {
		add("zookeeper.ssl.ocsp.enable", "OCSP is not implemented; set it to false")
	}
	switch sock := c.ZookeeperClientCnxnSocket; {
	case c.ZookeeperSSLClientEnable && sock != ZkClientCnxnSocketNetty:
		add("zookeeper.clientCnxnSocket", "%q: must be %s when zookeeper.ssl.client.enable is true (ZooKeeper's NIO socket has no TLS)", sock, ZkClientCnxnSocketNetty)
	case sock != "" && sock != ZkClientCnxnSocketNetty && sock != ZkClientCnxnSocketNIO:
		add("zookeeper.clientCnxnSocket", "%q: Klassik's ZooKeeper client stands in for %s and %s only", sock, ZkClientCnxnSocketNIO, ZkClientCnxnSocketNetty)
	}
	if !c.ZookeeperSSLClientEnable {
		return
	}
	for _, st := range []struct{ key, typ, loc string }{
		{"zookeeper.ssl.keystore.type", c.ZookeeperSSLKeystoreType, c.ZookeeperSSLKeystoreLocation},
		{"zookeeper.ssl.truststore.type", c.ZookeeperSSLTruststoreType, c.ZookeeperSSLTruststoreLocation},
	} {
		if st.loc == "" && st.typ == "" {
			continue
		}
		switch t := zkStoreType(st.typ, st.loc); t {
		case "JKS", "PKCS12", "PEM":
		case "":
			add(st.key, "unset and the file name %q does not end in .jks, .p12, .pfx or .pem", st.loc)
		default:
			add(st.key, "%q: must be JKS, PKCS12 or PEM", st.typ)
		}
	}
	if !slices.Contains(zkTLSProtocols, c.ZookeeperSSLProtocol) {
		add("zookeeper.ssl.protocol", "%q: must be one of %s", c.ZookeeperSSLProtocol, strings.Join(zkTLSProtocols, ", "))
	}
	if len(c.ZookeeperSSLEnabledProtocols) > 0 {
		if _, _, err := security.ParseEnabledProtocols(strings.Join(c.ZookeeperSSLEnabledProtocols, ",")); err != nil {
			add("zookeeper.ssl.enabled.protocols", "%v", err)
		}
	}
	if len(c.ZookeeperSSLCipherSuites) > 0 {
		if _, _, err := security.ParseCipherSuites(strings.Join(c.ZookeeperSSLCipherSuites, ",")); err != nil {
			add("zookeeper.ssl.cipher.suites", "%v", err)
		}
	}
}

// ZooKeeperSecurityWith is ZooKeeperSecurity with Kafka's fallback to
// ZooKeeper's client system properties (-Dzookeeper.client.secure=true,
// -Dzookeeper.ssl.keyStore.location=..., from KAFKA_OPTS): a key given in
// the configuration wins, else the system property, else the default.
func (c *Config) ZooKeeperSecurityWith(sys map[string]string) (security.ZooKeeperSecurity, error) {
	props := security.ZooKeeperTLSFromSystemProperties(sys)
	if len(props) == 0 {
		return c.ZooKeeperSecurity(), nil
	}
	for _, k := range ZooKeeperTLSKeys {
		if c.IsSet(k) {
			props[k], _ = c.Value(k)
		}
	}
	s, err := ZooKeeperSecurityFromProperties(props)
	if err != nil {
		return s, err
	}
	s.SetACL = c.ZookeeperSetACL
	return s, nil
}
