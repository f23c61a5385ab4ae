// Package securitytest makes TLS material for tests the way an operator
// does: a certificate authority, and broker and client identities signed by
// it, with openssl, exported to PKCS12 and PEM files and converted to JKS
// with keytool. Everything lives in the test's t.TempDir(). A missing
// openssl or keytool fails the test with a message saying what to install.
//
// Every store and key uses the same password (Password). Certificates carry
// subjectAltName IP:127.0.0.1 and DNS:localhost and both server and client
// extended key usage, so one identity serves as a listener and as a client.
package securitytest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Password protects every store and key the package writes.
const Password = "klassik-secret"

// CA is a test certificate authority with its trust stores.
type CA struct {
	Dir     string
	CertPEM string // CA certificate (PEM); librdkafka's ssl.ca.location
	KeyPEM  string // CA private key (unencrypted)
	// TrustJKS and TrustPKCS12 hold the CA certificate as a trusted entry
	// (keytool -importcert), protected by Password.
	TrustJKS    string
	TrustPKCS12 string

	mu     sync.Mutex
	serial int
}

// Identity is one certificate signed by a CA, in every format Kafka reads.
type Identity struct {
	Name string
	// DN is the subject in openssl's -subj form ("/CN=alice/OU=eng").
	DN string

	CertPEM  string // the certificate
	ChainPEM string // certificate followed by the CA certificate
	KeyPEM   string // PKCS#8 private key, unencrypted
	// EncKeyPEM is the PKCS#8 key encrypted with Password (PBES2,
	// AES-256-CBC), as ssl.keystore.type=PEM wants it.
	EncKeyPEM string
	// PEMStore is EncKeyPEM and ChainPEM in one file: a Kafka PEM key
	// store (ssl.keystore.location with ssl.key.password).
	PEMStore string
	PKCS12   string // key and chain, alias Name, Password
	JKS      string // the same converted by keytool -importkeystore
}

// Need fails the test when a command is missing.
func Need(t testing.TB, cmds ...string) {
	t.Helper()
	for _, c := range cmds {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("securitytest: %s not found on PATH: install it (openssl: Debian package openssl; keytool: default-jdk-headless, see bin/klassik-install-deps.sh)", c)
		}
	}
}

