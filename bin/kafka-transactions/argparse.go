package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// This file is the part of argparse4j 0.7.0 (the parser Kafka 3.0's
// TransactionsCommand is built on) that kafka-transactions.sh shows its
// users: long options with unique-prefix abbreviations, one level of
// sub-commands (also abbreviable), the usage line, the --help screen with
// its justified text, and the "<prog>: error: ..." messages with their
// "Did you mean" hints. Only what the tool's parser uses is here: options
// that store one value or run an action (help, version), argument groups
// with a title, no positional arguments besides the command.

// argType is the Java type an option's value converts to.
type argType int

const (
	typeString argType = iota
	typeInteger
	typeLong
	typeShort
)

// argAction is what an option does when it appears.
type argAction int

const (
	actionStore   argAction = iota // keep the (last) value
	actionHelp                     // print the help of its parser and stop
	actionVersion                  // print the version and exit 0
)

// argument is one option (argparse4j's ArgumentImpl).
type argument struct {
	flags    []string // "-h", "--help"
	metavar  string   // shown after the flag; "" takes the dest in upper case
	help     string
	required bool
	typ      argType
	action   argAction
	group    *argGroup
}

// dest is the namespace key: the first long flag without dashes, '-'
// turned into '_' (argparse4j's inference).
func (a *argument) dest() string {
	f := a.flags[0]
	for _, fl := range a.flags {
		if strings.HasPrefix(fl, "--") {
			f = fl
			break
		}
	}
	return strings.ReplaceAll(strings.TrimLeft(f, "-"), "-", "_")
}

func (a *argument) consumes() bool { return a.action == actionStore }

func (a *argument) formatMetavar() string {
	if !a.consumes() {
		return ""
	}
	if a.metavar != "" {
		return a.metavar
	}
	return strings.ToUpper(a.dest())
}

// shortSyntax is the argument in the usage line: "[--topic TOPIC]", or
// without brackets when required.
func (a *argument) shortSyntax() string {
	s := a.flags[0]
	if mv := a.formatMetavar(); mv != "" {
		s += " " + mv
	}
	if !a.required {
		s = "[" + s + "]"
	}
	return s
}

// helpTitle is the left column of the help screen: every flag with the
// metavar, joined by ", ".
func (a *argument) helpTitle() string {
	mv := a.formatMetavar()
	parts := make([]string, len(a.flags))
	for i, f := range a.flags {
		parts[i] = f
		if mv != "" {
			parts[i] += " " + mv
		}
	}
	return strings.Join(parts, ", ")
}

// textualName names the argument in error messages.
func (a *argument) textualName() string { return strings.Join(a.flags, "/") }

// argGroup is a titled group of options, printed in its own help section.
type argGroup struct {
	title, description string
	args               []*argument
}

// parser is argparse4j's ArgumentParserImpl for the main parser and its
// SubparserImpl for a sub-command (command != "").
type parser struct {
	prog        string
	command     string
	description string
	help        string // the sub-command's line in the parent's help
	parent      *parser

	optargs []*argument // in definition order, grouped ones included
	groups  []*argGroup

	subTitle, subMetavar string
	subs                 []*parser

	version string // printed by the version action
}

func (p *parser) addArgument(a *argument) *argument {
	p.optargs = append(p.optargs, a)
	return a
}

func (p *parser) addGroup(title, description string) *argGroup {
	g := &argGroup{title: title, description: description}
	p.groups = append(p.groups, g)
	return g
}

func (p *parser) addToGroup(g *argGroup, a *argument) *argument {
	a.group = g
	g.args = append(g.args, a)
	return p.addArgument(a)
}

// addCommand adds a sub-command parser, which has -h/--help of its own.
func (p *parser) addCommand(name, help, description string) *parser {
	sp := &parser{prog: p.prog, command: name, help: help, description: description, parent: p}
	sp.addArgument(helpArgument())
	p.subs = append(p.subs, sp)
	return sp
}

func helpArgument() *argument {
	return &argument{flags: []string{"-h", "--help"}, help: "show this help message and exit", action: actionHelp}
}

// parseError is argparse4j's ArgumentParserException: the parser whose
// usage is printed, the message, and what "Did you mean" compares.
type parseError struct {
	p            *parser
	msg          string
	unknownFlag  string // an unrecognized option
	unknownCmd   string // an unknown sub-command
	hasUnknown   bool
	isUnknownCmd bool
}

