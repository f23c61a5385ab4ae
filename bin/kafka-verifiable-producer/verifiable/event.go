package verifiable

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/klassik/klassik/broker/common/jvm"
)

// Field is one member of an event line, in the order Kafka's Jackson
// mapper writes them.
type Field struct {
	Key   string
	Value any // string, *string (nil = null), int/int32/int64, bool, float64, []Object, Object
	Omit  bool
}

// Object is a JSON object with ordered members.
type Object []Field

// Printer writes one JSON event per line, each starting with
// "timestamp" and "name" as the tools' @JsonPropertyOrder says; lines
// from several goroutines never interleave (Kafka synchronizes on
// System.out).
type Printer struct {
	// mu guards the following.
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

// NewPrinter prints on w.
func NewPrinter(w io.Writer) *Printer { return &Printer{w: w, now: time.Now} }

// Event prints {"timestamp":<ms>,"name":name, fields...}.
func (p *Printer) Event(name string, fields ...Field) {
	p.mu.Lock()
	defer p.mu.Unlock()
	obj := append(Object{{Key: "timestamp", Value: p.now().UnixMilli()}, {Key: "name", Value: name}}, fields...)
	var b bytes.Buffer
	writeValue(&b, obj)
	b.WriteByte('\n')
	_, _ = p.w.Write(b.Bytes())
}

func writeValue(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case *string:
		if x == nil {
			b.WriteString("null")
		} else {
			writeString(b, *x)
		}
	case string:
		writeString(b, x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			// Jackson quotes non-numeric numbers.
			writeString(b, jvm.DoubleToString(x))
		} else {
			b.WriteString(jvm.DoubleToString(x))
		}
	case Object:
		b.WriteByte('{')
		first := true
		for _, f := range x {
			if f.Omit {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			writeString(b, f.Key)
			b.WriteByte(':')
			writeValue(b, f.Value)
		}
		b.WriteByte('}')
	case []Object:
		b.WriteByte('[')
		for i, o := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, o)
		}
		b.WriteByte(']')
	default:
		b.WriteString("null")
	}
}

func writeString(b *bytes.Buffer, s string) {
	var sb bytes.Buffer
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Write(bytes.TrimSuffix(sb.Bytes(), []byte("\n")))
}
