// Package metadata is the broker's metadata cache (Kafka's ZooKeeper-mode
// MetadataCache, ZkMetadataCache from 3.x): live brokers with their
// endpoints, partition leadership, controller id and topic ids, fed only by
// the controller's UpdateMetadata requests, and the Metadata API answer
// built from it.
//
// Kafka classes → files:
//
//	kafka.server.MetadataCache / ZkMetadataCache        cache.go (Cache, Update)
//	MetadataCache.MetadataSnapshot                      cache.go (snapshot)
//	MetadataCache.getTopicMetadata / getPartitionMetadata response.go (MetadataResponse, Pinned)
//	org.apache.kafka.common.internals.Topic (validate)  response.go (ValidTopicName, IsInternal)
//	AuthHelper.authorizedOperations (no authorizer)     response.go (*AuthorizedOperations)
//
// Concurrency: the whole state is an immutable snapshot behind an atomic
// pointer. Update builds the next snapshot under Cache.mu (copying only
// the topics it touches) and swaps it in, so readers never block and see
// the effect of one UpdateMetadata completely or not at all, as Kafka's
// copy-on-write MetadataSnapshot does. The "being created" marks live under
// Cache.mu. No goroutines. Each snapshot has a generation, one more than
// the one it replaced; Pin hands out a snapshot with its generation so the
// api layer can answer from one state and reuse an answer's encoding
// while the generation stands (Pinned.Determines says when an answer
// depends on nothing else).
//
// Invariants:
//
//   - The live broker list is exactly the last UpdateMetadata's; partition
//     states are upserted; a partition sent with leader -2
//     (LeaderDuringDelete) is removed, and a topic without partitions is
//     removed with its id.
//   - Values returned to callers are copies: no caller can mutate a
//     snapshot.
//   - MetadataResponse never creates topics; the api layer does
//     auto-creation (MissingTopics → create → MarkCreating) and then asks
//     for the response, which reports marked topics as
//     LEADER_NOT_AVAILABLE until they appear in an UpdateMetadata.
//   - Epoch checks (STALE_CONTROLLER_EPOCH, STALE_BROKER_EPOCH) happen
//     before Update, in the caller, as in Kafka's ReplicaManager.
package metadata
