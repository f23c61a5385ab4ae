// Package verifiable holds what Kafka's verifiable producer and consumer
// share. argparse.go reads command lines the way the argparse4j parsers of
// Kafka's Java tools (VerifiableProducer, VerifiableConsumer) do: "--name
// value" or "--name=value", typed values, required arguments, one
// required mutually exclusive group, and argparse4j's error texts, printed
// after the usage line as "<prog>: error: <message>".
package verifiable

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Kind is an argument's Java type.
type Kind int

const (
	String Kind = iota
	Integer
	Long
	Flag // storeTrue
	// List is nargs("+"): one or more values, the arguments after the
	// option up to the next one starting with '-' (or the one value of
	// "--name=value"); Values.List returns them.
	List
)

// Arg describes one argument.
type Arg struct {
	Name     string // without the leading "--"
	Kind     Kind
	Metavar  string
	Required bool
	Default  string   // shown as "(default: ...)"; "" for none
	Choices  []string // allowed values, if any
	Help     string
}

// Parser is one tool's argument list.
type Parser struct {
	Prog, Description string
	// Exclusive names the required mutually exclusive group (the
	// "Connection Group"): exactly one of these must be given.
	Exclusive []string
	// GroupTitle and GroupDescription head the group's section of the
	// help; both empty mean the verifiable tools' "Connection Group".
	GroupTitle, GroupDescription string
	Args                         []Arg
}

// Error is a command-line mistake (ArgumentParserException).
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Values are the parsed arguments.
type Values struct {
	set   map[string]string
	lists map[string][]string
}

// List is a List argument's values (nil when absent).
func (v Values) List(name string) []string { return v.lists[name] }

// Has tells whether the argument was given.
func (v Values) Has(name string) bool { _, ok := v.set[name]; return ok }

// String is the argument's value ("" when absent).
func (v Values) String(name string) string { return v.set[name] }

// Int is an Integer or Long argument's value, or def when absent.
func (v Values) Int(name string, def int64) int64 {
	s, ok := v.set[name]
	if !ok {
		return def
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func (p *Parser) arg(name string) *Arg {
	for i := range p.Args {
		if p.Args[i].Name == name {
			return &p.Args[i]
		}
	}
	return nil
}

// Parse reads args. help is true for -h/--help.
func (p *Parser) Parse(args []string) (v Values, help bool, err error) {
	v = Values{set: map[string]string{}, lists: map[string][]string{}}
	var unknown []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-h" || a == "--help" {
			return v, true, nil
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		spec := p.arg(name)
		if !strings.HasPrefix(a, "--") || spec == nil {
			unknown = append(unknown, a)
			continue
		}
		if spec.Kind == Flag {
			if hasVal {
				return v, false, &Error{Msg: fmt.Sprintf("argument --%s: ignored explicit argument '%s'", name, val)}
			}
			v.set[name] = "true"
			continue
		}
		if spec.Kind == List {
			vals := []string{val}
			if !hasVal {
				vals = nil
				for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
					i++
					vals = append(vals, args[i])
				}
			}
			if len(vals) == 0 {
				return v, false, &Error{Msg: fmt.Sprintf("argument --%s: expected 1 argument(s)", name)}
			}
			v.set[name] = strings.Join(vals, " ")
			v.lists[name] = vals
			continue
		}
		if !hasVal {
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
				return v, false, &Error{Msg: fmt.Sprintf("argument --%s: expected one argument", name)}
			}
			i++
			val = args[i]
		}
		switch spec.Kind {
		case Integer, Long:
			bits, typ := 32, "Integer"
			if spec.Kind == Long {
				bits, typ = 64, "Long"
			}
			if _, err := strconv.ParseInt(val, 10, bits); err != nil {
				return v, false, &Error{Msg: fmt.Sprintf("argument --%s: could not convert '%s' to %s (For input string: \"%s\")", name, val, typ, val)}
			}
		}
		if len(spec.Choices) > 0 && !slices.Contains(spec.Choices, val) {
			return v, false, &Error{Msg: fmt.Sprintf("argument --%s: invalid choice: '%s' (choose from {%s})", name, val, strings.Join(spec.Choices, ","))}
		}
		for _, x := range p.Exclusive {
			if x != name && v.Has(x) && slices.Contains(p.Exclusive, name) {
				return v, false, &Error{Msg: fmt.Sprintf("argument --%s: not allowed with argument --%s", name, x)}
			}
		}
		v.set[name] = val
	}
	if len(unknown) > 0 {
		return v, false, &Error{Msg: "unrecognized arguments: '" + strings.Join(unknown, " ") + "'"}
	}
	for _, a := range p.Args {
		if a.Required && !v.Has(a.Name) {
			return v, false, &Error{Msg: fmt.Sprintf("argument --%s is required", a.Name)}
		}
	}
	if len(p.Exclusive) > 0 && !slices.ContainsFunc(p.Exclusive, v.Has) {
		return v, false, &Error{Msg: "one of the arguments --" + strings.Join(p.Exclusive, " --") + " is required"}
	}
	return v, false, nil
}

