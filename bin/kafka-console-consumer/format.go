package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/broker/group"
	"github.com/klassik/klassik/broker/txn"
)

// messageFormatter is Kafka's MessageFormatter: it writes one record to
// out; log is where a formatter that logs (LoggingMessageFormatter) puts
// its log lines. An error is an exception thrown by writeTo (what was
// written before it stays written, as on Java's PrintStream).
type messageFormatter interface {
	write(out, log io.Writer, m clitools.Message) error
}

// Formatter class names --formatter accepts.
const (
	defaultFormatterClass = "kafka.tools.DefaultMessageFormatter"
	loggingFormatterClass = "kafka.tools.LoggingMessageFormatter"
	noOpFormatterClass    = "kafka.tools.NoOpMessageFormatter"
	checksumFormatter     = "kafka.tools.ChecksumMessageFormatter"
	offsetsFormatterClass = "kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter"
	txnLogFormatterClass  = "kafka.coordinator.transaction.TransactionLog$TransactionLogMessageFormatter"
)

// newMessageFormatter instantiates the formatter class and configures it
// with the --property pairs. Kafka 3.x's short names of the coordinator
// formatters are accepted as well.
func newMessageFormatter(class string, props map[string]string) (messageFormatter, error) {
	switch class {
	case defaultFormatterClass:
		return newFormatter(props)
	case loggingFormatterClass:
		f, err := newFormatter(props)
		return loggingFormatter{f}, err
	case noOpFormatterClass:
		return noOpFormatter{}, nil
	case checksumFormatter:
		prefix := ""
		if t, ok := props["topic"]; ok {
			prefix = t + ":"
		}
		return checksumFormatterT{prefix: prefix}, nil
	case offsetsFormatterClass, "kafka.coordinator.group.OffsetsMessageFormatter":
		return offsetsFormatter{}, nil
	case txnLogFormatterClass, "kafka.coordinator.transaction.TransactionLogMessageFormatter":
		return txnLogFormatter{}, nil
	}
	return nil, classNotFound(class)
}

// formatter is Kafka's DefaultMessageFormatter: optional timestamp,
// partition, offset, headers and key columns, then the value, separated by
// key.separator and ended by line.separator; keys, values and header
// values go through the configured deserializers.
type formatter struct {
	printTimestamp, printKey, printOffset, printPartition, printHeaders, printValue bool
	keySep, lineSep, headersSep, nullLiteral                                        string
	keyDeser, valueDeser, headersDeser                                              deserializer
}

// newFormatter is DefaultMessageFormatter.configure. A print.* value is
// true when it is "true" in any case (anything else is false), and the
// separators are taken as given, as Kafka does.
func newFormatter(props map[string]string) (formatter, error) {
	f := formatter{printValue: true, keySep: "\t", lineSep: "\n", headersSep: ",", nullLiteral: "null"}
	for _, b := range []struct {
		key string
		dst *bool
	}{{"print.timestamp", &f.printTimestamp}, {"print.key", &f.printKey}, {"print.offset", &f.printOffset},
		{"print.partition", &f.printPartition}, {"print.headers", &f.printHeaders}, {"print.value", &f.printValue}} {
		if v, ok := props[b.key]; ok {
			*b.dst = strings.EqualFold(strings.TrimSpace(v), "true")
		}
	}
	for _, s := range []struct {
		key string
		dst *string
	}{{"key.separator", &f.keySep}, {"line.separator", &f.lineSep}, {"headers.separator", &f.headersSep}, {"null.literal", &f.nullLiteral}} {
		if v, ok := props[s.key]; ok {
			*s.dst = v
		}
	}
	for _, d := range []struct {
		key string
		dst *deserializer
	}{{"key.deserializer", &f.keyDeser}, {"value.deserializer", &f.valueDeser}, {"headers.deserializer", &f.headersDeser}} {
		if v, ok := props[d.key]; ok {
			var err error
			if *d.dst, err = newDeserializer(v); err != nil {
				return f, err
			}
		}
	}
	return f, nil
}

// write prints one message. Each column is followed by key.separator when
// another column follows, else by line.separator (so a line never ends
// with a dangling separator), as Kafka does.
func (f formatter) write(w, _ io.Writer, m clitools.Message) error {
	var b strings.Builder
	err := f.format(&b, m)
	if _, werr := io.WriteString(w, b.String()); err == nil {
		err = werr
	}
	return err
}

func (f formatter) format(b *strings.Builder, m clitools.Message) error {
	sep := func(more bool) {
		if more {
			b.WriteString(f.keySep)
		} else {
			b.WriteString(f.lineSep)
		}
	}
	if f.printTimestamp {
		if m.Timestamp.IsZero() || m.Timestamp.UnixMilli() < 0 {
			b.WriteString("NO_TIMESTAMP")
		} else {
			fmt.Fprintf(b, "%s:%d", timestampType(m), m.Timestamp.UnixMilli())
		}
		sep(f.printPartition || f.printOffset || f.printHeaders || f.printKey || f.printValue)
	}
	if f.printPartition {
		fmt.Fprintf(b, "Partition:%d", m.Partition)
		sep(f.printOffset || f.printHeaders || f.printKey || f.printValue)
	}
	if f.printOffset {
		fmt.Fprintf(b, "Offset:%d", m.Offset)
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
			if err := f.field(b, f.headersDeser, h.Value); err != nil {
				return err
			}
		}
		sep(f.printKey || f.printValue)
	}
	if f.printKey {
		if err := f.field(b, f.keyDeser, m.Key); err != nil {
			return err
		}
		sep(f.printValue)
	}
	if f.printValue {
		if err := f.field(b, f.valueDeser, m.Value); err != nil {
			return err
		}
		b.WriteString(f.lineSep)
	}
	return nil
}

