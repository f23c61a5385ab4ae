package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// On a tree secured by the brokers' digest identity (zookeeper.set.acl),
// --zookeeper mode writes a SCRAM credential only when KAFKA_OPTS names a
// JAAS file whose Client section logs in as that identity, as Kafka's
// tool does; the node then carries the creator-only ACL of a sensitive
// path. Without the login the write is refused.
func TestZooKeeperModeOnSecuredTree(t *testing.T) {
	connect := zkserver.ConnectString(t)
	brokers, err := zkclient.Connect(connect, 10*time.Second, zkclient.WithSecureACLs(true), zkclient.WithDigestAuth("kafka", "zk-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer brokers.Close()
	if err := brokers.EnsureTopLevelPaths(); err != nil {
		t.Fatal(err)
	}
	args := []string{"--zookeeper", connect, "--alter", "--entity-type", "users", "--entity-name", "alice",
		"--add-config", "SCRAM-SHA-256=[iterations=4096,password=alice-secret]"}

	var out, errOut bytes.Buffer
	t.Setenv("KAFKA_OPTS", "")
	if code := run(args, &out, &errOut); code == 0 {
		t.Fatalf("unauthenticated write succeeded:\n%s%s", out.String(), errOut.String())
	}

	jaas := filepath.Join(t.TempDir(), "jaas.conf")
	if err := os.WriteFile(jaas, []byte(`Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="kafka" password="zk-secret"; };`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KAFKA_OPTS", "-Djava.security.auth.login.config="+jaas)
	out.Reset()
	errOut.Reset()
	if code := run(args, &out, &errOut); code != 0 || !strings.Contains(out.String(), "Completed updating config for entity: user-principal 'alice'.") {
		t.Fatalf("authenticated write: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	acls, _, err := brokers.GetACL("/config/users/alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(acls) != 1 || acls[0].Scheme != "digest" || acls[0].ID != zkserver.DigestID("kafka:zk-secret") || acls[0].Perms != zk.PermAll {
		t.Errorf("ACL of /config/users/alice: %+v", acls)
	}
	anon, _, err := zk.Connect([]string{strings.SplitN(connect, "/", 2)[0]}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if _, _, err := anon.Get("/" + strings.SplitN(connect, "/", 2)[1] + "/config/users/alice"); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("anonymous read of the credential: %v, want ErrNoAuth", err)
	}
}
