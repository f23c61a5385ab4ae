package broker

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/security/securitytest"
)

// tlsEcho serves cfg on 127.0.0.1 and echoes lines back.
func tlsEcho(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// servedLeaf opens a TLS connection and returns it with the server's
// certificate.
func servedLeaf(t *testing.T, addr string) (*tls.Conn, *x509.Certificate) {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, c.ConnectionState().PeerCertificates[0]
}

func echoes(t *testing.T, c *tls.Conn) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		t.Fatalf("open connection broken: %v", err)
	}
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("open connection broken: %q %v", line, err)
	}
}

// A listener's key store changes live (Kafka's SslFactory reconfigure):
// new connections get the new certificate, open ones continue; a key
// store with another DN is refused with Kafka's message; the same file
// changed on disk is reloaded only when asked to (AlterConfigs naming it
// again), not on an unrelated change.
func TestListenerTLSReload(t *testing.T) {
	securitytest.Need(t, "keytool", "openssl")
	ca := securitytest.NewCA(t, "Klassik Test CA")
	id1 := ca.Issue(t, "broker-a", "/O=Klassik/CN=broker")
	id2 := ca.Issue(t, "broker-b", "/O=Klassik/CN=broker")
	other := ca.Issue(t, "intruder", "/O=Klassik/CN=intruder")
	const prefix = "listener.name.ssl."

	// The inter-broker listener: its dials present the same key store.
	st, _, err := newListenerTLSState(id1.Props(ca, securitytest.JKS, prefix), "SSL", "SSL", true)
	if err != nil {
		t.Fatal(err)
	}
	addr := tlsEcho(t, st.serverConfig())
	open, leaf := servedLeaf(t, addr)
	first := leaf.SerialNumber
	dialing := func(want *big.Int) {
		t.Helper()
		c := st.clientConfig()
		if c == nil || c.RootCAs == nil {
			t.Fatalf("inter-broker client configuration %v without a trust store", c)
		}
		if got := leafOf(c); got == nil || got.SerialNumber.Cmp(want) != 0 {
			t.Fatalf("inter-broker dials present %v, want the served key store's %v", got, want)
		}
	}
	dialing(first)

	// Same props: nothing to do.
	if changed, err := st.reload(id1.Props(ca, securitytest.JKS, prefix), false); err != nil || changed {
		t.Fatalf("unchanged props: changed=%v err=%v", changed, err)
	}
	// A new key store with the same DN and SANs, as PKCS12.
	p2 := id2.Props(ca, securitytest.PKCS12, prefix)
	if changed, err := st.reload(p2, false); err != nil || !changed {
		t.Fatalf("new key store: changed=%v err=%v", changed, err)
	}
	_, leaf = servedLeaf(t, addr)
	if leaf.SerialNumber.Cmp(first) == 0 {
		t.Fatal("a new connection still gets the old certificate")
	}
	dialing(leaf.SerialNumber)
	echoes(t, open)

	// Another DN is refused; the listener keeps its stores.
	err = st.validate(other.Props(ca, securitytest.JKS, prefix))
	if err == nil || !strings.Contains(err.Error(), "Keystore DistinguishedName does not match") ||
		!strings.HasPrefix(err.Error(), "Validation of dynamic config update of SSLFactory failed") {
		t.Fatalf("other DN: %v", err)
	}
	if _, err := st.reload(other.Props(ca, securitytest.JKS, prefix), false); err == nil {
		t.Fatal("reload accepted another DN")
	}
	_, leaf = servedLeaf(t, addr)
	second := leaf.SerialNumber
	dialing(second)

	// The same file rewritten in place (id1's key store copied over
	// id2's): an unrelated update leaves it, a reload of changed files
	// picks it up.
	data, err := os.ReadFile(id1.PKCS12)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	if err := os.WriteFile(id2.PKCS12, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(id2.PKCS12, later, later)
	if changed, _ := st.reload(p2, false); changed {
		t.Fatal("an unchanged config reloaded the file")
	}
	if changed, err := st.reload(p2, true); err != nil || !changed {
		t.Fatalf("reload of the changed file: changed=%v err=%v", changed, err)
	}
	if _, leaf := servedLeaf(t, addr); leaf.SerialNumber.Cmp(second) == 0 || leaf.SerialNumber.Cmp(first) != 0 {
		t.Fatalf("after the file reload the served serial is %v (want id1's %v)", leaf.SerialNumber, first)
	}
	dialing(first)

	// Another listener's state has no client side.
	plain, _, err := newListenerTLSState(id1.Props(ca, securitytest.JKS, prefix), "SSL", "SSL", false)
	if err != nil {
		t.Fatal(err)
	}
	if plain.clientConfig() != nil {
		t.Fatal("a listener other than the inter-broker one has a client configuration")
	}
}
