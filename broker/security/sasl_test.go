package security

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// testCredential derives a stored SCRAM credential from a password
// (Kafka's ScramFormatter).
func testCredential(t testing.TB, mech, password string, iterations int) ScramCredential {
	t.Helper()
	f, err := NewScramFormatter(mech)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := f.Credential(password, []byte("0123456789abcdef"), iterations)
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

func TestPlainServer(t *testing.T) {
	users := map[string]string{"alice": "alice-secret", "bob": "b"}
	for _, tc := range []struct {
		token, user, msg string
	}{
		{"\x00alice\x00alice-secret", "alice", ""},
		{"alice\x00alice\x00alice-secret", "alice", ""},
		{"\x00alice\x00wrong", "", "Authentication failed: Invalid username or password"},
		{"\x00mallory\x00alice-secret", "", "Authentication failed: Invalid username or password"},
		{"bob\x00alice\x00alice-secret", "", "Authentication failed: Client requested an authorization id that is different from username"},
		{"\x00\x00x", "", "Authentication failed: username not specified"},
		{"\x00alice\x00", "", "Authentication failed: password not specified"},
		{"alice", "", "Invalid SASL/PLAIN response: expected 3 tokens, got 1"},
		{"a\x00b\x00c\x00d", "", "Invalid SASL/PLAIN response: expected 3 tokens, got 4"},
	} {
		s := NewPlainServer(users)
		out, done, err := s.Evaluate([]byte(tc.token))
		if tc.msg == "" {
			if err != nil || !done || len(out) != 0 || s.AuthorizationID() != tc.user {
				t.Errorf("%q: %q %v %v %q", tc.token, out, done, err, s.AuthorizationID())
			}
			if _, _, err := s.Evaluate([]byte(tc.token)); err == nil {
				t.Errorf("%q: a second token was accepted", tc.token)
			}
			continue
		}
		var ae *AuthenticationError
		if !errors.As(err, &ae) || ae.Message != tc.msg || done {
			t.Errorf("%q: %v (done %v), want %q", tc.token, err, done, tc.msg)
		}
	}
}

// runScram drives a franz-go SCRAM client against s, returning the
// server's error.
func runScram(t *testing.T, mech sasl.Mechanism, s *ScramServer) error {
	t.Helper()
	sess, msg, err := mech.Authenticate(context.Background(), "broker:9092")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		out, done, err := s.Evaluate(msg)
		if err != nil {
			return err
		}
		cdone, next, cerr := sess.Challenge(out)
		if cerr != nil {
			t.Fatalf("client rejected the server: %v", cerr)
		}
		if done != cdone {
			t.Fatalf("server done %v, client done %v", done, cdone)
		}
		if done {
			return nil
		}
		msg = next
	}
	t.Fatal("exchange did not end")
	return nil
}

func TestScramServerWithFranzGoClient(t *testing.T) {
	for _, mechName := range ScramMechanisms {
		t.Run(mechName, func(t *testing.T) {
			cache := NewCredentialCache()
			cache.Put(mechName, "alice", testCredential(t, mechName, "alice-secret", 4096))
			cache.Put(mechName, "a,b=c", testCredential(t, mechName, "odd", 4096))
			cache.Put(mechName, "low", testCredential(t, mechName, "low", 1000))
			as := func(user, pass string) sasl.Mechanism {
				a := scram.Auth{User: user, Pass: pass}
				if mechName == MechanismScramSHA256 {
					return a.AsSha256Mechanism()
				}
				return a.AsSha512Mechanism()
			}
			for _, ok := range [][2]string{{"alice", "alice-secret"}, {"a,b=c", "odd"}} {
				s, _ := NewScramServer(mechName, cache)
				if err := runScram(t, as(ok[0], ok[1]), s); err != nil || s.AuthorizationID() != ok[0] {
					t.Fatalf("%s: %v %q", ok[0], err, s.AuthorizationID())
				}
			}
			for _, bad := range [][2]string{{"alice", "wrong"}, {"nobody", "x"}, {"low", "low"}} {
				s, _ := NewScramServer(mechName, cache)
				err := runScram(t, as(bad[0], bad[1]), s)
				var ae *AuthenticationError
				if err == nil || errors.As(err, &ae) {
					t.Fatalf("%s: %v, want a failure answered with the generic message", bad[0], err)
				}
				if _, _, err := s.Evaluate([]byte("n,,n=alice,r=x")); err == nil {
					t.Fatalf("%s: a failed exchange went on", bad[0])
				}
			}
		})
	}
}

