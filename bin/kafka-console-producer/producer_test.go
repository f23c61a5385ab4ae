package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

func TestParseOptionsErrors(t *testing.T) {
	clitest.CheckUsageErrors(t, parseOptions, []clitest.UsageCase{
		{nil, toolHelp},
		{[]string{"--bootstrap-server", "h:1"}, `Missing required argument "[topic]"`},
		{[]string{"--topic", "t"}, `Missing required argument "[bootstrap-server]"`},
		{[]string{"--topic", "t", "--broker-list", "nohost"}, "Please provide valid host:port like host1:9091,host2:9092\n "},
		{[]string{"--topic", "t", "--bootstrap-server", "h:1", "--property", "x"}, "Invalid command line properties: x"},
		{[]string{"--topic", "t", "--bootstrap-server", "h:1", "--nope"}, "nope is not a recognized option"},
	})
	for _, args := range [][]string{
		{"--topic", "t", "--bootstrap-server", "h:1", "--request-required-acks", "2"},
		{"--topic", "t", "--bootstrap-server", "h:1", "--compression-codec", "brotli"},
		{"--topic", "t", "--bootstrap-server", "h:1", "--producer-property", "enable.idempotence=true", "--request-required-acks", "1"},
	} {
		if _, _, err := parseOptions(args); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

func TestParseOptionsDefaultsAndOverrides(t *testing.T) {
	o, _, err := parseOptions([]string{"--broker-list", "h:1", "--topic", "t"})
	if err != nil {
		t.Fatal(err)
	}
	if o.acks != "1" || o.compression != "none" || o.linger != time.Second || o.clientID != "console-producer" || o.sync {
		t.Fatalf("defaults: %+v", o)
	}
	// --compression-codec without a value means gzip; --producer-property
	// sets what no option overrides; an option beats the property.
	o, _, err = parseOptions([]string{"--bootstrap-server", "h:1", "--topic", "t", "--compression-codec", "--sync",
		"--producer-property", "acks=all", "--producer-property", "client.id=me", "--producer-property", "linger.ms=5", "--timeout", "7"})
	if err != nil {
		t.Fatal(err)
	}
	if o.acks != "all" || o.compression != "gzip" || o.clientID != "me" || o.linger != 7*time.Millisecond || !o.sync {
		t.Fatalf("overrides: %+v", o)
	}
	o, _, err = parseOptions([]string{"--bootstrap-server", "h:1", "--topic", "t", "--compression-codec", "lz4", "--request-required-acks", "-1"})
	if err != nil || o.compression != "lz4" || o.acks != "-1" {
		t.Fatalf("%+v %v", o, err)
	}
}

func TestParseLine(t *testing.T) {
	keyed := readerConfig{parseKey: true, keySeparator: ":"}
	cases := []struct {
		line       string
		cfg        readerConfig
		key, value string
		nullKey    bool
		err        string
	}{
		{"hello", readerConfig{keySeparator: "\t"}, "", "hello", true, ""},
		{"k:v", keyed, "k", "v", false, ""},
		{"k:v:w", keyed, "k", "v:w", false, ""},
		{"k:", keyed, "k", "", false, ""},
		{"nokey", keyed, "", "", false, "No key found on line 3: nokey"},
		{"nokey", readerConfig{parseKey: true, keySeparator: ":", ignoreError: true}, "", "nokey", true, ""},
		{"k\tv\r", readerConfig{parseKey: true, keySeparator: "\t"}, "k", "v", false, ""},
		{"NULL:v", readerConfig{parseKey: true, keySeparator: ":", nullMarker: "NULL"}, "", "v", true, ""},
	}
	for _, c := range cases {
		r, err := parseLine(c.line, 3, c.cfg)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: err %v, want %q", c.line, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.line, err)
		}
		if string(r.Value) != c.value || string(r.Key) != c.key || (r.Key == nil) != c.nullKey {
			t.Errorf("%q: key %q (nil %v) value %q", c.line, r.Key, r.Key == nil, r.Value)
		}
	}
}

// FuzzParseLine: never panics; with parse.key a successful parse splits at
// the first separator, so key+sep+value rebuilds the line.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{"k:v", "nokey", "", ":", "a:b:c", "\xff:\x00"} {
		f.Add(s, ":")
	}
	f.Add("k\tv", "\t")
	f.Fuzz(func(t *testing.T, line, sep string) {
		if sep == "" {
			return
		}
		r, err := parseLine(line, 1, readerConfig{parseKey: true, keySeparator: sep})
		if err != nil {
			return
		}
		if got := string(r.Key) + sep + string(r.Value); got != strings.TrimSuffix(line, "\r") {
			t.Fatalf("%q split as %q / %q", line, r.Key, r.Value)
		}
	})
}

// Lines from stdin become records, in order, on a real broker (sync and
// async modes); a line without a key with parse.key fails with Kafka's
// message and exit status 1.
func TestProduceToCluster(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // bounds a failure only
	defer cancel()
	clitest.CreateTopic(t, ctx, c, "lines", 1, 1)
	bs := strings.Join(c.Bootstrap(), ",")
	for _, extra := range [][]string{{"--sync"}, {"--timeout", "10", "--compression-codec", "snappy"}} {
		var out, errOut strings.Builder
		args := append([]string{"--bootstrap-server", bs, "--topic", "lines", "--property", "parse.key=true"}, extra...)
		if code := run(ctx, args, strings.NewReader("a\t1\nb\t2\n"), &out, &errOut, false); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errOut.String())
		}
		if out.Len() != 0 {
			t.Errorf("unexpected stdout %q (no prompt without a console)", out.String())
		}
	}
	var out, errOut strings.Builder
	code := run(ctx, []string{"--bootstrap-server", bs, "--topic", "lines", "--property", "parse.key=true"},
		strings.NewReader("c\t3\nbroken\n"), &out, &errOut, true)
	if code != 1 || !strings.Contains(errOut.String(), "org.apache.kafka.common.KafkaException: No key found on line 2: broken") {
		t.Fatalf("bad line: %d %q", code, errOut.String())
	}
	if out.String() != ">>" {
		t.Errorf("prompt: %q", out.String())
	}
	cl := c.Client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"lines": {0: kgo.NewOffset().AtStart()}}))
	var got []string
	for len(got) < 5 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Key)+"="+string(r.Value)) })
	}
	if strings.Join(got, ",") != "a=1,b=2,a=1,b=2,c=3" {
		t.Fatalf("records %v", got)
	}
}

// FuzzParseOptions: never panics; an accepted command has a topic and
// franz-go options.
func FuzzParseOptions(f *testing.F) {
	seeds := []string{
		"--bootstrap-server h:1 --topic t --sync --compression-codec",
		"--broker-list h:1,h:2 --topic t --property parse.key=true --property key.separator=:",
		"--bootstrap-server h:1 --topic t --producer-property acks=0 --timeout 5",
	}
	clitest.FuzzCommandLines(f, parseOptions, seeds, func(t *testing.T, line string, o *options) {
		if o.topic == "" || len(o.kgoOpts) == 0 {
			t.Fatalf("%q accepted as %+v", line, o)
		}
	})
}
