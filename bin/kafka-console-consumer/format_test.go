package main

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitools"
)

// Golden lines of Kafka's DefaultMessageFormatter.
func TestFormatter(t *testing.T) {
	m := clitools.Message{Topic: "t", Partition: 2, Offset: 17, Key: []byte("k1"), Value: []byte("hello"),
		Timestamp: time.UnixMilli(1700000000123)}
	cases := []struct {
		props map[string]string
		msg   clitools.Message
		want  string
	}{
		{nil, m, "hello\n"},
		{map[string]string{"print.key": "true"}, m, "k1\thello\n"},
		{map[string]string{"print.key": "true", "key.separator": ":"}, m, "k1:hello\n"},
		{map[string]string{"print.key": "true"}, clitools.Message{Value: []byte("v")}, "null\tv\n"},
		{map[string]string{"print.key": "true", "null.literal": "<nil>"}, clitools.Message{}, "<nil>\t<nil>\n"},
		{map[string]string{"print.timestamp": "true", "print.partition": "true", "print.offset": "true", "print.key": "true"}, m,
			"CreateTime:1700000000123\tPartition:2\tOffset:17\tk1\thello\n"},
		{map[string]string{"print.timestamp": "true"}, func() clitools.Message { x := m; x.LogAppendTime = true; return x }(), "LogAppendTime:1700000000123\thello\n"},
		{map[string]string{"print.key": "true", "print.value": "false"}, m, "k1\n"},
		{map[string]string{"print.offset": "true", "print.value": "false"}, m, "Offset:17\n"},
		{map[string]string{"print.headers": "true"}, m, "NO_HEADERS\thello\n"},
		{map[string]string{"print.headers": "true", "headers.separator": ";"}, func() clitools.Message {
			x := m
			x.Headers = []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "b"}}
			return x
		}(), "a:1;b:null\thello\n"},
		{map[string]string{"line.separator": `\r\n`}, m, "hello\r\n"},
	}
	for _, c := range cases {
		f, err := newFormatter(c.props)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := f.write(&b, c.msg); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("%v: got %q want %q", c.props, b.String(), c.want)
		}
	}
	if _, err := newFormatter(map[string]string{"print.key": "yes"}); err == nil {
		t.Error("print.key=yes accepted")
	}
}
