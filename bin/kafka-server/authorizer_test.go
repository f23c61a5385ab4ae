package main

import (
	"bytes"
	"strings"
	"testing"
)

// An authorizer Klassik does not implement stops the broker at start-up
// with a message naming the key and the class: it must never start open.
func TestUnknownAuthorizerStopsStartup(t *testing.T) {
	p := writeProps(t, "broker.id=1", "zookeeper.connect=127.0.0.1:1", "log.dirs="+t.TempDir(), "authorizer.class.name=com.example.Unknown")
	var out, errb bytes.Buffer
	if code := run([]string{p}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "authorizer.class.name") ||
		!strings.Contains(errb.String(), "com.example.Unknown") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}
