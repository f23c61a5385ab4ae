package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/broker/security/securitytest"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// TestZooKeeperTLS: with --zk-tls-config-file the tool talks to
// ZooKeeper's TLS port with a client certificate and, as Kafka's tool does
// once it has an identity, creates the user's node readable and writable
// by that identity only (/config/users is a sensitive path).
func TestZooKeeperTLS(t *testing.T) {
	dir := t.TempDir()
	ca := securitytest.NewCA(t, "Klassik ZooKeeper Test CA")
	server := ca.Issue(t, "zookeeper", "/O=Klassik/CN=zookeeper")
	so := &zkserver.SecureOptions{KeyStore: server.PKCS12, KeyStorePassword: securitytest.Password,
		TrustStore: ca.TrustPKCS12, TrustStorePassword: securitytest.Password, ClientAuth: "need", SuperDigest: "super:super-secret"}
	srv, err := zkserver.Start(zkserver.Options{Dir: filepath.Join(dir, "zk"), Secure: so})
	if err != nil {
		t.Fatalf("secure ZooKeeper: %v", err)
	}
	t.Cleanup(func() { srv.Stop() })
	leaf := ca.Issue(t, "configs", "/O=Klassik/CN=configs")
	cfg := filepath.Join(dir, "zk-tls.properties")
	if err := os.WriteFile(cfg, []byte(strings.Join([]string{
		"zookeeper.ssl.client.enable=true",
		"zookeeper.clientCnxnSocket=" + config.ZkClientCnxnSocketNetty,
		"zookeeper.ssl.keystore.location=" + leaf.PKCS12,
		"zookeeper.ssl.keystore.password=" + securitytest.Password,
		"zookeeper.ssl.keystore.type=PKCS12",
		"zookeeper.ssl.truststore.location=" + ca.TrustPKCS12,
		"zookeeper.ssl.truststore.password=" + securitytest.Password,
		"zookeeper.ssl.truststore.type=PKCS12",
	}, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	chroot := zkserver.Chroot(t)
	args := []string{"--zookeeper", srv.SecureAddr() + chroot, "--zk-tls-config-file", cfg, "--alter",
		"--entity-type", "users", "--entity-name", "alice", "--add-config", "SCRAM-SHA-512=[password=alice-secret]"}
	var out, errOut strings.Builder
	t.Setenv("KAFKA_OPTS", "")
	if code := run(args, &out, &errOut); code != 0 || out.String() != zkWarning+"Completed updating config for entity: user-principal 'alice'.\n" {
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
	if len(acl) != 1 || acl[0].Scheme != "x509" || acl[0].ID != zkserver.X509ID(leaf.DN) || acl[0].Perms != zk.PermAll {
		t.Fatalf("ACL of /config/users/alice = %+v, want all permissions for x509 %q only", acl, zkserver.X509ID(leaf.DN))
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
