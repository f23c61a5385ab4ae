package main

import (
	"strconv"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

const prog = "kafka-transactions.sh"

// newParser builds the command line of Kafka 3.0's TransactionsCommand:
// the global options, then one of the five commands with its own.
func newParser() *parser {
	p := &parser{prog: prog, version: admintool.Version, subTitle: "commands", subMetavar: "COMMAND",
		description: "This tool is used to analyze the transactional state of producers in the cluster. " +
			"It can be used to detect and recover from hanging transactions."}
	p.addArgument(helpArgument())
	p.addArgument(&argument{flags: []string{"-v", "--version"}, action: actionVersion,
		help: "show the version of this Kafka distribution and exit"})
	p.addArgument(&argument{flags: []string{"--command-config"}, metavar: "FILE",
		help: "property file containing configs to be passed to admin client"})
	p.addArgument(&argument{flags: []string{"--bootstrap-server"}, metavar: "host:port", required: true,
		help: "hostname and port for the broker to connect to, in the form `host:port`  " +
			"(multiple comma-separated entries can be given)"})

	p.addCommand("list", "list transactions", "")

	d := p.addCommand("describe", "describe the state of an active transactional-id",
		"Describe the state of an active transactional-id.")
	d.addArgument(&argument{flags: []string{"--transactional-id"}, help: "transactional id", required: true})

	dp := p.addCommand("describe-producers", "describe the states of active producers for a topic partition", "")
	dp.addArgument(&argument{flags: []string{"--broker-id"}, typ: typeInteger,
		help: "optional broker id to describe the producer state on a specific replica"})
	dp.addArgument(&argument{flags: []string{"--topic"}, help: "topic name", required: true})
	dp.addArgument(&argument{flags: []string{"--partition"}, typ: typeInteger, help: "partition number", required: true})

	a := p.addCommand("abort", "abort a hanging transaction (requires administrative privileges)", "")
	a.addArgument(&argument{flags: []string{"--topic"}, help: "topic name", required: true})
	a.addArgument(&argument{flags: []string{"--partition"}, typ: typeInteger, help: "partition number", required: true})
	newer := a.addGroup("Brokers on versions 3.0 and above",
		"For newer brokers, only the start offset of the transaction to be aborted is required")
	a.addToGroup(newer, &argument{flags: []string{"--start-offset"}, typ: typeLong, help: "start offset of the transaction to abort"})
	older := a.addGroup("Brokers on versions older than 3.0", "For older brokers, you must provide all of these arguments")
	a.addToGroup(older, &argument{flags: []string{"--producer-id"}, typ: typeLong, help: "producer id"})
	a.addToGroup(older, &argument{flags: []string{"--producer-epoch"}, typ: typeShort, help: "producer epoch"})
	a.addToGroup(older, &argument{flags: []string{"--coordinator-epoch"}, typ: typeInteger, help: "coordinator epoch"})

	f := p.addCommand("find-hanging", "find hanging transactions", "")
	f.addArgument(&argument{flags: []string{"--broker-id"}, typ: typeInteger, help: "broker id to search for hanging transactions"})
	f.addArgument(&argument{flags: []string{"--max-transaction-timeout"}, typ: typeInteger,
		help: "maximum transaction timeout in minutes to limit the scope of the search (15 minutes by default)"})
	f.addArgument(&argument{flags: []string{"--topic"}, help: "topic name to limit search to (required if --partition is specified)"})
	f.addArgument(&argument{flags: []string{"--partition"}, typ: typeInteger, help: "partition number"})
	return p
}

// options is a parsed command line. Optional numbers are nil when absent
// (Java's null).
type options struct {
	command       string
	bootstrap     string
	commandConfig string // "" when absent

	transactionalID string
	topic           string
	hasTopic        bool
	partition       *int32
	brokerID        *int32

	startOffset      *int64
	producerID       *int64
	producerEpoch    *int16
	coordinatorEpoch *int32

	maxTransactionTimeoutMinutes int32
}

// optionsFrom reads the namespace; the parser already checked every
// number, so conversions cannot fail here.
func optionsFrom(ns *namespace) *options {
	o := &options{command: ns.command, maxTransactionTimeoutMinutes: 15}
	o.bootstrap, _ = ns.get("bootstrap_server")
	o.commandConfig, _ = ns.get("command_config")
	o.transactionalID, _ = ns.get("transactional_id")
	o.topic, o.hasTopic = ns.get("topic")
	o.partition = int32Opt(ns, "partition")
	o.brokerID = int32Opt(ns, "broker_id")
	o.coordinatorEpoch = int32Opt(ns, "coordinator_epoch")
	if v, ok := ns.get("start_offset"); ok {
		n, _ := strconv.ParseInt(v, 10, 64)
		o.startOffset = &n
	}
	if v, ok := ns.get("producer_id"); ok {
		n, _ := strconv.ParseInt(v, 10, 64)
		o.producerID = &n
	}
	if v, ok := ns.get("producer_epoch"); ok {
		n, _ := strconv.ParseInt(v, 10, 16)
		e := int16(n)
		o.producerEpoch = &e
	}
	if m := int32Opt(ns, "max_transaction_timeout"); m != nil {
		o.maxTransactionTimeoutMinutes = *m
	}
	return o
}

func int32Opt(ns *namespace, dest string) *int32 {
	v, ok := ns.get(dest)
	if !ok {
		return nil
	}
	n, _ := strconv.ParseInt(v, 10, 32)
	i := int32(n)
	return &i
}
