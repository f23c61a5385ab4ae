package zkclient_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/security/securitytest"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// secureZK is the ZooKeeper of TestSecureZooKeeper: a TLS client port
// that needs client certificates of ca, the x509 auth provider, and the
// digest super user "super:super-secret" for inspecting any ACL.
type secureZK struct {
	srv *zkserver.Server
	ca  *securitytest.CA
}

const superUser = "super:super-secret"

// TestSecureZooKeeper runs the TLS and secure-ACL cases against one secure
// ZooKeeper (its keystores live in this test's temporary directory).
func TestSecureZooKeeper(t *testing.T) {
	ca := securitytest.NewCA(t, "Klassik ZooKeeper Test CA")
	server := ca.Issue(t, "zookeeper", "/O=Klassik/CN=zookeeper")
	srv, err := zkserver.Start(zkserver.Options{Dir: filepath.Join(t.TempDir(), "zk"), Secure: &zkserver.SecureOptions{
		KeyStore: server.PKCS12, KeyStorePassword: securitytest.Password,
		TrustStore: ca.TrustPKCS12, TrustStorePassword: securitytest.Password,
		ClientAuth: "need", SuperDigest: superUser}})
	if err != nil {
		t.Fatalf("secure ZooKeeper: %v", err)
	}
	t.Cleanup(func() { srv.Stop() })
	z := &secureZK{srv: srv, ca: ca}
	t.Run("secure ACLs over TLS with x509", func(t *testing.T) { testSecureACLsOverTLSWithX509(t, z) })
	t.Run("TLS failures do not hang", func(t *testing.T) { testTLSFailuresDoNotHang(t, z) })
	t.Run("zookeeper.ssl settings", func(t *testing.T) { testZooKeeperTLSSettings(t, z) })
}

