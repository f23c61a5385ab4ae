package security

import (
	"fmt"
	"strings"
	"unicode"
)

// zkJaasModule is one login module of a JAAS file section.
type zkJaasModule struct {
	module  string
	flag    string
	options map[string]string
}

// zkParseJaasSections reads a JAAS login configuration file
// ("Name { module flag key=value ... ; ... };" with // and /* */
// comments and quoted values) into its sections. It serves the ZooKeeper
// client login until the broker's JAAS parser is shared in this package.
func zkParseJaasSections(src string) (map[string][]zkJaasModule, error) {
	toks, err := zkJaasTokens(src)
	if err != nil {
		return nil, err
	}
	out := map[string][]zkJaasModule{}
	i := 0
	next := func() string {
		if i >= len(toks) {
			return ""
		}
		i++
		return toks[i-1]
	}
	for i < len(toks) {
		name := next()
		if name == "{" || name == "}" || name == ";" || name == "=" {
			return nil, fmt.Errorf("JAAS file: expected a section name, found %q", name)
		}
		if t := next(); t != "{" {
			return nil, fmt.Errorf("JAAS file: expected '{' after %s, found %q", name, t)
		}
		for {
			t := next()
			if t == "}" {
				break
			}
			if t == "" || t == "{" || t == ";" || t == "=" {
				return nil, fmt.Errorf("JAAS file: section %s: expected a login module, found %q", name, t)
			}
			m := zkJaasModule{module: t, flag: next(), options: map[string]string{}}
			if m.flag == "" || m.flag == ";" {
				return nil, fmt.Errorf("JAAS file: section %s: login module %s has no control flag", name, m.module)
			}
			for {
				k := next()
				if k == ";" {
					break
				}
				if k == "" || k == "}" || k == "{" || k == "=" || next() != "=" {
					return nil, fmt.Errorf("JAAS file: section %s: expected key=value or ';' after %s", name, m.module)
				}
				v := next()
				if v == "" {
					return nil, fmt.Errorf("JAAS file: section %s: %s has no value", name, k)
				}
				m.options[k] = strings.TrimPrefix(v, "\x00")
			}
			out[name] = append(out[name], m)
		}
		if t := next(); t != ";" {
			return nil, fmt.Errorf("JAAS file: expected ';' after the '}' of %s", name)
		}
	}
	return out, nil
}

// zkJaasTokens splits src into words, the characters { } = ; and quoted
// strings (returned with a leading NUL so that a quoted "{" is a value).
func zkJaasTokens(src string) ([]string, error) {
	var toks []string
	r := []rune(src)
	for i := 0; i < len(r); {
		c := r[i]
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '/' && i+1 < len(r) && r[i+1] == '/':
			for i < len(r) && r[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(r) && r[i+1] == '*':
			end := strings.Index(string(r[i+2:]), "*/")
			if end < 0 {
				return nil, fmt.Errorf("JAAS file: unterminated comment")
			}
			i += 2 + len([]rune(string(r[i+2:])[:end])) + 2
		case c == '{' || c == '}' || c == '=' || c == ';':
			toks = append(toks, string(c))
			i++
		case c == '"' || c == '\'':
			var b strings.Builder
			j := i + 1
			for ; j < len(r) && r[j] != c; j++ {
				if r[j] == '\\' && j+1 < len(r) {
					j++
				}
				b.WriteRune(r[j])
			}
			if j >= len(r) {
				return nil, fmt.Errorf("JAAS file: unterminated quoted string")
			}
			toks = append(toks, "\x00"+b.String())
			i = j + 1
		default:
			j := i
			for j < len(r) && !unicode.IsSpace(r[j]) && !strings.ContainsRune("{}=;\"'", r[j]) {
				j++
			}
			toks = append(toks, string(r[i:j]))
			i = j
		}
	}
	return toks, nil
}
