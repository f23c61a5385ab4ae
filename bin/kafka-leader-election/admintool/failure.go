package admintool

import (
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kerr"
)

// CommandFailed is Kafka's AdminCommandFailedException; Cause, if set, is
// printed as its "Caused by:" line.
type CommandFailed struct {
	Msg   string
	Cause error
}

func (e *CommandFailed) Error() string { return e.Msg }
func (e *CommandFailed) Unwrap() error { return e.Cause }

// AdminOperation is Kafka's AdminOperationException.
type AdminOperation struct{ Msg string }

func (e *AdminOperation) Error() string { return e.Msg }

// ExecutionError is a failed admin call rethrown by a tool (Java's
// ExecutionException wrapping the client's exception).
type ExecutionError struct{ Cause error }

func (e *ExecutionError) Error() string { return e.Cause.Error() }

// ElectionCallError is what the election tools make of a failed
// ElectLeaders call: a timeout or a refused authorization prints its line
// on out and becomes a CommandFailed caused by err; anything else is
// rethrown as an ExecutionError.
func ElectionCallError(out io.Writer, err error) error {
	var msg string
	switch {
	case IsKafkaError(err, kerr.RequestTimedOut.Code):
		msg = "Timeout waiting for election results"
	case IsKafkaError(err, kerr.ClusterAuthorizationFailed.Code):
		msg = "Not authorized to perform leader election"
	default:
		return &ExecutionError{Cause: err}
	}
	fmt.Fprintln(out, msg)
	return &CommandFailed{Msg: msg, Cause: err}
}

// ElectionReport is the wording of one election tool's result lines.
type ElectionReport struct {
	Succeeded string // before the list of elected partitions
	Noop      string // before the list of partitions whose leader already was the one wanted
	Failed    string // before "<partition>: <Java exception>", one line per failure
	Summary   string // the CommandFailed message, with %d for the number of failures
}

// ReportElection prints the outcome of one ElectLeaders call, as both
// election commands do: a failed call goes through ElectionCallError;
// otherwise the succeeded, no-op and failed lines, and a CommandFailed
// when any partition failed.
func ReportElection(out io.Writer, res ElectionResults, err error, r ElectionReport) error {
	if err != nil {
		return ElectionCallError(out, err)
	}
	if len(res.Succeeded) > 0 {
		fmt.Fprintf(out, "%s%s\n", r.Succeeded, JoinPartitions(res.Succeeded, ", "))
	}
	if len(res.Noop) > 0 {
		fmt.Fprintf(out, "%s%s\n", r.Noop, JoinPartitions(res.Noop, ", "))
	}
	if len(res.Failed) == 0 {
		return nil
	}
	for _, tp := range res.FailedSorted() {
		fmt.Fprintf(out, "%s%s: %s\n", r.Failed, tp, JavaString(res.Failed[tp]))
	}
	return &CommandFailed{Msg: fmt.Sprintf(r.Summary, len(res.Failed))}
}

// Fail prints an error escaping an admin tool the way Kafka's JVM shows it
// on stderr (a *UsageError as the message and the option table of specs)
// and returns the exit status 1.
func Fail(err error, specs []Spec, stderr io.Writer) int {
	var (
		ue *UsageError
		cf *CommandFailed
		ao *AdminOperation
		ee *ExecutionError
	)
	switch {
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, ue.Msg)
		fmt.Fprint(stderr, Usage(specs))
	case errors.As(err, &cf):
		var causes []string
		if cf.Cause != nil {
			causes = append(causes, causeString(cf.Cause))
		}
		fmt.Fprint(stderr, Uncaught("kafka.common.AdminCommandFailedException", cf.Msg, causes...))
	case errors.As(err, &ao):
		fmt.Fprint(stderr, Uncaught("kafka.admin.AdminOperationException", ao.Msg))
	case errors.As(err, &ee):
		fmt.Fprint(stderr, Uncaught("java.util.concurrent.ExecutionException", JavaString(ee.Cause)))
	default:
		fmt.Fprintf(stderr, "Exception in thread \"main\" %s\n", JavaString(err))
	}
	return 1
}

// causeString is Throwable.toString of a "Caused by:" exception.
func causeString(err error) string {
	var ao *AdminOperation
	if errors.As(err, &ao) {
		return "kafka.admin.AdminOperationException: " + ao.Msg
	}
	return JavaString(err)
}
