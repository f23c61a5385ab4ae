// kafka-topics is Kafka's kafka-topics.sh (kafka.admin.TopicCommand,
// apache/kafka branch 2.8) for Klassik: the same options, messages and
// output, in both of Kafka 2.8's modes.
//
// Kafka classes and their Go files:
//
//	TopicCommand.main, printException          main.go (run, dispatch, exit codes)
//	TopicCommandOptions, checkArgs,            options.go (specs; parseOptions: admintool's
//	  parseReplicaAssignment,                  parser with unique prefixes and one value per
//	  parseTopicConfigsToBeAdded               option, then the checkArgs rules; usage text)
//	TopicDescription, PartitionDescription,    format.go (header and partition lines, the
//	  DescribeOptions, IncludeList             --under-replicated/--unavailable/--under-min-isr/
//	                                           --at-min-isr/--topics-with-overrides filters,
//	                                           --topic as a regular expression)
//	AdminClientTopicService                    admin.go (--bootstrap-server: CreateTopics,
//	                                           Metadata, DescribeConfigs, CreatePartitions,
//	                                           DeleteTopics, ListPartitionReassignments via kmsg/kadm)
//	ZookeeperTopicService + AdminZkClient      zookeeper.go (--zookeeper: zkclient; create writes
//	                                           /config/topics/<t> then /brokers/topics/<t> with a
//	                                           new topic id and controller.AssignReplicasToBrokers'
//	                                           placement; delete creates /admin/delete_topics/<t>;
//	                                           describe reads the assignment and partition state
//	                                           znodes; alter adds partitions with
//	                                           controller.AssignReplicasForNewPartitions)
//
// Output formats (tabs as in Kafka 2.8 and 3.4):
//
//	Topic: t<TAB>TopicId: <id><TAB>PartitionCount: 6<TAB>ReplicationFactor: 3<TAB>Configs: k=v,...
//	<TAB>Topic: t<TAB>Partition: 0<TAB>Leader: 1<TAB>Replicas: 1,2,3<TAB>Isr: 1,2,3
//
// "Leader: none" when there is no leader; "\tMarkedForDeletion: true" is
// appended in ZooKeeper mode for topics being deleted; "\tAdding Replicas:
// ...\tRemoving Replicas: ..." while a reassignment is in progress. In
// bootstrap mode Configs lists every entry whose source is not
// DEFAULT_CONFIG (so values set in server.properties show, as in Kafka), in
// ZooKeeper mode the topic's overrides; both sorted by name. Errors print
// "Error while executing topic command : <message>" on stdout and exit 1;
// option mistakes print the message and the option list on stderr.
//
// A stalled broker (paused, overloaded: connection open, no answer) must
// not hang --describe: the client gives up on a request 3 s beyond its own
// timeout and retries elsewhere, describe makes one Metadata round trip,
// sends DescribeConfigs to every live broker at once and takes the first
// answer, and bounds ListPartitionReassignments (to the controller) to 3 s.
//
// Goroutines: describeTopicConfigs starts one per live broker for a single
// DescribeConfigs attempt; it cancels and waits for all of them before
// returning. Otherwise only the franz-go client's, closed by close().
// Invariant: the tool never writes a znode the controller owns (partition
// state, controller epoch); it only creates what Kafka's AdminZkClient does.
package main