func TestScramServerRefusals(t *testing.T) {
	cache := NewCredentialCache()
	cache.Put(MechanismScramSHA256, "alice", testCredential(t, MechanismScramSHA256, "pw", 4096))
	first := func(msg string) (*ScramServer, []byte, error) {
		s, _ := NewScramServer(MechanismScramSHA256, cache)
		out, _, err := s.Evaluate([]byte(msg))
		return s, out, err
	}
	// An authorization id other than the user: the client is told why.
	_, _, err := first("n,a=bob,n=alice,r=abc")
	var ae *AuthenticationError
	if !errors.As(err, &ae) || ae.Message != "Authentication failed: Client requested an authorization id that is different from username" {
		t.Fatalf("authzid: %v", err)
	}
	if _, _, err := first("n,a=alice,n=alice,r=abc"); err != nil {
		t.Fatalf("authzid = user: %v", err)
	}
	// Delegation tokens (tokenauth=true) do not exist in Klassik.
	if _, _, err := first("n,,n=alice,r=abc,tokenauth=true"); err == nil || errors.As(err, &ae) {
		t.Fatalf("tokenauth: %v", err)
	}
	// Other extensions are ignored.
	if _, _, err := first("n,,n=alice,r=abc,foo=bar"); err != nil {
		t.Fatalf("extension: %v", err)
	}
	// Channel binding is refused; malformed messages fail.
	for _, m := range []string{"y,,n=alice,r=abc", "p=tls-unique,,n=alice,r=abc", "n,,n=alice", "n,,r=abc,n=alice", "n,,n=al=ice,r=abc", "n,,n=alice,r=a b", ""} {
		if _, _, err := first(m); err == nil {
			t.Errorf("%q accepted", m)
		}
	}
	// A final message with another nonce or without a proof fails.
	s, out, err := first("n,,n=alice,r=abc")
	if err != nil || !strings.HasPrefix(string(out), "r=abc") || !strings.Contains(string(out), ",s=MDEyMzQ1Njc4OWFiY2RlZg==,i=4096") {
		t.Fatalf("server-first %q %v", out, err)
	}
	if _, _, err := s.Evaluate([]byte("c=biws,r=abcX,p=AAAA")); err == nil {
		t.Fatal("foreign nonce accepted")
	}
	// librdkafka repeats its own nonce in front of the combined one; the
	// proof then decides.
	s, out, _ = first("n,,n=alice,r=abc")
	combined := strings.TrimPrefix(strings.Split(string(out), ",")[0], "r=")
	if _, _, err := s.Evaluate([]byte("c=biws,r=abc" + combined + ",p=AAAA")); err == nil || !strings.Contains(err.Error(), "Invalid client credentials") {
		t.Fatalf("librdkafka's nonce form: %v", err)
	}
	s, out, _ = first("n,,n=alice,r=abc")
	nonce := strings.TrimPrefix(strings.Split(string(out), ",")[0], "r=")
	for _, m := range []string{"c=biws,r=" + nonce, "c=biws,r=" + nonce + ",p=", "c=eSws,r=" + nonce + ",p=AAAA"} {
		s2, out2, _ := first("n,,n=alice,r=abc")
		n2 := strings.TrimPrefix(strings.Split(string(out2), ",")[0], "r=")
		if _, _, err := s2.Evaluate([]byte(strings.ReplaceAll(m, nonce, n2))); err == nil {
			t.Errorf("%q accepted", m)
		}
	}
	_ = s
}

