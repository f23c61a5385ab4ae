package zkserver

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// SecureOptions turn on ZooKeeper's TLS client port (secureClientPort,
// served by the Netty connection factory; the plain clientPort keeps
// working beside it) and the authentication a test of zookeeper.set.acl
// needs. Checked on Debian 12's ZooKeeper 3.8.0.
type SecureOptions struct {
	// KeyStore and TrustStore are the server's PKCS12 (or JKS) files:
	// ssl.keyStore.location / ssl.trustStore.location. Empty: no TLS port
	// (only SuperDigest applies).
	KeyStore, KeyStorePassword     string
	TrustStore, TrustStorePassword string
	// ClientAuth is ssl.clientAuth: "need" (default), "want" or "none".
	ClientAuth string
	// SuperDigest "super:password" makes that digest identity ZooKeeper's
	// super user (zookeeper.DigestAuthenticationProvider.superDigest), so a
	// test can read every ACL whatever it says.
	SuperDigest string
}

// Netty, which the TLS port needs, from Debian's libnetty-java (pulled in by
// the zookeeper package); the unversioned names follow package upgrades.
var nettyJars = []string{"netty-buffer", "netty-codec", "netty-common", "netty-handler",
	"netty-resolver", "netty-transport", "netty-transport-native-epoll", "netty-transport-native-unix-common"}

// secureConfig returns the zoo.cfg lines of o for the TLS port on port.
func (o *SecureOptions) secureConfig(port int) string {
	if o == nil || o.KeyStore == "" {
		return ""
	}
	auth := o.ClientAuth
	if auth == "" {
		auth = "need"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "secureClientPort=%d\nsecureClientPortAddress=127.0.0.1\n", port)
	b.WriteString("serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n")
	fmt.Fprintf(&b, "ssl.keyStore.location=%s\nssl.keyStore.password=%s\n", o.KeyStore, o.KeyStorePassword)
	fmt.Fprintf(&b, "ssl.trustStore.location=%s\nssl.trustStore.password=%s\n", o.TrustStore, o.TrustStorePassword)
	fmt.Fprintf(&b, "ssl.clientAuth=%s\n", auth)
	b.WriteString("authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider\n")
	return b.String()
}

// jvmFlags are the server JVM properties of o.
func (o *SecureOptions) jvmFlags() []string {
	if o == nil || o.SuperDigest == "" {
		return nil
	}
	return []string{"-Dzookeeper.DigestAuthenticationProvider.superDigest=" + DigestID(o.SuperDigest)}
}

// classPath is the extra class path the TLS port needs.
func (o *SecureOptions) classPath() (string, error) {
	if o == nil || o.KeyStore == "" {
		return "", nil
	}
	var cp []string
	for _, j := range nettyJars {
		p := "/usr/share/java/" + j + ".jar"
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w (%s missing: the TLS port needs Netty, apt-get install -y libnetty-java)", ErrNotInstalled, p)
		}
		cp = append(cp, p)
	}
	return strings.Join(cp, ":"), nil
}

// DigestID is the id ZooKeeper's digest scheme gives "user:password":
// "user:" followed by the base64 SHA-1 of "user:password"
// (DigestAuthenticationProvider.generateDigest). An ACL "digest:<id>:cdrwa"
// names that identity.
func DigestID(userPassword string) string {
	user, _, _ := strings.Cut(userPassword, ":")
	sum := sha1.Sum([]byte(userPassword))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// SecureAddr is "127.0.0.1:<secureClientPort>", or "" without a TLS port.
func (s *Server) SecureAddr() string {
	if s.securePort == 0 {
		return ""
	}
	return "127.0.0.1:" + strconv.Itoa(s.securePort)
}

// PKI is a small certificate authority for tests, made with openssl and
// keytool in Dir: the CA, the ZooKeeper server's keystore and truststore
// (PKCS12) and client certificates. Every leaf certificate names
// 127.0.0.1 and localhost as subject alternative names, so hostname
// verification passes on loopback in both directions.
type PKI struct {
	Dir      string
	Password string // of every keystore and truststore
	CA       string // ca.pem
	caKey    string
}

// NewPKI makes the CA in dir (which must exist).
func NewPKI(dir string) (*PKI, error) {
	p := &PKI{Dir: dir, Password: "zk-test-secret", CA: filepath.Join(dir, "ca.pem"), caKey: filepath.Join(dir, "ca.key")}
	if err := run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2",
		"-subj", "/CN=Klassik Test CA", "-keyout", p.caKey, "-out", p.CA); err != nil {
		return nil, err
	}
	return p, nil
}

