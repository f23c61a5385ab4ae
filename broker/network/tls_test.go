package network

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// selfSigned returns a server TLS config for 127.0.0.1 and a client config
// trusting it.
func selfSigned(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "klassik-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
	client = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return server, client
}

func TestTLSListener(t *testing.T) {
	srvTLS, cliTLS := selfSigned(t)
	reg := gometrics.NewRegistry()
	s := startServer(t, Config{Metrics: reg, Listeners: []ListenerConfig{{Name: "PLAINTEXT", Host: "127.0.0.1", SecurityProtocol: "SSL", TLS: srvTLS}}}, &testHandler{})

	cl, err := kgo.NewClient(kgo.SeedBrokers(addrOf(s)), kgo.DialTLSConfig(cliTLS))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := metadataReq(12, "over-tls").RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || *resp.Topics[0].Topic != "over-tls" {
		t.Fatalf("response %+v", resp)
	}

	ic, err := DialTLS(ctx, addrOf(s), "broker-2", 5*time.Second, cliTLS)
	if err != nil {
		t.Fatal(err)
	}
	defer ic.Close()
	if _, err := ic.ApiVersions(ctx); err != nil {
		t.Fatal(err)
	}
	// Plain TCP to a TLS listener does not get an answer.
	pc, err := Dial(ctx, addrOf(s), "plain", 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if _, err := pc.ApiVersions(ctx); err == nil {
		t.Fatal("plaintext request answered on an SSL listener")
	}

	var metaRequests int64
	reg.Each(func(name string, m any) {
		if strings.HasPrefix(name, "kafka.network.RequestMetrics.RequestsPerSec.request=Metadata.version=") {
			metaRequests += m.(gometrics.Meter).Count()
		}
	})
	if metaRequests < 1 {
		t.Fatalf("Metadata request meters count %d", metaRequests)
	}
	if m := reg.Get("kafka.network.RequestMetrics.TotalTimeMs.request=Metadata"); m == nil || m.(gometrics.Timer).Count() < 1 {
		t.Fatalf("Metadata timer %v", m)
	}
	if kmsg.NameForKey(3) != "Metadata" {
		t.Fatal("kmsg name changed")
	}
}

func TestSecurityProtocolValidation(t *testing.T) {
	srvTLS, _ := selfSigned(t)
	bad := []ListenerConfig{
		{Name: "A", SecurityProtocol: "SSL"},
		{Name: "A", SecurityProtocol: "SASL_SSL"},
		{Name: "A", SecurityProtocol: "PLAINTEXT", TLS: srvTLS},
		{Name: "A", SecurityProtocol: "KERBEROS"},
	}
	for _, l := range bad {
		if _, err := NewServer(Config{Listeners: []ListenerConfig{l}}, &testHandler{}); err == nil {
			t.Errorf("accepted %+v", l)
		}
	}
	for _, l := range []ListenerConfig{{Name: "A"}, {Name: "A", SecurityProtocol: "SASL_PLAINTEXT"}, {Name: "A", SecurityProtocol: "SASL_SSL", TLS: srvTLS}} {
		if _, err := NewServer(Config{Listeners: []ListenerConfig{l}}, &testHandler{}); err != nil {
			t.Errorf("rejected %+v: %v", l, err)
		}
	}
}