// tlsConfig is a client TLS configuration trusting pki's CA with the
// certificate of leaf (nil: none).
func tlsConfig(t *testing.T, ca *securitytest.CA, leaf *securitytest.Identity) *tls.Config {
	t.Helper()
	caPEM, err := os.ReadFile(ca.CertPEM)
	mustNoErr(t, err)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if leaf != nil {
		cert, err := tls.LoadX509KeyPair(leaf.CertPEM, leaf.KeyPEM)
		mustNoErr(t, err)
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg
}

// superConn is a raw session authenticated as the digest super user.
func superConn(t *testing.T, srv *zkserver.Server) *zk.Conn {
	t.Helper()
	c, _, err := zk.Connect([]string{srv.Addr()}, sessionTimeout, zk.WithLogInfo(false))
	mustNoErr(t, err)
	t.Cleanup(c.Close)
	mustNoErr(t, c.AddAuth("digest", []byte(superUser)))
	return c
}

func anonConn(t *testing.T, srv *zkserver.Server) *zk.Conn {
	t.Helper()
	c, _, err := zk.Connect([]string{srv.Addr()}, sessionTimeout, zk.WithLogInfo(false))
	mustNoErr(t, err)
	t.Cleanup(c.Close)
	return c
}

func aclString(acls []zk.ACL) string {
	var parts []string
	for _, a := range acls {
		parts = append(parts, a.Scheme+":"+a.ID+":"+permString(a.Perms))
	}
	return strings.Join(parts, ",")
}

// zookeeper.set.acl=true over TLS: the client certificate's DN owns every
// node ("x509:<DN>:cdrwa"), non-sensitive nodes are world-readable, the
// sensitive ones (ZkData.SensitiveRootPaths) are not, /consumers stays
// open; an anonymous session can read but not change the tree.
func testSecureACLsOverTLSWithX509(t *testing.T, z *secureZK) {
	srv := z.srv
	leaf := z.ca.Issue(t, "broker-x509", "/O=Klassik/OU=brokers/CN=broker")
	chroot := zkserver.Chroot(t)
	c, err := zkclient.Connect(srv.SecureAddr()+chroot, sessionTimeout,
		zkclient.WithSecureACLs(true), zkclient.WithTLS(tlsConfig(t, z.ca, leaf)))
	mustNoErr(t, err)
	defer c.Close()
	mustNoErr(t, c.EnsureTopLevelPaths())
	_, err = c.GetOrCreateClusterID()
	mustNoErr(t, err)
	mustNoErr(t, c.ChangeEntityConfigs(zkpaths.ConfigTypeUser, "alice", map[string]string{"producer_byte_rate": "1"}))

	owner := "x509:" + zkserver.X509ID(leaf.DN) + ":cdrwa"
	open := owner + ",world:anyone:r"
	sup := superConn(t, srv)
	want := map[string]string{
		"":                        open, // the chroot itself
		zkpaths.BrokersPath:       open,
		zkpaths.BrokerIDsPath:     open,
		zkpaths.TopicsPath:        open,
		zkpaths.ClusterIDPath:     open,
		zkpaths.ConfigPathRoot:    open,
		zkpaths.ConfigChangesPath: open,
		zkpaths.ConfigPath(zkpaths.ConfigTypeTopic, ""):     open,
		zkpaths.ConfigPath(zkpaths.ConfigTypeUser, ""):      owner,
		zkpaths.ConfigPath(zkpaths.ConfigTypeUser, "alice"): owner,
		zkpaths.ConfigPath(zkpaths.ConfigTypeBroker, ""):    owner,
		zkpaths.ConsumersPath:                               "world:anyone:cdrwa",
	}
	for p, w := range want {
		acls, _, err := sup.GetACL(chroot + p)
		mustNoErr(t, err)
		if got := aclString(acls); got != w {
			t.Errorf("ACL of %q = %s, want %s", p, got, w)
		}
	}
	// The client reads its own ACLs too.
	if acls, _, err := c.GetACL(zkpaths.ConfigPath(zkpaths.ConfigTypeUser, "alice")); err != nil || aclString(acls) != owner {
		t.Errorf("own GetACL: %v %v", aclString(acls), err)
	}

	anon := anonConn(t, srv)
	if _, _, err := anon.Get(chroot + zkpaths.ClusterIDPath); err != nil {
		t.Errorf("anonymous read of /cluster/id: %v", err)
	}
	if _, _, err := anon.Get(chroot + zkpaths.ConfigPath(zkpaths.ConfigTypeUser, "alice")); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("anonymous read of /config/users/alice: %v, want ErrNoAuth", err)
	}
	if _, err := anon.Create(chroot+zkpaths.BrokerIDPath(9), nil, 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("anonymous create under /brokers/ids: %v, want ErrNoAuth", err)
	}
	if _, err := anon.Set(chroot+zkpaths.ClusterIDPath, []byte("x"), -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("anonymous set of /cluster/id: %v, want ErrNoAuth", err)
	}
	if err := anon.Delete(chroot+zkpaths.ConfigPath(zkpaths.ConfigTypeTopic, ""), -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("anonymous delete of /config/topics: %v, want ErrNoAuth", err)
	}
}

// A session that asks for secure ACLs without any identity is refused
// before it connects (ZooKeeper would answer InvalidACL on the first
// create).
func TestSecureACLsNeedAnIdentity(t *testing.T) {
	_, err := zkclient.Connect("127.0.0.1:1/x", sessionTimeout, zkclient.WithSecureACLs(true))
	if !errors.Is(err, zkclient.ErrSecureACLsUnauthenticated) {
		t.Fatalf("Connect = %v, want ErrSecureACLsUnauthenticated", err)
	}
}

// TLS failures end Connect with an error within the connection timeout,
// never a hang: a server certificate from another CA, and no client
// certificate where the server needs one.
func testTLSFailuresDoNotHang(t *testing.T, z *secureZK) {
	srv := z.srv
	other := securitytest.NewCA(t, "Other CA")
	cases := map[string]*tls.Config{
		"untrusted server": tlsConfig(t, other, nil),
		"no client cert":   tlsConfig(t, z.ca, nil),
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			c, err := zkclient.Connect(srv.SecureAddr(), sessionTimeout, zkclient.WithTLS(cfg), zkclient.WithConnectTimeout(1500*time.Millisecond))
			if err == nil {
				c.Close()
				t.Fatalf("connected")
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("took %v", d)
			}
		})
	}
}

