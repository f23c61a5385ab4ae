package security

// JAAS configuration as Kafka reads it (Kafka's JaasConfig, JaasContext
// and the JDK's ConfigFile). Two syntaxes share one tokenizer:
//
//	property value (sasl.jaas.config):  <LoginModule> <flag> (<key>=<value>)* ;
//	file (java.security.auth.login.config):
//	    <SectionName> { <LoginModule> <flag> (<key>=<value>)* ; ... } ;
//
// Tokens are words (letters, digits and . - _ $ and non-ASCII letters),
// quoted strings ("..." or '...', with backslash escapes as Java's
// StreamTokenizer reads them) and the characters { } = ;. Comments are //
// to end of line and /* ... */.
//
// A broker's server context for a listener and a mechanism is found, as
// Kafka's JaasContext.loadServerContext does, in
// listener.name.<listener>.<mechanism>.sasl.jaas.config (both lower case),
// then (Klassik's fallback, see ServerJaas) sasl.jaas.config, then the
// file's <listener>.KafkaServer section, then its KafkaServer section.

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode"
)

// Login module classes Klassik knows.
const (
	PlainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	ScramLoginModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

// KafkaServerContext is the JAAS section brokers read (Kafka's
// GLOBAL_CONTEXT_NAME_SERVER).
const KafkaServerContext = "KafkaServer"

// JavaLoginConfigProperty is the system property naming the JAAS file.
const JavaLoginConfigProperty = "java.security.auth.login.config"

// LoginModuleEntry is one login module of a JAAS context (Java's
// AppConfigurationEntry).
type LoginModuleEntry struct {
	LoginModule string
	// Flag is REQUIRED, REQUISITE, SUFFICIENT or OPTIONAL.
	Flag    string
	Options map[string]string
}

// JaasContext is the list of login modules one broker listener uses for
// one mechanism, with where it came from (for error messages).
type JaasContext struct {
	Name    string // "KafkaServer" or "<listener>.KafkaServer"
	Source  string // the config key or the file it was read from
	Entries []LoginModuleEntry
}

// Option returns the first value of key among the entries of loginModule
// (any module when loginModule is ""), as Kafka's
// JaasContext.configEntryOption does.
func (c *JaasContext) Option(loginModule, key string) (string, bool) {
	for _, e := range c.Entries {
		if loginModule != "" && e.LoginModule != loginModule {
			continue
		}
		if v, ok := e.Options[key]; ok {
			return v, true
		}
	}
	return "", false
}

// ParseJaasConfig parses a sasl.jaas.config value: one or more login
// module entries, each ended by ';'.
func ParseJaasConfig(s string) ([]LoginModuleEntry, error) {
	t := &jaasTokenizer{src: []rune(s)}
	var out []LoginModuleEntry
	for {
		tok, err := t.next()
		if err != nil {
			return nil, err
		}
		if tok.kind == tokEOF {
			break
		}
		e, err := parseJaasEntry(t, tok)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, errors.New("Login module not specified in JAAS config")
	}
	return out, nil
}

// ParseJaasFile parses a JAAS login configuration file into its sections.
func ParseJaasFile(s string) (map[string][]LoginModuleEntry, error) {
	t := &jaasTokenizer{src: []rune(s)}
	out := map[string][]LoginModuleEntry{}
	for {
		tok, err := t.next()
		if err != nil {
			return nil, err
		}
		if tok.kind == tokEOF {
			return out, nil
		}
		if tok.kind != tokWord {
			return nil, fmt.Errorf("line %d: expected a login context name, found %s", tok.line, tok)
		}
		name := tok.text
		if open, err := t.next(); err != nil {
			return nil, err
		} else if !open.is('{') {
			return nil, fmt.Errorf("line %d: expected '{' after %s, found %s", open.line, name, open)
		}
		var entries []LoginModuleEntry
		for {
			tok, err := t.next()
			if err != nil {
				return nil, err
			}
			if tok.is('}') {
				break
			}
			if tok.kind == tokEOF {
				return nil, fmt.Errorf("login context %s is not closed by '}'", name)
			}
			e, err := parseJaasEntry(t, tok)
			if err != nil {
				return nil, fmt.Errorf("login context %s: %w", name, err)
			}
			entries = append(entries, e)
		}
		if semi, err := t.next(); err != nil {
			return nil, err
		} else if !semi.is(';') {
			return nil, fmt.Errorf("line %d: expected ';' after the '}' of %s, found %s", semi.line, name, semi)
		}
		if len(entries) == 0 {
			return nil, fmt.Errorf("login context %s has no login modules", name)
		}
		// The JDK appends the entries of a section named twice.
		out[name] = append(out[name], entries...)
	}
}

// parseJaasEntry reads "<module> <flag> (key=value)* ;" whose first token
// is first.
func parseJaasEntry(t *jaasTokenizer, first jaasToken) (LoginModuleEntry, error) {
	if first.kind != tokWord {
		return LoginModuleEntry{}, fmt.Errorf("line %d: expected a login module class, found %s", first.line, first)
	}
	e := LoginModuleEntry{LoginModule: first.text, Options: map[string]string{}}
	flag, err := t.next()
	if err != nil {
		return e, err
	}
	if flag.kind == tokEOF {
		return e, errors.New("Login module control flag not specified in JAAS config")
	}
	switch f := strings.ToUpper(flag.text); {
	case flag.kind == tokWord && (f == "REQUIRED" || f == "REQUISITE" || f == "SUFFICIENT" || f == "OPTIONAL"):
		e.Flag = f
	default:
		return e, fmt.Errorf("Invalid login module control flag '%s' in JAAS config", flag.text)
	}
	for {
		key, err := t.next()
		if err != nil {
			return e, err
		}
		if key.is(';') {
			return e, nil
		}
		if key.kind == tokEOF || key.is('}') {
			return e, errors.New("JAAS config entry not terminated by semi-colon")
		}
		if key.kind != tokWord {
			return e, fmt.Errorf("line %d: expected an option name, found %s", key.line, key)
		}
		eq, err := t.next()
		if err != nil {
			return e, err
		}
		val, err := t.next()
		if err != nil {
			return e, err
		}
		if !eq.is('=') || (val.kind != tokWord && val.kind != tokQuoted) {
			return e, fmt.Errorf("Value not specified for key '%s' in JAAS config", key.text)
		}
		e.Options[key.text] = val.text
	}
}

type jaasTokenKind int

const (
	tokEOF jaasTokenKind = iota
	tokWord
	tokQuoted
	tokChar
)

type jaasToken struct {
	kind jaasTokenKind
	text string
	line int
}

func (t jaasToken) is(c rune) bool { return t.kind == tokChar && t.text == string(c) }

func (t jaasToken) String() string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokQuoted:
		return fmt.Sprintf("%q", t.text)
	}
	return "'" + t.text + "'"
}

