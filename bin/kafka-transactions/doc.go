// kafka-transactions is Kafka's kafka-transactions.sh
// (org.apache.kafka.tools.TransactionsCommand, apache/kafka branch 3.0,
// KIP-664) for Klassik: the same command line, tables, messages and exit
// statuses.
//
// Kafka classes and their Go files:
//
//	argparse4j 0.7.0 (ArgumentParserImpl,      argparse.go (sub-commands, abbreviations,
//	  SubparsersImpl, ArgumentImpl,             negative numbers as values, deferred
//	  TextHelper, TerminalWidth)                required-option errors, usage and help
//	                                            screens with justified text, "Did you mean")
//	TransactionsCommand.buildBaseParser and    options.go (newParser; options)
//	  each command's addSubparser
//	prettyPrintTable, the commands' HEADERS     format.go (tables; the row of each command;
//	  and rows, FindHanging's candidate and      candidateOpenTransactions, filterHanging)
//	  hanging filters
//	Admin's handlers: ListTransactionsHandler, admin.go (which broker each request goes to,
//	  DescribeTransactionsHandler (+ the        which errors are retried until
//	  coordinator lookup), DescribeProducers-   default.api.timeout.ms, the messages of the
//	  Handler, AbortTransactionHandler,         ones that fail the call)
//	  describeTopics/listTopics
//	TransactionsCommand.execute, each          main.go (run: parse, load --command-config,
//	  command's execute, printErrorAndExit       dispatch; printErrorAndExit's messages)
//
// Requests: ListTransactions (66) to every broker; FindCoordinator (key
// type 1) then DescribeTransactions (65) to the coordinator;
// DescribeProducers (61) to the partition leader from Metadata, or to
// --broker-id; abort writes an abort marker with WriteTxnMarkers (27) to
// the partition leader, with the producer id, epoch and coordinator epoch
// given or found by DescribeProducers from --start-offset.
//
// Outputs (every cell padded to its column and followed by a tab):
//
//	list                TransactionalId Coordinator ProducerId TransactionState
//	describe            CoordinatorId TransactionalId ProducerId ProducerEpoch
//	                    TransactionState TransactionTimeoutMs CurrentTransactionStartTimeMs
//	                    TransactionDurationMs TopicPartitions
//	describe-producers  ProducerId ProducerEpoch LatestCoordinatorEpoch LastSequence
//	                    LastTimestamp CurrentTransactionStartOffset
//	find-hanging        Topic Partition ProducerId ProducerEpoch CoordinatorEpoch
//	                    StartOffset LastTimestamp Duration(min)
//	abort               nothing
//
// Exit statuses as Kafka's: 0 after a command; 1 after a command-line
// error (usage and message on stderr), after --help (help on stdout) and
// after a failed command (message on stderr). --version prints Klassik's
// version, as every tool here does.
//
// Where Kafka's order is a hash map's, this tool sorts: list by
// coordinator id, describe's partitions by topic and partition,
// find-hanging by producer id. A call that times out reports the last
// retriable problem rather than the Java client's Call(...) text.
//
// No goroutines of its own; the franz-go client is closed before exit.
package main
