// Command kafka-configs describes and alters entity configs (topics,
// brokers, broker loggers, users, clients and ips) with the options and
// output of Kafka's kafka-configs.sh. Run it through bin/kafka-configs.sh.
package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/zkpaths"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// commandError is an exception Kafka's ConfigCommand.main catches as a
// Throwable: it prints "Error while executing config command with args
// '...'" and the stack trace, whose first line is exception.
type commandError struct{ exception string }

func (e *commandError) Error() string { return e.exception }

// executionError wraps an admin client failure as the Java client's
// future.get raises it.
func executionError(err error) error {
	return &commandError{"java.util.concurrent.ExecutionException: " + admintool.JavaString(err)}
}

// run executes one command and returns the exit status: 0, or 1 after
// printing the failure as Kafka's ConfigCommand does.
func run(args []string, stdout, stderr io.Writer) int {
	o, special, err := parseOptions(args)
	if code, done := admintool.CommandLine(special, err, admintool.UsageAndDie, helpText, specs, stdout, stderr); done {
		return code
	}
	if err == nil {
		if o.zookeeper != "" {
			fmt.Fprintln(stdout, "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.")
			fmt.Fprintln(stdout, "Use --bootstrap-server instead to specify a broker to connect to.")
			err = runZooKeeper(o, stdout)
		} else {
			err = runAdmin(o, stdout)
		}
	}
	if err == nil {
		return 0
	}
	var ae *argError
	var ce *commandError
	switch {
	case errors.As(err, &ae):
		fmt.Fprintln(stderr, ae.msg)
	case errors.As(err, &ce):
		fmt.Fprintf(stderr, "Error while executing config command with args '%s'\n%s\n", strings.Join(args, " "), ce.exception)
	default:
		fmt.Fprintf(stderr, "Error while executing config command with args '%s'\n%s\n", strings.Join(args, " "), admintool.JavaString(err))
	}
	return 1
}

// scramMechanisms in Kafka's order, with the enum constant names its
// ZooKeeper-mode messages print.
var scramMechanisms = []struct{ name, enum string }{
	{security.MechanismScramSHA256, "SCRAM_SHA_256"},
	{security.MechanismScramSHA512, "SCRAM_SHA_512"},
}

// Kafka's credential value patterns: the ZooKeeper mode takes only
// unsigned iterations, the admin client path also -1 (= the default).
var (
	zkCredentialRE    = regexp.MustCompile(`^(?:iterations=([0-9]*),)?password=((?s).*)$`)
	adminCredentialRE = regexp.MustCompile(`^(?:iterations=(-?[0-9]*),)?password=((?s).*)$`)
)

// parseCredentialValue reads "[iterations=N,]password=P" for mechanism
// (display is the name the messages use). The ZooKeeper mode and the
// admin path differ in the patterns and names, as in Kafka.
func parseCredentialValue(re *regexp.Regexp, display, value string, allowMinusOne bool) (iterations int, password string, err error) {
	m := re.FindStringSubmatch(value)
	if m == nil {
		return 0, "", argErrorf("Invalid credential property %s=%s", display, value)
	}
	iterations = security.ScramDefaultIterations
	if strings.HasPrefix(value, "iterations=") && !(allowMinusOne && m[1] == "-1") {
		n, err := strconv.ParseInt(m[1], 10, 32)
		if err != nil {
			return 0, "", argErrorf("For input string: \"%s\"", m[1])
		}
		iterations = int(n)
	}
	if iterations < security.ScramMinIterations {
		return 0, "", argErrorf("Iterations %d is less than the minimum %d required for %s", iterations, security.ScramMinIterations, display)
	}
	return iterations, m[2], nil
}

// propertiesKeys lists m's keys in the order a java.util.Properties
// holding them iterates (the order ConfigCommand handles them in).
func propertiesKeys(m map[string]string) []string {
	return zkpaths.PropertiesOrder(slices.Collect(maps.Keys(m)))
}