// field writes a key, value or header value. A null one becomes
// null.literal before the deserializer sees it, as in Kafka (so a
// LongDeserializer fails on a null key printed as "null").
func (f formatter) field(b *strings.Builder, d deserializer, v []byte) error {
	if v == nil {
		v = []byte(f.nullLiteral)
	}
	if d == nil {
		b.Write(v)
		return nil
	}
	s, err := d(v)
	if err != nil {
		return err
	}
	b.WriteString(s)
	return nil
}

func timestampType(m clitools.Message) string {
	if m.LogAppendTime {
		return "LogAppendTime"
	}
	return "CreateTime"
}

// loggingFormatter is Kafka's LoggingMessageFormatter: the default
// formatter's output, and an INFO log line with the timestamp, key and
// value on the tools' log (standard error).
type loggingFormatter struct{ formatter }

func (f loggingFormatter) write(out, log io.Writer, m clitools.Message) error {
	if err := f.formatter.write(out, log, m); err != nil {
		return err
	}
	var b strings.Builder
	if !m.Timestamp.IsZero() && m.Timestamp.UnixMilli() >= 0 {
		fmt.Fprintf(&b, "%s:%d, ", timestampType(m), m.Timestamp.UnixMilli())
	}
	text := func(v []byte) string {
		if v == nil {
			return "null"
		}
		return javaUTF8(v)
	}
	fmt.Fprintf(&b, "key:%s, value:%s", text(m.Key), text(m.Value))
	_, err := fmt.Fprintf(log, "[%s] INFO %s (kafka.tools.LoggingMessageFormatter)\n", time.Now().Format("2006-01-02 15:04:05,000"), b.String())
	return err
}

// noOpFormatter is Kafka's NoOpMessageFormatter: it prints nothing.
type noOpFormatter struct{}

func (noOpFormatter) write(_, _ io.Writer, _ clitools.Message) error { return nil }

// checksumFormatterT is Kafka's ChecksumMessageFormatter. The console
// consumer hands it records built with checksum 0, so it always prints
// "[topic:]checksum:0".
type checksumFormatterT struct{ prefix string }

func (f checksumFormatterT) write(out, _ io.Writer, _ clitools.Message) error {
	_, err := fmt.Fprintf(out, "%schecksum:0\n", f.prefix)
	return err
}

// offsetsFormatter is GroupMetadataManager.OffsetsMessageFormatter: for
// each offset commit record of __consumer_offsets,
// "[group,topic,partition]::OffsetAndMetadata(...)" (or "::NULL" for a
// tombstone); group metadata records and keyless records print nothing.
type offsetsFormatter struct{}

func (offsetsFormatter) write(out, _ io.Writer, m clitools.Message) error {
	if m.Key == nil {
		return nil
	}
	k, err := group.DecodeKey(m.Key)
	if err != nil {
		return decodeException(err)
	}
	if k.Offset == nil {
		return nil
	}
	value := "NULL"
	if m.Value != nil {
		if value, err = formatOffsetAndMetadata(m.Value); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(out, "[%s,%s,%d]::%s\n", k.Offset.Group, k.Offset.Topic, k.Offset.Partition, value)
	return err
}

// formatOffsetAndMetadata is OffsetAndMetadata.toString of a decoded
// offset commit value.
func formatOffsetAndMetadata(b []byte) (string, error) {
	v, err := group.DecodeOffsetValue(b)
	if err != nil {
		return "", decodeException(err)
	}
	epoch := "Optional.empty"
	if v.LeaderEpoch != -1 {
		epoch = fmt.Sprintf("Optional[%d]", v.LeaderEpoch)
	}
	expire := "None"
	if v.ExpireTimestamp != -1 {
		expire = fmt.Sprintf("Some(%d)", v.ExpireTimestamp)
	}
	return fmt.Sprintf("OffsetAndMetadata(offset=%d, leaderEpoch=%s, metadata=%s, commitTimestamp=%d, expireTimestamp=%s)",
		v.Offset, epoch, v.Metadata, v.CommitTimestamp, expire), nil
}

// txnLogFormatter is TransactionLog.TransactionLogMessageFormatter: for
// each __transaction_state record, "<transactionalId>::" and the
// TransactionMetadata's toString, or "NULL" for a tombstone.
type txnLogFormatter struct{}

func (txnLogFormatter) write(out, _ io.Writer, m clitools.Message) error {
	if m.Key == nil {
		return nil
	}
	s, err := txn.FormatLogMessage(m.Key, m.Value)
	if err != nil {
		return decodeException(err)
	}
	_, err = fmt.Fprintln(out, s)
	return err
}

// decodeException is the exception Kafka's record readers throw for bytes
// they cannot read.
func decodeException(err error) error {
	return &javaException{class: "java.lang.IllegalStateException", msg: err.Error()}
}
