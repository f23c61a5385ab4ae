// Command kafka-console-consumer reads records and prints them on standard
// output, with the options and output of Kafka's kafka-console-consumer.sh:
// the client-side consumer (--bootstrap-server) and the classic
// ZooKeeper-coordinated consumer (--zookeeper). Run it through
// bin/kafka-console-consumer.sh.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

func main() {
	admintool.Main(func(ctx context.Context) int { return run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}

// source is where messages come from: a franz-go consumer or the classic
// ZooKeeper consumer.
type source interface {
	// Next waits at most timeout (≤ 0: forever) for a message.
	Next(ctx context.Context, timeout time.Duration) (clitools.Message, error)
	// Close commits what the mode commits and releases the group.
	Close() error
}

// run executes the tool and returns the exit status. Like Kafka's
// ConsoleConsumer it stops on ctx (the shutdown hook), at --max-messages
// or after --timeout-ms without a message, and always ends by printing
// "Processed a total of N messages" on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, special, err := parseOptions(args)
	if code, done := admintool.CommandLine(special, err, admintool.HelpAndExit, toolHelp, specs, stdout, stderr); done {
		return code
	}
	var je *javaException
	if errors.As(err, &je) {
		// Class.forName's exception escapes ConsumerConfig uncaught.
		fmt.Fprintf(stderr, "Exception in thread \"main\" %v\n", je)
		return 1
	}
	if err != nil {
		logError(stderr, "Unknown error when running consumer: ", err)
		return 1
	}
	var src source
	if o.zookeeper != "" {
		fmt.Fprintln(stderr, "Using the ConsoleConsumer with old consumer is deprecated and will be removed in a future major release. Consider using the new consumer by passing [bootstrap-server] instead of [zookeeper].")
		src, err = newZKSource(o, stderr)
	} else {
		src, err = newKafkaSource(o)
	}
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			fmt.Fprintln(stderr, ee.msg)
			return 1
		}
		logError(stderr, "Unknown error when running consumer: ", err)
		return 1
	}
	out := bufio.NewWriter(stdout)
	count, perr := process(ctx, o, src, out, stderr)
	_ = out.Flush()
	cerr := src.Close()
	fmt.Fprintf(stderr, "Processed a total of %d messages\n", count)
	if o.systestEvents {
		// Kafka's shutdown hook prints it when the JVM exits.
		defer fmt.Fprintln(stdout, "shutdown_complete")
	}
	if cerr != nil {
		logError(stderr, "Error closing the consumer: ", cerr)
	}
	if perr != nil {
		// A formatter's exception ends run after its finally block and is
		// logged by main.
		logError(stderr, "Unknown error when running consumer: ", perr)
		return 1
	}
	return 0
}

// exitError is a check that Kafka reports with a plain message and exit 1.
type exitError struct{ msg string }

func (e *exitError) Error() string { return e.msg }

// process is ConsoleConsumer.process: print until the limit, a timeout or
// shutdown. A receive failure ends consumption (logged, exit status 0, as
// Kafka); a formatting failure ends it unless --skip-message-on-error.
func process(ctx context.Context, o *options, src source, out *bufio.Writer, stderr io.Writer) (int64, error) {
	var count int64
	for o.maxMessages < 0 || count < o.maxMessages {
		m, err := src.Next(ctx, o.timeout)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, clitools.ErrConsumerClosed) {
				return count, nil
			}
			if errors.Is(err, clitools.ErrConsumerTimeout) {
				logError(stderr, "Error processing message, terminating consumer process: ", errors.New("org.apache.kafka.common.errors.TimeoutException"))
				return count, nil
			}
			logError(stderr, "Error processing message, terminating consumer process: ", err)
			return count, nil
		}
		count++
		if err := o.formatter.write(out, stderr, m); err != nil {
			if o.skipOnError {
				_ = out.Flush()
				logError(stderr, "Error processing message, skipping this message: ", err)
				continue
			}
			return count, err
		}
		if err := out.Flush(); err != nil {
			// Kafka's checkErr: stdout closed (e.g. piped into head).
			fmt.Fprintln(stderr, "Unable to write to standard out, closing consumer.")
			return count, nil
		}
	}
	return count, nil
}

// logError mimics the tools' log4j layout "[time] ERROR msg (class)" with
// the exception on the next line.
func logError(w io.Writer, msg string, err error) {
	fmt.Fprintf(w, "[%s] ERROR %s (kafka.tools.ConsoleConsumer$)\n%v\n", time.Now().Format("2006-01-02 15:04:05,000"), msg, err)
}
