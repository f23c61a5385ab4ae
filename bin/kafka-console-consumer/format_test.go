package main

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/common/jvm"
	"github.com/klassik/klassik/broker/group"
	"github.com/klassik/klassik/broker/txn"
)

func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// formatOne runs the formatter class with props on m.
func formatOne(t *testing.T, class string, props map[string]string, m clitools.Message) (string, string, error) {
	t.Helper()
	f, err := newMessageFormatter(class, props)
	if err != nil {
		t.Fatal(err)
	}
	var out, log strings.Builder
	err = f.write(&out, &log, m)
	return out.String(), log.String(), err
}

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
		{map[string]string{"print.key": " TRUE "}, m, "k1\thello\n"},
		{map[string]string{"print.key": "yes"}, m, "hello\n"},
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
		// Separators are used as given (Kafka does not read escapes).
		{map[string]string{"line.separator": `\r\n`}, m, "hello\\r\\n"},
		{map[string]string{"line.separator": "\r\n"}, m, "hello\r\n"},
		// Deserializers.
		{map[string]string{"print.key": "true", "key.deserializer": serializationPkg + "LongDeserializer",
			"value.deserializer": serializationPkg + "IntegerDeserializer"},
			clitools.Message{Key: be64(math.MaxUint64), Value: be32(42)}, "-1\t42\n"},
		{map[string]string{"value.deserializer": serializationPkg + "ShortDeserializer"}, clitools.Message{Value: []byte{0x80, 0}}, "-32768\n"},
		// A null value reaches the deserializer as the four bytes "null".
		{map[string]string{"value.deserializer": serializationPkg + "IntegerDeserializer"}, clitools.Message{}, "1853189228\n"},
		{map[string]string{"value.deserializer": serializationPkg + "DoubleDeserializer"}, clitools.Message{Value: be64(math.Float64bits(1.5))}, "1.5\n"},
		{map[string]string{"value.deserializer": serializationPkg + "DoubleDeserializer"}, clitools.Message{Value: be64(math.Float64bits(1e10))}, "1.0E10\n"},
		{map[string]string{"value.deserializer": serializationPkg + "FloatDeserializer"}, clitools.Message{Value: be32(math.Float32bits(0.1))}, "0.1\n"},
		{map[string]string{"value.deserializer": serializationPkg + "StringDeserializer"}, clitools.Message{Value: []byte("a\xe2\x82b\xffc")}, "a\ufffdb\ufffdc\n"},
		{map[string]string{"value.deserializer": serializationPkg + "BytesDeserializer"}, clitools.Message{Value: []byte("a\\\x00~")}, `a\x5C\x00~` + "\n"},
		{map[string]string{"value.deserializer": serializationPkg + "ByteBufferDeserializer"}, clitools.Message{Value: []byte("abc")}, "java.nio.HeapByteBuffer[pos=0 lim=3 cap=3]\n"},
		{map[string]string{"value.deserializer": serializationPkg + "UUIDDeserializer"}, clitools.Message{Value: []byte("1-2-3-4-5")}, "00000001-0002-0003-0004-000000000005\n"},
		{map[string]string{"value.deserializer": serializationPkg + "UUIDDeserializer"}, clitools.Message{Value: []byte("123E4567-E89B-12D3-A456-426614174000")}, "123e4567-e89b-12d3-a456-426614174000\n"},
		{map[string]string{"print.headers": "true", "headers.deserializer": serializationPkg + "IntegerDeserializer"},
			clitools.Message{Value: []byte("v"), Headers: []kgo.RecordHeader{{Key: "n", Value: be32(7)}}}, "n:7\tv\n"},
	}
	for _, c := range cases {
		out, _, err := formatOne(t, defaultFormatterClass, c.props, c.msg)
		if err != nil || out != c.want {
			t.Errorf("%v: got %q (%v) want %q", c.props, out, err, c.want)
		}
	}
}

