// Command zookeeper-security-migration sets or removes the ACLs of Kafka's
// znodes, with the options and behaviour of Kafka 2.8's ZkSecurityMigrator
// (bin/zookeeper-security-migration.sh):
//
//	--zookeeper.acl secure|unsecure   secure: every node gets the ACL a
//	                                  broker with zookeeper.set.acl=true
//	                                  would create it with (the session's
//	                                  identity owns it, world read except on
//	                                  the sensitive paths); unsecure: world
//	                                  all
//	--zookeeper.connect               host:port[,host:port][/chroot]
//	                                  (default localhost:2181)
//	--zookeeper.session.timeout       ms, default 30000
//	--zookeeper.connection.timeout    ms, default 30000
//	--zk-tls-config-file FILE         zookeeper.ssl.* / zookeeper.clientCnxnSocket
//	                                  properties; other keys are ignored
//	--enable.path.check               stop (status 1) if a secure root path is missing
//
// The tool needs an authenticated session, as Kafka's does: a TLS client
// certificate (the file names zookeeper.ssl.client.enable,
// zookeeper.clientCnxnSocket and zookeeper.ssl.keystore.location) or the
// JAAS Client section of -Djava.security.auth.login.config=FILE in
// KAFKA_OPTS, whose user and password Klassik sends with ZooKeeper's
// digest scheme (not SASL; see zkpaths/zkclient/auth.go).
//
// Walk: the chroot itself, then every path of zkpaths.SecureRootPaths
// (created if missing, except /controller, which is only touched when it
// exists, and the Kafka 3.x roots /migration and /feature, likewise),
// recursively, each node's ACL replaced by zkclient.DefaultACL. A node
// deleted meanwhile is skipped with a warning; any other ZooKeeper error
// stops the tool with status 1.
package main
