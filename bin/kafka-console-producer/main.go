// Command kafka-console-producer sends each line of standard input as one
// record, with the options and behaviour of Kafka's
// kafka-console-producer.sh. Run it through bin/kafka-console-producer.sh.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

func main() {
	prompt := false
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		prompt = true // Kafka prints ">" only when a console is attached
	}
	admintool.Main(func(ctx context.Context) int { return run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, prompt) })
}

// run executes the tool and returns the exit status: 0 after standard
// input ends and every record was sent (or the context ended), 1 on an
// option mistake or a failed send (in --sync mode) or a bad line.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, prompt bool) int {
	o, special, err := parseOptions(args)
	if code, done := admintool.CommandLine(special, err, admintool.HelpAndExit, toolHelp, specs, stdout, stderr); done {
		return code
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	cl, err := kgo.NewClient(o.kgoOpts...)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer cl.Close()
	reader := newLineReader(stdin, o.reader)
	failed := false
	for {
		if prompt {
			fmt.Fprint(stdout, ">")
		}
		rec, err := reader.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Fprintf(stderr, "org.apache.kafka.common.KafkaException: %v\n", err)
			failed = true
			break
		}
		rec.Topic = o.topic
		if o.sync {
			if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
				fmt.Fprintf(stderr, "java.util.concurrent.ExecutionException: %v\n", err)
				failed = true
				break
			}
			continue
		}
		cl.Produce(ctx, rec, func(r *kgo.Record, err error) {
			if err != nil && !errors.Is(err, context.Canceled) {
				// Kafka's ErrorLoggingCallback.
				fmt.Fprintf(stderr, "[%s] ERROR Error when sending message to topic %s with key: %s, value: %s with error: (org.apache.kafka.clients.producer.internals.ErrorLoggingCallback)\n%v\n",
					time.Now().Format("2006-01-02 15:04:05,000"), r.Topic, describeBytes(r.Key), describeBytes(r.Value), err)
			}
		})
		if ctx.Err() != nil {
			break
		}
	}
	// close() waits for the queued records, as the producer's shutdown hook.
	fctx, cancel := context.WithTimeout(context.Background(), o.closeTimeout)
	defer cancel()
	if err := cl.Flush(fctx); err != nil {
		fmt.Fprintf(stderr, "flushing the producer: %v\n", err)
		failed = true
	}
	if failed {
		return 1
	}
	return 0
}

func describeBytes(b []byte) string {
	if b == nil {
		return "null"
	}
	return fmt.Sprintf("%d bytes", len(b))
}
