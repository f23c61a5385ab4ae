package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
)

func TestParseOptionsErrors(t *testing.T) {
	bs := []string{"--bootstrap-server", "h:1"}
	with := func(a ...string) []string { return append(append([]string{}, bs...), a...) }
	clitest.CheckUsageErrors(t, parseOptions, []clitest.UsageCase{
		{nil, toolHelp},
		{with("--group", "g"), "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets"},
		{with("--list", "--describe"), "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets"},
		{[]string{"--list"}, `Missing required argument "[bootstrap-server]"`},
		{with("--describe"), "Option [describe] takes one of these options: [group], [all-groups]"},
		{with("--describe", "--group", "g", "--members", "--state"), "Option [describe] takes at most one of these options: [members], [offsets], [state]"},
		{with("--describe", "--group", "g", "--state", "Stable"), "Option [describe] does not take a value for [state]"},
		{with("--delete"), "Option [delete] takes one of these options: [group], [all-groups]"},
		{with("--delete", "--group", "g", "--topic", "t"), "The consumer does not support topic-specific offset deletion from a consumer group."},
		{with("--reset-offsets", "--group", "g", "--to-earliest", "--topic", "t", "--execute", "--dry-run"), "Option [reset-offsets] only accepts one of [execute] and [dry-run]"},
		{with("--reset-offsets", "--to-earliest", "--topic", "t"), "Option [reset-offsets] takes one of these options: [group], [all-groups]"},
		{with("--reset-offsets", "--group", "g", "--topic", "t"), "Option '[reset-offsets]' requires one of the following scenarios: [[to-offset], [to-datetime], [by-duration], [to-earliest], [to-latest], [to-current], [shift-by], [from-file]]"},
		{with("--reset-offsets", "--group", "g", "--to-earliest"), "One of the reset scopes should be defined: --all-topics, --topic."},
		{with("--reset-offsets", "--group", "g", "--to-earliest", "--to-latest", "--all-topics"), `Option "[to-earliest]" can't be used with option "[to-latest]"`},
		{with("--reset-offsets", "--group", "g", "--to-offset", "x", "--all-topics"), "Cannot parse argument 'x' of option to-offset"},
		{with("--list", "--members"), "Option [members] can only be used with [describe]"},
		{[]string{"--zookeeper", "z:1", "--reset-offsets", "--group", "g", "--to-earliest", "--all-topics"}, "Option [reset-offsets] is not valid with [zookeeper]"},
	})
}

func TestParseOptions(t *testing.T) {
	o, _, err := parseOptions([]string{"--bootstrap-server", "h:1", "--describe", "--group", "a", "--group", "b", "--state"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.groups, []string{"a", "b"}) || !o.hasState || o.state != "" || o.action != "describe" || o.timeout != 5*time.Second {
		t.Fatalf("%+v", o)
	}
	o, _, err = parseOptions([]string{"--bootstrap-server", "h:1", "--list", "--state", "Stable,Empty", "--timeout", "100"})
	if err != nil || o.state != "Stable,Empty" || o.timeout != 100*time.Millisecond {
		t.Fatalf("%+v %v", o, err)
	}
	o, _, err = parseOptions([]string{"--bootstrap-server", "h:1", "--reset-offsets", "--group", "g", "--topic", "t:0,1", "--topic", "u", "--shift-by", "-2", "--execute"})
	if err != nil || o.scenario != "shift-by" || !o.execute || !reflect.DeepEqual(o.topics, []string{"t:0,1", "u"}) {
		t.Fatalf("%+v %v", o, err)
	}
}

func TestParseTopicArg(t *testing.T) {
	if a, err := parseTopicArg("orders"); err != nil || a.topic != "orders" || a.partitions != nil {
		t.Fatal(a, err)
	}
	if a, err := parseTopicArg("orders:0,2"); err != nil || a.topic != "orders" || !reflect.DeepEqual(a.partitions, []int32{0, 2}) {
		t.Fatal(a, err)
	}
	for arg, want := range map[string]string{
		"orders:x":   "Invalid partition 'x' specified in topic arg 'orders:x''",
		"orders:":    "Invalid topic arg 'orders:', expected topic name and partitions",
		"a:1:2":      "Invalid topic arg 'a:1:2', expected topic name and partitions",
		":1":         "Invalid topic arg ':1', expected topic name and partitions",
		"orders:1,,": "Invalid partition '' specified in topic arg 'orders:1,,''",
	} {
		if _, err := parseTopicArg(arg); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", arg, err, want)
		}
	}
}

