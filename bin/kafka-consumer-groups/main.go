// Command kafka-consumer-groups lists, describes, deletes and resets
// consumer groups, with the options and output of Kafka's
// kafka-consumer-groups.sh: groups of the group coordinator
// (--bootstrap-server) and, as the pre-2.0 tool did, groups of classic
// consumers stored in ZooKeeper (--zookeeper). Run it through
// bin/kafka-consumer-groups.sh.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

func main() {
	admintool.Main(func(ctx context.Context) int { return run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}

// service is one backend.
type service interface {
	list(ctx context.Context) error
	describe(ctx context.Context) error
	delete(ctx context.Context) error
	reset(ctx context.Context) error
	deleteOffsets(ctx context.Context) error
	close()
}

// run executes one command. Option mistakes print the message and the
// option table on stderr (exit 1); failures of the command itself print
// "Error: Executing consumer group command failed due to ..." on stdout
// and, as in Kafka, still exit 0.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, special, err := parseOptions(args)
	if code, done := admintool.CommandLine(special, err, admintool.HelpAndExit, toolHelp, specs, stdout, stderr); done {
		return code
	}
	if err != nil {
		printError(stdout, "Executing consumer group command failed due to "+err.Error())
		return 1
	}
	if o.action == "reset-offsets" && !o.p.Has("dry-run") && !o.execute {
		fmt.Fprintln(stderr, "WARN: No action will be performed as the --execute option is missing."+
			"In a future major release, the default behavior of this command will be to prompt the user before "+
			"executing the reset rather than doing a dry run. You should add the --dry-run option explicitly "+
			"if you are scripting this command and want to keep the current default behavior without prompting.")
	}
	var svc service
	if o.zookeeper != "" {
		fmt.Fprintln(stderr, "Note: This will only show information about consumers that use ZooKeeper (not those using the Java consumer API).")
		fmt.Fprintln(stderr)
		svc, err = newZKService(o, stdout, stderr)
	} else {
		svc, err = newKafkaService(o, stdout, stderr)
	}
	if err != nil {
		printError(stdout, "Executing consumer group command failed due to "+err.Error())
		return 1
	}
	defer svc.close()
	switch o.action {
	case "list":
		err = svc.list(ctx)
	case "describe":
		err = svc.describe(ctx)
	case "delete":
		err = svc.delete(ctx)
	case "reset-offsets":
		err = svc.reset(ctx)
	case "delete-offsets":
		err = svc.deleteOffsets(ctx)
	}
	if err != nil {
		var ue *admintool.UsageError
		if errors.As(err, &ue) {
			fmt.Fprintln(stderr, ue.Msg)
			fmt.Fprint(stderr, admintool.Usage(specs))
			return 1
		}
		printError(stdout, "Executing consumer group command failed due to "+err.Error())
		return 0
	}
	return 0
}