// jaasTokenizer reads the tokens of both JAAS syntaxes.
type jaasTokenizer struct {
	src  []rune
	pos  int
	line int
}

func isJaasWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(".-_$", r)
}

func (t *jaasTokenizer) next() (jaasToken, error) {
	if t.line == 0 {
		t.line = 1
	}
	for t.pos < len(t.src) {
		r := t.src[t.pos]
		switch {
		case r == '\n':
			t.line++
			t.pos++
		case unicode.IsSpace(r):
			t.pos++
		case r == '/' && t.pos+1 < len(t.src) && t.src[t.pos+1] == '/':
			for t.pos < len(t.src) && t.src[t.pos] != '\n' {
				t.pos++
			}
		case r == '/' && t.pos+1 < len(t.src) && t.src[t.pos+1] == '*':
			end := -1
			for i := t.pos + 2; i+1 < len(t.src); i++ {
				if t.src[i] == '*' && t.src[i+1] == '/' {
					end = i + 2
					break
				}
			}
			if end < 0 {
				return jaasToken{}, fmt.Errorf("line %d: unterminated /* comment in JAAS config", t.line)
			}
			t.line += strings.Count(string(t.src[t.pos:end]), "\n")
			t.pos = end
		case r == '"' || r == '\'':
			return t.quoted(r)
		case isJaasWordRune(r):
			start := t.pos
			for t.pos < len(t.src) && isJaasWordRune(t.src[t.pos]) {
				t.pos++
			}
			return jaasToken{kind: tokWord, text: string(t.src[start:t.pos]), line: t.line}, nil
		default:
			t.pos++
			return jaasToken{kind: tokChar, text: string(r), line: t.line}, nil
		}
	}
	return jaasToken{kind: tokEOF, line: t.line}, nil
}

// quoted reads a string closed by q; a newline also ends it, as in Java's
// StreamTokenizer. Escapes: \n \t \r \b \f \\ \" \' and octal \ooo.
func (t *jaasTokenizer) quoted(q rune) (jaasToken, error) {
	line := t.line
	t.pos++
	var b strings.Builder
	for t.pos < len(t.src) {
		r := t.src[t.pos]
		t.pos++
		switch {
		case r == q:
			return jaasToken{kind: tokQuoted, text: b.String(), line: line}, nil
		case r == '\n':
			return jaasToken{}, fmt.Errorf("line %d: unterminated quoted string in JAAS config", line)
		case r == '\\' && t.pos < len(t.src):
			e := t.src[t.pos]
			t.pos++
			switch e {
			case 'n':
				b.WriteRune('\n')
			case 't':
				b.WriteRune('\t')
			case 'r':
				b.WriteRune('\r')
			case 'b':
				b.WriteRune('\b')
			case 'f':
				b.WriteRune('\f')
			case '0', '1', '2', '3', '4', '5', '6', '7':
				v := int(e - '0')
				for i := 0; i < 2 && t.pos < len(t.src) && t.src[t.pos] >= '0' && t.src[t.pos] <= '7'; i++ {
					v = v*8 + int(t.src[t.pos]-'0')
					t.pos++
				}
				b.WriteRune(rune(v))
			default:
				b.WriteRune(e)
			}
		default:
			b.WriteRune(r)
		}
	}
	return jaasToken{}, fmt.Errorf("line %d: unterminated quoted string in JAAS config", line)
}

