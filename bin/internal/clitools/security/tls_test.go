package security

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/security/securitytest"
)

// TestTLSConfig dials a TLS server (identities made by openssl and keytool)
// with the configuration a tool's ssl.* properties give, in every store
// format.
func TestTLSConfig(t *testing.T) {
	ca := securitytest.NewCA(t, "Klassik Test CA")
	other := securitytest.NewCA(t, "Some Other CA")
	srvID := ca.Issue(t, "broker", "/CN=localhost")
	cliID := ca.Issue(t, "client", "/CN=client")
	srvCert, err := tls.LoadX509KeyPair(srvID.CertPEM, srvID.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(ca.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{srvCert},
		ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool})
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
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	dial := func(host string, props map[string]string) error {
		props["security.protocol"] = "SSL"
		s, err := Parse(props)
		if err != nil {
			return err
		}
		cfg := s.TLS.Clone()
		cfg.ServerName = host // what kgo sets from the broker's address
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
		if err != nil {
			return err
		}
		return c.Close()
	}
	trustOnly := func(c *securitytest.CA, format string) map[string]string {
		out := map[string]string{}
		for k, v := range cliID.Props(c, format, "") {
			if strings.HasPrefix(k, "ssl.truststore.") {
				out[k] = v
			}
		}
		return out
	}
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
	for _, format := range []string{securitytest.JKS, securitytest.PKCS12, securitytest.PEM, securitytest.PEMInline} {
		t.Run(format, func(t *testing.T) {
			if err := dial("localhost", trustOnly(ca, format)); err != nil {
				t.Fatalf("trusted CA: %v", err)
			}
			if cn := <-peers; cn != "" {
				t.Fatalf("a client certificate %q was sent without a keystore", cn)
			}
			if err := dial("localhost", cliID.Props(ca, format, "")); err != nil {
				t.Fatalf("client certificate: %v", err)
			}
			if cn := <-peers; cn != "client" {
				t.Fatalf("client certificate CN %q, want client", cn)
			}
			if err := dial("localhost", trustOnly(other, format)); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
				t.Fatalf("untrusted CA: %v, want a verification error", err)
			}
		})
	}
	pemTrust := trustOnly(ca, securitytest.PEM)
	if err := dial("broker.example", with(pemTrust)); err == nil || !strings.Contains(err.Error(), "broker.example") {
		t.Fatalf("host name not in the certificate: %v, want a verification error", err)
	}
	if err := dial("broker.example", with(pemTrust, "ssl.endpoint.identification.algorithm", "")); err != nil {
		t.Fatalf("hostname verification off: %v", err)
	}
	<-peers
	if err := dial("localhost", with(trustOnly(other, securitytest.PEM), "ssl.endpoint.identification.algorithm", "")); err == nil {
		t.Fatal("untrusted CA without hostname verification: connected")
	}
	if err := dial("localhost", with(pemTrust, "ssl.enabled.protocols", "TLSv1.2", "ssl.protocol", "TLSv1.2")); err != nil {
		t.Fatalf("TLSv1.2: %v", err)
	}
	<-peers
}
