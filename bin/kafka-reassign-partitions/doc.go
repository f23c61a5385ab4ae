// kafka-reassign-partitions is Kafka's kafka-reassign-partitions.sh
// (kafka.admin.ReassignPartitionsCommand, apache/kafka branch 2.8, the
// KIP-455 rewrite) for Klassik: the same options, JSON files, messages and
// exit codes, in both of Kafka 2.8's modes.
//
// Kafka classes and their Go files:
//
//	ReassignPartitionsCommand.main,            main.go (run: warnings for --zookeeper, terse
//	  validateAndParseArgs,                      failures printed alone, others as "Error: <msg>",
//	  ReassignPartitionsCommandOptions           exit 1; parse: one action, required and permitted
//	                                             options per action, bootstrap-only options)
//	generateAssignment, calculateAssignment,   main.go (generate, over either backend through
//	  parseGenerateAssignmentArgs                assignmentSource; placement by
//	                                             controller.AssignReplicasToBrokers)
//	partitionReassignmentStatesToString,       main.go (statesToString, currentAssignmentToString,
//	  currentPartitionReplicaAssignmentToString  startedMessage)
//	formatAsReassignmentJson, parseTopicsData, json.go (Kafka's exact JSON; strict version 1;
//	  parsePartitionReassignmentData,            duplicate and empty checks with Kafka's messages)
//	  parseExecuteAssignmentArgs
//	MoveMap, calculateProposedMoveMap,         throttle.go (leader/follower throttled-replica
//	  calculateLeader/FollowerThrottles,         lists, reassigning brokers, config key names)
//	  calculateReassigningBrokers
//	clearAllThrottles' printed sets            scalaset.go (Scala 2.13 Set iteration order:
//	                                             order added up to four elements, CHAMP
//	                                             hash-trie order from five)
//	the Admin overloads: executeAssignment,    admin.go (adminBackend: Metadata,
//	  verifyAssignment, listReassignments,       ListPartitionReassignments,
//	  cancelAssignment, clearAllThrottles,       AlterPartitionReassignments (null target
//	  modifyReassignmentThrottle                 cancels), IncrementalAlterConfigs)
//	the KafkaZkClient overloads                zookeeper.go (zkBackend: /admin/reassign_partitions
//	                                             via zkclient, topic and broker throttle configs
//	                                             with change notifications)
//
// Output formats:
//
//	Current partition replica assignment
//	<blank>
//	{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}
//	<blank>
//	Save this to use as the --reassignment-json-file option during rollback
//	Successfully started partition reassignment(s) for t-0,t-1
//
//	Status of partition reassignment:
//	Reassignment of partition t-0 is complete.
//	Reassignment of partition t-1 is still in progress.
//
// In ZooKeeper mode --execute writes /admin/reassign_partitions with
// exactly the fields the controller accepts (zkpaths.EncodeReassignment; the
// tool's log_dirs never reach the znode) and refuses while the node exists;
// --verify counts a partition as done once the controller has removed it
// from the node. Lists of partitions are sorted by topic, then partition.
//
// Log directory moves (log_dirs other than "any", logdirs.go) need
// --bootstrap-server: --execute sends AlterReplicaLogDirs to each replica's
// broker after the reassignment started, retrying a replica not created
// yet (REPLICA_NOT_AVAILABLE) every 100 ms until --timeout, and prints
// "Successfully started log directory move(s) for: <topic>-<p>-<broker>,...";
// --replica-alter-log-dirs-throttle sets
// replica.alter.log.dirs.io.max.bytes.per.second on the moving brokers;
// --verify describes each replica's current and future log directory
// (DescribeLogDirs) and prints "Reassignment of replica t-0-1 completed
// successfully." or "... is still in progress." (Kafka's move states),
// clearing throttles only once no move is active; --cancel sends active
// moves back to their current directory.
//
// Differences from Kafka: --generate's random start index is injectable
// (tool.fixedStartIndex) for tests.
//
// Goroutines: none of its own; the ZooKeeper or franz-go client is closed
// before the tool exits. Invariant: the tool never writes a controller-owned
// znode (topic assignment, partition state); it only creates the request
// node and the entity configs Kafka's tool writes.
package main