// Leaf is one certificate signed by the PKI, in the formats the tests use.
type Leaf struct {
	Key      string // PKCS#8 PEM private key
	Cert     string // PEM certificate
	PEM      string // key then certificate chain (leaf, CA): ssl.keystore.type=PEM
	PKCS12   string // keystore with key, leaf and CA
	JKS      string // the same as a JKS keystore (keytool)
	Password string
	// DN is the certificate's subject as Java prints it (RFC 2253), which
	// ZooKeeper's X509AuthenticationProvider uses as the x509 id.
	DN string
}

// Issue makes a key and a certificate for subject (an openssl -subj value
// such as "/O=Klassik/CN=broker") named name in the PKI's directory.
func (p *PKI) Issue(name, subject string) (*Leaf, error) {
	base := filepath.Join(p.Dir, name)
	l := &Leaf{Key: base + ".key", Cert: base + ".pem", PEM: base + "-chain.pem", PKCS12: base + ".p12", JKS: base + ".jks", Password: p.Password}
	ext := base + ".ext"
	if err := os.WriteFile(ext, []byte("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n"), 0o600); err != nil {
		return nil, err
	}
	csr := base + ".csr"
	steps := [][]string{
		{"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-sha256", "-subj", subject, "-keyout", l.Key, "-out", csr},
		{"openssl", "x509", "-req", "-in", csr, "-CA", p.CA, "-CAkey", p.caKey, "-CAcreateserial", "-sha256", "-days", "2", "-extfile", ext, "-out", l.Cert},
		{"openssl", "pkcs12", "-export", "-in", l.Cert, "-inkey", l.Key, "-certfile", p.CA, "-name", name, "-passout", "pass:" + p.Password, "-out", l.PKCS12},
		{"keytool", "-importkeystore", "-noprompt", "-srckeystore", l.PKCS12, "-srcstoretype", "PKCS12", "-srcstorepass", p.Password,
			"-destkeystore", l.JKS, "-deststoretype", "JKS", "-deststorepass", p.Password, "-destkeypass", p.Password},
	}
	for _, s := range steps {
		if err := run(s[0], s[1:]...); err != nil {
			return nil, err
		}
	}
	key, err := os.ReadFile(l.Key)
	if err != nil {
		return nil, err
	}
	cert, err := os.ReadFile(l.Cert)
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(p.CA)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(l.PEM, append(append(key, cert...), ca...), 0o600); err != nil {
		return nil, err
	}
	out, err := exec.Command("openssl", "x509", "-in", l.Cert, "-noout", "-subject", "-nameopt", "RFC2253").Output()
	if err != nil {
		return nil, fmt.Errorf("zkserver: openssl x509 -subject: %w", err)
	}
	l.DN = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "subject="))
	return l, nil
}

// TrustStore writes a PKCS12 truststore holding the CA (keytool -importcert)
// and returns its path.
func (p *PKI) TrustStore() (string, error) {
	ts := filepath.Join(p.Dir, "truststore.p12")
	if _, err := os.Stat(ts); err == nil {
		return ts, nil
	}
	return ts, run("keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", p.CA,
		"-keystore", ts, "-storetype", "PKCS12", "-storepass", p.Password)
}

// ServerOptions issues the ZooKeeper server's certificate and returns
// SecureOptions for a TLS port that needs client certificates of this PKI.
func (p *PKI) ServerOptions() (*SecureOptions, error) {
	srv, err := p.Issue("zookeeper", "/O=Klassik/CN=zookeeper")
	if err != nil {
		return nil, err
	}
	ts, err := p.TrustStore()
	if err != nil {
		return nil, err
	}
	return &SecureOptions{KeyStore: srv.PKCS12, KeyStorePassword: p.Password, TrustStore: ts, TrustStorePassword: p.Password, ClientAuth: "need"}, nil
}

func run(name string, args ...string) error {
	if _, err := exec.LookPath(name); err != nil {
		return fmt.Errorf("zkserver: %s is required for test certificates (apt-get install -y openssl default-jre-headless): %w", name, err)
	}
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("zkserver: %s %s: %w: %s", name, strings.Join(args, " "), err, out)
	}
	return nil
}
