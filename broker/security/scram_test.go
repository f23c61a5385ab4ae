package security

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestScramRFC7677Example checks the formatter against the SCRAM-SHA-256
// exchange of RFC 7677 section 3 (user "user", password "pencil"): the
// client proof and the server signature computed from the salted password
// must equal the ones on the wire.
func TestScramRFC7677Example(t *testing.T) {
	f, err := NewScramFormatter(MechanismScramSHA256)
	if err != nil {
		t.Fatal(err)
	}
	const (
		clientFirstBare = "n=user,r=rOprNGfwEbeRWgbNEkqO"
		serverFirst     = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
		clientFinalBare = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
		wantProof       = "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
		wantServerSig   = "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
	)
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	sp, err := f.SaltedPassword("pencil", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	auth := []byte(clientFirstBare + "," + serverFirst + "," + clientFinalBare)
	clientKey := f.ClientKey(sp)
	sig := f.HMAC(f.StoredKey(clientKey), auth)
	proof := make([]byte, len(clientKey))
	for i := range proof {
		proof[i] = clientKey[i] ^ sig[i]
	}
	if got := base64.StdEncoding.EncodeToString(proof); got != wantProof {
		t.Errorf("client proof = %s, want %s", got, wantProof)
	}
	if got := base64.StdEncoding.EncodeToString(f.HMAC(f.ServerKey(sp), auth)); got != wantServerSig {
		t.Errorf("server signature = %s, want %s", got, wantServerSig)
	}
}

// pythonCredential derives the stored credential with Python's hashlib and
// hmac, an implementation independent of ours.
func pythonCredential(t *testing.T, hashName, password string, salt []byte, iterations int) string {
	t.Helper()
	const script = `
import base64, hashlib, hmac, json, sys
a = json.load(sys.stdin)
h = a["hash"]
salt = base64.b64decode(a["salt"])
sp = hashlib.pbkdf2_hmac(h, a["password"].encode("utf-8"), salt, a["iterations"])
ck = hmac.new(sp, b"Client Key", h).digest()
sk = hmac.new(sp, b"Server Key", h).digest()
st = hashlib.new(h, ck).digest()
e = lambda b: base64.b64encode(b).decode()
sys.stdout.write("salt=%s,stored_key=%s,server_key=%s,iterations=%d" % (e(salt), e(st), e(sk), a["iterations"]))
`
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		t.Fatalf("the golden test needs /usr/bin/python3 (Debian's python3 package): %v", err)
	}
	in, _ := json.Marshal(map[string]any{"hash": hashName, "password": password,
		"salt": base64.StdEncoding.EncodeToString(salt), "iterations": iterations})
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	return string(out)
}

// TestScramCredentialGolden compares the stored form of credentials with
// fixed salts against Python's derivation, for both mechanisms and a
// password outside ASCII (Kafka hashes the UTF-8 bytes, no SASLprep).
func TestScramCredentialGolden(t *testing.T) {
	cases := []struct {
		mech, hash, password, salt string
		iterations                 int
	}{
		{MechanismScramSHA256, "sha256", "alice-secret", "1c3xbvpuk3m2x5vsbbc8jqmyqk", 8192},
		{MechanismScramSHA512, "sha512", "alice-secret", "5nrivqrds3d2zhm9dh6wnmnzw", 4096},
		{MechanismScramSHA512, "sha512", "pässwörd,=x", "salt", 4096},
	}
	for _, c := range cases {
		f, err := NewScramFormatter(c.mech)
		if err != nil {
			t.Fatal(err)
		}
		cred, err := f.Credential(c.password, []byte(c.salt), c.iterations)
		if err != nil {
			t.Fatal(err)
		}
		want := pythonCredential(t, c.hash, c.password, []byte(c.salt), c.iterations)
		if got := cred.String(); got != want {
			t.Errorf("%s %q:\n got %s\nwant %s", c.mech, c.password, got, want)
		}
		back, err := ParseScramCredential(want)
		if err != nil {
			t.Fatalf("parse %s: %v", want, err)
		}
		if back.String() != want {
			t.Errorf("round trip: %s != %s", back.String(), want)
		}
		if !VerifyScramPassword(c.mech, c.password, back) {
			t.Errorf("%s: the password does not verify", c.mech)
		}
		if VerifyScramPassword(c.mech, c.password+"x", back) {
			t.Errorf("%s: a wrong password verifies", c.mech)
		}
		other := MechanismScramSHA256
		if c.mech == other {
			other = MechanismScramSHA512
		}
		if VerifyScramPassword(other, c.password, back) {
			t.Errorf("%s: the credential verifies under %s", c.mech, other)
		}
	}
}

