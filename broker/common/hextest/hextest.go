// Package hextest reads the hex dumps that tests write to pin wire and
// record bytes (for example "0001 0002 00000003"): white space between the
// digits is only for the reader.
package hextest

import (
	"encoding/hex"
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
