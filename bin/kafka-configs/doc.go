// kafka-configs is Kafka's kafka-configs.sh (kafka.admin.ConfigCommand,
// apache/kafka branch 2.8) for Klassik, in both of Kafka 2.8's modes, for
// every entity type: topics, brokers (and the cluster default),
// broker-loggers (--bootstrap-server only), users (SCRAM credentials and
// quotas), clients, <user, client> pairs and ips, each with its <default>.
//
// Kafka classes and their Go files:
//
//	ConfigCommand.main                       main.go (run: the --zookeeper warning, the three
//	                                         failure forms: usage + option table, the message
//	                                         alone, "Error while executing config command ...")
//	ConfigCommandOptions, checkArgs,         options.go (specs; parseOptions with the broker id and
//	  parseConfigsToBeAdded/Deleted          IP checks; entityNames in command-line order; the
//	                                         bracket-aware split of --add-config)
//	processCommandWithZk, alterConfigWithZk, zookeeper.go (Entity/ConfigEntity with getAllEntities;
//	  describeConfigWithZk, parseEntity,     reads /config/<type>/<name>, writes it with a config
//	  preProcessScramCredentials             change notification through zkclient, validated as
//	                                         AdminZkClient.changeConfigs does)
//	preProcessBrokerConfigs,                 brokers.go, brokerkeys.go (the running-broker rule,
//	  createPasswordEncoder                  password.encoder.* options, the config package's
//	                                         dynamic broker key table and encoder)
//	processCommand, alterConfig,             admin.go (IncrementalAlterConfigs for topics and broker
//	  describeResourceConfig,                loggers, AlterConfigs for brokers as 2.8 does,
//	  getResourceConfig                      DescribeConfigs filtered by the dynamic source)
//	alterQuotaConfigs, describeQuotaConfigs, quotas.go (DescribeClientQuotas/AlterClientQuotas, the
//	  describeClientQuotaAndUserScram...,    users/clients/ips branches of alterConfig,
//	  DynamicConfig.{User,Client,Ip}         DynamicConfig's validation for the ZooKeeper mode)
//	java.util.HashMap, Double.toString       broker/common/jvm (HashMapOrder: the admin client's map
//	                                         order; DoubleToString: the values)
//
// Output, as Kafka 2.8 prints it:
//
//	Completed updating config for entity: user-principal 'alice', client-id 'app-1'.   (--zookeeper)
//	Configs for brokers '1' are leader.replication.throttled.rate=1048576             (--zookeeper)
//	Completed updating config for broker 1.                                          (--bootstrap-server)
//	Completed updating default config for brokers in the cluster.
//	Dynamic configs for broker 1 are:
//	  log.retention.ms=1000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=1000, DEFAULT_CONFIG:log.retention.hours=168}
//	Default configs for brokers in the cluster are:
//	Quota configs for user-principal 'alice' are consumer_byte_rate=1.048576E7, producer_byte_rate=1024.0
//	SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192
//
// Goroutines: none besides the franz-go client's and the ZooKeeper
// client's, both closed before run returns.
package main
