package admintool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/klassik/klassik/broker/common"
)

func TestCommandLine(t *testing.T) {
	specs := listSpec
	usage := Usage(specs)
	other := errors.New("boom")
	for _, tc := range []struct {
		name           string
		special        string
		err            error
		style          HelpStyle
		code           int
		done           bool
		stdout, stderr string
	}{
		{"help to stdout", "help", nil, HelpAndExit, 0, true, "Tool help.\n" + usage, ""},
		{"help to stderr", "help", nil, UsageAndDie, 1, true, "", "Tool help.\n" + usage},
		{"version", "version", nil, UsageAndDie, 0, true, Version + "\n", ""},
		{"usage error", "", Usagef("bad %s", "option"), HelpAndExit, 1, true, "", "bad option\n" + usage},
		{"other error", "", other, HelpAndExit, 0, false, "", ""},
		{"no error", "", nil, HelpAndExit, 0, false, "", ""},
	} {
		var out, errOut bytes.Buffer
		code, done := CommandLine(tc.special, tc.err, tc.style, "Tool help.", specs, &out, &errOut)
		if code != tc.code || done != tc.done || out.String() != tc.stdout || errOut.String() != tc.stderr {
			t.Errorf("%s: got (%d, %v) stdout %q stderr %q", tc.name, code, done, out.String(), errOut.String())
		}
	}
}

func TestParseCommand(t *testing.T) {
	specs := append([]Spec{{Name: "list"}, {Name: "state", HasArg: true}}, HelpSpecs...)
	var ue *UsageError
	if _, _, err := ParseCommand(specs, nil, "Tool help."); !errors.As(err, &ue) || ue.Msg != "Tool help." {
		t.Fatalf("no args: %v", err)
	}
	if _, _, err := ParseCommand(specs, []string{"--nope"}, "Tool help."); !errors.As(err, &ue) || ue.Msg != "nope is not a recognized option" {
		t.Fatalf("bad option: %v", err)
	}
	for args, want := range map[string]string{"--list --help --version": "help", "--version --list": "version"} {
		p, special, err := ParseCommand(specs, strings.Fields(args), "Tool help.")
		if p != nil || special != want || err != nil {
			t.Errorf("%q: %v %q %v", args, p, special, err)
		}
	}
	p, special, err := ParseCommand(specs, []string{"--list"}, "Tool help.")
	if err != nil || special != "" || !p.Has("list") {
		t.Fatalf("--list: %v %q %v", p, special, err)
	}
}

func TestDefaultOptionalArg(t *testing.T) {
	for in, want := range map[string]string{
		"--state":               "--state=x",
		"--state --list":        "--state=x --list",
		"--state Stable --list": "--state Stable --list",
		"--list --state=y":      "--list --state=y",
		"--states":              "--states",
	} {
		if got := strings.Join(DefaultOptionalArg(strings.Fields(in), "state", "x"), " "); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestParseAdminCommand(t *testing.T) {
	specs := append([]Spec{{Name: "list"}}, HelpSpecs...)
	if p, special, err := ParseAdminCommand(specs, nil); p != nil || special != "help" || err != nil {
		t.Fatalf("no args: %v %q %v", p, special, err)
	}
	var ue *UsageError
	if _, _, err := ParseAdminCommand(specs, []string{"x"}); !errors.As(err, &ue) {
		t.Fatalf("positional: %v", err)
	}
	if p, special, err := ParseAdminCommand(specs, []string{"--list", "--version"}); p != nil || special != "version" || err != nil {
		t.Fatalf("--version: %v %q %v", p, special, err)
	}
	if p, special, err := ParseAdminCommand(specs, []string{"--list"}); err != nil || special != "" || !p.Has("list") {
		t.Fatalf("--list: %v %q %v", p, special, err)
	}
}

func TestGroupByTopic(t *testing.T) {
	if got := GroupByTopic(nil); got == nil || len(got) != 0 {
		t.Fatalf("nil input: %#v", got)
	}
	got := GroupByTopic([]common.TopicPartition{{Topic: "b", Partition: 2}, {Topic: "a", Partition: 1}, {Topic: "b", Partition: 0}, {Topic: "a", Partition: 3}})
	want := []TopicPartitions{{Topic: "b", Partitions: []int32{2, 0}}, {Topic: "a", Partitions: []int32{1, 3}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestLoadOptionalProperties(t *testing.T) {
	p, err := LoadOptionalProperties("")
	if err != nil || p == nil || len(p) != 0 {
		t.Fatalf("empty path: %v %v", p, err)
	}
	p["written"] = "ok" // callers add defaults to the map
	path := t.TempDir() + "/admin.properties"
	if err := os.WriteFile(path, []byte("# comment\nclient.id = tool\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := LoadOptionalProperties(path); err != nil || p["client.id"] != "tool" || len(p) != 1 {
		t.Fatalf("file: %v %v", p, err)
	}
	if _, err := LoadOptionalProperties(path + ".missing"); err == nil {
		t.Fatal("a missing file must fail")
	}
}

// listSpec is a one-option table for the tests of the shared start-up and
// failure handling.
var listSpec = []Spec{{Name: "list", Help: "List."}}
