// kafka-preferred-replica-election is Kafka's deprecated
// kafka-preferred-replica-election.sh
// (kafka.admin.PreferredReplicaLeaderElectionCommand, apache/kafka branch
// 2.8) for Klassik, in both of its modes.
//
// Kafka classes and their Go files:
//
//	PreferredReplicaLeaderElectionCommand.run,   main.go (parse: exactly one of --zookeeper /
//	  PreferredReplicaLeaderElectionCommandOptions  --bootstrap-server, admin.config only with
//	                                               --bootstrap-server; run; fail renders what the
//	                                               JVM prints for an escaping exception)
//	parsePreferredReplicaElectionData            main.go (parseElectionData)
//	AdminClientCommand                           main.go (electViaAdmin: ElectLeaders PREFERRED)
//	ZkCommand, writePreferredReplicaElectionData zookeeper.go (electViaZk: existing partitions
//	                                               from the topics' assignment znodes, then
//	                                               create /admin/preferred_replica_election)
//
// Output (stdout), ZooKeeper mode:
//
//	This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: KAFKA-8405
//	Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.
//	Use --bootstrap-server instead to specify a broker to connect to.
//	Created preferred replica election path with t-0,t-1
//	Successfully started preferred replica election for partitions Set(t-0, t-1)
//	Skipping preferred replica leader election for partition x-0 since it doesn't exist.
//
// A pending request (the znode exists) fails with "Preferred replica leader
// election currently in progress for <partitions>. Aborting operation" as
// the cause of "Admin command failed", on stderr, exit 1. The znode is
// written as zkpaths.EncodePreferredReplicaElection (Kafka's exact JSON),
// partitions sorted. Bootstrap mode prints "Successfully completed preferred
// leader election for partitions ...", "Preferred replica already elected
// for partitions ..." (Kafka 2.8 printed the succeeded list there by
// mistake; we print the partitions that needed no election) and one "Error
// completing preferred leader election for partition: ..." line per failure.
//
// Goroutines: none of its own (the ZooKeeper and franz-go clients' are
// closed before exit). Invariant: the tool only ever creates the election
// znode; deleting it is the controller's job.
package main
