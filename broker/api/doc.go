// Package api is Klassik's KafkaApis: the network.Handler of a broker. It
// decodes nothing itself (broker/network hands it parsed kmsg requests); it
// routes each API key to one handler, applies the rules that belong to the
// request rather than to a partition, and answers with kerr codes.
//
// Kafka classes → files:
//
//	KafkaApis (dispatch, ApiVersions table)     apis.go, versions.go, 18_api_versions.go
//	KafkaApis.handle (the key -> handler table)  handlers.go; keys answered entirely by the
//	                                            replica manager or the group coordinator are
//	                                            routed there directly, with their notes
//	KafkaApis.handleXxx                         NN_<api>.go, one file per API key with rules of
//	                                            its own, each starting with its key, versions
//	                                            and behaviour
//	ZkAdminManager / AdminZkClient (topics)     topics.go, 19_, 20_, 37_; ZooKeeper access goes
//	                                            through the AdminZK interface (admin.go),
//	                                            which *zkclient.Client satisfies
//	ConfigHelper / ZkAdminManager (configs)     configs.go, 32_, 33_, 44_
//	ZkAdminManager (client quotas)              48_, 49_ (/config/users, /config/clients,
//	                                            /config/ips through ClientQuotaStore)
//	KafkaApis quota throttling                  throttle.go (with 00_, 01_, 19_, 20_, 37_)
//	ZkAdminManager (SCRAM credentials)          50_, 51_ (/config/users through the
//	                                            UserCredentialStore interface)
//	ZkProducerIdManager                         broker/txn (22_init_producer_id.go routes)
//	TransactionCoordinator routing, the         txn.go, 22_, 24_–28_, 61_, 65_ (the coordinator
//	  transaction state topic                   itself is broker/txn)
//	Authorizer calls                            authorizer.go (the hook; nil allows all)
//	SaslServerAuthenticator (the exchange as    17_sasl_handshake.go (saslState in the
//	  seen by requests), KafkaApis' SASL          connection's network.Session, saslStep),
//	  answers after authentication              36_sasl_authenticate.go; the mechanisms are
//	                                            broker/security's, behind SASLServers
//	Authorizer.acls/createAcls/deleteAcls       29_, 30_, 31_ (the ACLAdmin interface, the
//	                                            authorizer's store; nil = SECURITY_DISABLED)
//	AuthHelper (per-resource decisions,         authz.go: one decision per topic of a request,
//	  authorizedOperations, the cluster-         authorized_operations bit fields, the
//	  operation error responses)                CLUSTER_AUTHORIZATION_FAILED answers of the
//	                                            inter-broker and reassignment requests; each
//	                                            NN_ file states its API's checks
//	GroupCoordinator routing, offsets topic     groups.go, 08_–16_, 42_, 47_ (the coordinator
//	  creation for FindCoordinator              itself is broker/group)
//	ReplicaManager (data path)                  not here: ReplicaManager interface, delegated
//	MetadataCache                               not here: MetadataView interface
//
// Kept Metadata answers (metadata_answers.go): without an authorizer, a
// Metadata answer is encoded once per metadata-cache generation, request
// shape and listener and sent again as a network.EncodedResponse; the
// per-request throttle_time_ms is patched in when it is written.
//
// Pieces the handlers share rather than repeat: toGroups/toReplicas and
// byVersion (handlers.go) route a key, or its v1+ versions, to the group
// coordinator or the replica manager; eachTopic and awaitLeaders
// (topics.go) hold the checks and the leader wait of CreateTopics and
// CreatePartitions; alterEach (33_) is the per-resource loop of
// AlterConfigs and IncrementalAlterConfigs; notController,
// requestedPartitions and sortedByTopic (45_, 46_) serve the controller
// admin APIs.
//
// Served keys (versions = Kafka 3.4 ZooKeeper mode ∩ kmsg, versions.go):
// 0 Produce, 1 Fetch, 2 ListOffsets, 3 Metadata, 4 LeaderAndIsr,
// 5 StopReplica, 6 UpdateMetadata, 7 ControlledShutdown, 8 OffsetCommit,
// 9 OffsetFetch, 10 FindCoordinator, 11 JoinGroup, 12 Heartbeat,
// 13 LeaveGroup, 14 SyncGroup, 15 DescribeGroups, 16 ListGroups,
// 17 SaslHandshake, 18 ApiVersions, 19 CreateTopics, 20 DeleteTopics, 21 DeleteRecords,
// 22 InitProducerId, 23 OffsetForLeaderEpoch, 24 AddPartitionsToTxn,
// 25 AddOffsetsToTxn, 26 EndTxn, 27 WriteTxnMarkers, 28 TxnOffsetCommit,
// 29 DescribeAcls, 30 CreateAcls, 31 DeleteAcls, 32 DescribeConfigs, 33 AlterConfigs,
// 36 SaslAuthenticate, 37 CreatePartitions,
// 42 DeleteGroups, 43 ElectLeaders, 44 IncrementalAlterConfigs,
// 45 AlterPartitionReassignments, 46 ListPartitionReassignments,
// 47 OffsetDelete, 48 DescribeClientQuotas, 49 AlterClientQuotas,
// 50 DescribeUserScramCredentials,
// 51 AlterUserScramCredentials, 60 DescribeCluster, 61 DescribeProducers,
// 65 DescribeTransactions, 66 ListTransactions. A key is
// advertised only when the dependencies its handler needs are wired (the
// replica manager for the data path, the group coordinator for the group
// keys, ...).
//
// Goroutines: none of its own. Handle runs on the calling connection's
// goroutine (one request per connection at a time: the network layer reads the
// next request only after the response is written, or, for an acks=all
// Produce whose response is deferred, once the handler returned); admin
// requests that wait for the controller (CreateTopics, DeleteTopics,
// CreatePartitions with timeout_ms) park on that goroutine in
// waitForMetadata and are woken by MetadataChanged, the request's context or
// Close.
//
// Invariants:
//   - Handle never panics into the network layer: a panic is recovered,
//     logged with its stack and turned into "close the connection".
//   - Requests other than ApiVersions wait until SetReady (Kafka enables
//     request processing last during start-up).
//   - Every handler asks what Kafka 2.8's KafkaApis asks of the authorizer
//     before the request reaches the replica manager, the group or
//     transaction coordinator or ZooKeeper; a denied resource never does.
//     Without an authorizer the checks cost no allocation.
//   - Protocol outcomes are kerr codes; any other error becomes
//     UNKNOWN_SERVER_ERROR with a log line (errors.go).
//   - Topic znodes are written only by the active controller's broker for
//     CreateTopics/DeleteTopics/CreatePartitions (NOT_CONTROLLER elsewhere);
//     Metadata auto-creation and config changes may run on any broker.
package api
