package zkclient_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/broker/security/zksecurity"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// secureZK is this file's ZooKeeper: a TLS client port that needs client
// certificates of pki, the x509 auth provider, and the digest super user
// "super:super-secret" for inspecting any ACL. Started once for the tests
// of this file.
var secureZK struct {
	once sync.Once
	srv  *zkserver.Server
	pki  *zkserver.PKI
	err  error
}

func stopSecureZK() {
	if secureZK.srv != nil {
		secureZK.srv.Stop()
		_ = os.RemoveAll(secureZK.pki.Dir)
	}
}

const superUser = "super:super-secret"

func startSecureZK(t *testing.T) (*zkserver.Server, *zkserver.PKI) {
	t.Helper()
	secureZK.once.Do(func() {
		dir, err := os.MkdirTemp("", "klassik-zksec-")
		if err != nil {
			secureZK.err = err
			return
		}
		pki, err := zkserver.NewPKI(dir)
		if err != nil {
			secureZK.err = err
			return
		}
		so, err := pki.ServerOptions()
		if err != nil {
			secureZK.err = err
			return
		}
		so.SuperDigest = superUser
		secureZK.pki = pki
		secureZK.srv, secureZK.err = zkserver.Start(zkserver.Options{Dir: dir + "/zk", Secure: so})
	})
	if secureZK.err != nil {
		t.Fatalf("secure ZooKeeper: %v", secureZK.err)
	}
	return secureZK.srv, secureZK.pki
}

// tlsConfig is a client TLS configuration trusting pki's CA with the
// certificate of leaf (nil: none).
func tlsConfig(t *testing.T, pki *zkserver.PKI, leaf *zkserver.Leaf) *tls.Config {
	t.Helper()
	ca, err := os.ReadFile(pki.CA)
	mustNoErr(t, err)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if leaf != nil {
		cert, err := tls.LoadX509KeyPair(leaf.Cert, leaf.Key)
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
func TestSecureACLsOverTLSWithX509(t *testing.T) {
	srv, pki := startSecureZK(t)
	leaf, err := pki.Issue("broker-x509", "/O=Klassik/OU=brokers/CN=broker")
	mustNoErr(t, err)
	chroot := zkserver.Chroot(t)
	c, err := zkclient.Connect(srv.SecureAddr()+chroot, sessionTimeout,
		zkclient.WithSecureACLs(true), zkclient.WithTLS(tlsConfig(t, pki, leaf)))
	mustNoErr(t, err)
	defer c.Close()
	mustNoErr(t, c.EnsureTopLevelPaths())
	_, err = c.GetOrCreateClusterID()
	mustNoErr(t, err)
	mustNoErr(t, c.ChangeEntityConfigs(zkpaths.ConfigTypeUser, "alice", map[string]string{"producer_byte_rate": "1"}))

	owner := "x509:" + leaf.DN + ":cdrwa"
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
func TestTLSFailuresDoNotHang(t *testing.T) {
	srv, pki := startSecureZK(t)
	dir := t.TempDir()
	other, err := zkserver.NewPKI(dir)
	mustNoErr(t, err)
	leaf, err := pki.Issue("tls-fail", "/CN=tls-fail")
	mustNoErr(t, err)
	cases := map[string]*tls.Config{
		"untrusted server": tlsConfig(t, other, nil),
		"no client cert":   tlsConfig(t, pki, nil),
	}
	_ = leaf
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			c, err := zkclient.Connect(srv.SecureAddr(), sessionTimeout, zkclient.WithTLS(cfg), zkclient.WithConnectTimeout(3*time.Second))
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
func TestZooKeeperTLSSettings(t *testing.T) {
	srv, pki := startSecureZK(t)
	leaf, err := pki.Issue("settings", "/CN=settings")
	mustNoErr(t, err)
	other, err := zkserver.NewPKI(t.TempDir())
	mustNoErr(t, err)
	base := config.ZooKeeperTLSConfig{KeystoreLocation: leaf.PEM, KeystoreType: "PEM",
		TruststoreLocation: pki.CA, TruststoreType: "PEM", EnabledProtocols: []string{"TLSv1.2"}, VerifyHostname: true}
	cases := []struct {
		name       string
		serverName string
		edit       func(c *config.ZooKeeperTLSConfig)
		ok         bool
	}{
		{"defaults", "", nil, true},
		{"wrong host name", "not-zookeeper.example", nil, false},
		{"wrong host name, check off", "not-zookeeper.example", func(c *config.ZooKeeperTLSConfig) { c.VerifyHostname = false }, true},
		{"other CA, check off", "", func(c *config.ZooKeeperTLSConfig) { c.VerifyHostname = false; c.TruststoreLocation = other.CA }, false},
		{"TLSv1.3 only", "", func(c *config.ZooKeeperTLSConfig) { c.EnabledProtocols = []string{"TLSv1.3"} }, false},
		{"cipher suite", "", func(c *config.ZooKeeperTLSConfig) { c.CipherSuites = []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"} }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			if tc.edit != nil {
				tc.edit(&s)
			}
			cfg, err := zksecurity.ZooKeeperTLSConfig(&s)
			mustNoErr(t, err)
			cfg.ServerName = tc.serverName
			c, err := zkclient.Connect(srv.SecureAddr(), sessionTimeout, zkclient.WithTLS(cfg), zkclient.WithConnectTimeout(3*time.Second))
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
