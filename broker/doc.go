// Package broker is Klassik's KafkaServer: it wires one broker together and
// runs its start-up and shutdown in Kafka's order. The parts live in the
// subpackages (network = SocketServer, api = KafkaApis, replica =
// ReplicaManager, storage = LogManager, metadata = MetadataCache,
// purgatory, group); the controller module is package controller; the
// ZooKeeper client is zkpaths/zkclient.
//
// Kafka classes → files:
//
//	KafkaServer (startup, shutdown, registration,  broker.go
//	  controlled shutdown, broker epoch)
//	AdminZkClient / KafkaZkClient (admin writes)    zkpaths/zkclient (*zkclient.Client is api.AdminZK)
//	ZkConfigManager + TopicConfigHandler +          configlistener.go (also the topic
//	  ZkNodeChangeNotificationListener               config cache, dropped on deletion)
//	DynamicBrokerConfig.initialize, BrokerConfigHandler, dynamicconfig.go (/config/brokers/<default>
//	  DynamicLogConfig                               and /<id> into Broker.dyn; log defaults re-derived)
//	CredentialProvider + UserConfigHandler          usercredentials.go (SCRAM credentials of
//	  (credentials)                                  /config/users in the CredentialCache)
//	QuotaFactory + ClientIdConfigHandler +          quotaconfig.go (/config/clients, /config/users
//	  UserConfigHandler (quotas)                     and <user, client> nodes into broker/quota)
//	KafkaServer's authorizer (AclAuthorizer,         broker.go (startAuthorizer) with
//	  authorizer.class.name)                         security/authorizer (api.Authorizer, api.ACLAdmin)
//	(the web console's view of this broker)         consolesource.go (console.Source; publishes
//	                                                 /klassik/console/<id>, see broker/console)
//	ReplicaManager's LogDirFailureHandler (KIP-112)  logdirfailure.go (failed log dir → replicas
//	                                                 offline, logs closed, /log_dir_event_notification)
//
// Start-up order (Kafka's KafkaServer.startup): ZooKeeper session (the client
// creates the chroot) → persistent paths → cluster id → dynamic broker
// configs (/config/brokers) → log manager (locks
// log.dirs, recovers logs) → meta.properties check and broker id
// (configured, stored or generated from /brokers/seqid) → metadata cache,
// replica manager (replica fetchers over the inter-broker listener, ISR
// writes to ZooKeeper), group coordinator, controller object, request
// handlers (after the authorizer, when configured, loaded every ACL and
// started its two change listeners) → SCRAM credentials loaded from /config/users → socket server bound (requests are held until the end) →
// /brokers/ids/<id> registered with the bound ports ("checked ephemeral"; a
// live registration of the same id elsewhere refuses the start) →
// meta.properties written → session listener for re-registration →
// controller module started (election) → log manager background tasks →
// ISR maintenance → /config/changes listener → request processing enabled.
//
// Shutdown (Shutdown): controlled shutdown through the controller
// (asked of the controller up to controlled.shutdown.max.retries times) → request
// handlers and socket server → config listener, group coordinator,
// replica manager, controller → log manager (clean shutdown marker) → ZooKeeper session
// (its ephemerals vanish at once). Kill skips the controlled shutdown, closes
// the ZooKeeper session first and leaves the logs without the clean
// shutdown marker, as a crash would.
//
// Goroutines owned here: the config change listener (one goroutine, woken
// by the /config/changes children watch and by new sessions; stopped and
// joined by Shutdown/Kill) and the log dir failure handler (one goroutine,
// the only receiver of the log manager's failure channel, started after
// the ISR maintenance, stopped and joined before the replica manager
// shuts down; when every log dir failed it starts an uncontrolled
// shutdown and closes Halted, on which kafka-server exits with status 1). Everything else is owned by the subpackages and
// stopped through their Shutdown/Close in the order above.
//
// Each broker has its own go-metrics registry (Metrics) with Kafka's metric
// names, never the process-wide default, so in-process clusters keep their
// metrics apart.
//
// Invariants:
//   - The broker epoch (czxid of /brokers/ids/<id>) is replaced on every
//     re-registration; the replica manager and the controller read it
//     through BrokerEpoch, never a copy.
//   - The broker's session handler re-registers before the controller's
//     re-election handler runs (it is installed first).
//   - SCRAM credentials are in the cache before any listener accepts a
//     connection, and every users/<user> notification re-reads that user's
//     node whole (a missing mechanism is removed).
//   - Topic overrides are read from ZooKeeper on first use and refreshed by
//     notifications; the topic's logs get the merged configuration
//     (UpdateConfig) on every broker that hosts a replica.
//
// Integration tests (external package broker_test, real ZooKeeper, real
// brokers over TCP, franz-go clients) live beside this file and use
// broker/testcluster.
package broker