// JaasSources are the places a broker's JAAS configuration may come from.
type JaasSources struct {
	// ListenerMechanism returns listener.name.<listener>.<mechanism>.sasl.jaas.config
	// (listener and mechanism lower case); nil when there is none.
	ListenerMechanism func(listener, mechanism string) (string, bool)
	// Global is sasl.jaas.config ("" = unset).
	Global string
	// File is the path named by -Djava.security.auth.login.config ("" =
	// none).
	File string
}

// ServerJaas resolves the JAAS context of every (listener, mechanism) pair
// it is asked for, reading and parsing the file once.
type ServerJaas struct {
	src      JaasSources
	file     map[string][]LoginModuleEntry
	fileErr  error
	fileRead bool
}

// NewServerJaas returns a resolver over src.
func NewServerJaas(src JaasSources) *ServerJaas { return &ServerJaas{src: src} }

// Context returns the JAAS context for listener and mechanism. Every login
// module must be one Klassik implements; a property value must hold
// exactly one login module, as Kafka demands.
func (j *ServerJaas) Context(listener, mechanism string) (*JaasContext, error) {
	l, m := strings.ToLower(listener), strings.ToLower(mechanism)
	key := "listener.name." + l + "." + m + ".sasl.jaas.config"
	if j.src.ListenerMechanism != nil {
		if v, ok := j.src.ListenerMechanism(l, m); ok {
			return propertyContext(key, v)
		}
	}
	if j.src.Global != "" {
		return propertyContext("sasl.jaas.config", j.src.Global)
	}
	if !j.fileRead {
		j.fileRead = true
		if j.src.File != "" {
			b, err := os.ReadFile(j.src.File)
			if err != nil {
				j.fileErr = fmt.Errorf("reading the JAAS file named by %s: %w", JavaLoginConfigProperty, err)
			} else if j.file, err = ParseJaasFile(string(b)); err != nil {
				j.fileErr = fmt.Errorf("JAAS file %s: %w", j.src.File, err)
			}
		}
	}
	if j.fileErr != nil {
		return nil, j.fileErr
	}
	for _, name := range []string{l + "." + KafkaServerContext, KafkaServerContext} {
		if entries, ok := j.file[name]; ok {
			c := &JaasContext{Name: name, Source: j.src.File, Entries: entries}
			return c, checkLoginModules(c)
		}
	}
	state := "not set"
	if j.src.File != "" {
		state = j.src.File
	}
	return nil, fmt.Errorf("Could not find a '%s' or '%s' entry in the JAAS configuration. System property '%s' is %s (and neither %s nor sasl.jaas.config is set)",
		KafkaServerContext, l+"."+KafkaServerContext, JavaLoginConfigProperty, state, key)
}

func propertyContext(key, value string) (*JaasContext, error) {
	entries, err := ParseJaasConfig(value)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if len(entries) != 1 {
		return nil, fmt.Errorf("%s: JAAS config property contains %d login modules, should be 1 module", key, len(entries))
	}
	c := &JaasContext{Name: KafkaServerContext, Source: key, Entries: entries}
	return c, checkLoginModules(c)
}

// checkLoginModules refuses login modules Klassik does not implement
// (Kerberos' Krb5LoginModule, OAuthBearerLoginModule, custom classes): a
// broker that cannot log in as configured must not start.
func checkLoginModules(c *JaasContext) error {
	for _, e := range c.Entries {
		switch e.LoginModule {
		case PlainLoginModule, ScramLoginModule:
		default:
			return fmt.Errorf("%s: login module %s is not supported by Klassik (supported: %s, %s)", c.Source, e.LoginModule, PlainLoginModule, ScramLoginModule)
		}
	}
	return nil
}

// PlainUsers returns the user_<name>="password" options of the context's
// PlainLoginModule entries (the users SASL/PLAIN accepts).
func (c *JaasContext) PlainUsers() map[string]string {
	users := map[string]string{}
	for _, e := range c.Entries {
		if e.LoginModule != PlainLoginModule {
			continue
		}
		keys := make([]string, 0, len(e.Options))
		for k := range e.Options {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if name, ok := strings.CutPrefix(k, "user_"); ok && name != "" {
				if _, seen := users[name]; !seen {
					users[name] = e.Options[k]
				}
			}
		}
	}
	return users
}

// Login returns the broker's own username and password for mechanism's
// login module (PlainLoginModule for PLAIN, ScramLoginModule for SCRAM),
// used by the inter-broker client.
func (c *JaasContext) Login(mechanism string) (user, password string, err error) {
	module := ScramLoginModule
	if mechanism == MechanismPlain {
		module = PlainLoginModule
	}
	u, okU := c.Option(module, "username")
	p, okP := c.Option(module, "password")
	if !okU || !okP {
		return "", "", fmt.Errorf("%s: the %s entry needs username and password options for the broker's own %s login (sasl.mechanism.inter.broker.protocol)", c.Source, module, mechanism)
	}
	return u, p, nil
}
