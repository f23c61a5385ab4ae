package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// The zookeeper.* security keys: Kafka's defaults, ZooKeeper's store-type
// inference, and an error naming the key for what Klassik cannot do.
func TestZooKeeperSecurityKeys(t *testing.T) {
	d := mustFromMap(t, base())
	if s := d.ZooKeeperSecurity(); s.SetACL || s.TLS != nil {
		t.Fatalf("defaults: %+v", s)
	}
	c := mustFromMap(t, with("zookeeper.set.acl", "true", "zookeeper.ssl.client.enable", "true",
		"zookeeper.clientCnxnSocket", ZkClientCnxnSocketNetty,
		"zookeeper.ssl.keystore.location", "/k/broker.p12", "zookeeper.ssl.keystore.password", "pw",
		"zookeeper.ssl.truststore.location", "/k/trust.jks", "zookeeper.ssl.endpoint.identification.algorithm", ""))
	s := c.ZooKeeperSecurity()
	if !s.SetACL || s.TLS == nil || !s.TLSClientAuth() {
		t.Fatalf("secure: %+v", s)
	}
	if s.TLS.KeystoreType != "PKCS12" || s.TLS.TruststoreType != "JKS" || s.TLS.VerifyHostname ||
		!slices.Equal(s.TLS.EnabledProtocols, []string{"TLSv1.2"}) {
		t.Errorf("TLS settings: %+v", *s.TLS)
	}

	bad := map[string][]string{
		"zookeeper.ssl.crl.enable":        {"zookeeper.ssl.crl.enable", "true"},
		"zookeeper.ssl.ocsp.enable":       {"zookeeper.ssl.ocsp.enable", "true"},
		"zookeeper.clientCnxnSocket":      {"zookeeper.ssl.client.enable", "true"},
		"zookeeper.ssl.keystore.type":     {"zookeeper.ssl.client.enable", "true", "zookeeper.clientCnxnSocket", ZkClientCnxnSocketNetty, "zookeeper.ssl.keystore.location", "/k/broker.keys"},
		"zookeeper.ssl.protocol":          {"zookeeper.ssl.client.enable", "true", "zookeeper.clientCnxnSocket", ZkClientCnxnSocketNetty, "zookeeper.ssl.protocol", "SSLv3"},
		"zookeeper.ssl.cipher.suites":     {"zookeeper.ssl.client.enable", "true", "zookeeper.clientCnxnSocket", ZkClientCnxnSocketNetty, "zookeeper.ssl.cipher.suites", "TLS_NOPE"},
		"zookeeper.ssl.enabled.protocols": {"zookeeper.ssl.client.enable", "true", "zookeeper.clientCnxnSocket", ZkClientCnxnSocketNetty, "zookeeper.ssl.enabled.protocols", "TLSv1.2,DTLS"},
	}
	for key, kv := range bad {
		_, err := FromMap(with(kv...))
		var ve *ValidationError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), key) {
			t.Errorf("%v: error %v, want one naming %s", kv, err, key)
		}
	}
	if _, err := FromMap(with("zookeeper.clientCnxnSocket", "com.example.Socket")); err == nil {
		t.Errorf("unknown socket class accepted")
	}

	// A tool's --zk-tls-config-file: only the TLS keys count.
	fs, err := ZooKeeperSecurityFromProperties(map[string]string{"zookeeper.ssl.client.enable": "true",
		"zookeeper.clientCnxnSocket": ZkClientCnxnSocketNetty, "zookeeper.ssl.keystore.location": "/k/a.pem", "zookeeper.set.acl": "true", "other": "x"})
	if err != nil || fs.SetACL || fs.TLS == nil || fs.TLS.KeystoreType != "PEM" || !fs.TLS.VerifyHostname {
		t.Errorf("from properties: %+v %v", fs, err)
	}
	if _, err := ZooKeeperSecurityFromProperties(map[string]string{"zookeeper.ssl.client.enable": "yes"}); err == nil {
		t.Errorf("bad boolean accepted")
	}

	// ZooKeeper's client system properties fill in unset keys only.
	sys := map[string]string{"zookeeper.client.secure": "true", "zookeeper.clientCnxnSocket": ZkClientCnxnSocketNetty,
		"zookeeper.ssl.keyStore.location": "/sys/k.jks", "zookeeper.ssl.trustStore.location": "/sys/t.p12", "zookeeper.ssl.hostnameVerification": "false"}
	w, err := mustFromMap(t, with("zookeeper.set.acl", "true", "zookeeper.ssl.truststore.location", "/cfg/t.pem")).ZooKeeperSecurityWith(sys)
	if err != nil || !w.SetACL || w.TLS == nil || w.TLS.KeystoreLocation != "/sys/k.jks" || w.TLS.KeystoreType != "JKS" ||
		w.TLS.TruststoreLocation != "/cfg/t.pem" || w.TLS.VerifyHostname {
		t.Errorf("with system properties: %+v %+v %v", w, w.TLS, err)
	}
}
