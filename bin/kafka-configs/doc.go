// kafka-configs is Kafka's kafka-configs.sh (kafka.admin.ConfigCommand,
// apache/kafka branch 2.8) for Klassik, in both of Kafka 2.8's modes, for
// the entity types Klassik implements: topics (dynamic topic configs) and
// users (SCRAM credentials). Clients, brokers, broker-loggers, ips and user
// quotas are refused with an error naming them until the brokers apply
// them (they would otherwise be written and silently ignored).
//
// Kafka classes and their Go files:
//
//	ConfigCommand.main                       main.go (run: the --zookeeper warning, the three
//	                                         failure forms: usage + option table, the message
//	                                         alone, "Error while executing config command ...")
//	ConfigCommandOptions, checkArgs,         options.go (specs; parseOptions; entityNames in
//	  parseConfigsToBeAdded/Deleted          command-line order; the bracket-aware split of
//	                                         --add-config)
//	processCommandWithZk, alterConfigWithZk, zookeeper.go (reads /config/<type>/<name>, writes it
//	  preProcessScramCredentials,            with a config change notification through zkclient;
//	  describeConfigWithZk,                  passwords become ScramCredentialUtils strings here;
//	  createZkClientConfigFromOption         ZooKeeper TLS from --zk-tls-config-file and KAFKA_OPTS,
//	                                         digest from its JAAS Client section, secure ACLs
//	                                         with either identity)
//	processCommand, alterConfig,             admin.go (IncrementalAlterConfigs/DescribeConfigs for
//	  alterUserScramCredentialConfigs,       topics; AlterUserScramCredentials with the salted
//	  describeResourceConfig,                password computed here and DescribeUserScramCredentials
//	  describeClientQuotaAndUserScram...     for users)
//
// Output, as Kafka 2.8 prints it:
//
//	Completed updating config for entity: user-principal 'alice'.       (--zookeeper)
//	Configs for user-principal 'alice' are SCRAM-SHA-512=salt=...,...   (--zookeeper)
//	Completed updating config for user alice.                           (--bootstrap-server)
//	SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096
//	Dynamic configs for topic orders are:
//	  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000, ...}
//
// Goroutines: none besides the franz-go client's and the ZooKeeper
// client's, both closed before run returns.
package main