func (e *parseError) Error() string { return e.msg }

// parseOutcome is what parsing ended with besides values or an error.
type parseOutcome int

const (
	outcomeValues  parseOutcome = iota
	outcomeHelp                 // a help screen was printed
	outcomeVersion              // the version was printed
)

// namespace holds the parsed values by dest; command is the sub-command.
type namespace struct {
	values  map[string]string
	command string
}

func (n *namespace) get(dest string) (string, bool) { v, ok := n.values[dest]; return v, ok }

var negativeNumber = regexp.MustCompile(`^-\d+$`)

// parseState is the cursor over the command line, shared by the main
// parser and the sub-command it hands over to.
type parseState struct {
	args      []string
	i         int
	separator bool        // "--" was consumed
	deferred  *parseError // a missing required option, reported at the end
}

func (s *parseState) avail() bool { return s.i < len(s.args) }
func (s *parseState) cur() string { return s.args[s.i] }

// flagFound: the current argument is an option (or "--"), not a value.
func (s *parseState) flagFound() bool {
	if s.separator {
		return false
	}
	t := s.cur()
	if t == "--" {
		return true
	}
	return isFlag(t) && !negativeNumber.MatchString(t)
}

func isFlag(t string) bool { return strings.HasPrefix(t, "-") && strings.TrimLeft(t, "-") != "" }

// parse reads args; stdout receives a help screen or the version.
func (p *parser) parse(args []string, stdout io.Writer) (*namespace, parseOutcome, error) {
	st := &parseState{args: args}
	ns := &namespace{values: map[string]string{}}
	out, err := p.parseState(st, ns, stdout)
	if err != nil || out != outcomeValues {
		return nil, out, err
	}
	if st.deferred != nil {
		return nil, outcomeValues, st.deferred
	}
	return ns, outcomeValues, nil
}

func (p *parser) parseState(st *parseState, ns *namespace, stdout io.Writer) (parseOutcome, error) {
	used := map[*argument]bool{}
	for st.avail() {
		switch {
		case st.flagFound() && st.cur() != "--":
			term := st.cur()
			flag, embedded, hasEmbedded := strings.Cut(term, "=")
			a, err := p.resolveFlag(flag)
			if err != nil {
				return 0, err
			}
			st.i++
			if a == nil {
				// Concatenated short options ("-hv"): the first one's
				// action runs (and ends the parse).
				if !strings.HasPrefix(term, "--") {
					if sa := p.exact(term[:2]); sa != nil && !sa.consumes() {
						return p.runAction(sa, stdout), nil
					}
				}
				return 0, &parseError{p: p, msg: fmt.Sprintf("unrecognized arguments: '%s'", term), unknownFlag: term, hasUnknown: true}
			}
			if !a.consumes() {
				if hasEmbedded {
					return 0, &parseError{p: p, msg: fmt.Sprintf("argument %s: ignore implicit argument '%s'", a.textualName(), embedded)}
				}
				return p.runAction(a, stdout), nil
			}
			val, ok := embedded, hasEmbedded
			if !ok && st.avail() && !st.flagFound() {
				val, ok = st.cur(), true
				st.i++
			}
			if !ok {
				return 0, &parseError{p: p, msg: fmt.Sprintf("argument %s: expected one argument", a.textualName())}
			}
			if err := convert(a.typ, val); err != "" {
				return 0, &parseError{p: p, msg: fmt.Sprintf("argument %s: %s", a.textualName(), err)}
			}
			ns.values[a.dest()] = val
			used[a] = true
		case st.cur() == "--" && !st.separator:
			st.separator = true
			st.i++
		case !st.separator && len(p.subs) > 0:
			p.checkRequired(st, used)
			sp, err := p.resolveCommand(st.cur())
			if err != nil {
				return 0, err
			}
			st.i++
			out, err := sp.parseState(st, ns, stdout)
			ns.command = sp.command
			return out, err
		default:
			return 0, &parseError{p: p, msg: fmt.Sprintf("unrecognized arguments: '%s'", strings.Join(st.args[st.i:], " "))}
		}
	}
	if len(p.subs) > 0 {
		return 0, &parseError{p: p, msg: "too few arguments"}
	}
	p.checkRequired(st, used)
	return outcomeValues, nil
}

