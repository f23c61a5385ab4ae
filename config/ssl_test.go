package config

import (
	"strings"
	"testing"
)

func TestSSLKeys(t *testing.T) {
	ssl := func(kv ...string) map[string]string {
		return with(append([]string{"listeners", "PLAINTEXT://:9092,SSL://:9093", "ssl.keystore.location", "/ks.jks", "ssl.keystore.password", "pw"}, kv...)...)
	}
	c := mustFromMap(t, ssl("listener.name.ssl.ssl.client.auth", "required", "ssl.cipher.suites", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"))
	p := c.SSLProperties()
	if p["ssl.keystore.location"] != "/ks.jks" || p["listener.name.ssl.ssl.client.auth"] != "required" || p["ssl.client.auth"] != "none" ||
		p["ssl.endpoint.identification.algorithm"] != "https" {
		t.Fatalf("SSLProperties %v", p)
	}
	if got := c.ListenerProperties("SSL"); got["ssl.client.auth"] != "required" {
		t.Fatalf("ListenerProperties %v", got)
	}
	if d := c.Describe(); !strings.Contains(d, "\tssl.keystore.password = [hidden]\n") || strings.Contains(d, "= pw\n") {
		t.Errorf("Describe shows the password:\n%s", d)
	}
	// An empty endpoint identification is a value (host name check off).
	if c := mustFromMap(t, ssl("ssl.endpoint.identification.algorithm", "")); c.SSLProperties()["ssl.endpoint.identification.algorithm"] != "" {
		t.Error("empty ssl.endpoint.identification.algorithm lost")
	}

	for _, tc := range []struct {
		name  string
		props map[string]string
		key   string
		msg   string
	}{
		{"SSL listener without key store", with("listeners", "SSL://:9093", "security.inter.broker.protocol", "SSL"), "ssl.keystore.location", "needs a key store"},
		{"SASL_SSL listener without key store", with("listeners", "PLAINTEXT://:9092,SASL_SSL://:9093"), "ssl.keystore.location", "listener.name.sasl_ssl.ssl.keystore.location"},
		{"unknown cipher", ssl("ssl.cipher.suites", "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"), "ssl.cipher.suites", "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"},
		{"unknown protocol", ssl("ssl.enabled.protocols", "SSLv3"), "ssl.enabled.protocols", "SSLv3"},
		{"client auth", ssl("ssl.client.auth", "maybe"), "ssl.client.auth", "none, requested, required"},
		{"store type", ssl("ssl.keystore.type", "BKS"), "ssl.keystore.type", "BKS"},
		{"rules", ssl("ssl.principal.mapping.rules", "RULE:x"), "ssl.principal.mapping.rules", "invalid rule"},
		{"engine factory", ssl("ssl.engine.factory.class", "com.example.F"), "ssl.engine.factory.class", "not supported"},
		{"provider", ssl("ssl.provider", "BC"), "ssl.provider", "not supported"},
		{"security providers", ssl("security.providers", "com.example.P"), "security.providers", "not supported"},
		{"secure random", ssl("ssl.secure.random.implementation", "SHA1PRNG"), "ssl.secure.random.implementation", "not supported"},
		{"key manager", ssl("ssl.keymanager.algorithm", "PKIX"), "ssl.keymanager.algorithm", "SunX509"},
		{"trust manager", ssl("ssl.trustmanager.algorithm", "SunX509"), "ssl.trustmanager.algorithm", "PKIX"},
		{"listener override checked", ssl("listener.name.ssl.ssl.client.auth", "maybe"), "listener.name.ssl.ssl.client.auth", "none, requested, required"},
		{"listener override unknown", ssl("listener.name.ssl.ssl.keystore.foo", "x"), "listener.name.ssl.ssl.keystore.foo", "not a Kafka SSL config"},
		{"listener override upper case", ssl("listener.name.SSL.ssl.client.auth", "required"), "listener.name.SSL.ssl.client.auth", "lower case"},
		{"listener override engine", ssl("listener.name.ssl.ssl.engine.factory.class", "x.Y"), "listener.name.ssl.ssl.engine.factory.class", "not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expectProblem(t, tc.props, tc.key, tc.msg)
		})
	}
	// Kafka's defaults of the refused keys load.
	mustFromMap(t, ssl("ssl.keymanager.algorithm", "SunX509", "ssl.trustmanager.algorithm", "PKIX"))
	// A key store given only for the listener is enough.
	mustFromMap(t, with("listeners", "PLAINTEXT://:9092,SSL://:9093", "listener.name.ssl.ssl.keystore.location", "/x", "listener.name.ssl.ssl.keystore.password", "p"))
}

// expectProblem asserts that props fail with a problem on key whose
// message contains msg.
func expectProblem(t *testing.T, props map[string]string, key, msg string) {
	t.Helper()
	_, err := FromMap(props)
	ve, ok := err.(*ValidationError)
	if !ok {
		t.Fatalf("FromMap accepted or failed oddly: %v", err)
	}
	for _, p := range ve.Problems {
		if p.Key == key && strings.Contains(p.Msg, msg) {
			return
		}
	}
	t.Fatalf("no problem on %s mentioning %q in: %v", key, msg, err)
}

// Kafka reads ssl.client.auth and the store types in any case.
func TestSSLKeysCase(t *testing.T) {
	mustFromMap(t, with("listeners", "SSL://:9093", "security.inter.broker.protocol", "SSL", "ssl.keystore.location", "/x",
		"ssl.keystore.password", "p", "ssl.client.auth", "REQUIRED", "ssl.keystore.type", "pkcs12", "ssl.endpoint.identification.algorithm", "HTTPS"))
}
