package admintool

import (
	"bytes"
	"errors"
	"testing"
)

func TestCommandLine(t *testing.T) {
	specs := []Spec{{Name: "list", Help: "List."}}
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