// A wrong-size value is Java's SerializationException with its message;
// what was printed before it stays printed; a null key meets the
// deserializer as null.literal.
func TestDeserializerErrors(t *testing.T) {
	for _, c := range []struct {
		props   map[string]string
		msg     clitools.Message
		out, ex string
	}{
		{map[string]string{"print.offset": "true", "value.deserializer": serializationPkg + "LongDeserializer"},
			clitools.Message{Offset: 3, Value: []byte("abc")}, "Offset:3\t",
			"org.apache.kafka.common.errors.SerializationException: Size of data received by LongDeserializer is not 8"},
		{map[string]string{"print.key": "true", "key.deserializer": serializationPkg + "LongDeserializer"},
			clitools.Message{Value: []byte("abc")}, "",
			"org.apache.kafka.common.errors.SerializationException: Size of data received by LongDeserializer is not 8"},
		{map[string]string{"value.deserializer": serializationPkg + "IntegerDeserializer"}, clitools.Message{Value: []byte("abc")}, "",
			"org.apache.kafka.common.errors.SerializationException: Size of data received by IntegerDeserializer is not 4"},
		{map[string]string{"value.deserializer": serializationPkg + "ShortDeserializer"}, clitools.Message{Value: []byte("abc")}, "",
			"org.apache.kafka.common.errors.SerializationException: Size of data received by ShortDeserializer is not 2"},
		{map[string]string{"value.deserializer": serializationPkg + "DoubleDeserializer"}, clitools.Message{Value: []byte("abc")}, "",
			"org.apache.kafka.common.errors.SerializationException: Size of data received by Deserializer is not 8"},
		{map[string]string{"value.deserializer": serializationPkg + "FloatDeserializer"}, clitools.Message{Value: []byte("abc")}, "",
			"org.apache.kafka.common.errors.SerializationException: Size of data received by Deserializer is not 4"},
		{map[string]string{"value.deserializer": serializationPkg + "UUIDDeserializer"}, clitools.Message{Value: []byte("not-a-uuid")}, "",
			"org.apache.kafka.common.errors.SerializationException: Error parsing data into UUID"},
	} {
		out, _, err := formatOne(t, defaultFormatterClass, c.props, c.msg)
		if out != c.out || err == nil || err.Error() != c.ex {
			t.Errorf("%v: %q %v, want %q %q", c.props, out, err, c.out, c.ex)
		}
	}
	if _, err := newMessageFormatter(defaultFormatterClass, map[string]string{"value.deserializer": "com.example.Nope"}); err == nil ||
		err.Error() != "java.lang.ClassNotFoundException: com.example.Nope" {
		t.Errorf("unknown deserializer: %v", err)
	}
	if _, err := newMessageFormatter("com.example.Formatter", nil); err == nil || err.Error() != "java.lang.ClassNotFoundException: com.example.Formatter" {
		t.Errorf("unknown formatter: %v", err)
	}
}

func TestJavaFloat(t *testing.T) {
	for v, want := range map[float64]string{1: "1.0", -2.5: "-2.5", 1e7: "1.0E7", 9999999: "9999999.0", 0.001: "0.001", 0.0001: "1.0E-4",
		123456789.125: "1.23456789125E8", math.Inf(1): "Infinity", math.Inf(-1): "-Infinity", math.NaN(): "NaN", math.Copysign(0, -1): "-0.0"} {
		if got := jvm.FormatFloat(v, 64); got != want {
			t.Errorf("%v: %q, want %q", v, got, want)
		}
	}
	if got := jvm.FormatFloat(float64(float32(3.4e38)), 32); got != "3.4E38" {
		t.Errorf("float32: %q", got)
	}
}

