// Package authorizer is Kafka 2.8's AclAuthorizer
// (authorizer.class.name=kafka.security.authorizer.AclAuthorizer, or the
// older kafka.security.auth.SimpleAclAuthorizer): ACLs stored in
// ZooKeeper in Kafka's layout and JSON (zkpaths/acl.go), cached in memory
// on every broker, refreshed from change notifications, and the decisions
// the request handlers ask for (api.Authorizer) and the ACL APIs use.
//
// Kafka classes and their Go files (apache/kafka 2.8):
//
//	AclAuthorizer (configure, loadCache,          authorizer.go (Authorizer, Start, Load,
//	  createAcls, deleteAcls, acls,                 CreateACLs, DeleteACLs, ACLs,
//	  updateResourceAcls, logAuditMessage)          updateResource, Authorize)
//	AclAuthorizer.matchingAcls, authorizeAction,  cache.go (aclCache.matching, authorize,
//	  authorizeByResourceType                       authorizeAny)
//	ZkNodeChangeNotificationListener              listener.go (changeListener)
//	ResourcePattern, AccessControlEntry,          ../acl.go (package security)
//	  AclBinding(Filter), SecurityUtils names
//
// Decisions (AclAuthorizer semantics): a super user (super.users) may do
// anything. The ACLs of a literal resource are those of its name, of the
// literal wildcard "*" and of every prefixed pattern its name starts with;
// none at all means allow.everyone.if.no.acl.found decides (default
// false). Otherwise a Deny entry for the principal or User:*, the host or
// *, and the operation or All refuses; failing that an Allow entry is
// needed, where Read, Write, Delete and Alter imply Describe and
// AlterConfigs implies DescribeConfigs. Questions about "any resource of a
// type" (KIP-679, e.g. IdempotentWrite for InitProducerId) follow
// authorizeByResourceType.
//
// Goroutines: one per change folder (/kafka-acl-changes and
// /kafka-acl-extended-changes), started by Start and stopped by Close;
// ZooKeeper watch callbacks only wake them.
//
// Locks: updateMu serializes ACL writes and notification processing and is
// held across ZooKeeper I/O; mu (an RWMutex) guards the cache and is only
// ever taken inside updateMu or alone, never around I/O. Authorize takes
// mu's read lock only.
//
// Invariants: the cache holds exactly the patterns with at least one entry;
// an entry list is never modified once stored (readers share it); a
// change of ACLs made here is written to ZooKeeper (conditionally on the
// node's version) before the cache, and announced by a change node after.
package authorizer
