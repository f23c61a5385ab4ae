package security

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf16"
)

// AnonymousPrincipal is the principal of a connection that has not
// authenticated (Kafka's KafkaPrincipal.ANONYMOUS).
const AnonymousPrincipal = "User:ANONYMOUS"

// DefaultSSLPrincipalMappingRules is ssl.principal.mapping.rules' default.
const DefaultSSLPrincipalMappingRules = "DEFAULT"

// attribute keywords Java's X500Principal.getName() (RFC 2253 form) writes
// by name; every other attribute is written as its OID and #hex DER.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

type attributeTypeAndValue struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// rdnSET is one relative distinguished name; encoding/asn1 reads a slice
// type whose name ends in SET as an ASN.1 SET OF.
type rdnSET []attributeTypeAndValue

// DistinguishedName renders a certificate's subject as Java's
// X500Principal.getName() does (RFC 2253): the most specific RDN first,
// "+" between the values of a multi-valued RDN, the keywords CN, C, L, ST,
// O, OU, STREET, DC and UID, other attributes as OID=#hex. This is the
// string ssl.principal.mapping.rules see, e.g. "CN=alice,OU=eng,O=Klassik,C=DE".
func DistinguishedName(cert *x509.Certificate) (string, error) {
	return formatRDNSequence(cert.RawSubject)
}

func formatRDNSequence(der []byte) (string, error) {
	var seq []rdnSET
	rest, err := asn1.Unmarshal(der, &seq)
	if err != nil {
		return "", fmt.Errorf("subject does not parse: %w", err)
	}
	if len(rest) != 0 {
		return "", errors.New("subject has trailing data")
	}
	var b strings.Builder
	for i := len(seq) - 1; i >= 0; i-- {
		if i != len(seq)-1 {
			b.WriteByte(',')
		}
		for j, atv := range seq[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			oid := atv.Type.String()
			kw, known := rfc2253Keywords[oid]
			s, isString := asn1String(atv.Value)
			if !known || !isString {
				if known {
					b.WriteString(kw)
				} else {
					b.WriteString(oid)
				}
				b.WriteString("=#")
				b.WriteString(hex.EncodeToString(atv.Value.FullBytes))
				continue
			}
			b.WriteString(kw)
			b.WriteByte('=')
			b.WriteString(escapeRFC2253(s))
		}
	}
	return b.String(), nil
}

// asn1String decodes the directory string types.
func asn1String(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal {
		return "", false
	}
	switch v.Tag {
	case asn1.TagUTF8String, asn1.TagPrintableString, asn1.TagIA5String, asn1.TagT61String, asn1.TagNumericString:
		return string(v.Bytes), true
	case asn1.TagBMPString:
		if len(v.Bytes)%2 != 0 {
			return "", false
		}
		u := make([]uint16, len(v.Bytes)/2)
		for i := range u {
			u[i] = uint16(v.Bytes[2*i])<<8 | uint16(v.Bytes[2*i+1])
		}
		return string(utf16.Decode(u)), true
	case 28: // UniversalString, UTF-32BE
		if len(v.Bytes)%4 != 0 {
			return "", false
		}
		var r []rune
		for i := 0; i < len(v.Bytes); i += 4 {
			r = append(r, rune(uint32(v.Bytes[i])<<24|uint32(v.Bytes[i+1])<<16|uint32(v.Bytes[i+2])<<8|uint32(v.Bytes[i+3])))
		}
		return string(r), true
	}
	return "", false
}