// The other formatter classes, with golden bytes.
func TestOtherFormatters(t *testing.T) {
	m := clitools.Message{Topic: "t", Key: []byte("k"), Value: []byte("v"), Timestamp: time.UnixMilli(5)}
	out, log, err := formatOne(t, loggingFormatterClass, map[string]string{"print.key": "true"}, m)
	if err != nil || out != "k\tv\n" || !strings.HasSuffix(log, "] INFO CreateTime:5, key:k, value:v (kafka.tools.LoggingMessageFormatter)\n") {
		t.Errorf("logging: %q %q %v", out, log, err)
	}
	if out, _, err := formatOne(t, noOpFormatterClass, nil, m); out != "" || err != nil {
		t.Errorf("no-op: %q %v", out, err)
	}
	if out, _, _ := formatOne(t, checksumFormatter, map[string]string{"topic": "t"}, m); out != "t:checksum:0\n" {
		t.Errorf("checksum: %q", out)
	}

	key := group.EncodeOffsetKey(group.OffsetKey{Version: 1, Group: "g", Topic: "t", Partition: 3})
	for _, c := range []struct {
		value []byte
		want  string
	}{
		{group.EncodeOffsetValue(group.OffsetValue{Version: 3, Offset: 5, LeaderEpoch: 2, Metadata: "", CommitTimestamp: 1000, ExpireTimestamp: -1}),
			"[g,t,3]::OffsetAndMetadata(offset=5, leaderEpoch=Optional[2], metadata=, commitTimestamp=1000, expireTimestamp=None)\n"},
		{group.EncodeOffsetValue(group.OffsetValue{Version: 1, Offset: 7, LeaderEpoch: -1, Metadata: "md", CommitTimestamp: 1000, ExpireTimestamp: 2000}),
			"[g,t,3]::OffsetAndMetadata(offset=7, leaderEpoch=Optional.empty, metadata=md, commitTimestamp=1000, expireTimestamp=Some(2000))\n"},
		{nil, "[g,t,3]::NULL\n"},
	} {
		for _, class := range []string{offsetsFormatterClass, "kafka.coordinator.group.OffsetsMessageFormatter"} {
			out, _, err := formatOne(t, class, nil, clitools.Message{Key: key, Value: c.value})
			if err != nil || out != c.want {
				t.Errorf("%s: %q %v, want %q", class, out, err, c.want)
			}
		}
	}
	if out, _, err := formatOne(t, offsetsFormatterClass, nil, clitools.Message{Key: group.EncodeGroupKey("g"), Value: []byte{0, 3}}); out != "" || err != nil {
		t.Errorf("group metadata record: %q %v", out, err)
	}
	if _, _, err := formatOne(t, offsetsFormatterClass, nil, clitools.Message{Key: []byte{0, 9}}); err == nil {
		t.Error("unknown key version accepted")
	}

	tkey := txn.EncodeKey("tx1")
	tval := txn.EncodeValue(txn.Value{ProducerID: 4000, ProducerEpoch: 2, TimeoutMs: 60000, State: txn.Ongoing,
		Partitions: []common.TopicPartition{{Topic: "a", Partition: 0}}, LastUpdateMs: 20, StartMs: 10})
	out, _, err = formatOne(t, txnLogFormatterClass, nil, clitools.Message{Key: tkey, Value: tval})
	want := "tx1::TransactionMetadata(transactionalId=tx1, producerId=4000, producerEpoch=2, txnTimeoutMs=60000, state=Ongoing, pendingState=None, topicPartitions=HashSet(a-0), txnStartTimestamp=10, txnLastUpdateTimestamp=20)\n"
	if err != nil || out != want {
		t.Errorf("txn log: %q %v\nwant %q", out, err, want)
	}
	if out, _, _ := formatOne(t, txnLogFormatterClass, nil, clitools.Message{Key: tkey}); out != "tx1::NULL\n" {
		t.Errorf("txn tombstone: %q", out)
	}
	var je *javaException
	if _, _, err := formatOne(t, txnLogFormatterClass, nil, clitools.Message{Key: tkey, Value: []byte{0}}); !errors.As(err, &je) {
		t.Errorf("short txn value: %v", err)
	}
}

