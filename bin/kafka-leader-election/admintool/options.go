package admintool

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Spec describes one command-line option, as a joptsimple OptionSpec does.
type Spec struct {
	Name    string
	HasArg  bool   // takes a value (--name v or --name=v)
	ArgName string // shown as <ArgName> in the usage text
	Help    string
	Multi   bool // may be repeated, under Rules.SingleValued
}

// UsageError is a command-line mistake. Kafka's CommandLineUtils
// printUsageAndDie prints the message and the option table on stderr and
// exits 1.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef builds a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// Options is a parsed command line: values per option name and the order in
// which options first appeared.
type Options struct {
	order  []string
	values map[string][]string
}

// Has reports whether the option was given.
func (o *Options) Has(name string) bool { _, ok := o.values[name]; return ok }

// Value is the option's last value ("" if absent or valueless).
func (o *Options) Value(name string) string {
	v := o.values[name]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// Given lists the options present, in first-appearance order.
func (o *Options) Given() []string { return slices.Clone(o.order) }

// Parse reads args against specs the way Kafka's tools configure joptsimple
// (CommandDefaultOptions): exact names only (no abbreviations), "--name
// value" or "--name=value", no positional arguments. A repeated option keeps
// its last value.
func Parse(specs []Spec, args []string) (*Options, error) {
	return parse(specs, args, Rules{})
}

// Rules are the joptsimple settings in which the tools differ.
type Rules struct {
	// Abbreviations lets a unique prefix of an option name stand for the
	// option (joptsimple's default, which kafka-topics.sh keeps).
	Abbreviations bool
	// SingleValued refuses a repeated option not marked Multi, as a tool
	// that asks joptsimple for one value of it fails.
	SingleValued bool
	// NonOptionHint ends the message for a positional argument.
	NonOptionHint string
}

func parse(specs []Spec, args []string, r Rules) (*Options, error) {
	o := &Options{values: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") || a == "--" {
			return nil, Usagef("Found non-option argument '%s'; all arguments must be options%s", a, r.NonOptionHint)
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		s, err := lookup(specs, name, r.Abbreviations)
		if err != nil {
			return nil, err
		}
		if !s.HasArg {
			if hasVal {
				return nil, Usagef("Option %s does not take an argument", s.Name)
			}
			val = ""
		} else if !hasVal {
			if i+1 >= len(args) {
				return nil, Usagef("Option %s requires an argument", s.Name)
			}
			i++
			val = args[i]
		}
		_, seen := o.values[s.Name]
		if seen && s.HasArg && r.SingleValued && !s.Multi {
			return nil, Usagef("Found multiple arguments for option %s, but you asked for only one", s.Name)
		}
		if !seen {
			o.order = append(o.order, s.Name)
		}
		o.values[s.Name] = append(o.values[s.Name], val)
	}
	return o, nil
}

// lookup finds the spec named name, or with abbrev the only one name is a
// prefix of.
func lookup(specs []Spec, name string, abbrev bool) (*Spec, error) {
	var matches []*Spec
	for i := range specs {
		switch {
		case specs[i].Name == name:
			return &specs[i], nil
		case abbrev && strings.HasPrefix(specs[i].Name, name):
			matches = append(matches, &specs[i])
		}
	}
	switch len(matches) {
	case 0:
		return nil, Usagef("%s is not a recognized option", name)
	case 1:
		return matches[0], nil
	}
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = m.Name
	}
	return nil, Usagef("Option '%s' is ambiguous; possibilities: %s", name, strings.Join(names, ", "))
}

// Usage renders the option table as joptsimple's printHelpOn does (options
// sorted by name, description beside them) with the descriptions in
// column 40.
func Usage(specs []Spec) string { return UsageAt(specs, 40) }

// UsageAt is Usage with the descriptions in the given column (kafka-topics.sh
// prints them one column further right).
func UsageAt(specs []Spec, column int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s%s\n", column, "Option", "Description")
	fmt.Fprintf(&b, "%-*s%s\n", column, "------", "-----------")
	sorted := slices.Clone(specs)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, s := range sorted {
		left := "--" + s.Name
		if s.HasArg {
			left += " <" + s.ArgName + ">"
		}
		if len(left) >= column {
			fmt.Fprintf(&b, "%s\n%-*s%s\n", left, column, "", s.Help)
		} else {
			fmt.Fprintf(&b, "%-*s%s\n", column, left, s.Help)
		}
	}
	return b.String()
}

// HelpSpecs are the two options every Kafka command has
// (CommandDefaultOptions).
var HelpSpecs = []Spec{
	{Name: "help", Help: "Print usage information."},
	{Name: "version", Help: "Display Kafka version."},
}

// Version is what --version prints: Klassik implements Kafka 2.8's
// ZooKeeper-era tools.
const Version = "2.8.2 (Klassik)"

// ParseCommand is how the console and group tools start: no argument at
// all is a usage error whose message is helpText; otherwise args are
// parsed against specs, and --help or --version, if given, win over every
// other option (special is "help" or "version" and p is nil).
func ParseCommand(specs []Spec, args []string, helpText string) (p *Options, special string, err error) {
	return ParseCommandWith(specs, args, helpText, Rules{})
}

// ParseCommandWith is ParseCommand under other joptsimple rules.
func ParseCommandWith(specs []Spec, args []string, helpText string, r Rules) (p *Options, special string, err error) {
	if len(args) == 0 {
		return nil, "", Usagef("%s", helpText)
	}
	p, err = parse(specs, args, r)
	switch {
	case err != nil:
		return nil, "", err
	case p.Has("help"):
		return nil, "help", nil
	case p.Has("version"):
		return nil, "version", nil
	}
	return p, "", nil
}

// DefaultOptionalArg gives an option with an optional value (joptsimple's
// withOptionalArg) its default: "--name" at the end of args or followed by
// another option becomes "--name=def".
func DefaultOptionalArg(args []string, name, def string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--"+name && (i+1 >= len(args) || strings.HasPrefix(args[i+1], "--")) {
			out = append(out, "--"+name+"="+def)
			continue
		}
		out = append(out, a)
	}
	return out
}

// ParseAdminCommand is how the election and reassignment tools start: as
// ParseCommand, except that no argument at all asks for the help (they
// print it with printUsageAndDie).
func ParseAdminCommand(specs []Spec, args []string) (p *Options, special string, err error) {
	if len(args) == 0 {
		return nil, "help", nil
	}
	return ParseCommand(specs, args, "")
}

// Values lists every value the option was given, in command-line order.
func (o *Options) Values(name string) []string { return slices.Clone(o.values[name]) }

// Lookup is Value and Has together.
func (o *Options) Lookup(name string) (string, bool) { return o.Value(name), o.Has(name) }

// OneOf returns the one option of names the command line gives; ok is
// false when it gives none or several (the tools' "exactly one action"
// rule).
func (o *Options) OneOf(names []string) (name string, ok bool) {
	var given []string
	for _, n := range names {
		if o.Has(n) {
			given = append(given, n)
		}
	}
	if len(given) != 1 {
		return "", false
	}
	return given[0], true
}
