// Package zkpaths names every znode Klassik shares with Apache Kafka's
// ZooKeeper mode and encodes/decodes its data byte-for-byte as Kafka 3.x
// (Scala 2.13 builds) writes it. It performs no I/O; zkclient does the
// ZooKeeper calls. Where the layout is in doubt, what Apache Kafka's own
// tools write decides: a znode either side writes means the same to the
// other.
//
// Kafka class (apache/kafka:core/src/main/scala/kafka/zk/ZkData.scala) to Go file:
//
//	ZkData object paths, PersistentZkPaths,      paths.go
//	  SecureRootPaths, sensitivePath
//	ClusterZNode, ClusterIdZNode, Uuid           cluster.go (EncodeClusterID, RandomUUID)
//	ControllerZNode, ControllerEpochZNode        cluster.go (ControllerInfo)
//	BrokerIdZNode, BrokerInfo, EndPoint          broker.go
//	TopicZNode, TopicPartitionStateZNode,        topic.go (TopicAssignment, LeaderAndIsr)
//	  kafka.api.LeaderAndIsr
//	ReassignPartitionsZNode,                     admin.go
//	  PreferredReplicaElectionZNode,
//	  IsrChangeNotificationSequenceZNode,
//	  LogDirEventNotificationSequenceZNode
//	ConfigEntityZNode,                           config.go (EncodeEntityConfig, Sanitize)
//	  ConfigEntityChangeNotificationSequenceZNode,
//	  kafka.utils.Sanitizer
//	ConfigEntityZNode for users (SCRAM          users.go (UserConfig, UserConfigPath,
//	  credentials beside quotas)                 UserCredentialEntity)
//	ProducerIdBlockZNode, FeatureZNode,          misc.go
//	  MigrationZNode,
//	  legacy consumer nodes (ZkUtils 1.1)
//	ZkAclStore, ResourceZNode, AclEntry JSON     acl.go (ACLStorePath, EncodeACLs, DecodeACLs)
//	AclChangeNotification(Sequence)ZNode,         security.go
//	  ExtendedAclChangeEvent, DelegationTokenInfoZNode
//	Scala/Java map iteration orders              order.go
//
// Goroutines: none.
//
// Invariants:
//   - Encoders write compact JSON with Kafka's key order, no HTML escaping,
//     no trailing newline; numbers that Kafka writes as strings (timestamps,
//     cluster id version, producer id bounds, config values) are strings.
//   - Decoders are tolerant (unknown fields ignored, every historical
//     version accepted), except DecodeReassignment and
//     DecodeExtendedACLChange, which are strict like Kafka's bean mapping,
//     and DecodeACLs, which requires what AclEntry.fromBytes requires.
//   - Decoders never panic on any input (fuzzed with the golden corpus).
//   - Structural nodes hold null data; zkclient passes nil, never []byte{}.
package zkpaths