// FuzzCoordinatorFormatters: the offsets and transaction-log formatters
// never panic on any key and value; what they print is one line.
func FuzzCoordinatorFormatters(f *testing.F) {
	f.Add(group.EncodeOffsetKey(group.OffsetKey{Version: 1, Group: "g", Topic: "t"}),
		group.EncodeOffsetValue(group.OffsetValue{Version: 3, Offset: 5, LeaderEpoch: 2, CommitTimestamp: 1, ExpireTimestamp: -1}))
	f.Add(txn.EncodeKey("x"), txn.EncodeValue(txn.Value{ProducerID: 1, State: txn.Ongoing, Partitions: []common.TopicPartition{{Topic: "a"}}}))
	f.Add([]byte{0, 2, 0, 1, 'g'}, []byte{0, 3})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		for _, fm := range []messageFormatter{offsetsFormatter{}, txnLogFormatter{}, groupMetadataFormatter{}} {
			var out strings.Builder
			if err := fm.write(&out, &out, clitools.Message{Key: key, Value: value}); err == nil && out.Len() > 0 &&
				strings.Count(out.String(), "\n") < 1 {
				t.Fatalf("output without a line end: %q", out.String())
			}
		}
	})
}

// FuzzDeserializers: every deserializer either decodes or raises its
// exception, never panics.
func FuzzDeserializers(f *testing.F) {
	for _, s := range []string{"", "abcd", "12345678", "1-2-3-4-5", "\xe2\x82", "00000000-0000-0000-0000-000000000000"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for name, d := range deserializers {
			if _, err := d(b); err != nil {
				var je *javaException
				if !errors.As(err, &je) {
					t.Fatalf("%s: %v is not a Java exception", name, err)
				}
			}
		}
	})
}

// GroupMetadata.toString of decoded group metadata values; the members
// in Scala 2.13 HashMap order ("b" hashes to bucket 2, "a" to 1).
func TestGroupMetadataFormatter(t *testing.T) {
	proto, inst := "range", "i1"
	v := group.GroupValue{Version: 3, ProtocolType: "consumer", Generation: 4, Protocol: &proto, CurrentStateTimestamp: -1,
		Members: []group.MemberValue{
			{MemberID: "b", ClientID: "c2", ClientHost: "/127.0.0.1", RebalanceTimeout: 60000, SessionTimeout: 10000},
			{MemberID: "a", InstanceID: &inst, ClientID: "c1", ClientHost: "/10.0.0.1", RebalanceTimeout: 300000, SessionTimeout: 45000},
		}}
	out, _, err := formatOne(t, groupFormatterClass, nil, clitools.Message{Key: group.EncodeGroupKey("g"), Value: group.EncodeGroupValue(v)})
	want := "g::GroupMetadata(groupId=g, generation=4, protocolType=Some(consumer), currentState=Stable, members=HashMap(" +
		"a -> MemberMetadata(memberId=a, groupInstanceId=Some(i1), clientId=c1, clientHost=/10.0.0.1, sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List(range), ), " +
		"b -> MemberMetadata(memberId=b, groupInstanceId=None, clientId=c2, clientHost=/127.0.0.1, sessionTimeoutMs=10000, rebalanceTimeoutMs=60000, supportedProtocols=List(range), )))\n"
	if err != nil || out != want {
		t.Fatalf("got  %q (%v)\nwant %q", out, err, want)
	}
	empty := group.GroupValue{Version: 3, Generation: 5, CurrentStateTimestamp: -1}
	out, _, _ = formatOne(t, "kafka.coordinator.group.GroupMetadataMessageFormatter", nil, clitools.Message{Key: group.EncodeGroupKey("g"), Value: group.EncodeGroupValue(empty)})
	if out != "g::GroupMetadata(groupId=g, generation=5, protocolType=None, currentState=Empty, members=HashMap())\n" {
		t.Errorf("empty group: %q", out)
	}
	if out, _, _ := formatOne(t, groupFormatterClass, nil, clitools.Message{Key: group.EncodeGroupKey("g")}); out != "g::NULL\n" {
		t.Errorf("tombstone: %q", out)
	}
	offKey := group.EncodeOffsetKey(group.OffsetKey{Version: 1, Group: "g", Topic: "t"})
	if out, _, _ := formatOne(t, groupFormatterClass, nil, clitools.Message{Key: offKey, Value: []byte{0, 3}}); out != "" {
		t.Errorf("offset record printed: %q", out)
	}
}
