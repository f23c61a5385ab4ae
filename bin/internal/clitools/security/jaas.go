package security

import (
	"fmt"
	"os"
	"strings"
)

// Login modules whose username and password options the SASL/PLAIN and
// SCRAM client mechanisms use (Kafka's PlainLoginModule and
// ScramLoginModule put both into the login's subject, whichever mechanism
// then runs).
const (
	plainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramLoginModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

// login is the client's SASL identity.
type login struct{ username, password string }

// clientLogin reads the one login module of jaasConfig (sasl.jaas.config)
// or, when that is empty, of the KafkaClient section of the JAAS file
// that -Djava.security.auth.login.config in KAFKA_OPTS names, as Kafka's
// JaasContext.loadClientContext does.
func clientLogin(jaasConfig string) (login, error) {
	var mods []jaasModule
	if strings.TrimSpace(jaasConfig) != "" {
		var err error
		if mods, err = parseJaasModules(jaasConfig); err != nil {
			return login{}, fmt.Errorf("Invalid value for configuration sasl.jaas.config: %v", err)
		}
		switch len(mods) {
		case 0:
			return login{}, fmt.Errorf("JAAS config property does not contain any login modules")
		case 1:
		default:
			return login{}, fmt.Errorf("JAAS config property contains %d login modules, should be 1 module", len(mods))
		}
	} else {
		file := jaasFileFromKafkaOpts(os.Getenv("KAFKA_OPTS"))
		if file == "" {
			return login{}, fmt.Errorf("Could not find a 'KafkaClient' entry in the JAAS configuration. System property 'java.security.auth.login.config' is not set (set sasl.jaas.config)")
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return login{}, fmt.Errorf("reading the JAAS file %s: %v", file, err)
		}
		sections, err := parseJaasFile(string(data))
		if err != nil {
			return login{}, fmt.Errorf("JAAS file %s: %v", file, err)
		}
		if mods = sections["KafkaClient"]; len(mods) == 0 {
			return login{}, fmt.Errorf("Could not find a 'KafkaClient' entry in the JAAS configuration. System property 'java.security.auth.login.config' is %s", file)
		}
	}
	m := mods[0]
	if m.class != plainLoginModule && m.class != scramLoginModule {
		return login{}, fmt.Errorf("sasl.jaas.config: login module %s is not supported by Klassik's tools (use %s or %s)", m.class, plainLoginModule, scramLoginModule)
	}
	if v := m.options["tokenauth"]; strings.EqualFold(v, "true") {
		return login{}, fmt.Errorf("sasl.jaas.config: tokenauth=true (delegation tokens) is not supported by Klassik's tools")
	}
	user, ok1 := m.options["username"]
	pass, ok2 := m.options["password"]
	if !ok1 || !ok2 {
		return login{}, fmt.Errorf("sasl.jaas.config: %s needs username and password options", m.class)
	}
	return login{username: user, password: pass}, nil
}

// jaasFileFromKafkaOpts finds -Djava.security.auth.login.config=FILE in
// the JVM options the scripts pass.
func jaasFileFromKafkaOpts(opts string) string {
	const flag = "-Djava.security.auth.login.config="
	for _, f := range strings.Fields(opts) {
		if v, ok := strings.CutPrefix(f, flag); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

// jaasModule is one login module entry: class, control flag, options.
type jaasModule struct {
	class, flag string
	options     map[string]string
}

// parseJaasModules reads entries "Class flag key=value ...;" as in the
// body of a JAAS section (sasl.jaas.config's syntax).
func parseJaasModules(s string) ([]jaasModule, error) {
	toks, err := jaasTokens(s)
	if err != nil {
		return nil, err
	}
	mods, rest, err := modules(toks)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("unexpected %q", rest[0].text)
	}
	return mods, nil
}

// parseJaasFile reads "Name { entries };" sections of a JAAS file.
func parseJaasFile(s string) (map[string][]jaasModule, error) {
	toks, err := jaasTokens(s)
	if err != nil {
		return nil, err
	}
	out := map[string][]jaasModule{}
	for len(toks) > 0 {
		if len(toks) < 2 || toks[0].quoted || toks[1].text != "{" || toks[1].quoted {
			return nil, fmt.Errorf("expected a section name and '{' at %q", toks[0].text)
		}
		name := toks[0].text
		mods, rest, err := modules(toks[2:])
		if err != nil {
			return nil, err
		}
		if len(rest) < 2 || rest[0].text != "}" || rest[1].text != ";" {
			return nil, fmt.Errorf("section %s is not closed with '};'", name)
		}
		out[name] = append(out[name], mods...)
		toks = rest[2:]
	}
	return out, nil
}

// modules reads entries until a '}' or the end.
func modules(toks []jaasToken) ([]jaasModule, []jaasToken, error) {
	var mods []jaasModule
	for len(toks) > 0 && !(toks[0].text == "}" && !toks[0].quoted) {
		if len(toks) < 2 {
			return nil, nil, fmt.Errorf("login module %s has no control flag", toks[0].text)
		}
		m := jaasModule{class: toks[0].text, flag: toks[1].text, options: map[string]string{}}
		switch m.flag {
		case "required", "requisite", "sufficient", "optional":
		default:
			return nil, nil, fmt.Errorf("login module %s: invalid control flag %q", m.class, m.flag)
		}
		toks = toks[2:]
		for {
			if len(toks) == 0 {
				return nil, nil, fmt.Errorf("login module %s is not terminated by ';'", m.class)
			}
			if toks[0].text == ";" && !toks[0].quoted {
				toks = toks[1:]
				break
			}
			if len(toks) < 3 || toks[1].text != "=" || toks[1].quoted {
				return nil, nil, fmt.Errorf("login module %s: expected key=value at %q", m.class, toks[0].text)
			}
			m.options[toks[0].text] = toks[2].text
			toks = toks[3:]
		}
		mods = append(mods, m)
	}
	return mods, toks, nil
}

type jaasToken struct {
	text   string
	quoted bool
}

// jaasTokens splits s into words, quoted strings ("..." or '...', with
// backslash escapes) and the punctuation { } ; =; comments (// and /* */)
// are skipped.
func jaasTokens(s string) ([]jaasToken, error) {
	var toks []jaasToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unterminated comment")
			}
			i += end + 4
		case c == '{' || c == '}' || c == ';' || c == '=':
			toks = append(toks, jaasToken{text: string(c)})
			i++
		case c == '"' || c == '\'':
			var b strings.Builder
			j := i + 1
			for ; j < len(s) && s[j] != c; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated quoted value")
			}
			toks = append(toks, jaasToken{text: b.String(), quoted: true})
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r{};=\"'", rune(s[j])) {
				j++
			}
			toks = append(toks, jaasToken{text: s[i:j]})
			i = j
		}
	}
	return toks, nil
}
