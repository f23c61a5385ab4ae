package security_test

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/security/securitytest"
)

// TestMain keeps the stores shared by the tests (see pki) in one
// directory, removed at the end.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "klassik-security-test-")
	if err != nil {
		panic(err)
	}
	sharedDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	sharedDir string
	sharedMu  sync.Mutex
	shared    *testPKI
)

// testPKI is the material most tests share: a CA with a broker and two
// client identities, and a second CA nobody trusts with an identity of
// its own. Making it runs openssl and keytool about twenty times, so it
// is made once per test binary.
type testPKI struct {
	ca, other            *securitytest.CA
	broker, alice, bobby *securitytest.Identity
	mallory              *securitytest.Identity // signed by other
}

func pki(t *testing.T) *testPKI {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil {
		ca := securitytest.NewCAIn(t, filepath.Join(sharedDir, "ca"), "Klassik Test CA")
		other := securitytest.NewCAIn(t, filepath.Join(sharedDir, "other"), "Another CA")
		shared = &testPKI{ca: ca, other: other,
			broker:  ca.Issue(t, "broker", "/C=DE/O=Klassik/CN=broker-1"),
			alice:   ca.Issue(t, "alice", "/C=DE/O=Klassik/OU=eng/CN=alice"),
			bobby:   ca.Issue(t, "bobby", "/CN=b"),
			mallory: other.Issue(t, "mallory", "/CN=mallory"),
		}
	}
	return shared
}

// handshake runs a TLS handshake over loopback and returns the server's
// view of the client certificate's principal, or the first error.
func handshake(t *testing.T, srv, cli *tls.Config, mapper *security.SslPrincipalMapper) (string, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		principal string
		err       error
	}
	done := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer c.Close()
		tc := tls.Server(c, srv)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := tc.HandshakeContext(ctx); err != nil {
			done <- result{err: err}
			return
		}
		// TLS 1.3: the client learns about a refused certificate only
		// when it reads; write one byte so it does.
		_, _ = tc.Write([]byte{1})
		var peer = tc.ConnectionState().PeerCertificates
		if len(peer) == 0 {
			done <- result{principal: security.AnonymousPrincipal}
			return
		}
		p, err := mapper.Principal(peer[0])
		done <- result{principal: p, err: err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := tls.Dialer{Config: cli}
	c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err == nil {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = c.Read(make([]byte, 1))
		c.Close()
	}
	r := <-done
	if r.err != nil {
		return "", r.err
	}
	return r.principal, err
}

func TestKeyStoreFormats(t *testing.T) {
	p := pki(t)
	ca, broker, alice := p.ca, p.broker, p.alice
	for _, format := range []string{securitytest.JKS, securitytest.PKCS12, securitytest.PEM, securitytest.PEMInline} {
		t.Run(format, func(t *testing.T) {
			props := broker.Props(ca, format, "")
			props["ssl.client.auth"] = "required"
			srv, mapper, err := security.ServerTLSConfig(props, "SSL")
			if err != nil {
				t.Fatal(err)
			}
			cli, err := security.ClientTLSConfig(alice.Props(ca, format, ""), "")
			if err != nil {
				t.Fatal(err)
			}
			p, err := handshake(t, srv, cli, mapper)
			if err != nil {
				t.Fatal(err)
			}
			if want := "User:CN=alice,OU=eng,O=Klassik,C=DE"; p != want {
				t.Fatalf("principal %q, want %q", p, want)
			}
		})
	}
}

