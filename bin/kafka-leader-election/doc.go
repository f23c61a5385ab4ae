// kafka-leader-election is Kafka's kafka-leader-election.sh
// (kafka.admin.LeaderElectionCommand, apache/kafka branch 2.8) for Klassik.
//
// Kafka classes and their Go files:
//
//	LeaderElectionCommand.run, validate,   main.go (parse: --bootstrap-server and
//	  LeaderElectionCommandOptions           --election-type required, exactly one of --topic
//	                                         (with --partition), --all-topic-partitions,
//	                                         --path-to-json-file)
//	parseReplicaElectionData               main.go (parseElectionData)
//	electLeaders                           main.go (elect: one ElectLeaders request through
//	                                         admintool.ElectLeaders; success, no-op and error lines)
//	shared tool plumbing                   admintool/ (options, Java exception names, ElectLeaders)
//
// Output (stdout):
//
//	Successfully completed leader election (PREFERRED) for partitions t-0, t-1
//	Valid replica already elected for partitions t-2
//	Error completing leader election (PREFERRED) for partition: t-3: org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: ...
//
// Failures escape as Kafka's do: on stderr, as the JVM prints an uncaught
// exception ("Exception in thread "main" kafka.common.AdminCommandFailedException:
// 1 replica(s) could not be elected"), exit 1. Kafka 2.8 printed the
// succeeded partitions in the "Valid replica already elected" line by
// mistake; we print the partitions that needed no election, as later Kafka
// versions do. Partition lists are sorted.
//
// Goroutines: none of its own (the franz-go client is closed before exit).
package main
