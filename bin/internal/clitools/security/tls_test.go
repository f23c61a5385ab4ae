package security

import (
	"crypto/tls"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// opensslPKI makes, with openssl, a CA and a certificate signed by it for
// each name in certs (the broker's with SANs localhost and 127.0.0.1);
// files are <dir>/<name>.pem (certificate) and <name>.key.
func opensslPKI(t *testing.T, dir string, certs ...string) {
	t.Helper()
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Fatalf("openssl is required: apt-get install -y openssl (or run bin/klassik-install-deps.sh)")
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(openssl, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("openssl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Test CA", "-keyout", "ca.key", "-out", "ca.pem")
	for _, name := range certs {
		ext := filepath.Join(dir, name+".ext")
		writeFile(t, ext, "subjectAltName=DNS:localhost,IP:127.0.0.1\n")
		run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN="+name, "-keyout", name+".key", "-out", name+".csr")
		run("x509", "-req", "-in", name+".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2", "-extfile", ext, "-out", name+".pem")
	}
}

// TestTLSConfig dials a TLS server (certificate made by openssl) with the
// configuration the ssl.* properties give.
func TestTLSConfig(t *testing.T) {
	dir := t.TempDir()
	opensslPKI(t, dir, "broker", "client")
	opensslPKI(t, filepath.Join(mkdir(t, dir, "other")), "x")
	srvCert, err := tls.LoadX509KeyPair(filepath.Join(dir, "broker.pem"), filepath.Join(dir, "broker.key"))
	if err != nil {
		t.Fatal(err)
	}
	caPool, err := pemPool(readFile(t, filepath.Join(dir, "ca.pem")), "ca")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{srvCert},
		ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: caPool})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peers := make(chan string, 16)
	go func() { // accepts until the listener is closed
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { // one handshake, reports the client's certificate
				defer c.Close()
				tc := c.(*tls.Conn)
				_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
				if tc.Handshake() == nil {
					cn := ""
					if pc := tc.ConnectionState().PeerCertificates; len(pc) > 0 {
						cn = pc[0].Subject.CommonName
					}
					peers <- cn
				}
			}()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	keyAndCert := string(readFile(t, filepath.Join(dir, "client.key"))) + string(readFile(t, filepath.Join(dir, "client.pem")))
	writeFile(t, filepath.Join(dir, "client-store.pem"), keyAndCert)

	dial := func(host string, props map[string]string) error {
		props["security.protocol"] = "SSL"
		s, err := Parse(props)
		if err != nil {
			return err
		}
		cfg := s.TLS.Clone()
		cfg.ServerName = host // what kgo sets from the broker's address
		d := &net.Dialer{Timeout: 5 * time.Second}
		c, err := tls.DialWithDialer(d, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cfg)
		if err != nil {
			return err
		}
		return c.Close()
	}
	pemTrust := map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": filepath.Join(dir, "ca.pem")}
	with := func(base map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	if err := dial("localhost", with(pemTrust)); err != nil {
		t.Fatalf("trusted CA: %v", err)
	}
	if cn := <-peers; cn != "" {
		t.Fatalf("a client certificate %q was sent without a keystore", cn)
	}
	if err := dial("broker.example", with(pemTrust)); err == nil || !strings.Contains(err.Error(), "broker.example") {
		t.Fatalf("host name not in the certificate: %v, want a verification error", err)
	}
	if err := dial("broker.example", with(pemTrust, "ssl.endpoint.identification.algorithm", "")); err != nil {
		t.Fatalf("hostname verification off: %v", err)
	}
	<-peers
	if err := dial("localhost", map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": filepath.Join(dir, "other", "ca.pem")}); err == nil ||
		!strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("untrusted CA: %v", err)
	}
	if err := dial("localhost", with(pemTrust, "ssl.endpoint.identification.algorithm", "", "ssl.truststore.location", filepath.Join(dir, "other", "ca.pem"))); err == nil {
		t.Fatal("untrusted CA without hostname verification: connected")
	}
	if err := dial("localhost", with(pemTrust, "ssl.keystore.type", "PEM", "ssl.keystore.location", filepath.Join(dir, "client-store.pem"))); err != nil {
		t.Fatalf("client certificate: %v", err)
	}
	if cn := <-peers; cn != "client" {
		t.Fatalf("client certificate CN %q, want client", cn)
	}
	if err := dial("localhost", with(pemTrust, "ssl.keystore.type", "PEM",
		"ssl.keystore.certificate.chain", string(readFile(t, filepath.Join(dir, "client.pem"))),
		"ssl.keystore.key", string(readFile(t, filepath.Join(dir, "client.key"))))); err != nil {
		t.Fatalf("inline client certificate: %v", err)
	}
	if cn := <-peers; cn != "client" {
		t.Fatalf("client certificate CN %q, want client", cn)
	}
	if err := dial("localhost", with(pemTrust, "ssl.enabled.protocols", "TLSv1.2", "ssl.protocol", "TLSv1.2")); err != nil {
		t.Fatalf("TLSv1.2: %v", err)
	}
	<-peers
}

func mkdir(t *testing.T, parts ...string) string {
	t.Helper()
	p := filepath.Join(parts...)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
