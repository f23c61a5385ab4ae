package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

// TestParse covers validateAndParseArgs: exactly one action, a connection,
// required and permitted options per action, and the bootstrap-only
// options.
func TestParse(t *testing.T) {
	cases := []struct {
		args    string
		wantErr string
		kind    string // "usage", "runtime" or "" for success
	}{
		{"--zookeeper h:1 --reassignment-json-file f", "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list", "usage"},
		{"--zookeeper h:1 --execute --verify --reassignment-json-file f", "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list", "usage"},
		{"--execute --reassignment-json-file f", "Please specify --bootstrap-server", "usage"},
		{"--zookeeper h:1 --execute", `Missing required argument "[reassignment-json-file]"`, "usage"},
		{"--zookeeper h:1 --generate --topics-to-move-json-file f", `Missing required argument "[broker-list]"`, "usage"},
		{"--zookeeper h:1 --verify --reassignment-json-file f --throttle 5", `Option "[throttle]" can't be used with action "[verify]"`, "usage"},
		{"--bootstrap-server h:1 --list --zookeeper h:2", `Option "[zookeeper]" can't be used with action "[list]"`, "usage"},
		{"--zookeeper h:1 --generate --topics-to-move-json-file f --broker-list 1 --disable-rack-aware --preserve-throttles", `Option "[preserve-throttles]" can't be used with action "[generate]"`, "usage"},
		{"--zookeeper h:1 --execute --reassignment-json-file f --additional", `You must specify --bootstrap-server when using "[additional]"`, "runtime"},
		{"--zookeeper h:1 --execute --reassignment-json-file f --timeout 5", `You must specify --bootstrap-server when using "[timeout]"`, "runtime"},
		{"--zookeeper h:1 --execute --reassignment-json-file f --throttle x", "Cannot parse argument 'x' of option throttle", "usage"},
		{"--bootstrap-server h:1 --gen", "gen is not a recognized option", "usage"},
		{"--zookeeper h:1 --execute --reassignment-json-file f --throttle 1024", "", ""},
		{"--bootstrap-server h:1 --cancel --reassignment-json-file f --preserve-throttles --timeout 500", "", ""},
		{"--bootstrap-server h:1 --list", "", ""},
	}
	for _, c := range cases {
		o, special, err := parse(strings.Fields(c.args))
		if special != "" {
			t.Fatalf("%s: special %q", c.args, special)
		}
		var ue *admintool.UsageError
		var re *runtimeError
		switch c.kind {
		case "":
			if err != nil {
				t.Errorf("%s: %v", c.args, err)
			}
			continue
		case "usage":
			if !errors.As(err, &ue) {
				t.Errorf("%s: %v is not a usage error", c.args, err)
				continue
			}
		case "runtime":
			if !errors.As(err, &re) {
				t.Errorf("%s: %v is not a runtime error", c.args, err)
				continue
			}
		}
		if err.Error() != c.wantErr {
			t.Errorf("%s: %q, want %q (%+v)", c.args, err, c.wantErr, o)
		}
	}
	o, _, err := parse(strings.Fields("--bootstrap-server h:1 --execute --reassignment-json-file f --throttle 1024 --timeout 500 --additional"))
	if err != nil || o.action != "execute" || o.throttle != 1024 || o.logDirThrottle != -1 || o.timeout != 500*time.Millisecond || !o.additional || o.reassignmentFile != "f" {
		t.Fatalf("%+v %v", o, err)
	}
}

func TestRunUsageAndErrors(t *testing.T) {
	var out, errOut strings.Builder
	if code := run(nil, &out, &errOut); code != 1 || !strings.HasPrefix(errOut.String(), helpText+"\nOption ") {
		t.Errorf("help: %d %q", code, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run(strings.Fields("--zookeeper h:1 --execute --reassignment-json-file f --additional"), &out, &errOut); code != 1 ||
		errOut.String() != "Exception in thread \"main\" java.lang.RuntimeException: You must specify --bootstrap-server when using \"[additional]\"\n" {
		t.Errorf("--additional without bootstrap: %d %q", code, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run(strings.Fields("--zookeeper h:1 --execute --verify"), &out, &errOut); code != 1 ||
		!strings.HasPrefix(errOut.String(), "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list\nOption ") {
		t.Errorf("two actions: %d %q", code, errOut.String())
	}
}
