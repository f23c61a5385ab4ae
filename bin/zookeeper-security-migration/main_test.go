package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/security/securitytest"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

// secureEnv is one secure ZooKeeper (TLS port with client certificates,
// digest super user "super:super-secret") and a client identity for the
// tool; each case works in a chroot.
type secureEnv struct {
	srv    *zkserver.Server
	leaf   *securitytest.Identity
	super  *zk.Conn
	tlsCfg string // a --zk-tls-config-file for leaf
}

// TestMigration runs the tool's cases against one secure ZooKeeper.
func TestMigration(t *testing.T) {
	e := startSecure(t)
	t.Run("secure then unsecure", func(t *testing.T) { testMigrateSecureThenUnsecure(t, e) })
	t.Run("checks", func(t *testing.T) { testMigrationChecks(t, e) })
	t.Run("digest", func(t *testing.T) { testMigrateWithDigest(t, e) })
}

func startSecure(t *testing.T) *secureEnv {
	t.Helper()
	ca := securitytest.NewCA(t, "Klassik ZooKeeper Test CA")
	server := ca.Issue(t, "zookeeper", "/O=Klassik/CN=zookeeper")
	so := &zkserver.SecureOptions{KeyStore: server.PKCS12, KeyStorePassword: securitytest.Password,
		TrustStore: ca.TrustPKCS12, TrustStorePassword: securitytest.Password, ClientAuth: "need", SuperDigest: "super:super-secret"}
	srv, err := zkserver.Start(zkserver.Options{Dir: filepath.Join(t.TempDir(), "zk"), Secure: so})
	if err != nil {
		t.Fatalf("secure ZooKeeper: %v", err)
	}
	t.Cleanup(func() { srv.Stop() })
	leaf := ca.Issue(t, "migrator", "/O=Klassik/CN=migrator")
	super, _, err := zk.Connect([]string{srv.Addr()}, 10*time.Second, zk.WithLogInfo(false))
	mustOK(t, err)
	t.Cleanup(super.Close)
	mustOK(t, super.AddAuth("digest", []byte(so.SuperDigest)))
	cfg := filepath.Join(t.TempDir(), "zk-tls.properties")
	props := strings.Join([]string{
		"zookeeper.ssl.client.enable=true",
		"zookeeper.clientCnxnSocket=" + config.ZkClientCnxnSocketNetty,
		"zookeeper.ssl.keystore.location=" + leaf.PKCS12,
		"zookeeper.ssl.keystore.password=" + securitytest.Password,
		"zookeeper.ssl.truststore.location=" + ca.TrustJKS,
		"zookeeper.ssl.truststore.password=" + securitytest.Password,
		"zookeeper.set.acl=ignored-here",
	}, "\n") + "\n"
	mustOK(t, os.WriteFile(cfg, []byte(props), 0o600))
	return &secureEnv{srv: srv, leaf: leaf, super: super, tlsCfg: cfg}
}

