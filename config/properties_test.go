package config

import (
	"maps"
	"strings"
	"testing"
)

func TestParseProperties(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"equals", "a=b", map[string]string{"a": "b"}},
		{"colon", "a:b", map[string]string{"a": "b"}},
		{"whitespace separator", "a b", map[string]string{"a": "b"}},
		{"blanks around equals", "  a  =  b  ", map[string]string{"a": "b  "}},
		{"tab and form feed", "\ta\t:\fb", map[string]string{"a": "b"}},
		{"hash comment", "# a=b\nc=d", map[string]string{"c": "d"}},
		{"bang comment", "  ! a=b\nc=d", map[string]string{"c": "d"}},
		{"hash inside value is kept", "a=b#c", map[string]string{"a": "b#c"}},
		{"blank lines", "\n\n  \na=b\n\n", map[string]string{"a": "b"}},
		{"empty value", "a=", map[string]string{"a": ""}},
		{"key only", "a", map[string]string{"a": ""}},
		{"second separator belongs to value", "a==b", map[string]string{"a": "=b"}},
		{"blank then colon", "a : b", map[string]string{"a": "b"}},
		{"continuation", "a=b,\\\n    c,\\\n    d", map[string]string{"a": "b,c,d"}},
		{"escaped backslash is not continuation", "a=b\\\\\nc=d", map[string]string{"a": `b\`, "c": "d"}},
		{"continuation line starting with hash is data", "a=b\\\n#c", map[string]string{"a": "b#c"}},
		{"continuation at EOF", "a=b\\", map[string]string{"a": "b"}},
		{"escaped separators in key", `a\=b\:c\ d=e`, map[string]string{"a=b:c d": "e"}},
		{"escapes", `a=\t\n\r\f\\\x`, map[string]string{"a": "\t\n\r\f\\x"}},
		{"unicode escape", `a=caf\u00e9`, map[string]string{"a": "café"}},
		{"surrogate pair", `a=\ud83d\ude00`, map[string]string{"a": "😀"}},
		{"CRLF", "a=b\r\nc=d\r\n", map[string]string{"a": "b", "c": "d"}},
		{"CR only", "a=b\rc=d", map[string]string{"a": "b", "c": "d"}},
		{"last wins", "a=1\na=2", map[string]string{"a": "2"}},
		{"kafka listener line", "listeners=PLAINTEXT://:9092", map[string]string{"listeners": "PLAINTEXT://:9092"}},
		{"comma list with spaces kept raw", "log.dirs=/a, /b", map[string]string{"log.dirs": "/a, /b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProperties(strings.NewReader(tc.in))
			if err != nil {
				t.Fatalf("ParseProperties(%q): %v", tc.in, err)
			}
			if !maps.Equal(got, tc.want) {
				t.Fatalf("ParseProperties(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParsePropertiesErrors(t *testing.T) {
	for _, in := range []string{`a=\u12`, `a=\uzzzz`, "x=1\n\n" + `b\u00=c`} {
		_, err := ParseProperties(strings.NewReader(in))
		if err == nil {
			t.Errorf("ParseProperties(%q) succeeded, want malformed escape error", in)
			continue
		}
		if !strings.Contains(err.Error(), "malformed") {
			t.Errorf("ParseProperties(%q) error %q does not mention the malformed escape", in, err)
		}
	}
	_, err := ParseProperties(strings.NewReader("x=1\n\n" + `b\u00=c`))
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("error %v should name line 3", err)
	}
}

// FuzzParseProperties checks that the parser never panics, and that every
// key/value it returns survives a round trip through an escaped rendering:
// rendering each pair with every special character escaped and parsing again
// yields the same map.
func FuzzParseProperties(f *testing.F) {
	for _, s := range []string{
		"a=b", "a:b\nc d", "# c\n! c\nk=v\\\n  w", `k\=1=\u0041\t`, "a=b\r\nc=d\re=f",
		"listeners=PLAINTEXT://:9092\nlog.dirs=/tmp/a,/tmp/b\n", `\`, `\u`, "a=\\\n", "\xff=\xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		m, err := ParseProperties(strings.NewReader(in))
		if err != nil {
			return
		}
		var b strings.Builder
		for k, v := range m {
			b.WriteString(escapeProp(k, true))
			b.WriteByte('=')
			b.WriteString(escapeProp(v, false))
			b.WriteByte('\n')
		}
		m2, err := ParseProperties(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("re-parse of rendered map failed: %v\n%q", err, b.String())
		}
		if !maps.Equal(m, m2) {
			t.Fatalf("round trip changed the map: %q -> %q", m, m2)
		}
	})
}

// escapeProp renders s so that ParseProperties reads it back unchanged.
func escapeProp(s string, key bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '=' || c == ':' || c == '#' || c == '!':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == ' ' && (key || i == 0):
			b.WriteString(`\ `)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
