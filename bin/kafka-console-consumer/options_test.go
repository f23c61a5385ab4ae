package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
)

func TestParseOptionsErrors(t *testing.T) {
	bs := []string{"--bootstrap-server", "127.0.0.1:9092"}
	clitest.CheckUsageErrors(t, parseOptions, []clitest.UsageCase{
		{nil, toolHelp},
		{[]string{"--topic", "t"}, `Missing required argument "[bootstrap-server]"`},
		{append(bs, "--zookeeper", "z:2181", "--topic", "t"), "Option [bootstrap-server] cannot be used with option [zookeeper]"},
		{bs, "Exactly one of whitelist/topic is required."},
		{append(bs, "--topic", "t", "--whitelist", "x.*"), "Exactly one of whitelist/topic is required."},
		{append(bs, "--whitelist", "x", "--partition", "0"), "The topic is required when partition is specified."},
		{append(bs, "--topic", "t", "--partition", "0", "--offset", "3", "--from-beginning"), "Options from-beginning and offset cannot be specified together."},
		{append(bs, "--topic", "t", "--offset", "3"), "The partition is required when offset is specified."},
		{append(bs, "--topic", "t", "--partition", "0", "--offset", "-3"), "The provided offset value '-3' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long."},
		{append(bs, "--topic", "t", "--partition", "0", "--group", "g"), "Options group and partition cannot be specified together."},
		{append(bs, "--topic", "t", "--group", "g", "--consumer-property", "group.id=h"), "The group ids provided in different places (directly using '--group', via '--consumer-property', or via '--consumer.config') do not match. Detected group ids: 'g', 'h'"},
		{append(bs, "--topic", "t", "--property", "novalue"), "Invalid command line properties: novalue"},
		{append(bs, "--topic", "t", "--max-messages", "x"), "Cannot parse argument 'x' of option max-messages"},
		{append(bs, "--topic", "t", "--bogus"), "bogus is not a recognized option"},
	})
}

func TestParseOptions(t *testing.T) {
	o, _, err := parseOptions([]string{"--bootstrap-server", "h:1", "--topic", "t", "--from-beginning", "--max-messages", "5",
		"--timeout-ms", "250", "--property", "print.key=true", "--property", "key.separator=:", "--consumer-property", "group.id=g",
		"--group", "g", "--isolation-level", "read_committed"})
	if err != nil {
		t.Fatal(err)
	}
	f, ok := o.formatter.(formatter)
	if o.topic != "t" || !o.fromBeginning || o.maxMessages != 5 || o.timeout != 250*time.Millisecond || !ok || !f.printKey ||
		f.keySep != ":" || o.group != "g" || !o.groupPassed || !o.readCommitted {
		t.Fatalf("%+v", o)
	}
	o, _, err = parseOptions([]string{"--zookeeper", "z:2181/chroot", "--topic", "t", "--partition", "1", "--offset", "earliest"})
	if err == nil {
		t.Fatalf("zookeeper with partition accepted: %+v", o)
	}
	o, _, err = parseOptions([]string{"--bootstrap-server", "h:1", "--topic", "t", "--partition", "1", "--offset", "LATEST"})
	if err != nil || o.offset != "latest" || !o.hasPartition || o.partition != 1 || o.maxMessages != -1 {
		t.Fatalf("%+v %v", o, err)
	}
}

func TestRunUsageAndHelp(t *testing.T) {
	var out, errOut strings.Builder
	if code := run(context.Background(), []string{"--topic", "t"}, &out, &errOut); code != 1 ||
		!strings.HasPrefix(errOut.String(), "Missing required argument \"[bootstrap-server]\"\nOption") {
		t.Fatalf("code %d stderr %q", code, errOut.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"--help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "--from-beginning") {
		t.Fatalf("help: %d %q", code, out.String())
	}
}

// FuzzParseOptions: the command line never panics the parser, and an
// accepted one names exactly one of topic/whitelist and one server kind.
func FuzzParseOptions(f *testing.F) {
	seeds := []string{
		"--bootstrap-server h:1 --topic t --from-beginning",
		"--zookeeper z:2181/k --topic t --group g --delete-consumer-offsets",
		"--bootstrap-server h:1 --topic t --partition 0 --offset earliest --property print.key=true",
		"--bootstrap-server h:1 --whitelist .* --max-messages 3 --timeout-ms 10",
	}
	clitest.FuzzCommandLines(f, parseOptions, seeds, func(t *testing.T, line string, o *options) {
		if (o.topic == "") == (o.whitelist == "") || (o.bootstrap == "") == (o.zookeeper == "") {
			t.Fatalf("%q accepted as %+v", line, o)
		}
	})
}
