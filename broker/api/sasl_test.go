package api

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/security"
)

func saslApis(t testing.TB) *Apis {
	a, _ := newTestApis(t, newFakeZK("a"), nil)
	a.sasl = security.NewAuthenticators([]security.ListenerSASL{{
		Listener: "SASL_PLAINTEXT", Mechanisms: []string{"PLAIN", "SCRAM-SHA-256"},
		PlainUsers: map[string]string{"alice": "secret", "bob": "bob-pw"},
		MaxReauth:  map[string]time.Duration{"PLAIN": time.Hour},
	}}, security.NewCredentialCache())
	return a
}

// saslCall sends one request on the connection whose state is s.
func saslCall(t testing.TB, a *Apis, s *network.Session, req kmsg.Request) (kmsg.Response, error) {
	return a.Handle(context.Background(), &network.Request{Key: req.Key(), Version: req.GetVersion(), Body: req,
		Listener: "SASL_PLAINTEXT", SecurityProtocol: "SASL_PLAINTEXT", Session: s})
}

func hs(version int16, mech string) *kmsg.SASLHandshakeRequest {
	r := kmsg.NewPtrSASLHandshakeRequest()
	r.Version, r.Mechanism = version, mech
	return r
}

func au(version int16, tok string) *kmsg.SASLAuthenticateRequest {
	r := kmsg.NewPtrSASLAuthenticateRequest()
	r.Version, r.SASLAuthBytes = version, []byte(tok)
	return r
}

func newSession() *network.Session { return &network.Session{Principal: "User:ANONYMOUS"} }

func TestSASLHandshakeV0RawExchange(t *testing.T) {
	a := saslApis(t)
	s := newSession()
	resp, err := saslCall(t, a, s, hs(0, "PLAIN"))
	if err != nil || resp.(*kmsg.SASLHandshakeResponse).ErrorCode != 0 || s.RawSASL == nil {
		t.Fatalf("%+v %v", resp, err)
	}
	out, done, err := s.RawSASL([]byte("\x00alice\x00secret"))
	if err != nil || !done || len(out) != 0 || !s.Authenticated || s.Principal != "User:alice" || s.ExpiresAt.IsZero() {
		t.Fatalf("raw token: %q %v %v %+v", out, done, err, s)
	}
	s2 := newSession()
	saslCall(t, a, s2, hs(0, "PLAIN"))
	if _, _, err := s2.RawSASL([]byte("\x00alice\x00nope")); err == nil || s2.Authenticated {
		t.Fatalf("wrong raw token: %v %+v", err, s2)
	}
}

