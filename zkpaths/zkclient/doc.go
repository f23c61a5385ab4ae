// Package zkclient is Klassik's typed ZooKeeper client: Kafka's
// KafkaZkClient (typed, conditional and fenced znode operations), the
// session/watch parts of ZooKeeperClient, and the ZooKeeper side of
// AdminZkClient. It runs on github.com/go-zookeeper/zk through the small Conn
// interface so that zktest's in-memory server can stand in for unit tests.
//
// Kafka class to Go file:
//
//	ZooKeeperClient (session re-init, handlers)   client.go, watch.go
//	KafkaZkClient generic helpers                 ops.go (CreateRecursive, Multi, fencedMulti)
//	  (createRecursive, retryRequestsUntilConnected,
//	   wrapRequestWithControllerEpochCheck)
//	KafkaZkClient broker/cluster id/seqid         brokers.go
//	KafkaZkClient controller election,            controller.go
//	  ProducerIdManager ZK allocation
//	KafkaZkClient + AdminZkClient topics          topics.go
//	KafkaZkClient partition state (create/update,  partitions.go
//	  ReplicationUtils.updateLeaderAndIsr)
//	AdminZkClient for users (fetchEntityConfig,   users.go (GetUserConfig, GetAllUserConfigs,
//	  fetchAllEntityConfigs, changeConfigs)         ChangeUserConfig)
//	ZkData.defaultAcls (zookeeper.set.acl),       acl.go (DefaultACL, the one place
//	  ZkSecurityMigrator's setACL                   every create takes its ACL from)
//	ZooKeeper auth: digest credentials            auth.go (stand-in for the JAAS
//	                                                Client SASL login)
//	ZKClientConfig TLS (KIP-515, Netty socket)    tls.go (crypto/tls dialer)
//	reassignment, preferred election,             admin.go (one helper per shape:
//	  ISR/log-dir notifications, entity configs,    getDecoded, createAdminRequest,
//	  legacy consumer offsets                       deleteFenced, setOrCreate,
//	                                                readNotifications)
//	KafkaZkClient ACL store (createAclPaths,      acls.go (versioned reads, conditional
//	  conditionalSetAclsForResource, ...)           set/create/delete, change nodes)
//
// Every package uses this one client through the small interface it needs,
// declared where it is consumed (controller.zkClient, api.AdminZK, ...);
// *Client satisfies each of them.
//
// Paths given to every method are relative to the chroot of the connect
// string ("host:port/chroot"); the chroot is created on Connect if missing.
//
// Goroutines (all stopped and waited for by Close):
//   - the session goroutine (sessionLoop): notices session expiry and new
//     sessions, runs OnSessionExpired handlers and then OnNewSession handlers
//     in registration order;
//   - one goroutine per registered watch (runWatch): waits for the one-shot
//     ZooKeeper watch, re-arms it by re-reading, then calls the callback;
//     after a new session it re-arms and calls the callback once;
//   - batch reads/writes of partition states use up to 10 short-lived
//     goroutines owned by the call.
//
// go-zookeeper itself runs its connection goroutines and, after a session
// expiry, reconnects with a new session on the same *zk.Conn; the Client
// detects that by the changed session id.
//
// Invariants:
//   - Every controller write goes through fencedMulti:
//     multi(check(/controller_epoch, epochZkVersion), op). A failed check is
//     reported as ErrControllerMoved (the caller resigns, never retries).
//   - Connection loss (zk.ErrConnectionClosed, zk.ErrNoServer) is retried
//     transparently for as long as the session the request was begun under
//     lives (Kafka's ZooKeeperClient); once that session has expired the
//     request fails with an error matching zk.ErrSessionExpired and is
//     never resent on the new session. Only Connect has a deadline
//     (zookeeper.connection.timeout.ms). After StopWaiting (a broker's
//     shutdown) a request meeting a lost connection fails with ErrClosed.
//   - A server that accepts a connection but does not answer the connect
//     request is given up after the handshake timeout (session timeout /
//     servers), not go-zookeeper's ten read timeouts (tls.go).
//   - At most WithMaxInFlightRequests (zookeeper.max.in.flight.requests)
//     requests are in flight at once across the Client's goroutines: each
//     attempt in retry holds one permit of the inFlight semaphore, released
//     before any backoff (Kafka's inFlightRequests). No request is issued
//     while holding a permit, so permits cannot deadlock.
//   - Watches are armed only through reads (exists/getChildren) and re-armed
//     before the callback runs, so no change after a callback is lost.
//   - Structural nodes are created with nil (null) data.
//   - Every node is created with DefaultACL(path, secure): world-all when
//     zookeeper.set.acl is false; otherwise the session's identity owns it
//     (x509 DN or digest id) with world read except on the sensitive paths,
//     and /consumers stays world-all. Secure ACLs without an identity are
//     refused at Connect (ErrSecureACLsUnauthenticated).
//   - Callbacks must be cheap: they run on Client goroutines and a slow one
//     delays only its own watch (or, for session handlers, later session
//     handling). A callback must never call Close: Close waits for the
//     goroutine the callback runs on.
//   - Connect uses one session both to create the chroot (absolute paths)
//     and for the broker's work (chroot-prefixed paths); Kafka opens a
//     throw-away session for the first step, with the same visible result.
package zkclient
