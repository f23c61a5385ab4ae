package zkserver

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// SecureOptions turn on ZooKeeper's TLS client port (secureClientPort,
// served by the Netty connection factory; the plain clientPort keeps
// working beside it) and the authentication a test of zookeeper.set.acl
// needs. Checked on Debian 12's ZooKeeper 3.8.0.
type SecureOptions struct {
	// KeyStore and TrustStore are the server's PKCS12 (or JKS) files
	// (tests make them with broker/security/securitytest):
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

// X509ID is the id ZooKeeper's X509AuthenticationProvider gives a client
// certificate whose subject is subj in openssl's -subj form
// ("/O=Klassik/CN=broker"): Java's RFC 2253 rendering, most specific
// attribute first ("CN=broker,O=Klassik"). An ACL "x509:<id>:cdrwa" names
// that identity. Subjects with characters RFC 2253 escapes are not handled.
func X509ID(subj string) string {
	parts := strings.Split(strings.Trim(subj, "/"), "/")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ",")
}
