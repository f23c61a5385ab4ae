package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecurityPropertiesHonouredOrRefused: the tool reads the client
// security properties of its config file (clitools/security): one it
// cannot honour is an error naming it, before any connection.
func TestSecurityPropertiesHonouredOrRefused(t *testing.T) {
	f := filepath.Join(t.TempDir(), "client.properties")
	props := "security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n"
	if err := os.WriteFile(f, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--bootstrap-server", "127.0.0.1:1", "--command-config", f, "--list"}
	var out bytes.Buffer
	if code := run(context.Background(), args, &out, &out); code == 0 {
		t.Fatalf("exit 0 with sasl.mechanism=GSSAPI:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "sasl.mechanism GSSAPI is not supported") {
		t.Fatalf("output does not name the refused property:\n%s", out.String())
	}
}

// TestZooKeeperModeRefusesSecurity: --zookeeper reads the brokers over
// PLAINTEXT only, so a secured security.protocol is refused by name.
func TestZooKeeperModeRefusesSecurity(t *testing.T) {
	f := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(f, []byte("security.protocol=SSL\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := run(context.Background(), []string{"--zookeeper", "127.0.0.1:1", "--command-config", f, "--list"}, &out, &out); code == 0 {
		t.Fatalf("exit 0 with security.protocol=SSL and --zookeeper:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "security.protocol=SSL is not supported by kafka-consumer-groups --zookeeper") {
		t.Fatalf("output does not name the refused property:\n%s", out.String())
	}
}
