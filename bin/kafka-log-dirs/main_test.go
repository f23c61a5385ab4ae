package main

import (
	"strings"
	"testing"
)

// TestFormatJSON: Kafka's key order, null error, the exception class of a
// failed directory, the topic filter, Jackson's escaping.
func TestFormatJSON(t *testing.T) {
	got := formatJSON(map[int32][]dirInfo{
		2: {{path: "/d/b", error: "org.apache.kafka.common.errors.KafkaStorageException"}},
		1: {{path: "/d/a", parts: []partInfo{{"t", 0, 100, 0, false}, {"u", 0, 7, 3, true}}}},
	}, []string{"t"})
	want := `{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/d/a","error":null,"partitions":[{"partition":"t-0","size":100,"offsetLag":0,"isFuture":false}]}]},` +
		`{"broker":2,"logDirs":[{"logDir":"/d/b","error":"org.apache.kafka.common.errors.KafkaStorageException","partitions":[]}]}]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if s := jsonString("a\"b\\c\n\x01/é"); s != `"a\"b\\c\n\u0001/é"` {
		t.Fatalf("jsonString: %s", s)
	}
}

func TestParse(t *testing.T) {
	o, _, err := parse([]string{"--bootstrap-server", "h:1", "--describe", "--broker-list", "1,,2", "--topic-list", "a,b,"})
	if err != nil || o.bootstrap != "h:1" || len(o.brokers) != 2 || o.brokers[1] != 2 || strings.Join(o.topics, ",") != "a,b" {
		t.Fatalf("parse: %+v %v", o, err)
	}
	if _, _, err := parse([]string{"--bootstrap-server", "h:1"}); err == nil || err.Error() != `Missing required argument "[describe]"` {
		t.Fatalf("missing --describe: %v", err)
	}
	if _, _, err := parse([]string{"--describe"}); err == nil || err.Error() != `Missing required argument "[bootstrap-server]"` {
		t.Fatalf("missing --bootstrap-server: %v", err)
	}
	if _, _, err := parse([]string{"--bootstrap-server", "h:1", "--describe", "--broker-list", "x"}); err == nil || err.Error() != `For input string: "x"` {
		t.Fatalf("bad broker id: %v", err)
	}
	if _, special, _ := parse(nil); special != "help" {
		t.Fatalf("no arguments: %q", special)
	}
}

// FuzzParse: no command line panics the parser; a parsed one has a
// bootstrap server and no empty topic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"--bootstrap-server h:1 --describe", "--describe --broker-list 1,2 --topic-list a,,b --bootstrap-server x", "--help", "--broker-list -1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		o, _, err := parse(strings.Fields(line))
		if err == nil && o != nil {
			if o.bootstrap == "" && !strings.Contains(line, "--bootstrap-server") {
				t.Fatalf("parsed without --bootstrap-server: %q", line)
			}
			for _, tp := range o.topics {
				if tp == "" {
					t.Fatalf("empty topic from %q", line)
				}
			}
		}
	})
}
