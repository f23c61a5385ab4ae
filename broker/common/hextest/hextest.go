// Package hextest reads the hex dumps that tests write to pin wire and
// record bytes (for example "0001 0002 00000003"): white space between the
// digits is only for the reader.
package hextest

import (
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// Decode returns the bytes of the hex dump s, ignoring white space, and
// fails the test when s is not hex.
func Decode(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Golden compares got with the hex dump in the file at path, first
// rewriting the file with got when update is set (a test's -update flag).
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(hex.EncodeToString(got)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file %s: %v (run with -update to create it)", path, err)
	}
	want, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("golden file %s: %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s:\n got %x\nwant %x", path, got, want)
	}
}