// escapeRFC2253 escapes a value as Java's RFC 2253 output does: a
// backslash before , = + < > # ; " and \ anywhere and before each
// leading and trailing space; a NUL becomes \00.
func escapeRFC2253(s string) string {
	lastNonSpace := len(strings.TrimRight(s, " ")) - 1
	firstNonSpace := len(s) - len(strings.TrimLeft(s, " "))
	var b strings.Builder
	for i, r := range s {
		switch {
		case strings.ContainsRune(",=+<>#;\"\\", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == 0:
			b.WriteString(`\00`)
		case r == ' ' && (i < firstNonSpace || i > lastNonSpace):
			b.WriteString(`\ `)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// SslPrincipalMapper is Kafka's SslPrincipalMapper: an ordered list of
// ssl.principal.mapping.rules, each DEFAULT (the DN unchanged) or
// RULE:pattern/replacement/[LU]. The first rule whose pattern matches the
// whole DN gives the name.
type SslPrincipalMapper struct {
	rules []principalRule
}

type principalRule struct {
	isDefault   bool
	source      string         // the pattern as written
	whole       *regexp.Regexp // ^(?:pattern)$: Java's Matcher.matches
	pattern     *regexp.Regexp // for replaceAll
	replacement string
	lower       bool
	upper       bool
}

// Kafka's rule grammar: DEFAULT, or RULE:pattern/replacement/ with an
// optional L or U, or anything else (an error unless empty). Patterns and
// replacements may contain escaped characters, including "\/".
const principalRulePattern = `(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`

var (
	principalRuleSplitter = regexp.MustCompile(`\s*(` + principalRulePattern + `)\s*(,\s*|$)`)
	principalRuleParser   = regexp.MustCompile(`^(?:` + principalRulePattern + `)`)
)

// NewSslPrincipalMapper parses ssl.principal.mapping.rules.
func NewSslPrincipalMapper(rules string) (*SslPrincipalMapper, error) {
	var parts []string
	for _, m := range principalRuleSplitter.FindAllStringSubmatch(strings.TrimSpace(rules), -1) {
		parts = append(parts, m[1])
	}
	mp := &SslPrincipalMapper{}
	for _, r := range parts {
		loc := principalRuleParser.FindStringSubmatchIndex(r)
		if loc == nil {
			return nil, fmt.Errorf("invalid rule: %s", r)
		}
		if loc[1] != len(r) {
			return nil, fmt.Errorf("invalid rule: `%s`, unmatched substring: `%s`", r, r[loc[1]:])
		}
		group := func(i int) (string, bool) {
			if loc[2*i] < 0 {
				return "", false
			}
			return r[loc[2*i]:loc[2*i+1]], true
		}
		if _, ok := group(1); ok {
			mp.rules = append(mp.rules, principalRule{isDefault: true})
			continue
		}
		pat, ok := group(2)
		if !ok {
			continue // empty rules are ignored
		}
		repl, _ := group(4)
		flag, _ := group(6)
		// The pattern alone must compile: wrapped first, ")(" would
		// pass as "^(?:)()$".
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("invalid rule: %s: %w", r, err)
		}
		mp.rules = append(mp.rules, principalRule{
			source: pat, whole: regexp.MustCompile(`^(?:` + pat + `)$`), pattern: re, replacement: repl,
			lower: flag == "L", upper: flag == "U",
		})
	}
	return mp, nil
}

// String renders the rules as Kafka's toString does, e.g.
// "SslPrincipalMapper(rules = [RULE:^CN=(.*?)$/$1/L, DEFAULT])".
func (m *SslPrincipalMapper) String() string {
	var parts []string
	for _, r := range m.rules {
		if r.isDefault {
			parts = append(parts, "DEFAULT")
			continue
		}
		s := "RULE:" + r.source + "/" + r.replacement
		if r.lower {
			s += "/L"
		} else if r.upper {
			s += "/U"
		}
		parts = append(parts, s)
	}
	return "SslPrincipalMapper(rules = [" + strings.Join(parts, ", ") + "])"
}

// ErrNoMatchingRule is returned when no rule maps a DN.
var ErrNoMatchingRule = errors.New("security: no principal mapping rule applies")

// Name maps a distinguished name to a principal name.
func (m *SslPrincipalMapper) Name(dn string) (string, error) {
	for _, r := range m.rules {
		if name, ok := r.apply(dn); ok {
			return name, nil
		}
	}
	return "", fmt.Errorf("%w to %s, rules %v", ErrNoMatchingRule, dn, m.ruleList())
}

func (m *SslPrincipalMapper) ruleList() string {
	s := m.String()
	return strings.TrimSuffix(strings.TrimPrefix(s, "SslPrincipalMapper(rules = "), ")")
}

// Principal returns the TLS principal of a peer: "User:<mapped DN>" of its
// certificate, or User:ANONYMOUS without one.
func (m *SslPrincipalMapper) Principal(peer *x509.Certificate) (string, error) {
	if peer == nil {
		return AnonymousPrincipal, nil
	}
	dn, err := DistinguishedName(peer)
	if err != nil {
		return "", err
	}
	name, err := m.Name(dn)
	if err != nil {
		return "", err
	}
	return "User:" + name, nil
}

func (r principalRule) apply(dn string) (string, bool) {
	if r.isDefault {
		return dn, true
	}
	if !r.whole.MatchString(dn) {
		return "", false
	}
	groups := r.pattern.NumSubexp()
	var b strings.Builder
	last := 0
	for _, loc := range r.pattern.FindAllStringSubmatchIndex(dn, -1) {
		b.WriteString(dn[last:loc[0]])
		b.WriteString(expandJavaReplacement(r.replacement, dn, loc, groups))
		last = loc[1]
	}
	b.WriteString(dn[last:])
	out := b.String()
	if r.lower {
		out = strings.ToLower(out)
	} else if r.upper {
		out = strings.ToUpper(out)
	}
	return out, true
}

// expandJavaReplacement interprets a java.util.regex replacement: "\c" is
// the literal c, "$n" a group reference. Like Kafka (which escapes them
// before calling replaceAll), a reference to a group the pattern does not
// have is literal text; Java reads as many digits as still name a group.
func expandJavaReplacement(repl, s string, loc []int, groups int) string {
	var b strings.Builder
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch {
		case c == '\\' && i+1 < len(repl):
			i++
			b.WriteByte(repl[i])
		case c == '$' && i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9':
			j := i + 1
			n := int(repl[j] - '0')
			if n > groups {
				b.WriteByte('$')
				continue
			}
			j++
			for j < len(repl) && repl[j] >= '0' && repl[j] <= '9' {
				next := n*10 + int(repl[j]-'0')
				if next > groups {
					break
				}
				n = next
				j++
			}
			if loc[2*n] >= 0 {
				b.WriteString(s[loc[2*n]:loc[2*n+1]])
			}
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