func (a Arg) synopsis() string {
	if a.Kind == Flag {
		return "--" + a.Name
	}
	m := a.Metavar
	if m == "" {
		m = strings.ToUpper(strings.ReplaceAll(a.Name, "-", "_"))
	}
	if a.Kind == List {
		return "--" + a.Name + " " + m + " [" + m + " ...]"
	}
	return "--" + a.Name + " " + m
}

// Usage is argparse4j's usage line.
func (p *Parser) Usage() string {
	parts := []string{"usage: " + p.Prog, "[-h]"}
	if len(p.Exclusive) > 0 {
		var ex []string
		for _, n := range p.Exclusive {
			ex = append(ex, p.arg(n).synopsis())
		}
		parts = append(parts, "("+strings.Join(ex, " | ")+")")
	}
	for _, a := range p.Args {
		if slices.Contains(p.Exclusive, a.Name) {
			continue
		}
		if a.Required {
			parts = append(parts, a.synopsis())
		} else {
			parts = append(parts, "["+a.synopsis()+"]")
		}
	}
	return strings.Join(parts, " ") + "\n"
}

// Help is printHelp: the usage, the description and every argument.
func (p *Parser) Help() string {
	var b strings.Builder
	b.WriteString(p.Usage())
	fmt.Fprintf(&b, "\n%s\n\nrequired arguments:\n", p.Description)
	line := func(a Arg) {
		help := a.Help
		if a.Default != "" {
			help += " (default: " + a.Default + ")"
		}
		fmt.Fprintf(&b, "  %s\n                         %s\n", a.synopsis(), help)
	}
	for _, a := range p.Args {
		if a.Required {
			line(a)
		}
	}
	b.WriteString("\noptional arguments:\n  -h, --help             show this help message and exit\n")
	for _, a := range p.Args {
		if !a.Required && !slices.Contains(p.Exclusive, a.Name) {
			line(a)
		}
	}
	if len(p.Exclusive) > 0 {
		title, desc := p.GroupTitle, p.GroupDescription
		if title == "" && desc == "" {
			title, desc = "Connection Group", "Group of arguments for connection to brokers"
		}
		if title != "" {
			b.WriteString("\n" + title + ":")
		}
		fmt.Fprintf(&b, "\n  %s\n\n", desc)
		for _, n := range p.Exclusive {
			line(*p.arg(n))
		}
	}
	return b.String()
}

// HandleError is ArgumentParser.handleError: the usage and
// "<prog>: error: <msg>" on w.
func (p *Parser) HandleError(w io.Writer, err error) {
	fmt.Fprint(w, p.Usage())
	fmt.Fprintf(w, "%s: error: %s\n", p.Prog, err.Error())
}
