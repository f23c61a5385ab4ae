// Command kafka-topics creates, lists, describes, alters and deletes topics,
// with the options and output of Kafka's kafka-topics.sh. Run it through
// bin/kafka-topics.sh.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/config"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// service is one backend: the broker admin API or ZooKeeper.
type service interface {
	create(*topicOptions) error
	list(*topicOptions) error
	describe(*topicOptions) error
	alter(*topicOptions) error
	delete(*topicOptions) error
	close()
}

// run executes one command and returns the exit status. Like Kafka's
// TopicCommand, failures print "Error while executing topic command : <msg>"
// on stdout and exit 1; option mistakes print the message and the option
// list on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	o, special, err := parseOptions(args)
	switch {
	case special == "help":
		fmt.Fprintln(stdout, "This tool helps to create, delete, describe, or change a topic.")
		fmt.Fprint(stdout, usageText())
		return 0
	case special == "version":
		fmt.Fprintln(stdout, admintool.Version)
		return 0
	case err != nil:
		var ue *admintool.UsageError
		if errors.As(err, &ue) {
			fmt.Fprintln(stderr, ue.Msg)
			fmt.Fprint(stderr, usageText())
			return 1
		}
		fmt.Fprintf(stdout, "Error while executing topic command : %v\n", err)
		return 1
	}
	var svc service
	if o.bootstrapServer != "" {
		svc, err = newAdminService(o, stdout)
	} else {
		svc, err = newZkService(o, stdout)
	}
	if err != nil {
		fmt.Fprintf(stdout, "Error while executing topic command : %v\n", err)
		return 1
	}
	defer svc.close()
	if o.action == actionCreate && config.HasCollisionChars(o.topic) {
		fmt.Fprintln(stdout, collisionWarning)
	}
	if err := dispatch(svc, o); err != nil {
		fmt.Fprintf(stdout, "Error while executing topic command : %v\n", err)
		return 1
	}
	return 0
}

func dispatch(svc service, o *topicOptions) error {
	switch o.action {
	case actionCreate:
		return svc.create(o)
	case actionList:
		return svc.list(o)
	case actionDescribe:
		return svc.describe(o)
	case actionAlter:
		return svc.alter(o)
	case actionDelete:
		return svc.delete(o)
	}
	return fmt.Errorf("unknown action %q", o.action)
}
