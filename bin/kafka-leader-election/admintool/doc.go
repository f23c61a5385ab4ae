// Package admintool holds what every Go tool of bin/ shares (kafka.utils
// CommandLineUtils / CommandDefaultOptions, the admin client's exception
// mapping, and the ElectLeaders call of LeaderElectionCommand and
// PreferredReplicaLeaderElectionCommand).
//
// Kafka classes and their Go files:
//
//	CommandDefaultOptions, joptsimple parsing,   options.go (Parse: exact option names,
//	  CommandLineUtils.printUsageAndDie            --opt v / --opt=v; Usage / UsageAt:
//	                                               the option table; ParseCommand: the
//	                                               no-argument, --help and --version start;
//	                                               ParseCommandWith: the same under the
//	                                               Rules kafka-topics.sh keeps (unique
//	                                               prefixes, one value per option);
//	                                               ParseAdminCommand for the admin tools;
//	                                               DefaultOptionalArg; Options.OneOf for
//	                                               the one action of a command line)
//	org.apache.kafka.common.errors.*, Errors,    errors.go (KafkaError: class name and message
//	  Throwable.toString, uncaught exceptions      per error code; ClientError for franz-go
//	                                               failures; Uncaught for what the JVM prints)
//	TopicPartition, Json.parseFull of the        partitions.go (TopicPartition ordering and
//	  election tools' partition list               "t-0" form; ParsePartitionList)
//	Utils.readFileAsString (NoSuchFileException)   errors.go (ReadFile, NoSuchFile)
//	Admin.electLeaders + result classification   client.go (LoadProperties through
//	                                               config.ParseProperties, NewClient, ElectLeaders)
//	CommandLineUtils.printHelpAndExitIfNeeded /  commandline.go (CommandLine: --help,
//	  printUsageAndDie at the top of each tool     --version and usage errors, in one place;
//	                                               Main: run until SIGINT/SIGTERM, then exit)
//	AdminCommandFailedException,                 failure.go (CommandFailed, AdminOperation,
//	  AdminOperationException, ExecutionException  ExecutionError; Fail prints what escapes
//	  escaping the election tools' main            main; ElectionCallError; ReportElection
//	                                               prints both election tools' result lines)
//
// Goroutines: none of its own; the franz-go client a tool creates with
// NewClient is closed by that tool.
//
// Invariants: output lists of partitions are sorted by topic then partition
// (Kafka iterates hash sets, whose order users cannot rely on anyway); a
// KafkaError's String is exactly Java's Throwable.toString of the exception
// the Java admin client would raise.
package admintool
