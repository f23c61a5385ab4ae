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
	args := []string{"--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--consumer.config", f}
	var out bytes.Buffer
	if code := run(context.Background(), args, &out, &out); code == 0 {
		t.Fatalf("exit 0 with sasl.mechanism=GSSAPI:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "sasl.mechanism GSSAPI is not supported") {
		t.Fatalf("output does not name the refused property:\n%s", out.String())
	}
}

// TestOldConsumerRefusesSecurity: the old consumer (--zookeeper) fetches
// over PLAINTEXT only, so a secured security.protocol is refused by name.
func TestOldConsumerRefusesSecurity(t *testing.T) {
	args := []string{"--zookeeper", "127.0.0.1:1", "--topic", "t", "--consumer-property", "security.protocol=SASL_SSL"}
	var out bytes.Buffer
	if code := run(context.Background(), args, &out, &out); code == 0 {
		t.Fatalf("exit 0 with security.protocol=SASL_SSL and --zookeeper:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "security.protocol=SASL_SSL is not supported by the old consumer (--zookeeper)") {
		t.Fatalf("output does not name the refused property:\n%s", out.String())
	}
}