// tree writes an unsecured Kafka tree in a new chroot, as brokers without
// zookeeper.set.acl leave it, and returns the chroot and every node path
// (chroot-relative) below it.
func (e *secureEnv) tree(t *testing.T) string {
	t.Helper()
	chroot := zkserver.Chroot(t)
	c, err := zkclient.Connect(e.srv.Addr()+chroot, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mustOK(t, c.EnsureTopLevelPaths())
	_, err = c.GetOrCreateClusterID()
	mustOK(t, err)
	mustOK(t, c.CreateTopic("orders", zkpaths.TopicAssignment{Partitions: map[int32][]int32{0: {1}}}, nil))
	mustOK(t, c.ChangeEntityConfigs(zkpaths.ConfigTypeUser, "alice", map[string]string{"producer_byte_rate": "1"}))
	_, err = c.CreateRecursive("/kafka-acl/Topic/orders", []byte(`{"version":1,"acls":[]}`), zkclient.Persistent)
	mustOK(t, err)
	_, err = c.CreateRecursive("/delegation_token/tokens/t1", []byte(`{}`), zkclient.Persistent)
	mustOK(t, err)
	return chroot
}

// acls returns "path -> ACL" for every node below chroot.
func (e *secureEnv) acls(t *testing.T, chroot string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(p string)
	walk = func(p string) {
		acl, _, err := e.super.GetACL(p)
		mustOK(t, err)
		rel := strings.TrimPrefix(p, chroot)
		if rel == "" {
			rel = "/"
		}
		out[rel] = aclString(acl)
		kids, _, err := e.super.Children(p)
		mustOK(t, err)
		for _, k := range kids {
			walk(p + "/" + k)
		}
	}
	walk(chroot)
	return out
}

func aclString(acls []zk.ACL) string {
	var parts []string
	for _, a := range acls {
		perms := ""
		for _, x := range []struct {
			bit int32
			c   string
		}{{zk.PermCreate, "c"}, {zk.PermDelete, "d"}, {zk.PermRead, "r"}, {zk.PermWrite, "w"}, {zk.PermAdmin, "a"}} {
			if a.Perms&x.bit != 0 {
				perms += x.c
			}
		}
		parts = append(parts, a.Scheme+":"+a.ID+":"+perms)
	}
	return strings.Join(parts, ",")
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// secure then unsecure on an existing tree, through the script: every
// node gets the ACL a secured broker would have created it with (the
// certificate's DN owns it; world read except below /config/users,
// /config/brokers and /delegation_token/tokens; /consumers open), and
// unsecure gives every node back to the world.
func testMigrateSecureThenUnsecure(t *testing.T, e *secureEnv) {
	chroot := e.tree(t)
	stdout, stderr, code := clitest.Script(t, nil, "zookeeper-security-migration.sh",
		"--zookeeper.connect", e.srv.SecureAddr()+chroot, "--zookeeper.acl", "secure", "--zk-tls-config-file", e.tlsCfg)
	if code != 0 {
		t.Fatalf("secure: exit %d\n%s%s", code, stdout, stderr)
	}
	// The tree had no /controller, /kafka-acl-changes, ...: Kafka warns and
	// creates the persistent ones.
	if !strings.Contains(stdout, "Warning: The following secure root paths do not exist in ZooKeeper: ") ||
		!strings.Contains(stdout, "/kafka-acl-changes") {
		t.Errorf("secure: no warning about the missing roots:\n%s", stdout)
	}
	owner := "x509:" + zkserver.X509ID(e.leaf.DN) + ":cdrwa"
	got := e.acls(t, chroot)
	var paths []string
	for p := range got {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		want := owner + ",world:anyone:r"
		switch {
		case p == zkpaths.ConsumersPath:
			want = "world:anyone:cdrwa"
		case zkpaths.IsSensitivePath(p):
			want = owner
		}
		if got[p] != want {
			t.Errorf("secure: ACL of %s = %s, want %s", p, got[p], want)
		}
	}
	for _, p := range []string{"/config/users/alice", "/delegation_token/tokens/t1", "/kafka-acl/Topic/orders", "/kafka-acl-changes", "/brokers/topics/orders"} {
		if _, ok := got[p]; !ok {
			t.Errorf("secure: %s missing from the tree", p)
		}
	}
	for _, p := range []string{zkpaths.ControllerPath, zkpaths.MigrationPath, zkpaths.FeaturePath} {
		if _, ok := got[p]; ok {
			t.Errorf("secure: the tool created %s", p)
		}
	}

	// unsecure, in-process this time, over the same certificate.
	var out, errOut bytes.Buffer
	if code := run([]string{"--zookeeper.connect", e.srv.SecureAddr() + chroot, "--zookeeper.acl", "unsecure", "--zk-tls-config-file", e.tlsCfg},
		"", &out, &errOut); code != 0 {
		t.Fatalf("unsecure: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	for p, acl := range e.acls(t, chroot) {
		if acl != "world:anyone:cdrwa" {
			t.Errorf("unsecure: ACL of %s = %s", p, acl)
		}
	}
}

// --enable.path.check stops before changing anything when a root is
// missing; without any identity the tool refuses to run, as Kafka's does.
func testMigrationChecks(t *testing.T, e *secureEnv) {
	chroot := e.tree(t)
	var out, errOut bytes.Buffer
	code := run([]string{"--zookeeper.connect", e.srv.SecureAddr() + chroot, "--zookeeper.acl", "secure", "--zk-tls-config-file", e.tlsCfg, "--enable.path.check"}, "", &out, &errOut)
	if code != 1 || !strings.HasSuffix(out.String(), "Exit the command.\n") {
		t.Errorf("path check: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if acl := e.acls(t, chroot)[zkpaths.TopicsPath]; acl != "world:anyone:cdrwa" {
		t.Errorf("path check changed ACLs: %s", acl)
	}

	out.Reset()
	errOut.Reset()
	code = run([]string{"--zookeeper.connect", e.srv.Addr() + chroot, "--zookeeper.acl", "secure"}, "-Xmx1g", &out, &errOut)
	if code != 1 || !strings.HasPrefix(errOut.String(), "ERROR: No JAAS configuration file has been specified and no TLS client certificate has been specified.") ||
		!strings.Contains(errOut.String(), "java.lang.IllegalArgumentException: Incorrect configuration") {
		t.Errorf("no identity: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

// The command line: no argument or --help prints the help on stderr with
// status 1 (printUsageAndDie), a --zookeeper.acl other than secure or
// unsecure too.
func TestCommandLine(t *testing.T) {
	for _, args := range [][]string{nil, {"--help"}, {"--zookeeper.acl", "open"}} {
		var out, errOut bytes.Buffer
		code := run(args, "", &out, &errOut)
		if code != 1 || !strings.HasPrefix(errOut.String(), usageMessage+"\n") || !strings.Contains(errOut.String(), "--zookeeper.acl") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out.String(), errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"--version"}, "", &out, &errOut); code != 0 || out.Len() == 0 {
		t.Errorf("--version: exit %d %q", code, out.String())
	}
}

// The JAAS Client section in KAFKA_OPTS authenticates the tool with
// ZooKeeper's digest scheme on the plaintext port; a JAAS file without
// that section is "Security isn't enabled", as in Kafka.
func testMigrateWithDigest(t *testing.T, e *secureEnv) {
	chroot := e.tree(t)
	dir := t.TempDir()
	jaas := filepath.Join(dir, "jaas.conf")
	mustOK(t, os.WriteFile(jaas, []byte(`Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="admin" password="admin-zk"; };`), 0o600))
	var out, errOut bytes.Buffer
	if code := run([]string{"--zookeeper.connect", e.srv.Addr() + chroot, "--zookeeper.acl", "secure"},
		"-Xmx256m -Djava.security.auth.login.config="+jaas, &out, &errOut); code != 0 {
		t.Fatalf("secure: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	owner := "digest:" + zkserver.DigestID("admin:admin-zk") + ":cdrwa"
	got := e.acls(t, chroot)
	if got[zkpaths.TopicsPath] != owner+",world:anyone:r" || got["/config/users/alice"] != owner {
		t.Errorf("ACLs: /brokers/topics %s, /config/users/alice %s", got[zkpaths.TopicsPath], got["/config/users/alice"])
	}

	other := filepath.Join(dir, "server-only.conf")
	mustOK(t, os.WriteFile(other, []byte(`KafkaServer { org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b"; };`), 0o600))
	out.Reset()
	errOut.Reset()
	code := run([]string{"--zookeeper.connect", e.srv.Addr() + chroot, "--zookeeper.acl", "secure"}, "-Djava.security.auth.login.config="+other, &out, &errOut)
	if code != 1 || out.String() != "ERROR: Security isn't enabled, most likely the file isn't set properly: "+other+"\n" {
		t.Errorf("no Client section: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}