func TestParseDateTime(t *testing.T) {
	got, err := parseDateTime("2026-11-29T10:00:00.250Z")
	if err != nil || got.UnixMilli() != time.Date(2026, 11, 29, 10, 0, 0, 250e6, time.UTC).UnixMilli() {
		t.Fatal(got, err)
	}
	got, err = parseDateTime("2026-11-29T10:00:00.000+02:00")
	if err != nil || got.UTC().Hour() != 8 {
		t.Fatal(got, err)
	}
	got, err = parseDateTime("2026-11-29T10:00:00.000")
	if err != nil || got.Location() != time.Local || got.Hour() != 10 {
		t.Fatal(got, err)
	}
	if _, err := parseDateTime("2026-11-29 10:00"); err == nil || !strings.Contains(err.Error(), "yyyy-MM-dd'T'HH:mm:ss.SSS") {
		t.Fatal(err)
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"PT1H": time.Hour, "P1DT2H3M4S": 26*time.Hour + 3*time.Minute + 4*time.Second,
		"PT0.5S": 500 * time.Millisecond, "P2D": 48 * time.Hour, "pt10m": 10 * time.Minute, "-PT1S": -time.Second} {
		if got, err := parseDuration(in); err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "1H", "PT1X", "P1H", "PTS"} {
		if _, err := parseDuration(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzParseTopicArg: never panics; a successful parse keeps the topic name
// and, with ':', lists at least one partition.
func FuzzParseTopicArg(f *testing.F) {
	clitest.FuzzParser(f, []string{"t", "t:0", "t:0,1,2", "t:", ":0", "t:x", "a:1:2", ""}, parseTopicArg, func(t *testing.T, s string, a topicArg) {
		if strings.Contains(s, ":") {
			if len(a.partitions) == 0 || !strings.HasPrefix(s, a.topic+":") {
				t.Fatalf("%q -> %+v", s, a)
			}
		} else if a.topic != s || a.partitions != nil {
			t.Fatalf("%q -> %+v", s, a)
		}
	})
}

// FuzzParseDuration: never panics.
func FuzzParseDuration(f *testing.F) {
	clitest.FuzzParser(f, []string{"PT1H", "P1DT2H3M4S", "PT0.5S", "-PT1S", "P", "PT", "PTS", "P1H"}, parseDuration, nil)
}

// FuzzParseDateTime: never panics; an accepted value survives a round
// trip through the zone-qualified layout.
func FuzzParseDateTime(f *testing.F) {
	seeds := []string{"2026-11-29T10:00:00.250Z", "2026-11-29T10:00:00.000+02:00", "2026-11-29T10:00:00.000", "x", "2026-13-01T00:00:00.000"}
	clitest.FuzzParser(f, seeds, parseDateTime, func(t *testing.T, s string, ts time.Time) {
		back, err := parseDateTime(ts.Format("2006-01-02T15:04:05.000Z07:00"))
		if err != nil || !back.Equal(ts.Truncate(time.Millisecond)) {
			t.Fatalf("%q -> %v -> %v %v", s, ts, back, err)
		}
	})
}

// FuzzParseOptions: never panics; an accepted command has one action.
func FuzzParseOptions(f *testing.F) {
	seeds := []string{
		"--bootstrap-server h:1 --describe --group g --members --verbose",
		"--bootstrap-server h:1 --reset-offsets --group g --topic t:0,1 --shift-by -2 --execute",
		"--zookeeper z:1 --list",
		"--bootstrap-server h:1 --list --state",
	}
	clitest.FuzzCommandLines(f, parseOptions, seeds, func(t *testing.T, line string, o *options) {
		if o.action == "" {
			t.Fatalf("%q accepted without an action", line)
		}
	})
}
