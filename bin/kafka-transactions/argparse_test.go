package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
)

// argparseCase is one recorded command line of testdata/argparse4j.txt.
type argparseCase struct {
	columns        string
	args           []string
	stdout, stderr string
	exit           int
}

func readArgparseCases(t *testing.T) []argparseCase {
	t.Helper()
	data, err := os.ReadFile("testdata/argparse4j.txt")
	if err != nil {
		t.Fatal(err)
	}
	var cases []argparseCase
	var cur *argparseCase
	var section *strings.Builder
	var out, errOut strings.Builder
	flush := func() {
		if cur != nil {
			cur.stdout, cur.stderr = out.String(), errOut.String()
			cases = append(cases, *cur)
		}
		out.Reset()
		errOut.Reset()
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "=== "):
			flush()
			f := strings.Fields(strings.TrimPrefix(line, "=== "))
			cur = &argparseCase{columns: f[0], args: f[1:]}
			section = nil
		case line == "--- stdout\n":
			section = &out
		case line == "--- stderr\n":
			section = &errOut
		case strings.HasPrefix(line, "--- exit "):
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "--- exit ")))
			if err != nil {
				t.Fatalf("bad exit line %q", line)
			}
			cur.exit = n
			section = nil
		case section != nil:
			section.WriteString(line)
		}
	}
	flush()
	if len(cases) < 50 {
		t.Fatalf("read only %d cases", len(cases))
	}
	return cases
}

// Every command line argparse4j refuses, or answers with a help screen
// or the version, gets the same output, stream for stream, and the same
// exit status (Kafka's tool exits 1 after --help).
func TestCommandLineAsArgparse4j(t *testing.T) {
	for _, c := range readArgparseCases(t) {
		t.Run(c.columns+" "+strings.Join(c.args, " "), func(t *testing.T) {
			t.Setenv("COLUMNS", c.columns)
			var out, errOut strings.Builder
			code := run(context.Background(), c.args, &out, &errOut)
			if out.String() != c.stdout || errOut.String() != c.stderr || code != c.exit {
				t.Errorf("exit %d (want %d)\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s", code, c.exit, out.String(), c.stdout, errOut.String(), c.stderr)
			}
		})
	}
}

// The command lines argparse4j accepts yield these options.
func TestParseAccepted(t *testing.T) {
	i := func(n int32) *int32 { return &n }
	cases := []struct {
		args  []string
		check func(o *options) bool
	}{
		{[]string{"--bootstrap-server", "b:9092", "list"}, func(o *options) bool { return o.command == "list" && o.bootstrap == "b:9092" }},
		{[]string{"--boot=b", "--command-config=f", "list"}, func(o *options) bool { return o.bootstrap == "b" && o.commandConfig == "f" }},
		{[]string{"--bootstrap-server", "b", "describe", "--trans", "a", "--transactional-id", "z"}, func(o *options) bool { return o.transactionalID == "z" }},
		{[]string{"--bootstrap-server", "b", "describe-p", "--topic", "t", "--partition", "3", "--broker", "2"},
			func(o *options) bool {
				return o.command == "describe-producers" && o.topic == "t" && *o.partition == 3 && *o.brokerID == *i(2)
			}},
		{[]string{"--bootstrap-server", "b", "abort", "--topic", "t", "--partition", "0", "--start-offset", "-5"},
			func(o *options) bool { return *o.startOffset == -5 && o.producerID == nil }},
		{[]string{"--bootstrap-server", "b", "abort", "--topic", "t", "--partition", "0", "--producer-id", "7", "--producer-epoch", "-1", "--coordinator-epoch", "3"},
			func(o *options) bool { return *o.producerID == 7 && *o.producerEpoch == -1 && *o.coordinatorEpoch == 3 }},
		{[]string{"--bootstrap-server", "b", "find-hanging", "--broker-id", "1"},
			func(o *options) bool { return *o.brokerID == 1 && o.maxTransactionTimeoutMinutes == 15 && !o.hasTopic }},
		{[]string{"--bootstrap-server", "b", "find-hanging", "--topic", "t", "--max-transaction-timeout", "0"},
			func(o *options) bool { return o.hasTopic && o.maxTransactionTimeoutMinutes == 0 }},
	}
	for _, c := range cases {
		ns, outcome, err := newParser().parse(c.args, nil)
		if err != nil || outcome != outcomeValues {
			t.Fatalf("%v: %v %v", c.args, outcome, err)
		}
		if o := optionsFrom(ns); !c.check(o) {
			t.Errorf("%v: %+v", c.args, o)
		}
	}
}

func TestLineSegments(t *testing.T) {
	got := strings.Join(lineSegments("in the form `host:port`  (multiple comma-separated entries) if --partition is -1\n"), "|")
	want := "in |the |form |`host:port`  |(multiple |comma-|separated |entries) |if |--|partition |is |-1\n"
	if got != want {
		t.Fatalf("%q\nwant %q", got, want)
	}
}

// The checks Kafka's commands make after parsing, before asking anything
// (TransactionsCommandTest's assertCommandFailure cases that parse).
func TestCommandChecks(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"abort", "--topic", "foo", "--partition", "0"}, "The transaction to abort must be identified either with --start-offset " +
			"(for brokers on 3.0 or above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)"},
		{[]string{"abort", "--topic", "foo", "--partition", "0", "--producer-id", "12345"}, "Missing required argument --producer-epoch"},
		{[]string{"abort", "--topic", "foo", "--partition", "0", "--producer-id", "12345", "--producer-epoch", "15"}, "Missing required argument --coordinator-epoch"},
		{[]string{"find-hanging"}, "The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search"},
		{[]string{"find-hanging", "--broker-id", "0", "--partition", "5"}, "The --partition argument requires --topic to be provided"},
	}
	for _, c := range cases {
		var out, errOut strings.Builder
		code := run(context.Background(), append([]string{"--bootstrap-server", "127.0.0.1:1"}, c.args...), &out, &errOut)
		if code != 1 || out.String() != "" || errOut.String() != c.want+"\n" {
			t.Errorf("%v: exit %d stdout %q stderr %q, want %q", c.args, code, out.String(), errOut.String(), c.want)
		}
	}
}

// FuzzCommandLine: parsing any command line never panics; an accepted one
// always names a command and converts to options, and a refused one
// prints a usage and then the (justified) error.
func FuzzCommandLine(f *testing.F) {
	for _, s := range []string{"--bootstrap-server b list", "--bootstrap-server=b describe --trans x",
		"--boot b abort --topic t --partition 0 --start-offset -5", "--bootstrap-server b find-hanging --broker-id 1 --max 0",
		"-hv", "--bootstrap-server b desc", "--bootstrap-server b describe-producers --topic t --partition 99999999999"} {
		f.Add(s)
	}
	f.Setenv("COLUMNS", "80")
	f.Fuzz(func(t *testing.T, line string) {
		var out strings.Builder
		ns, outcome, err := newParser().parse(strings.Fields(line), &out)
		if err != nil {
			pe, ok := err.(*parseError)
			if !ok {
				t.Fatalf("%q: %T %v", line, err, err)
			}
			var e strings.Builder
			printError(&e, pe)
			if !strings.HasPrefix(e.String(), "usage: ") || !strings.Contains(e.String(), "\nkafka-transactions.sh:") {
				t.Fatalf("%q: %q", line, e.String())
			}
			return
		}
		if outcome != outcomeValues {
			return
		}
		if o := optionsFrom(ns); o.command == "" {
			t.Fatalf("%q: %+v", line, o)
		}
	})
}