func TestParseScramMessages(t *testing.T) {
	cf, err := ParseClientFirst("n,a=x=2Cy,m=ext,n=u=3Dv=2Cw,r=fyko+d2lbbFgONRv9qkxdawL,tokenauth=false")
	if err != nil || cf.AuthzID != "x,y" || cf.User != "u=v,w" || cf.Nonce != "fyko+d2lbbFgONRv9qkxdawL" ||
		cf.Extensions["tokenauth"] != "false" || cf.GS2Header != "n,a=x=2Cy," || !strings.HasPrefix(cf.Bare, "m=ext,n=") {
		t.Fatalf("%+v %v", cf, err)
	}
	fin, err := ParseClientFinal("c=biws,r=abc,p=cHJvb2Y=")
	if err != nil || string(fin.ChannelBinding) != "n,," || fin.Nonce != "abc" || string(fin.Proof) != "proof" || fin.WithoutProof != "c=biws,r=abc" {
		t.Fatalf("%+v %v", fin, err)
	}
	for _, m := range []string{"c=biws,p=AAAA", "c=b!ws,r=abc,p=AAAA", "c=biws,r=abc,p=A", "r=abc,c=biws,p=AAAA", "c=biws,r=abc,1x=y,p=AAAA"} {
		if _, err := ParseClientFinal(m); err == nil {
			t.Errorf("%q accepted", m)
		}
	}
}

func TestPasswordVerifier(t *testing.T) {
	cache := NewCredentialCache()
	cache.Put(MechanismScramSHA512, "alice", testCredential(t, MechanismScramSHA512, "scram-pw", 4096))
	v := NewPasswordVerifier(map[string]string{"bob": "plain-pw"}, cache)
	for _, tc := range []struct {
		user, pw string
		ok       bool
	}{
		{"alice", "scram-pw", true}, {"alice", "scram-pw", true}, {"alice", "x", false},
		{"bob", "plain-pw", true}, {"bob", "scram-pw", false}, {"carol", "x", false}, {"", "", false},
	} {
		if got := v.Verify(tc.user, tc.pw); got != tc.ok {
			t.Errorf("%s/%s: %v", tc.user, tc.pw, got)
		}
	}
	// A changed credential invalidates the remembered check.
	cache.Put(MechanismScramSHA512, "alice", testCredential(t, MechanismScramSHA512, "new-pw", 4096))
	if v.Verify("alice", "scram-pw") || !v.Verify("alice", "new-pw") {
		t.Fatal("password change not seen")
	}
	cache.Remove(MechanismScramSHA512, "alice")
	if v.Verify("alice", "new-pw") {
		t.Fatal("removed user still verified")
	}
}

// FuzzScramExchange: arbitrary client-first and client-final messages never
// panic the server, never authenticate without the password's proof, and
// ParseClientFirst accepts only messages it can render back as sent.
func FuzzScramExchange(f *testing.F) {
	cache := NewCredentialCache()
	cache.Put(MechanismScramSHA256, "alice", testCredential(f, MechanismScramSHA256, "pw", 4096))
	f.Add("n,,n=alice,r=abc", "c=biws,r=abc,p=AAAA")
	f.Add("n,a=alice,n=alice,r=abc,tokenauth=true", "c=biws,r=abcdef,p=dHpbV3A=")
	f.Add("n,,m=x,n=alice,r=\x7e", "c=,r=,p=")
	f.Fuzz(func(t *testing.T, first, final string) {
		if cf, err := ParseClientFirst(first); err == nil && cf.GS2Header+cf.Bare != first {
			t.Fatalf("%q parsed to %+v", first, cf)
		}
		_, _ = ParseClientFinal(final)
		s, _ := NewScramServer(MechanismScramSHA256, cache)
		if _, _, err := s.Evaluate([]byte(first)); err != nil {
			return
		}
		if _, done, err := s.Evaluate([]byte(final)); done || err == nil {
			t.Fatalf("authenticated without a proof: %q %q", first, final)
		}
	})
}

// FuzzPlainServer: any token is answered without a panic, and only the
// right password authenticates.
func FuzzPlainServer(f *testing.F) {
	f.Add([]byte("\x00alice\x00secret"))
	f.Add([]byte("alice\x00alice\x00secret"))
	f.Add([]byte("\xff\x00\x00"))
	f.Fuzz(func(t *testing.T, tok []byte) {
		s := NewPlainServer(map[string]string{"alice": "secret"})
		if _, done, err := s.Evaluate(tok); done && (err != nil || s.AuthorizationID() != "alice" || !strings.HasSuffix(string(tok), "\x00alice\x00secret")) {
			t.Fatalf("%q authenticated as %q", tok, s.AuthorizationID())
		}
	})
}