// checkRequired records the last missing required option, unless an
// earlier parser already did.
func (p *parser) checkRequired(st *parseState, used map[*argument]bool) {
	if st.deferred != nil {
		return
	}
	for _, a := range p.optargs {
		if a.required && !used[a] {
			st.deferred = &parseError{p: p, msg: fmt.Sprintf("argument %s is required", a.textualName())}
		}
	}
}

func (p *parser) runAction(a *argument, stdout io.Writer) parseOutcome {
	if a.action == actionVersion {
		fmt.Fprintln(stdout, p.root().version)
		return outcomeVersion
	}
	fmt.Fprint(stdout, p.formatHelp(formatWidth()))
	return outcomeHelp
}

func (p *parser) root() *parser {
	for p.parent != nil {
		p = p.parent
	}
	return p
}

func (p *parser) exact(flag string) *argument {
	for _, a := range p.optargs {
		if slices.Contains(a.flags, flag) {
			return a
		}
	}
	return nil
}

// resolveFlag finds the option flag names or abbreviates; an ambiguous
// abbreviation is an error, an unknown one yields nil.
func (p *parser) resolveFlag(flag string) (*argument, error) {
	if a := p.exact(flag); a != nil {
		return a, nil
	}
	var cand []string
	for _, a := range p.optargs {
		for _, f := range a.flags {
			if strings.HasPrefix(f, flag) {
				cand = append(cand, f)
			}
		}
	}
	switch len(cand) {
	case 0:
		return nil, nil
	case 1:
		return p.exact(cand[0]), nil
	}
	sort.Strings(cand)
	return nil, &parseError{p: p, msg: fmt.Sprintf("ambiguous option: %s could match %s", flag, strings.Join(cand, ", "))}
}

func (p *parser) resolveCommand(cmd string) (*parser, error) {
	var cand []*parser
	for _, sp := range p.subs {
		if sp.command == cmd {
			return sp, nil
		}
		if cmd != "" && strings.HasPrefix(sp.command, cmd) {
			cand = append(cand, sp)
		}
	}
	switch len(cand) {
	case 1:
		return cand[0], nil
	case 0:
		quoted := make([]string, len(p.subs))
		for i, sp := range p.subs {
			quoted[i] = "'" + sp.command + "'"
		}
		return nil, &parseError{p: p, msg: fmt.Sprintf("invalid choice: '%s' (choose from %s)", cmd, strings.Join(quoted, ", ")),
			unknownCmd: cmd, isUnknownCmd: true}
	}
	names := make([]string, len(cand))
	for i, sp := range cand {
		names[i] = sp.command
	}
	sort.Strings(names)
	return nil, &parseError{p: p, msg: fmt.Sprintf("ambiguous command: %s could match %s", cmd, strings.Join(names, ", "))}
}

// convert checks a value against the option's Java type and returns
// argparse4j's message for one that does not convert.
func convert(t argType, v string) string {
	name, bits := "", 0
	switch t {
	case typeString:
		return ""
	case typeInteger:
		name, bits = "Integer", 32
	case typeLong:
		name, bits = "Long", 64
	case typeShort:
		name, bits = "Short", 16
	}
	if _, err := strconv.ParseInt(v, 10, bits); err == nil {
		return ""
	}
	cause := fmt.Sprintf("For input string: \"%s\"", v)
	if t == typeShort {
		// Short.parseShort parses an int first and reports a value
		// outside the short range on its own.
		if _, err := strconv.ParseInt(v, 10, 32); err == nil {
			cause = fmt.Sprintf("Value out of range. Value:\"%s\" Radix:10", v)
		}
	}
	return fmt.Sprintf("could not convert '%s' to %s (%s)", v, name, cause)
}

// printError is argparse4j's handleError: the usage of the parser that
// failed and the wrapped message on stderr, and for an unknown option or
// command the closest names.
func printError(w io.Writer, e *parseError) {
	width := formatWidth()
	var b strings.Builder
	b.WriteString(e.p.formatUsage(width))
	b.WriteString(wrap(e.p.prog+": error: "+e.msg+"\n", width, 0, "", ""))
	switch {
	case e.hasUnknown:
		body := strings.TrimLeft(e.unknownFlag, "-")
		if len(body) >= 2 {
			var subjects [][2]string
			for _, a := range e.p.optargs {
				for _, f := range a.flags {
					if fb := strings.TrimLeft(f, "-"); len(fb) > 1 {
						subjects = append(subjects, [2]string{f, fb})
					}
				}
			}
			b.WriteString(candidates(body, subjects))
		}
	case e.isUnknownCmd:
		var subjects [][2]string
		for _, sp := range e.p.subs {
			subjects = append(subjects, [2]string{sp.command, sp.command})
		}
		b.WriteString(candidates(e.unknownCmd, subjects))
	}
	fmt.Fprint(w, b.String())
}

