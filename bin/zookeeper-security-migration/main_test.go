package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

func TestMain(m *testing.M) {
	code := clitest.Main(m)
	if shared.env != nil {
		shared.env.super.Close()
		shared.env.srv.Stop()
		os.RemoveAll(shared.env.pki.Dir)
	}
	os.Exit(code)
}

var shared struct {
	once sync.Once
	env  *secureEnv
	err  error
}

// One secure ZooKeeper (TLS port with client certificates, digest super
// user "super:super-secret") for the package; each test works in a chroot.
type secureEnv struct {
	srv    *zkserver.Server
	pki    *zkserver.PKI
	leaf   *zkserver.Leaf
	super  *zk.Conn
	tlsCfg string // a --zk-tls-config-file for leaf
}

func startSecure(t *testing.T) *secureEnv {
	t.Helper()
	shared.once.Do(func() { shared.env, shared.err = newSecureEnv() })
	if shared.err != nil {
		t.Fatalf("secure ZooKeeper: %v", shared.err)
	}
	return shared.env
}

func newSecureEnv() (*secureEnv, error) {
	dir, err := os.MkdirTemp("", "klassik-zk-migration-")
	if err != nil {
		return nil, err
	}
	pki, err := zkserver.NewPKI(dir)
	if err != nil {
		return nil, err
	}
	so, err := pki.ServerOptions()
	if err != nil {
		return nil, err
	}
	so.SuperDigest = "super:super-secret"
	srv, err := zkserver.Start(zkserver.Options{Dir: filepath.Join(dir, "zk"), Secure: so})
	if err != nil {
		return nil, err
	}
	leaf, err := pki.Issue("migrator", "/O=Klassik/CN=migrator")
	if err != nil {
		srv.Stop()
		return nil, err
	}
	super, _, err := zk.Connect([]string{srv.Addr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		srv.Stop()
		return nil, err
	}
	if err := super.AddAuth("digest", []byte(so.SuperDigest)); err != nil {
		srv.Stop()
		return nil, err
	}
	cfg := filepath.Join(dir, "zk-tls.properties")
	props := strings.Join([]string{
		"zookeeper.ssl.client.enable=true",
		"zookeeper.clientCnxnSocket=" + config.ZkClientCnxnSocketNetty,
		"zookeeper.ssl.keystore.location=" + leaf.PEM,
		"zookeeper.ssl.keystore.type=PEM",
		"zookeeper.ssl.truststore.location=" + pki.CA,
		"zookeeper.ssl.truststore.type=PEM",
		"zookeeper.set.acl=ignored-here",
	}, "\n") + "\n"
	if err := os.WriteFile(cfg, []byte(props), 0o600); err != nil {
		srv.Stop()
		return nil, err
	}
	return &secureEnv{srv: srv, pki: pki, leaf: leaf, super: super, tlsCfg: cfg}, nil
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
func TestMigrateSecureThenUnsecure(t *testing.T) {
	e := startSecure(t)
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
	owner := "x509:" + e.leaf.DN + ":cdrwa"
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
func TestMigrationChecks(t *testing.T) {
	e := startSecure(t)
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