func run(t testing.TB, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("securitytest: %s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// NewCA makes a CA named cn in a new temporary directory, with JKS and
// PKCS12 trust stores.
func NewCA(t testing.TB, cn string) *CA {
	t.Helper()
	return NewCAIn(t, t.TempDir(), cn)
}

// NewCAIn is NewCA in dir, which the caller removes: for material shared
// by the tests of a package (made once, e.g. under a TestMain's
// os.MkdirTemp).
func NewCAIn(t testing.TB, dir, cn string) *CA {
	t.Helper()
	Need(t, "openssl", "keytool")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ca := &CA{Dir: dir, CertPEM: filepath.Join(dir, "ca.pem"), KeyPEM: filepath.Join(dir, "ca.key"),
		TrustJKS: filepath.Join(dir, "truststore.jks"), TrustPKCS12: filepath.Join(dir, "truststore.p12")}
	run(t, dir, "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
		"-keyout", ca.KeyPEM, "-out", ca.CertPEM, "-days", "3", "-subj", "/CN="+cn,
		"-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
	for _, ts := range []struct{ path, typ string }{{ca.TrustJKS, "JKS"}, {ca.TrustPKCS12, "PKCS12"}} {
		run(t, dir, "keytool", "-importcert", "-noprompt", "-alias", "caroot", "-file", ca.CertPEM,
			"-keystore", ts.path, "-storetype", ts.typ, "-storepass", Password)
	}
	return ca
}

// Issue signs a new identity. dn is openssl's -subj form, e.g.
// "/C=DE/O=Klassik/OU=eng/CN=alice" (which Java prints as
// "CN=alice,OU=eng,O=Klassik,C=DE").
func (ca *CA) Issue(t testing.TB, name, dn string) *Identity {
	t.Helper()
	ca.mu.Lock()
	ca.serial++
	serial := ca.serial
	ca.mu.Unlock()
	dir := filepath.Join(ca.Dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	id := &Identity{Name: name, DN: dn,
		CertPEM: filepath.Join(dir, "cert.pem"), ChainPEM: filepath.Join(dir, "chain.pem"),
		KeyPEM: filepath.Join(dir, "key.pem"), EncKeyPEM: filepath.Join(dir, "key.enc.pem"),
		PEMStore: filepath.Join(dir, "keystore.pem"), PKCS12: filepath.Join(dir, "keystore.p12"), JKS: filepath.Join(dir, "keystore.jks")}
	csr := filepath.Join(dir, "req.csr")
	ext := filepath.Join(dir, "ext.cnf")
	if err := os.WriteFile(ext, []byte("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=critical,digitalSignature,keyAgreement\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
		"-keyout", id.KeyPEM, "-out", csr, "-subj", dn)
	run(t, dir, "openssl", "x509", "-req", "-in", csr, "-CA", ca.CertPEM, "-CAkey", ca.KeyPEM,
		"-set_serial", fmt.Sprint(1000+serial), "-days", "2", "-extfile", ext, "-out", id.CertPEM)
	run(t, dir, "openssl", "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", id.KeyPEM, "-passout", "pass:"+Password, "-out", id.EncKeyPEM)
	cert := mustRead(t, id.CertPEM)
	caPEM := mustRead(t, ca.CertPEM)
	mustWrite(t, id.ChainPEM, cert+caPEM)
	mustWrite(t, id.PEMStore, mustRead(t, id.EncKeyPEM)+cert+caPEM)
	run(t, dir, "openssl", "pkcs12", "-export", "-inkey", id.KeyPEM, "-in", id.CertPEM, "-certfile", ca.CertPEM,
		"-name", name, "-passout", "pass:"+Password, "-out", id.PKCS12)
	run(t, dir, "keytool", "-importkeystore", "-noprompt", "-srckeystore", id.PKCS12, "-srcstoretype", "PKCS12",
		"-srcstorepass", Password, "-destkeystore", id.JKS, "-deststoretype", "JKS", "-deststorepass", Password,
		"-destkeypass", Password)
	return id
}

func mustRead(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustWrite(t testing.TB, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Store formats for Props.
const (
	JKS    = "JKS"
	PKCS12 = "PKCS12"
	PEM    = "PEM"
	// PEMInline puts the key, chain and CA into ssl.keystore.key,
	// ssl.keystore.certificate.chain and ssl.truststore.certificates.
	PEMInline = "PEM-inline"
)

// Props returns Kafka's ssl.* properties for id as key store and ca as
// trust store in the given format (JKS, PKCS12, PEM or PEMInline), with
// prefix put before every key (e.g. "listener.name.internal.").
func (id *Identity) Props(ca *CA, format, prefix string) map[string]string {
	m := map[string]string{}
	switch format {
	case JKS:
		m["ssl.keystore.type"], m["ssl.keystore.location"], m["ssl.keystore.password"], m["ssl.key.password"] = "JKS", id.JKS, Password, Password
		m["ssl.truststore.type"], m["ssl.truststore.location"], m["ssl.truststore.password"] = "JKS", ca.TrustJKS, Password
	case PKCS12:
		m["ssl.keystore.type"], m["ssl.keystore.location"], m["ssl.keystore.password"] = "PKCS12", id.PKCS12, Password
		m["ssl.truststore.type"], m["ssl.truststore.location"], m["ssl.truststore.password"] = "PKCS12", ca.TrustPKCS12, Password
	case PEM:
		m["ssl.keystore.type"], m["ssl.keystore.location"], m["ssl.key.password"] = "PEM", id.PEMStore, Password
		m["ssl.truststore.type"], m["ssl.truststore.location"] = "PEM", ca.CertPEM
	case PEMInline:
		m["ssl.keystore.type"], m["ssl.truststore.type"] = "PEM", "PEM"
		b, _ := os.ReadFile(id.KeyPEM)
		m["ssl.keystore.key"] = string(b)
		b, _ = os.ReadFile(id.ChainPEM)
		m["ssl.keystore.certificate.chain"] = string(b)
		b, _ = os.ReadFile(ca.CertPEM)
		m["ssl.truststore.certificates"] = string(b)
	default:
		panic("securitytest: unknown format " + format)
	}
	if prefix == "" {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[prefix+k] = v
	}
	return out
}