// candidates lists the subjects closest to body (prefix matches first,
// then by git's weighted Damerau-Levenshtein distance), or nothing when
// even the closest is too far.
func candidates(body string, subjects [][2]string) string {
	type cand struct {
		sim     int
		subject string
	}
	var cs []cand
	for _, s := range subjects {
		if strings.HasPrefix(s[1], body) {
			cs = append(cs, cand{0, s[0]})
		} else {
			cs = append(cs, cand{levenshtein(body, s[1], 0, 2, 1, 4), s[0]})
		}
	}
	if len(cs) == 0 {
		return ""
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].sim != cs[j].sim {
			return cs[i].sim < cs[j].sim
		}
		return cs[i].subject < cs[j].subject
	})
	threshold := cs[0].sim
	if threshold >= 7 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nDid you mean:\n")
	for _, c := range cs {
		if c.sim > threshold {
			break
		}
		b.WriteString("\t" + c.subject + "\n")
	}
	return b.String()
}

// levenshtein is the Damerau-Levenshtein distance with the given costs
// (git's help.c weights: swap 0, substitution 2, insertion 1, deletion 4).
func levenshtein(a, b string, swap, sub, add, del int) int {
	rows := [3][]int{make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)}
	for i := range rows[1] {
		rows[1][i] = i
	}
	for i := 1; i <= len(a); i++ {
		rows[0][0] = i
		for j := 1; j <= len(b); j++ {
			c := rows[1][j-1]
			if a[i-1] != b[j-1] {
				c += sub
			}
			rows[0][j] = c
			if i >= 2 && j >= 2 && a[i-1] != b[j-1] && a[i-2] == b[j-1] && a[i-1] == b[j-2] {
				rows[0][j] = min(rows[0][j], rows[2][j-2]+swap)
			}
			rows[0][j] = min(rows[0][j], rows[1][j]+del, rows[0][j-1]+add)
		}
		rows[0], rows[1], rows[2] = rows[2], rows[0], rows[1]
	}
	return rows[1][len(b)]
}