func TestKeyStoreErrors(t *testing.T) {
	ca, id := pki(t).ca, pki(t).broker
	with := func(format string, kv ...string) map[string]string {
		m := id.Props(ca, format, "")
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	cases := []struct {
		name  string
		props map[string]string
		want  []string // substrings of the error
	}{
		{"jks wrong store password", with(securitytest.JKS, "ssl.keystore.password", "nope"), []string{id.JKS, "password was incorrect"}},
		{"jks wrong key password", with(securitytest.JKS, "ssl.key.password", "nope"), []string{id.JKS, "ssl.key.password"}},
		{"pkcs12 wrong password", with(securitytest.PKCS12, "ssl.keystore.password", "nope"), []string{id.PKCS12, "password was incorrect"}},
		{"pem wrong key password", with(securitytest.PEM, "ssl.key.password", "nope"), []string{id.PEMStore, "ssl.key.password"}},
		{"pem without key password", with(securitytest.PEM, "ssl.key.password", ""), []string{id.PEMStore, "ssl.key.password is not"}},
		{"pem with store password", with(securitytest.PEM, "ssl.keystore.password", "x"), []string{"ssl.keystore.password cannot be specified with PEM"}},
		{"truststore wrong password", with(securitytest.JKS, "ssl.truststore.password", "nope"), []string{ca.TrustJKS}},
		{"missing file", with(securitytest.JKS, "ssl.keystore.location", "/nonexistent/ks.jks"), []string{"/nonexistent/ks.jks", "no such file"}},
		{"jks type on a PEM file", with(securitytest.JKS, "ssl.keystore.location", id.PEMStore), []string{id.PEMStore, "JKS"}},
		{"inline key with JKS type", with(securitytest.PEMInline, "ssl.keystore.type", "JKS"), []string{"ssl.keystore.key can be specified only for PEM"}},
		{"inline key without chain", with(securitytest.PEMInline, "ssl.keystore.certificate.chain", ""), []string{"ssl.keystore.certificate.chain is not"}},
		{"no keystore", with(securitytest.JKS, "ssl.keystore.location", "", "ssl.keystore.password", "", "ssl.key.password", ""), []string{"needs a key store"}},
		{"unknown store type", with(securitytest.JKS, "ssl.keystore.type", "BKS"), []string{"ssl.keystore.type", "BKS"}},
		{"engine factory", with(securitytest.JKS, "ssl.engine.factory.class", "com.example.Factory"), []string{"ssl.engine.factory.class"}},
		{"keymanager", with(securitytest.JKS, "ssl.keymanager.algorithm", "PKIX"), []string{"ssl.keymanager.algorithm", "SunX509"}},
		{"client auth", with(securitytest.JKS, "ssl.client.auth", "sometimes"), []string{"ssl.client.auth"}},
		{"bad rule", with(securitytest.JKS, "ssl.principal.mapping.rules", "default"), []string{"ssl.principal.mapping.rules", "invalid rule"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := security.ServerTLSConfig(c.props, "SSL")
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	// The defaults of the refused keys are accepted.
	if _, _, err := security.ServerTLSConfig(with(securitytest.JKS, "ssl.keymanager.algorithm", "SunX509", "ssl.trustmanager.algorithm", "PKIX"), "SSL"); err != nil {
		t.Fatal(err)
	}
}

func TestTrustAndClientAuth(t *testing.T) {
	p := pki(t)
	ca, other, broker, alice, mallory := p.ca, p.other, p.broker, p.alice, p.mallory

	server := func(auth string) (*tls.Config, *security.SslPrincipalMapper) {
		p := broker.Props(ca, securitytest.PKCS12, "")
		p["ssl.client.auth"] = auth
		c, m, err := security.ServerTLSConfig(p, "SSL")
		if err != nil {
			t.Fatal(err)
		}
		return c, m
	}
	client := func(p map[string]string) *tls.Config {
		c, err := security.ClientTLSConfig(p, "")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	trustOnly := map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": ca.CertPEM}

	srv, m := server("required")
	if _, err := handshake(t, srv, client(trustOnly), m); err == nil {
		t.Fatal("required: a client without certificate got in")
	}
	if _, err := handshake(t, srv, client(mallory.Props(ca, securitytest.PEM, "")), m); err == nil {
		t.Fatal("required: a certificate of an untrusted CA got in")
	}
	srv, m = server("requested")
	if p, err := handshake(t, srv, client(trustOnly), m); err != nil || p != security.AnonymousPrincipal {
		t.Fatalf("requested without certificate: %q, %v", p, err)
	}
	if p, err := handshake(t, srv, client(alice.Props(ca, securitytest.JKS, "")), m); err != nil || p != "User:CN=alice,OU=eng,O=Klassik,C=DE" {
		t.Fatalf("requested with certificate: %q, %v", p, err)
	}
	srv, m = server("none")
	if p, err := handshake(t, srv, client(alice.Props(ca, securitytest.JKS, "")), m); err != nil || p != security.AnonymousPrincipal {
		t.Fatalf("none: %q, %v", p, err)
	}
	// A client that trusts another CA refuses the broker.
	if _, err := handshake(t, srv, client(map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": other.CertPEM}), m); err == nil ||
		!strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted broker accepted: %v", err)
	}
	// Host name check: the certificate names 127.0.0.1 and localhost.
	cli := client(trustOnly)
	cli.ServerName = "broker.example.com"
	if _, err := handshake(t, srv, cli, m); err == nil {
		t.Fatal("wrong host name accepted with https endpoint identification")
	}
	off := map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": ca.CertPEM, "ssl.endpoint.identification.algorithm": ""}
	cli = client(off)
	cli.ServerName = "broker.example.com"
	if _, err := handshake(t, srv, cli, m); err != nil {
		t.Fatalf("endpoint identification off: %v", err)
	}
	// ...but the chain is still verified.
	offOther := map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": other.CertPEM, "ssl.endpoint.identification.algorithm": ""}
	if _, err := handshake(t, srv, client(offOther), m); err == nil {
		t.Fatal("endpoint identification off skipped the chain check")
	}
}

func TestListenerOverrides(t *testing.T) {
	p := pki(t)
	ca, a, b := p.ca, p.alice, p.bobby
	props := a.Props(ca, securitytest.JKS, "")
	for k, v := range b.Props(ca, securitytest.PKCS12, "listener.name.internal.") {
		props[k] = v
	}
	props["listener.name.internal.ssl.client.auth"] = "required"
	for listener, wantCN := range map[string]string{"EXTERNAL": "alice", "INTERNAL": "b"} {
		c, _, err := security.ServerTLSConfig(props, listener)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Certificates[0].Leaf.Subject.CommonName; got != wantCN {
			t.Errorf("%s presents %s, want %s", listener, got, wantCN)
		}
		wantAuth := tls.NoClientCert
		if listener == "INTERNAL" {
			wantAuth = tls.RequireAndVerifyClientCert
		}
		if c.ClientAuth != wantAuth {
			t.Errorf("%s client auth %v", listener, c.ClientAuth)
		}
	}
	// SASL_SSL (KIP-684): the broker-wide ssl.client.auth does not apply,
	// a listener-prefixed one does.
	props["ssl.client.auth"] = "required"
	for listener, want := range map[string]tls.ClientAuthType{"EXTERNAL": tls.NoClientCert, "INTERNAL": tls.RequireAndVerifyClientCert} {
		c, _, err := security.ServerTLSConfigFor(props, listener, "SASL_SSL")
		if err != nil {
			t.Fatal(err)
		}
		if c.ClientAuth != want {
			t.Errorf("SASL_SSL %s client auth %v, want %v", listener, c.ClientAuth, want)
		}
	}
	if c, _, _ := security.ServerTLSConfigFor(props, "EXTERNAL", "SSL"); c.ClientAuth != tls.RequireAndVerifyClientCert {
		t.Errorf("SSL EXTERNAL ignores the broker-wide ssl.client.auth")
	}
}

func TestProtocolsAndCipherSuites(t *testing.T) {
	type pr struct{ min, max uint16 }
	for in, want := range map[string]pr{
		"TLSv1.2,TLSv1.3":    {tls.VersionTLS12, tls.VersionTLS13},
		"TLSv1.3":            {tls.VersionTLS13, tls.VersionTLS13},
		"TLSv1.2":            {tls.VersionTLS12, tls.VersionTLS12},
		" TLSv1.1 , TLSv1.2": {tls.VersionTLS11, tls.VersionTLS12},
	} {
		min, max, err := security.ParseEnabledProtocols(in)
		if err != nil || min != want.min || max != want.max {
			t.Errorf("%q: %x..%x %v", in, min, max, err)
		}
	}
	for _, bad := range []string{"SSLv3", "TLSv1,TLSv1.2", "TLSv1.4"} {
		if _, _, err := security.ParseEnabledProtocols(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	ids, tls13, err := security.ParseCipherSuites("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,SSL_RSA_WITH_AES_128_CBC_SHA")
	if err != nil || tls13 || len(ids) != 3 || ids[0] != tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 ||
		ids[1] != tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 || ids[2] != tls.TLS_RSA_WITH_AES_128_CBC_SHA {
		t.Fatalf("suites %x %v %v", ids, tls13, err)
	}
	if _, tls13, err := security.ParseCipherSuites("TLS_AES_256_GCM_SHA384"); err != nil || !tls13 {
		t.Fatalf("TLS 1.3 suite: %v %v", tls13, err)
	}
	_, _, err = security.ParseCipherSuites("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_DHE_RSA_WITH_AES_256_GCM_SHA384")
	if err == nil || !strings.Contains(err.Error(), "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384") {
		t.Fatalf("a suite Go lacks: %v", err)
	}
	// Only TLS 1.2 suites named: TLS 1.3 is off, as in Java.
	s, err := security.ParseSSLSettings(map[string]string{"ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}, "")
	if err != nil || s.MaxVersion != tls.VersionTLS12 {
		t.Fatalf("max version %x %v", s.MaxVersion, err)
	}
	// The prefix is part of every error.
	_, err = security.ParseSSLSettings(map[string]string{"zookeeper.ssl.enabled.protocols": "SSLv3"}, "zookeeper.")
	if err == nil || !strings.Contains(err.Error(), "zookeeper.ssl.enabled.protocols") {
		t.Fatalf("prefixed error %v", err)
	}
}

func TestCipherSuiteHandshake(t *testing.T) {
	ca, id := pki(t).ca, pki(t).broker
	p := id.Props(ca, securitytest.PEM, "")
	p["ssl.cipher.suites"] = "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
	srv, m, err := security.ServerTLSConfig(p, "SSL")
	if err != nil {
		t.Fatal(err)
	}
	cli, err := security.ClientTLSConfig(map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": ca.CertPEM,
		"ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := handshake(t, srv, cli, m); err == nil {
		t.Fatal("handshake without a common cipher suite succeeded")
	}
	cli.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}
	if _, err := handshake(t, srv, cli, m); err != nil {
		t.Fatal(err)
	}
}

// TestKeytoolGeneratedStores loads stores the way Kafka's documentation
// makes them: keytool -genkeypair (RSA) into a JKS file and into keytool's
// default format (PKCS12 since Java 9, even for a .jks name, which Java's
// JKS type reads too), and a trust store by keytool -importcert.
func TestKeytoolGeneratedStores(t *testing.T) {
	securitytest.Need(t, "keytool")
	dir := t.TempDir()
	keytool := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("keytool", args...).CombinedOutput(); err != nil {
			t.Fatalf("keytool %v: %v\n%s", args, err, out)
		}
	}
	jks := filepath.Join(dir, "server.keystore.jks")
	def := filepath.Join(dir, "default.keystore.jks")
	keytool("-genkeypair", "-keystore", jks, "-storetype", "JKS", "-alias", "localhost", "-keyalg", "RSA", "-keysize", "2048",
		"-validity", "2", "-dname", "CN=localhost,OU=ops,O=Klassik", "-ext", "SAN=IP:127.0.0.1", "-storepass", "storepass", "-keypass", "keypass")
	keytool("-genkeypair", "-keystore", def, "-alias", "localhost", "-keyalg", "EC", "-validity", "2",
		"-dname", "CN=localhost", "-ext", "SAN=IP:127.0.0.1", "-storepass", "storepass")
	cert := filepath.Join(dir, "server.cer")
	keytool("-exportcert", "-keystore", jks, "-alias", "localhost", "-storepass", "storepass", "-file", cert)
	trust := filepath.Join(dir, "client.truststore.jks")
	keytool("-importcert", "-noprompt", "-keystore", trust, "-alias", "CARoot", "-file", cert, "-storepass", "trustpass")

	srv, _, err := security.ServerTLSConfig(map[string]string{"ssl.keystore.location": jks, "ssl.keystore.password": "storepass", "ssl.key.password": "keypass"}, "SSL")
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Certificates[0].Leaf.Subject.CommonName; got != "localhost" {
		t.Fatalf("leaf %q", got)
	}
	if _, _, err := security.ServerTLSConfig(map[string]string{"ssl.keystore.location": def, "ssl.keystore.password": "storepass"}, "SSL"); err != nil {
		t.Fatalf("keytool's default format under ssl.keystore.type=JKS: %v", err)
	}
	cli, err := security.ClientTLSConfig(map[string]string{"ssl.truststore.location": trust, "ssl.truststore.password": "trustpass"}, "")
	if err != nil {
		t.Fatal(err)
	}
	mapper, _ := security.NewSslPrincipalMapper("DEFAULT")
	if _, err := handshake(t, srv, cli, mapper); err != nil {
		t.Fatalf("handshake with keytool stores: %v", err)
	}
	// Java reads a JKS trust store without its password (no integrity
	// check). (A PKCS12 one keeps its certificates encrypted, so neither
	// Java nor Klassik reads it without the password.)
	trustJKS := filepath.Join(dir, "client.truststore.jks2")
	keytool("-importcert", "-noprompt", "-keystore", trustJKS, "-storetype", "JKS", "-alias", "CARoot", "-file", cert, "-storepass", "trustpass")
	cli, err = security.ClientTLSConfig(map[string]string{"ssl.truststore.location": trustJKS}, "")
	if err != nil {
		t.Fatalf("JKS trust store without password: %v", err)
	}
	if _, err := handshake(t, srv, cli, mapper); err != nil {
		t.Fatalf("handshake with a JKS trust store read without password: %v", err)
	}
	if _, err := security.ClientTLSConfig(map[string]string{"ssl.truststore.location": trustJKS, "ssl.truststore.password": "wrong"}, ""); err == nil {
		t.Fatal("a wrong trust store password accepted")
	}
}
