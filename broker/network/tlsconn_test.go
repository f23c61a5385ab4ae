package network

import (
	"context"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/security/securitytest"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// principalHandler records the session principal of every request.
type principalHandler struct {
	testHandler
	got chan string
}

func (h *principalHandler) Handle(ctx context.Context, req *Request) (kmsg.Response, error) {
	h.got <- req.Session.Principal
	return h.testHandler.Handle(ctx, req)
}

func TestTLSPrincipal(t *testing.T) {
	ca := securitytest.NewCA(t, "Klassik Test CA")
	broker := ca.Issue(t, "broker", "/C=DE/O=Klassik/CN=broker")
	alice := ca.Issue(t, "alice", "/C=DE/O=Klassik/OU=eng/CN=Alice")

	for _, tc := range []struct {
		auth, rules, client, want string
	}{
		{"required", "DEFAULT", "alice", "User:CN=Alice,OU=eng,O=Klassik,C=DE"},
		{"required", "RULE:^CN=(.*?),OU=eng,.*$/$1/L,DEFAULT", "alice", "User:alice"},
		{"requested", "DEFAULT", "", "User:ANONYMOUS"},
		{"none", "DEFAULT", "alice", "User:ANONYMOUS"},
	} {
		t.Run(tc.auth+"/"+tc.rules, func(t *testing.T) {
			props := broker.Props(ca, securitytest.PKCS12, "")
			props["ssl.client.auth"], props["ssl.principal.mapping.rules"] = tc.auth, tc.rules
			srvTLS, mapper, err := security.ServerTLSConfig(props, "SSL")
			if err != nil {
				t.Fatal(err)
			}
			h := &principalHandler{got: make(chan string, 4)}
			s := startServer(t, Config{Listeners: []ListenerConfig{{Name: "SSL", Host: "127.0.0.1", SecurityProtocol: "SSL", TLS: srvTLS, PrincipalMapper: mapper}}}, h)
			cp := map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": ca.CertPEM}
			if tc.client == "alice" {
				cp = alice.Props(ca, securitytest.JKS, "")
			}
			cliTLS, err := security.ClientTLSConfig(cp, "")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := DialTLS(ctx, s.BoundAddr("SSL").String(), "t", 5*time.Second, cliTLS)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := metadataReq(9, "x").RequestWith(ctx, c); err != nil {
				t.Fatal(err)
			}
			if got := <-h.got; got != tc.want {
				t.Fatalf("principal %q, want %q", got, tc.want)
			}
		})
	}

	// Required client auth without a certificate, and a DN no rule maps:
	// the connection is closed, the request fails (no hang).
	for name, p := range map[string]map[string]string{
		"no certificate": {"ssl.client.auth": "required"},
		"no rule":        {"ssl.client.auth": "required", "ssl.principal.mapping.rules": "RULE:^CN=bob,.*$/bob/"},
	} {
		t.Run(name, func(t *testing.T) {
			props := broker.Props(ca, securitytest.PEM, "")
			for k, v := range p {
				props[k] = v
			}
			srvTLS, mapper, err := security.ServerTLSConfig(props, "SSL")
			if err != nil {
				t.Fatal(err)
			}
			h := &principalHandler{got: make(chan string, 4)}
			s := startServer(t, Config{Listeners: []ListenerConfig{{Name: "SSL", Host: "127.0.0.1", SecurityProtocol: "SSL", TLS: srvTLS, PrincipalMapper: mapper}}}, h)
			cp := map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": ca.CertPEM}
			if name == "no rule" {
				cp = alice.Props(ca, securitytest.PEM, "")
			}
			cliTLS, err := security.ClientTLSConfig(cp, "")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			c, err := DialTLS(ctx, s.BoundAddr("SSL").String(), "t", 5*time.Second, cliTLS)
			if err == nil {
				defer c.Close()
				_, err = metadataReq(9, "x").RequestWith(ctx, c)
			}
			if err == nil {
				t.Fatal("request answered")
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("took %v", time.Since(start))
			}
			select {
			case p := <-h.got:
				t.Fatalf("request reached the handler as %s", p)
			default:
			}
		})
	}
}
