package admintool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// HelpStyle is how a tool answers --help. Kafka's tools use one of two
// CommandLineUtils helpers for it.
type HelpStyle int

const (
	// HelpAndExit is printHelpAndExitIfNeeded: the help on stdout, status 0.
	HelpAndExit HelpStyle = iota
	// UsageAndDie is printUsageAndDie: the help on stderr, status 1.
	UsageAndDie
)

// CommandLine handles what every tool does first with its parsed command
// line: special "help" prints helpText and the option table (per style),
// special "version" prints Version on stdout, and a *UsageError prints its
// message and the option table on stderr (status 1). done is false when
// none of these applied; the caller then handles err (which may be nil or
// another error) itself.
func CommandLine(special string, err error, style HelpStyle, helpText string, specs []Spec, stdout, stderr io.Writer) (code int, done bool) {
	switch special {
	case "help":
		out, status := stdout, 0
		if style == UsageAndDie {
			out, status = stderr, 1
		}
		fmt.Fprintln(out, helpText)
		fmt.Fprint(out, Usage(specs))
		return status, true
	case "version":
		fmt.Fprintln(stdout, Version)
		return 0, true
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, ue.Msg)
		fmt.Fprint(stderr, Usage(specs))
		return 1, true
	}
	return 0, false
}

// Main runs a tool whose work SIGINT and SIGTERM cancel (the context run
// gets ends on either), then exits the process with run's status.
func Main(run func(ctx context.Context) int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx)
	stop()
	os.Exit(code)
}
