package config

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ParseProperties reads text in the java.util.Properties format that Kafka's
// server.properties uses:
//
//   - a line whose first non-blank character is '#' or '!' is a comment;
//   - the key ends at the first unescaped '=', ':' or blank (space, tab, form
//     feed); blanks around the separator are skipped, and a blank alone also
//     separates ("key value");
//   - a line ending in an odd number of backslashes continues on the next line,
//     whose leading blanks are dropped;
//   - escapes \t \n \r \f and \uXXXX are decoded, and a backslash before any
//     other character yields that character (so "\=" and "\:" allow those
//     characters inside keys);
//   - a key given twice keeps its last value, as Properties.load does.
//
// Lines may end in \n, \r\n or \r. The text is read as UTF-8 (Java's
// Properties.load(InputStream) would read ISO-8859-1 and mangle non-ASCII
// characters; \uXXXX escapes mean the same in both). An invalid \u escape is an error naming
// the line on which the logical line starts.
func ParseProperties(r io.Reader) (map[string]string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("config: read properties: %w", err)
	}
	out := make(map[string]string)
	lines := splitNaturalLines(string(data))
	for i := 0; i < len(lines); i++ {
		startLine := i + 1
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		// Join continuation lines: an odd number of trailing backslashes
		// means the line break is escaped.
		for endsWithOddBackslashes(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		if endsWithOddBackslashes(line) {
			// A continuation at end of input is dropped, as Java does.
			line = line[:len(line)-1]
		}
		key, value, err := splitKeyValue(line)
		if err != nil {
			return nil, fmt.Errorf("config: line %d: %w", startLine, err)
		}
		out[key] = value
	}
	return out, nil
}

// splitNaturalLines splits on \n, \r\n and \r, the three terminators Java
// accepts.
func splitNaturalLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			lines = append(lines, s[start:i])
			start = i + 1
		case '\r':
			lines = append(lines, s[start:i])
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

func endsWithOddBackslashes(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// splitKeyValue separates one logical line (leading blanks removed) into its
// unescaped key and value.
func splitKeyValue(line string) (string, string, error) {
	keyEnd := len(line)
	valueStart := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++ // the escaped character never ends the key
			continue
		}
		if c == '=' || c == ':' {
			keyEnd, valueStart = i, i+1
			break
		}
		if isBlank(c) {
			keyEnd = i
			j := i
			for j < len(line) && isBlank(line[j]) {
				j++
			}
			if j < len(line) && (line[j] == '=' || line[j] == ':') {
				j++
			}
			valueStart = j
			break
		}
	}
	for valueStart < len(line) && isBlank(line[valueStart]) {
		valueStart++
	}
	key, err := unescape(line[:keyEnd])
	if err != nil {
		return "", "", err
	}
	value, err := unescape(line[valueStart:])
	if err != nil {
		return "", "", err
	}
	return key, value, nil
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			break
		}
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r, ok := hex4(s, i+1)
			if !ok {
				return "", fmt.Errorf("malformed \\uxxxx escape in %q", s)
			}
			i += 4
			// A surrogate pair written as two escapes forms one character.
			if utf16.IsSurrogate(r) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if r2, ok := hex4(s, i+3); ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						r = dec
						i += 6
					}
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// hex4 decodes the four hex digits at s[i:i+4].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, h := range []byte(s[i : i+4]) {
		var d byte
		switch {
		case h >= '0' && h <= '9':
			d = h - '0'
		case h >= 'a' && h <= 'f':
			d = h - 'a' + 10
		case h >= 'A' && h <= 'F':
			d = h - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}
