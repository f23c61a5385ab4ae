package security_test

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klassik/klassik/broker/security"
)

// The rule cases below are the facts of Kafka 2.8's SslPrincipalMapperTest
// (clients/src/test/java/org/apache/kafka/common/security/ssl/).

func TestPrincipalRulesValid(t *testing.T) {
	for _, r := range []string{
		"DEFAULT",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
		"RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
		"RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
		"RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/",
	} {
		if _, err := security.NewSslPrincipalMapper(r); err != nil {
			t.Errorf("%q: %v", r, err)
		}
	}
}

func TestPrincipalRulesInvalid(t *testing.T) {
	for _, r := range []string{
		"default", "DEFAUL", "DEFAULT/L", "DEFAULT/U",
		"RULE:CN=(.*?),OU=ServiceUsers.*/$1",
		"rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
	} {
		if m, err := security.NewSslPrincipalMapper(r); err == nil {
			t.Errorf("%q accepted: %v", r, m)
		}
	}
}

func TestPrincipalMapping(t *testing.T) {
	m, err := security.NewSslPrincipalMapper(strings.Join([]string{
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L",
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L",
		"RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U",
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U",
		"DEFAULT",
	}, ", "))
	if err != nil {
		t.Fatal(err)
	}
	for dn, want := range map[string]string{
		"CN=Duke,OU=ServiceUsers,O=Org,C=US":        "duke",
		"CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US": "duke@sme",
		"cn=duke,ou=sme,dc=mycp,dc=com":             "DUKE@SME",
		"cN=duke,OU=JavaSoft,O=Sun Microsystems":    "DUKE",
		"OU=JavaSoft,O=Sun Microsystems,C=US":       "OU=JavaSoft,O=Sun Microsystems,C=US",
	} {
		got, err := m.Name(dn)
		if err != nil || got != want {
			t.Errorf("%s → %q (%v), want %q", dn, got, err, want)
		}
	}

	m, err = security.NewSslPrincipalMapper(`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := m.Name(`CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz`); got != `Tkac\, Adam` {
		t.Errorf("comma with whitespace: %q", got)
	}

	// No rule matches: an error naming the DN.
	m, _ = security.NewSslPrincipalMapper("RULE:^CN=(.*)$/$1/")
	if _, err := m.Name("OU=x"); err == nil || !strings.Contains(err.Error(), "OU=x") {
		t.Errorf("no matching rule: %v", err)
	}
	// A back reference beyond the groups is literal ($2 with one group),
	// and "$12" reads as $1 then "2".
	m, _ = security.NewSslPrincipalMapper("RULE:^CN=([a-z]+).*$/$1-$2-$12/")
	if got, _ := m.Name("CN=bob,O=x"); got != "bob-$2-bob2" {
		t.Errorf("back references: %q", got)
	}
}

func TestPrincipalRulesSplitting(t *testing.T) {
	for in, want := range map[string]string{
		"":                               "[]",
		"DEFAULT":                        "[DEFAULT]",
		"RULE://":                        "[RULE:/]",
		"RULE:/.*/":                      "[RULE:/.*]",
		"RULE:/.*/L":                     "[RULE:/.*/L]",
		"RULE://,DEFAULT":                "[RULE:/, DEFAULT]",
		"  RULE:// ,  DEFAULT  ":         "[RULE:/, DEFAULT]",
		"  RULE:   /     / ,  DEFAULT  ": "[RULE:   /     , DEFAULT]",
		"  RULE:  /     /U   ,DEFAULT  ": "[RULE:  /     /U, DEFAULT]",
		"  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  ": "[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]",
		",   , , ,      , , ,   ":                                "[]",
		",,RULE://,,,DEFAULT,,":                                  "[RULE:/, DEFAULT]",
		",  , RULE: /   /    ,,,   DEFAULT, ,   ":                "[RULE: /   , DEFAULT]",
		"     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,":             "[RULE:   /  /U, DEFAULT]",
		`RULE:\/\\\(\)\n\t/\/\//`:                                `[RULE:\/\\\(\)\n\t/\/\/]`,
		`RULE:\**\/+/*/L,RULE:\/*\**/**/`:                        `[RULE:\**\/+/*/L, RULE:\/*\**/**]`,
		`RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT`: `[RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]`,
	} {
		m, err := security.NewSslPrincipalMapper(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := m.String(); got != "SslPrincipalMapper(rules = "+want+")" {
			t.Errorf("%q → %s, want %s", in, got, want)
		}
	}
}

// TestDistinguishedNameAsJava compares DistinguishedName with what Java's
// X500Principal.getName() prints for the same certificates (the string
// Kafka maps), for subjects with every kind of character RFC 2253 escapes,
// a multi-valued RDN and an attribute without an RFC 2253 keyword.
func TestDistinguishedNameAsJava(t *testing.T) {
	for _, c := range []string{"openssl", "java"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("%s not found: install openssl and a JDK (default-jdk-headless)", c)
		}
	}
	dir := t.TempDir()
	subjects := []string{
		"/C=DE/O=Klassik/OU=eng/CN=alice",
		`/C=DE/O=Kla\,ssik/OU=a+UID=u1/CN= lead#x=y;z<>"q\\ /emailAddress=a@b.c`,
		"/DC=cz/DC=geodis/OU=ITZ/CN=Tkac, Adam",
		"/CN=Jürgen Ünicode/L=Köln/ST=NRW/street=Hauptstraße 1",
		"/serialNumber=42/CN=  two leading and trailing  ",
	}
	var paths []string
	for i, subj := range subjects {
		p := filepath.Join(dir, "c"+string(rune('0'+i))+".pem")
		out, err := exec.Command("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
			"-keyout", filepath.Join(dir, "k.pem"), "-out", p, "-days", "1", "-multivalue-rdn", "-utf8", "-subj", subj).CombinedOutput()
		if err != nil {
			t.Fatalf("openssl %s: %v\n%s", subj, err, out)
		}
		paths = append(paths, p)
	}
	src := filepath.Join(dir, "DN.java")
	if err := os.WriteFile(src, []byte(`import java.io.FileInputStream;
import java.security.cert.*;
public class DN {
  public static void main(String[] a) throws Exception {
    CertificateFactory f = CertificateFactory.getInstance("X.509");
    for (String p : a) {
      X509Certificate c = (X509Certificate) f.generateCertificate(new FileInputStream(p));
      System.out.println(c.getSubjectX500Principal().getName());
    }
  }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("java", append([]string{"-Dfile.encoding=UTF-8", "-Dstdout.encoding=UTF-8", src}, paths...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java: %v", err)
	}
	want := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(want) != len(paths) {
		t.Fatalf("java printed %q", out)
	}
	for i, p := range paths {
		b, _ := os.ReadFile(p)
		blk, _ := pem.Decode(b)
		cert, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		got, err := security.DistinguishedName(cert)
		if err != nil {
			t.Fatal(err)
		}
		if got != want[i] {
			t.Errorf("%s:\n got  %s\n java %s", subjects[i], got, want[i])
		}
	}
}

func FuzzDistinguishedName(f *testing.F) {
	f.Add([]byte{0x30, 0x00})
	f.Add([]byte{0x30, 0x0f, 0x31, 0x0d, 0x30, 0x0b, 0x06, 0x03, 0x55, 0x04, 0x03, 0x0c, 0x04, 'a', 'b', 'c', 'd'})
	f.Fuzz(func(t *testing.T, der []byte) {
		// Invariant: any subject bytes give a string or an error, never
		// a panic.
		_, _ = security.DistinguishedName(&x509.Certificate{RawSubject: der})
	})
}