func TestSASLStateMachine(t *testing.T) {
	a := saslApis(t)
	s := newSession()
	saslCall(t, a, s, hs(1, "PLAIN"))
	// A second handshake during the exchange is a state error and closes.
	resp, _ := saslCall(t, a, s, hs(1, "PLAIN"))
	if resp.(*kmsg.SASLHandshakeResponse).ErrorCode != kerr.IllegalSaslState.Code || !s.CloseAfterResponse {
		t.Fatalf("second handshake: %+v %+v", resp, s)
	}

	// Re-authentication keeps the principal and the mechanism.
	s = newSession()
	saslCall(t, a, s, hs(1, "PLAIN"))
	r, _ := saslCall(t, a, s, au(1, "\x00alice\x00secret"))
	if ar := r.(*kmsg.SASLAuthenticateResponse); ar.ErrorCode != 0 || ar.SessionLifetimeMillis != time.Hour.Milliseconds() || !s.Authenticated {
		t.Fatalf("login: %+v", ar)
	}
	saslCall(t, a, s, hs(1, "PLAIN"))
	if s.Authenticated {
		t.Fatal("re-authentication did not start")
	}
	r, _ = saslCall(t, a, s, au(1, "\x00bob\x00bob-pw"))
	if ar := r.(*kmsg.SASLAuthenticateResponse); ar.ErrorCode != kerr.SaslAuthenticationFailed.Code ||
		*ar.ErrorMessage != "Cannot change principals during re-authentication from User.alice: User.bob" || !s.CloseAfterResponse {
		t.Fatalf("principal change: %+v", ar)
	}

	s = newSession()
	saslCall(t, a, s, hs(1, "PLAIN"))
	saslCall(t, a, s, au(1, "\x00alice\x00secret"))
	saslCall(t, a, s, hs(1, "SCRAM-SHA-256"))
	r, _ = saslCall(t, a, s, au(1, "n,,n=alice,r=abc"))
	if ar := r.(*kmsg.SASLAuthenticateResponse); ar.ErrorCode != kerr.SaslAuthenticationFailed.Code ||
		*ar.ErrorMessage != "SASL mechanism 'SCRAM-SHA-256' requested by client is not supported for re-authentication of mechanism 'PLAIN'" {
		t.Fatalf("mechanism change: %+v", ar)
	}

	// A v0 client (no SaslAuthenticate v1) cannot re-authenticate: a
	// handshake after login is a state error, or a close once expired.
	s = newSession()
	saslCall(t, a, s, hs(1, "PLAIN"))
	saslCall(t, a, s, au(0, "\x00alice\x00secret"))
	resp, err := saslCall(t, a, s, hs(1, "PLAIN"))
	if err != nil || resp.(*kmsg.SASLHandshakeResponse).ErrorCode != kerr.IllegalSaslState.Code || !s.Authenticated {
		t.Fatalf("handshake after a v0 login: %+v %v", resp, err)
	}
	s.ExpiresAt = time.Now().Add(-time.Second)
	if _, err := saslCall(t, a, s, hs(1, "PLAIN")); err == nil {
		t.Fatal("expired v0 session was not closed")
	}
}

// FuzzSASLRequests: SaslHandshake and SaslAuthenticate bodies decoded by
// kmsg at every version, then fed to the handlers on one connection, and
// raw tokens after a v0 handshake. Invariants: no panic; a connection is
// authenticated only as a user whose password it sent (here only alice's
// PLAIN token can succeed: SCRAM has no credentials).
func FuzzSASLRequests(f *testing.F) {
	f.Add(int16(1), hs(1, "PLAIN").AppendTo(nil), int16(2), au(2, "\x00alice\x00secret").AppendTo(nil))
	f.Add(int16(0), hs(0, "PLAIN").AppendTo(nil), int16(0), []byte("\x00alice\x00secret"))
	f.Add(int16(1), hs(1, "SCRAM-SHA-256").AppendTo(nil), int16(1), au(1, "n,,n=alice,r=abc").AppendTo(nil))
	f.Add(int16(1), hs(1, "GSSAPI").AppendTo(nil), int16(0), au(0, "").AppendTo(nil))
	a := saslApis(f)
	f.Fuzz(func(t *testing.T, hv int16, hbody []byte, av int16, abody []byte) {
		if hv < 0 || hv > 1 || av < 0 || av > 2 {
			return
		}
		h := kmsg.NewPtrSASLHandshakeRequest()
		h.Version = hv
		if h.ReadFrom(hbody) != nil {
			return
		}
		s := newSession()
		if _, err := saslCall(t, a, s, h); err != nil {
			if strings.Contains(err.Error(), "panic") {
				t.Fatal(err)
			}
			return
		}
		for i := 0; i < 3; i++ {
			if s.RawSASL != nil {
				if _, done, err := s.RawSASL(abody); err != nil || done {
					break
				}
				continue
			}
			r := kmsg.NewPtrSASLAuthenticateRequest()
			r.Version = av
			if r.ReadFrom(abody) != nil {
				return
			}
			resp, err := saslCall(t, a, s, r)
			if err != nil {
				if strings.Contains(err.Error(), "panic") {
					t.Fatal(err)
				}
				break
			}
			_ = resp.AppendTo(nil)
			if s.CloseAfterResponse || s.Authenticated {
				break
			}
		}
		if s.Authenticated && s.Principal != "User:alice" {
			t.Fatalf("authenticated as %s", s.Principal)
		}
	})
}
