package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/klassik/klassik/broker/common/jvm"
)

// deserializer is one of Kafka's org.apache.kafka.common.serialization
// deserializers as DefaultMessageFormatter uses it: the bytes are decoded
// and the Java object's toString is printed (UTF-8).
type deserializer func(data []byte) (string, error)

// javaException is an exception a formatter throws; Error is Java's
// Throwable.toString.
type javaException struct{ class, msg string }

func (e *javaException) Error() string {
	if e.msg == "" {
		return e.class
	}
	return e.class + ": " + e.msg
}

func serializationError(msg string) error {
	return &javaException{class: "org.apache.kafka.common.errors.SerializationException", msg: msg}
}

// classNotFound is what Class.forName throws for a class Klassik does not
// have; the console consumer does not catch it.
func classNotFound(name string) error {
	return &javaException{class: "java.lang.ClassNotFoundException", msg: name}
}

const serializationPkg = "org.apache.kafka.common.serialization."

// deserializers maps the class names of Kafka's deserializers to Go
// decoders with the Java classes' checks, messages and toString.
var deserializers = map[string]deserializer{
	serializationPkg + "StringDeserializer":    func(b []byte) (string, error) { return javaUTF8(b), nil },
	serializationPkg + "ByteArrayDeserializer": byteArrayString,
	serializationPkg + "BytesDeserializer":     func(b []byte) (string, error) { return bytesString(b), nil },
	serializationPkg + "ByteBufferDeserializer": func(b []byte) (string, error) {
		return fmt.Sprintf("java.nio.HeapByteBuffer[pos=0 lim=%d cap=%d]", len(b), len(b)), nil
	},
	serializationPkg + "LongDeserializer": func(b []byte) (string, error) {
		if len(b) != 8 {
			return "", serializationError("Size of data received by LongDeserializer is not 8")
		}
		return strconv.FormatInt(int64(binary.BigEndian.Uint64(b)), 10), nil
	},
	serializationPkg + "IntegerDeserializer": func(b []byte) (string, error) {
		if len(b) != 4 {
			return "", serializationError("Size of data received by IntegerDeserializer is not 4")
		}
		return strconv.FormatInt(int64(int32(binary.BigEndian.Uint32(b))), 10), nil
	},
	serializationPkg + "ShortDeserializer": func(b []byte) (string, error) {
		if len(b) != 2 {
			return "", serializationError("Size of data received by ShortDeserializer is not 2")
		}
		return strconv.FormatInt(int64(int16(binary.BigEndian.Uint16(b))), 10), nil
	},
	serializationPkg + "DoubleDeserializer": func(b []byte) (string, error) {
		if len(b) != 8 {
			return "", serializationError("Size of data received by Deserializer is not 8")
		}
		return jvm.FormatFloat(math.Float64frombits(binary.BigEndian.Uint64(b)), 64), nil
	},
	serializationPkg + "FloatDeserializer": func(b []byte) (string, error) {
		if len(b) != 4 {
			return "", serializationError("Size of data received by Deserializer is not 4")
		}
		return jvm.FormatFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(b))), 32), nil
	},
	serializationPkg + "UUIDDeserializer": func(b []byte) (string, error) {
		u, ok := javaUUID(javaUTF8(b))
		if !ok {
			return "", serializationError("Error parsing data into UUID")
		}
		return u, nil
	},
	serializationPkg + "VoidDeserializer": func(b []byte) (string, error) {
		// The formatter hands null.literal for a null field, so the data
		// is never null here.
		return "", &javaException{class: "java.lang.IllegalArgumentException", msg: "Data should be null for a VoidDeserializer."}
	},
}

// newDeserializer loads a deserializer by its Java class name.
func newDeserializer(class string) (deserializer, error) {
	d, ok := deserializers[strings.TrimSpace(class)]
	if !ok {
		return nil, classNotFound(class)
	}
	return d, nil
}

// identityHash stands in for the JVM's identity hash code in byte[]'s
// toString ("[B@1b6d3586"), which differs per object and run.
var identityHash atomic.Uint32

func init() { identityHash.Store(0x1b6d3586) }

// byteArrayString is Java's Object.toString of a byte[].
func byteArrayString([]byte) (string, error) {
	return "[B@" + strconv.FormatUint(uint64(identityHash.Add(0x9e3779b9)>>1), 16), nil
}

// bytesString is org.apache.kafka.common.utils.Bytes.toString: printable
// ASCII except the backslash as is, every other byte as \xHH.
func bytesString(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		if c >= ' ' && c <= '~' && c != '\\' {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, `\x%02X`, c)
		}
	}
	return sb.String()
}

// javaUTF8 decodes b as new String(b, UTF_8) does: each maximal invalid
// subsequence becomes one U+FFFD.
func javaUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			sb.WriteByte(c)
			i++
			continue
		}
		n, lo, hi := 0, byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			n = 1
		case c == 0xE0:
			n, lo = 2, 0xA0
		case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
			n = 2
		case c == 0xED:
			n, hi = 2, 0x9F
		case c == 0xF0:
			n, lo = 3, 0x90
		case c >= 0xF1 && c <= 0xF3:
			n = 3
		case c == 0xF4:
			n, hi = 3, 0x8F
		default:
			sb.WriteRune(utf8.RuneError)
			i++
			continue
		}
		j, ok := i+1, true
		for k := 0; k < n; k++ {
			l, h := byte(0x80), byte(0xBF)
			if k == 0 {
				l, h = lo, hi
			}
			if j >= len(b) || b[j] < l || b[j] > h {
				ok = false
				break
			}
			j++
		}
		if ok {
			sb.Write(b[i:j])
		} else {
			sb.WriteRune(utf8.RuneError)
		}
		i = j
	}
	return sb.String()
}

// javaUUID is UUID.fromString (Java 11) followed by toString: five
// dash-separated hexadecimal fields of at most 36 characters in all, each
// read as a long and cut to its width.
func javaUUID(s string) (string, bool) {
	if len(s) > 36 {
		return "", false
	}
	parts := strings.Split(s, "-")
	if len(parts) != 5 {
		return "", false
	}
	var f [5]uint64
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 16, 64)
		if err != nil {
			return "", false
		}
		f[i] = uint64(n)
	}
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", f[0]&0xffffffff, f[1]&0xffff, f[2]&0xffff, f[3]&0xffff, f[4]&0xffffffffffff), true
}
