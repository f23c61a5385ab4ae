package zkpaths

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// obj writes one compact JSON object with keys in the order they are added,
// as Jackson's default writer does for Kafka's maps: no whitespace, no HTML
// escaping, no trailing newline.
type obj struct {
	b []byte
	n int
}

func newObj() *obj { return &obj{b: []byte{'{'}} }

func (o *obj) key(k string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = appendString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *obj) int(k string, v int64) *obj {
	o.key(k)
	o.b = strconv.AppendInt(o.b, v, 10)
	return o
}

func (o *obj) str(k, v string) *obj {
	o.key(k)
	o.b = appendString(o.b, v)
	return o
}

func (o *obj) null(k string) *obj {
	o.key(k)
	o.b = append(o.b, "null"...)
	return o
}

func (o *obj) raw(k string, v []byte) *obj {
	o.key(k)
	o.b = append(o.b, v...)
	return o
}

func (o *obj) ints(k string, v []int32) *obj {
	o.key(k)
	o.b = appendInts(o.b, v)
	return o
}

func (o *obj) bytes() []byte { return append(o.b, '}') }

func appendInts(b []byte, v []int32) []byte {
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, ']')
}

func appendStrings(b []byte, v []string) []byte {
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, x)
	}
	return append(b, ']')
}

// shortEscapes maps the characters JSON writes as a backslash and one
// letter to that letter.
var shortEscapes = [utf8.RuneSelf]byte{'"': '"', '\\': '\\', '\n': 'n', '\r': 'r', '\t': 't', '\b': 'b', '\f': 'f'}

// appendString quotes s the way Jackson does: '"' and '\\' escaped, control
// characters as short escapes or \u00XX, everything else (including '<',
// '>', '&', '/', U+2028 and non-ASCII) written raw in UTF-8. Invalid UTF-8 is
// replaced by U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch e := shortEscapes[c]; {
			case e != 0:
				b = append(b, '\\', e)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// unmarshal decodes tolerantly (unknown fields ignored).
func unmarshal(what string, data []byte, v any) error {
	if len(data) == 0 {
		return fmt.Errorf("zkpaths: %s: empty data", what)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("zkpaths: %s: %w", what, err)
	}
	return nil
}

// unmarshalStrict rejects unknown fields and trailing data, for the nodes
// where Kafka's bean mapping is strict.
func unmarshalStrict(what string, data []byte, v any) error {
	if len(data) == 0 {
		return fmt.Errorf("zkpaths: %s: empty data", what)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("zkpaths: %s: %w", what, err)
	}
	if d.More() {
		return fmt.Errorf("zkpaths: %s: trailing data", what)
	}
	return nil
}

// flexInt64 accepts a JSON number or a string holding a decimal number, since
// Kafka writes some numbers (timestamps, producer id bounds) as strings and
// older writers were not always consistent.
type flexInt64 struct {
	V   int64
	Set bool
}

func (f *flexInt64) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	s := string(b)
	if len(b) >= 2 && b[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		s = str
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer: %s", b)
	}
	f.V, f.Set = n, true
	return nil
}
