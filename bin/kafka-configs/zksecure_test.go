package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// TestZooKeeperTLS: with --zk-tls-config-file the tool talks to
// ZooKeeper's TLS port with a client certificate and, as Kafka's tool does
// once it has an identity, creates the user's node readable and writable
// by that identity only (/config/users is a sensitive path).
func TestZooKeeperTLS(t *testing.T) {
	dir := t.TempDir()
	pki, err := zkserver.NewPKI(dir)
	if err != nil {
		t.Fatalf("test PKI (needs openssl and keytool): %v", err)
	}
	so, err := pki.ServerOptions()
	if err != nil {
		t.Fatal(err)
	}
	so.SuperDigest = "super:super-secret"
	srv, err := zkserver.Start(zkserver.Options{Dir: filepath.Join(dir, "zk"), Secure: so})
	if err != nil {
		t.Fatalf("secure ZooKeeper: %v", err)
	}
	t.Cleanup(func() { srv.Stop() })
	leaf, err := pki.Issue("configs", "/O=Klassik/CN=configs")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "zk-tls.properties")
	if err := os.WriteFile(cfg, []byte(strings.Join([]string{
		"zookeeper.ssl.client.enable=true",
		"zookeeper.clientCnxnSocket=" + config.ZkClientCnxnSocketNetty,
		"zookeeper.ssl.keystore.location=" + leaf.PEM,
		"zookeeper.ssl.keystore.type=PEM",
		"zookeeper.ssl.truststore.location=" + pki.CA,
		"zookeeper.ssl.truststore.type=PEM",
	}, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	chroot := zkserver.Chroot(t)
	args := []string{"--zookeeper", srv.SecureAddr() + chroot, "--zk-tls-config-file", cfg, "--alter",
		"--entity-type", "users", "--entity-name", "alice", "--add-config", "SCRAM-SHA-512=[password=alice-secret]"}
	var out, errOut strings.Builder
	if code := run(args, "", &out, &errOut); code != 0 || out.String() != zkWarning+"Completed updating config for entity: user-principal 'alice'.\n" {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}

	super, _, err := zk.Connect([]string{srv.Addr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close()
	if err := super.AddAuth("digest", []byte(so.SuperDigest)); err != nil {
		t.Fatal(err)
	}
	acl, _, err := super.GetACL(chroot + "/config/users/alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(acl) != 1 || acl[0].Scheme != "x509" || acl[0].ID != leaf.DN || acl[0].Perms != zk.PermAll {
		t.Fatalf("ACL of /config/users/alice = %+v, want all permissions for x509 %q only", acl, leaf.DN)
	}
	anon, _, err := zk.Connect([]string{srv.Addr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if _, _, err := anon.Get(chroot + "/config/users/alice"); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("an unauthenticated read of the credential: %v, want NoAuth", err)
	}
}