func TestGenerateCredentialSalt(t *testing.T) {
	f, _ := NewScramFormatter(MechanismScramSHA512)
	a, err := f.GenerateCredential("pw", ScramMinIterations)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := f.GenerateCredential("pw", ScramMinIterations)
	if bytes.Equal(a.Salt, b.Salt) {
		t.Fatal("two credentials share a salt")
	}
	// Kafka's salts are base-36 digits of a 130-bit number.
	if len(a.Salt) < 20 || len(a.Salt) > 26 || strings.Trim(string(a.Salt), "0123456789abcdefghijklmnopqrstuvwxyz") != "" {
		t.Errorf("salt %q is not of Kafka's shape", a.Salt)
	}
	if len(a.StoredKey) != 64 || len(a.ServerKey) != 64 || a.Iterations != 4096 {
		t.Errorf("credential %+v", a)
	}
	if !VerifyScramPassword(MechanismScramSHA512, "pw", a) {
		t.Error("generated credential does not verify")
	}
}

func TestParseScramCredential(t *testing.T) {
	const good = "salt=c2FsdA==,stored_key=AAE=,server_key=AgM=,iterations=4096"
	ok := []string{
		good,
		good + ",",  // trailing empty tokens are dropped
		good + ",,", // likewise
		"iterations=4096,server_key=AgM=,stored_key=AAE=,salt=c2FsdA==",           // any order
		"salt=c2FsdA,stored_key=AAE,server_key=AgM,iterations=4096",               // padding optional
		"salt=eA==,salt=c2FsdA==,stored_key=AAE=,server_key=AgM=,iterations=4096", // later wins
		"salt=c2FsdA==,stored_key=AAE=,server_key=AgM=,iterations=+4096",          // Integer.parseInt
		"salt=,stored_key=AAE=,server_key=AgM=,iterations=4096",                   // empty salt
	}
	for _, s := range ok {
		if _, err := ParseScramCredential(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	c, _ := ParseScramCredential(ok[5])
	if string(c.Salt) != "salt" || c.Iterations != 4096 || !bytes.Equal(c.StoredKey, []byte{0, 1}) || !bytes.Equal(c.ServerKey, []byte{2, 3}) {
		t.Errorf("decoded %+v", c)
	}
	bad := []string{
		"",
		",",
		good + ",extra=1",
		"salt=c2FsdA==,stored_key=AAE=,server_key=AgM=",
		"salt=c2FsdA==,stored_key=AAE=,server_key=AgM=,iter=4096",
		"salt=c2FsdA==,stored_key=AAE=,server_key=AgM=,iterations=x",
		"salt=c2FsdA==,stored_key=AAE=,server_key=AgM=,iterations=4294967296",
		"salt=c2Fs*A==,stored_key=AAE=,server_key=AgM=,iterations=4096",
		",salt=c2FsdA==,stored_key=AAE=,server_key=AgM=,iterations=4096",
		"=x,salt=c2FsdA==,stored_key=AAE=,server_key=AgM=,iterations=4096",
		"salt=c2FsdA==,stored_key=AAE=,server_key=AgM=,iterations",
	}
	for _, s := range bad {
		if c, err := ParseScramCredential(s); err == nil {
			t.Errorf("%q parsed as %+v", s, c)
		}
	}
}

func TestScramMechanismNames(t *testing.T) {
	if ScramMechanismTypeOf("SCRAM-SHA-256") != 1 || ScramMechanismTypeOf("SCRAM-SHA-512") != 2 || ScramMechanismTypeOf("PLAIN") != 0 {
		t.Error("mechanism codes differ from Kafka's ScramMechanism enum")
	}
	if ScramMechanismName(2) != "SCRAM-SHA-512" || ScramMechanismName(7) != "UNKNOWN" {
		t.Error("mechanism names")
	}
	if _, err := NewScramFormatter("SCRAM-SHA-1"); err == nil {
		t.Error("SCRAM-SHA-1 accepted")
	}
	if VerifyScramPassword(MechanismScramSHA256, "pw", ScramCredential{Iterations: 1 << 30}) {
		t.Error("an absurd iteration count verified")
	}
}

// FuzzParseScramCredential: never panics; whatever parses prints back in
// the canonical form, which parses to the same credential.
func FuzzParseScramCredential(f *testing.F) {
	for _, s := range []string{
		"salt=c2FsdA==,stored_key=AAE=,server_key=AgM=,iterations=4096",
		"salt=c2FsdA,stored_key=AAE,server_key=AgM,iterations=-1,",
		"a=b,c=d,e=f,g=h", ",,,", "=", "salt=\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseScramCredential(s)
		if err != nil {
			return
		}
		back, err := ParseScramCredential(c.String())
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", c.String(), s, err)
		}
		if back.String() != c.String() {
			t.Fatalf("round trip changed %q to %q", c.String(), back.String())
		}
	})
}
