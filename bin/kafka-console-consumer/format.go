package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/klassik/klassik/bin/internal/clitools"
)

// formatter is Kafka's DefaultMessageFormatter: optional timestamp,
// partition, offset, headers and key columns, then the value, separated by
// key.separator and ended by line.separator.
type formatter struct {
	printTimestamp, printKey, printOffset, printPartition, printHeaders, printValue bool
	keySep, lineSep, headersSep, nullLiteral                                        string
}

func newFormatter(props map[string]string) (formatter, error) {
	f := formatter{printValue: true, keySep: "\t", lineSep: "\n", headersSep: ",", nullLiteral: "null"}
	var err error
	for _, b := range []struct {
		key string
		dst *bool
	}{{"print.timestamp", &f.printTimestamp}, {"print.key", &f.printKey}, {"print.offset", &f.printOffset},
		{"print.partition", &f.printPartition}, {"print.headers", &f.printHeaders}, {"print.value", &f.printValue}} {
		if *b.dst, err = clitools.Bool(props, b.key, *b.dst); err != nil {
			return f, err
		}
	}
	for _, s := range []struct {
		key string
		dst *string
	}{{"key.separator", &f.keySep}, {"line.separator", &f.lineSep}, {"headers.separator", &f.headersSep}, {"null.literal", &f.nullLiteral}} {
		if v, ok := props[s.key]; ok {
			*s.dst = clitools.Unescape(v)
		}
	}
	return f, nil
}

// write prints one message. Each column is followed by key.separator when
// another column follows, else by line.separator (so a line never ends
// with a dangling separator), as Kafka does.
func (f formatter) write(w io.Writer, m clitools.Message) error {
	var b strings.Builder
	sep := func(more bool) {
		if more {
			b.WriteString(f.keySep)
		} else {
			b.WriteString(f.lineSep)
		}
	}
	if f.printTimestamp {
		typ := "CreateTime"
		if m.LogAppendTime {
			typ = "LogAppendTime"
		}
		if m.Timestamp.IsZero() || m.Timestamp.UnixMilli() < 0 {
			b.WriteString("NO_TIMESTAMP")
		} else {
			fmt.Fprintf(&b, "%s:%d", typ, m.Timestamp.UnixMilli())
		}
		sep(f.printPartition || f.printOffset || f.printHeaders || f.printKey || f.printValue)
	}
	if f.printPartition {
		fmt.Fprintf(&b, "Partition:%d", m.Partition)
		sep(f.printOffset || f.printHeaders || f.printKey || f.printValue)
	}
	if f.printOffset {
		fmt.Fprintf(&b, "Offset:%d", m.Offset)
		sep(f.printHeaders || f.printKey || f.printValue)
	}
	if f.printHeaders {
		if len(m.Headers) == 0 {
			b.WriteString("NO_HEADERS")
		}
		for i, h := range m.Headers {
			if i > 0 {
				b.WriteString(f.headersSep)
			}
			b.WriteString(h.Key)
			b.WriteString(":")
			if h.Value == nil {
				b.WriteString(f.nullLiteral)
			} else {
				b.Write(h.Value)
			}
		}
		sep(f.printKey || f.printValue)
	}
	if f.printKey {
		f.bytes(&b, m.Key)
		sep(f.printValue)
	}
	if f.printValue {
		f.bytes(&b, m.Value)
		b.WriteString(f.lineSep)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (f formatter) bytes(b *strings.Builder, v []byte) {
	if v == nil {
		b.WriteString(f.nullLiteral)
		return
	}
	b.Write(v)
}