// formatUsage is the "usage: ..." line, wrapped at width: the parent's
// required options and the command come first for a sub-command.
func (p *parser) formatUsage(width int) string {
	var b strings.Builder
	prog := "usage: " + p.prog
	b.WriteString(prog)
	offset, first, subsequent := len(prog), "", strings.Repeat(" ", len(prog))
	if len(prog) > 30 {
		b.WriteString("\n")
		offset, first, subsequent = 6, "      ", "      "
	}
	var opts []string
	for up := p.parent; up != nil; up = up.parent {
		var upper []string
		if up.command != "" {
			upper = append(upper, up.command)
		}
		for _, a := range up.optargs {
			if a.required {
				upper = append(upper, a.shortSyntax())
			}
		}
		opts = append(upper, opts...)
	}
	if p.command != "" {
		opts = append(opts, p.command)
	}
	for _, a := range p.optargs {
		opts = append(opts, a.shortSyntax())
	}
	if len(p.subs) > 0 {
		opts = append(opts, p.subMetavar, "...")
	}
	cur := offset + len(first)
	b.WriteString(first)
	for i, s := range opts {
		if i > 0 && cur+len(s)+1 > width {
			b.WriteString("\n" + subsequent + " " + s)
			cur = len(subsequent) + 1 + len(s)
		} else {
			b.WriteString(" " + s)
			cur += 1 + len(s)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// formatHelp is the --help screen.
func (p *parser) formatHelp(width int) string {
	var b strings.Builder
	b.WriteString(p.formatUsage(width))
	if p.description != "" {
		b.WriteString("\n" + wrap(p.description, width, 0, "", "") + "\n")
	}
	var plain []*argument
	for _, a := range p.optargs {
		if a.group == nil {
			plain = append(plain, a)
		}
	}
	if len(plain) > 0 {
		b.WriteString("\noptional arguments:\n")
		for _, a := range plain {
			b.WriteString(helpLine(a.helpTitle(), a.help, width))
		}
	}
	if len(p.subs) > 0 {
		b.WriteString("\n" + p.subTitle + ":\n")
		b.WriteString(helpLine(p.subMetavar, "", width))
		for _, sp := range p.subs {
			b.WriteString(helpLine("  "+sp.command, sp.help, width))
		}
	}
	for _, g := range p.groups {
		b.WriteString("\n" + g.title + ":\n")
		if g.description != "" {
			b.WriteString("  " + wrap(g.description, width, 2, "", "  ") + "\n\n")
		}
		for _, a := range g.args {
			b.WriteString(helpLine(a.helpTitle(), a.help, width))
		}
	}
	return b.String()
}

// helpLine is TextHelper.printHelp: the title indented by two, the help
// from column 25 (on the next line when the title is longer than 21).
func helpLine(title, help string, width int) string {
	const indent = 25
	s := "  " + title
	if help == "" {
		return s + "\n"
	}
	pad := indent
	if len(title) <= 21 {
		pad -= len(title) + 2
	} else {
		s += "\n"
	}
	return s + strings.Repeat(" ", pad) + wrap(help, width, indent, "", strings.Repeat(" ", indent)) + "\n"
}

// lineSegments splits text at the line-break opportunities Java's
// BreakIterator finds in this tool's texts: after a run of spaces, after a
// newline, and after hyphens followed by a letter ("comma-|separated").
func lineSegments(s string) []string {
	var segs []string
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		brk := false
		switch {
		case c == '\n':
			brk = true
		case c == ' ':
			brk = i+1 < len(s) && s[i+1] != ' ' && s[i+1] != '\n'
		case c == '-':
			brk = i+1 < len(s) && isLetter(s[i+1]) && i > start
		}
		if brk {
			segs = append(segs, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		segs = append(segs, s[start:])
	}
	return segs
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// wrap is TextHelper.wrap: fills lines up to width, justifying every
// full line by widening its runs of spaces.
func wrap(s string, width, initialOffset int, initialIndent, subsequentIndent string) string {
	var res, line strings.Builder
	res.WriteString(initialIndent)
	cur := initialOffset + len(initialIndent)
	for _, seg := range lineSegments(s) {
		cur += len(seg)
		if cur > width {
			res.WriteString(adjustSpace(line.String(), width, cur-len(seg)))
			res.WriteString("\n" + subsequentIndent)
			line.Reset()
			cur = len(subsequentIndent) + len(seg)
		}
		line.WriteString(seg)
		if strings.HasSuffix(seg, "\n") {
			res.WriteString(line.String() + subsequentIndent)
			line.Reset()
			cur = len(subsequentIndent)
		}
	}
	res.WriteString(line.String())
	return res.String()
}

// adjustSpace trims line and spreads the missing width over its runs of
// spaces, one extra space to the middle runs when it does not divide.
func adjustSpace(line string, width, curwidth int) string {
	trimmed := strings.Trim(line, " ")
	curwidth -= len(line) - len(trimmed)
	blocks := 0
	for i := 0; i < len(trimmed); i++ {
		if trimmed[i] == ' ' && (i == 0 || trimmed[i-1] != ' ') {
			blocks++
		}
	}
	if blocks == 0 {
		return trimmed
	}
	need := width - curwidth
	each, rem := need/blocks, need%blocks
	remStart := (blocks - rem + 1) / 2
	remEnd := remStart + rem
	var b strings.Builder
	block := 0
	for i := 0; i < len(trimmed); i++ {
		if trimmed[i] == ' ' && (i == 0 || trimmed[i-1] != ' ') {
			add := each
			if remStart <= block && block < remEnd {
				add++
			}
			if add > 0 {
				b.WriteString(strings.Repeat(" ", add))
			}
			block++
		}
		b.WriteByte(trimmed[i])
	}
	return b.String()
}

// formatWidth is argparse4j's: the terminal's columns less five (from
// $COLUMNS, else from stty on the controlling terminal), or 75.
func formatWidth() int {
	if v, ok := os.LookupEnv("COLUMNS"); ok {
		if n, err := strconv.Atoi(v); err == nil && n-5 > 0 {
			return n - 5
		}
		return 75
	}
	out, err := exec.Command("sh", "-c", "stty -a < /dev/tty").Output()
	if err != nil {
		return 75
	}
	m := regexp.MustCompile(`columns (\d+)`).FindSubmatch(out)
	if m == nil {
		return 75
	}
	if n, err := strconv.Atoi(string(m[1])); err == nil && n-5 > 0 {
		return n - 5
	}
	return 75
}