// The zookeeper.ssl.* settings as broker/security builds them, against the
// real TLS port: the host name is checked unless
// zookeeper.ssl.endpoint.identification.algorithm is empty (the chain
// still is: another CA fails either way), and the enabled protocols are
// the ones offered (the server speaks ZooKeeper's default, TLSv1.2 only).
func testZooKeeperTLSSettings(t *testing.T, z *secureZK) {
	srv := z.srv
	leaf := z.ca.Issue(t, "settings", "/CN=settings")
	other := securitytest.NewCA(t, "Other CA")
	// An unencrypted PEM key store (ZooKeeper takes one without password)
	// and a PEM trust store.
	base := security.ZooKeeperTLS{KeystoreLocation: leaf.KeyPEM + ".chain", KeystoreType: "PEM",
		TruststoreLocation: z.ca.CertPEM, TruststoreType: "PEM", EnabledProtocols: []string{"TLSv1.2"}, VerifyHostname: true}
	key, err := os.ReadFile(leaf.KeyPEM)
	mustNoErr(t, err)
	chain, err := os.ReadFile(leaf.ChainPEM)
	mustNoErr(t, err)
	mustNoErr(t, os.WriteFile(base.KeystoreLocation, append(key, chain...), 0o600))
	cases := []struct {
		name       string
		serverName string
		edit       func(c *security.ZooKeeperTLS)
		ok         bool
	}{
		{"defaults", "", nil, true},
		{"wrong host name", "not-zookeeper.example", nil, false},
		{"wrong host name, check off", "not-zookeeper.example", func(c *security.ZooKeeperTLS) { c.VerifyHostname = false }, true},
		{"other CA, check off", "", func(c *security.ZooKeeperTLS) { c.VerifyHostname = false; c.TruststoreLocation = other.CertPEM }, false},
		{"TLSv1.3 only", "", func(c *security.ZooKeeperTLS) { c.EnabledProtocols = []string{"TLSv1.3"} }, false},
		{"cipher suite", "", func(c *security.ZooKeeperTLS) { c.CipherSuites = []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"} }, true},
		{"encrypted PEM key store", "", func(c *security.ZooKeeperTLS) {
			c.KeystoreLocation, c.KeystorePassword = leaf.PEMStore, securitytest.Password
		}, true},
		{"JKS key store, PKCS12 trust store", "", func(c *security.ZooKeeperTLS) {
			c.KeystoreLocation, c.KeystorePassword, c.KeystoreType = leaf.JKS, securitytest.Password, "JKS"
			c.TruststoreLocation, c.TruststorePassword, c.TruststoreType = z.ca.TrustPKCS12, securitytest.Password, "PKCS12"
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			if tc.edit != nil {
				tc.edit(&s)
			}
			cfg, err := security.ZooKeeperTLSConfig(&s)
			mustNoErr(t, err)
			cfg.ServerName = tc.serverName
			// A failing handshake is retried until the connect timeout; a
			// short one keeps the test quick, a working one needs far less.
			timeout := 10 * time.Second
			if !tc.ok {
				timeout = 1500 * time.Millisecond
			}
			c, err := zkclient.Connect(srv.SecureAddr(), sessionTimeout, zkclient.WithTLS(cfg), zkclient.WithConnectTimeout(timeout))
			if err == nil {
				c.Close()
			}
			if (err == nil) != tc.ok {
				t.Fatalf("connect: %v, want success %v", err, tc.ok)
			}
		})
	}
}

// Digest credentials survive a session expiry: go-zookeeper sends them
// again on the new session before any request, so nodes created after the
// expiry are still owned by "digest:kafka:<hash>" (a TLS session gets its
// x509 identity from every new handshake in the same way).
func TestDigestAuthAfterSessionExpiry(t *testing.T) {
	srv, err := zkserver.Shared()
	mustNoErr(t, err)
	p, err := zkserver.NewProxy(srv.Addr())
	mustNoErr(t, err)
	defer p.Close()
	chroot := zkserver.Chroot(t)
	c, err := zkclient.Connect(p.ConnectString(chroot), sessionTimeout, zkclient.WithSecureACLs(true), zkclient.WithDigestAuth("kafka", "secret"))
	mustNoErr(t, err)
	defer c.Close()
	expireSession(t, c, 15*time.Second, func(id int64) error { return p.ExpireSession(id, 15*time.Second) })
	_, err = c.CreateRecursive("/config/users/bob", []byte("{}"), zkclient.Persistent)
	mustNoErr(t, err)
	acls, _, err := c.GetACL("/config/users/bob")
	mustNoErr(t, err)
	if got, want := aclString(acls), "digest:"+zkserver.DigestID("kafka:secret")+":cdrwa"; got != want {
		t.Fatalf("ACL after expiry = %s, want %s", got, want)
	}
}
