package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/klassik/klassik/broker/common/jvm"
)

// TestJavaHashMapOrder pins the orders printed by OpenJDK 17's
// java.util.HashMap for the same insertions (a small Java program filled
// new HashMap<>(n) with the directories and new HashMap<>() with
// TopicPartitions, then a filtered copy, and printed keySet()).
func TestJavaHashMapOrder(t *testing.T) {
	id := func(s string) string { return s }
	for _, tc := range []struct{ in, want string }{
		{"/tmp/x/broker-1-0,/tmp/x/broker-1-1", "/tmp/x/broker-1-0,/tmp/x/broker-1-1"},
		{"/data/kafka-logs-1,/data/kafka-logs-2,/data/kafka-logs-3", "/data/kafka-logs-3,/data/kafka-logs-2,/data/kafka-logs-1"},
		{"/var/lib/kafka/a,/var/lib/kafka/b,/var/lib/kafka/c,/var/lib/kafka/d,/var/lib/kafka/e", "/var/lib/kafka/a,/var/lib/kafka/e,/var/lib/kafka/d,/var/lib/kafka/c,/var/lib/kafka/b"},
	} {
		dirs := strings.Split(tc.in, ",")
		got := javaHashMapOrder(dirs, len(dirs), func(s string) int32 { return jvm.StringHashCode(id(s)) })
		if strings.Join(got, ",") != tc.want {
			t.Errorf("dirs %s: got %v, want %s", tc.in, got, tc.want)
		}
	}
	var parts []partInfo
	for _, topic := range []string{"jbod", "orders", "__consumer_offsets", "t"} {
		for p := int32(0); p < 6; p++ {
			parts = append(parts, partInfo{topic: topic, partition: p})
		}
	}
	var kept []partInfo
	for _, p := range javaHashMapOrder(parts, -1, partHash) {
		if p.topic != "t" {
			kept = append(kept, p)
		}
	}
	want := "__consumer_offsets-0,jbod-5,orders-0,jbod-3,orders-1,__consumer_offsets-5,jbod-4,orders-2,jbod-1,orders-3,__consumer_offsets-3,jbod-2,orders-4,__consumer_offsets-4,orders-5,__consumer_offsets-1,jbod-0,__consumer_offsets-2"
	if got := names(javaHashMapOrder(kept, -1, partHash)); got != want {
		t.Errorf("partitions: got %s\nwant %s", got, want)
	}
	small := []partInfo{{topic: "resume", partition: 0}, {topic: "resume", partition: 1}, {topic: "resume", partition: 2}, {topic: "abc", partition: 0}}
	if got := names(javaHashMapOrder(small, -1, partHash)); got != "resume-1,resume-2,abc-0,resume-0" {
		t.Errorf("small map: got %s", got)
	}
}

func names(ps []partInfo) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.topic+"-"+strconv.Itoa(int(p.partition)))
	}
	return strings.Join(out, ",")
}

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
