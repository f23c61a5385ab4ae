package main

import (
	"bytes"
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
	args := []string{"--bootstrap-server", "127.0.0.1:1", "--command-config", f, "--describe", "--entity-type", "users"}
	var out bytes.Buffer
	if code := run(args, &out, &out); code == 0 {
		t.Fatalf("exit 0 with sasl.mechanism=GSSAPI:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "sasl.mechanism GSSAPI is not supported") {
		t.Fatalf("output does not name the refused property:\n%s", out.String())
	}
}
