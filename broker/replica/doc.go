// Package replica is the broker's replica manager: it hosts the partition
// replicas of this broker, applies the controller's LeaderAndIsr,
// StopReplica and UpdateMetadata requests, and serves the data-path APIs
// Produce, Fetch, ListOffsets, OffsetForLeaderEpoch and DeleteRecords.
//
// # Kafka classes and where they live
//
//	kafka.server.ReplicaManager            manager.go (state, config), control.go
//	                                       (becomeLeaderOrFollower, stopReplicas,
//	                                       maybeUpdateMetadataCache), produce.go
//	                                       (appendRecords), fetch.go (fetchMessages,
//	                                       readFromLocalLog), listoffsets.go,
//	                                       offsetforleaderepoch.go, deleterecords.go
//	kafka.cluster.Partition                partition.go (role, ISR, HW), control.go
//	                                       (makeLeader / makeFollower)
//	kafka.server.DelayedFetch              delayedfetch.go + fetchWithWait in fetch.go
//	                                       (parked in broker/purgatory, key per partition)
//	kafka.server.FetchSessionCache         fetchsession.go
//	kafka.server.AbstractFetcherManager    FollowerFetcher interface (store.go): the
//	                                       extension point for the replica fetcher
//	log / LogManager access                store.go (interfaces), storage_adapter.go,
//	                                       metadata_adapter.go (NewManager)
//	appendRecords(internalTopicsAllowed),  produce.go AppendToLocalLog, readlog.go
//	onLeadershipChange (KafkaApis)         ReadLocalLog, Config.OnLeadershipChange:
//	                                       the hooks for the group/txn coordinators
//
// # Roles and transitions
//
//	          LeaderAndIsr(leader=self, epoch > local)
//	  none ─────────────────────────────────────────▶ leader
//	   │                                               │  ▲
//	   │ LeaderAndIsr(leader=other, epoch > local)     │  │ epoch > local
//	   ▼                                               ▼  │
//	follower ◀──────────────────────────────────────────────
//	   any ── StopReplica(delete) / UpdateMetadata(leader -2) ──▶ removed (log deleted)
//
// A request with a leader epoch equal to or older than the local one is
// ignored with STALE_CONTROLLER_EPOCH for that partition; a request from an
// older controller epoch is refused as a whole (STALE_CONTROLLER_EPOCH), as
// is one addressed to an earlier incarnation of this broker
// (STALE_BROKER_EPOCH, broker epoch -1 skips that check). Every transition
// is logged on the state-change logger with from, to and reason.
//
// # What is simplified until replication lands
//
//   - acks=all is acknowledged once the leader has appended, exactly like
//     acks=1 (produce.go). min.insync.replicas is still checked against the
//     ISR size before appending (NOT_ENOUGH_REPLICAS), so that part already
//     has Kafka's semantics.
//   - The leader's high watermark moves to its log end after every append
//     and on becoming leader, whatever the ISR holds (partition.go,
//     maybeIncrementHighWatermark). With ISR = {leader} this is Kafka's rule;
//     with more ISR members the replication issue replaces it with the
//     minimum over caught-up followers.
//   - Followers record their leader and refuse produce and consumer fetch;
//     if Config.Fetcher is set they are handed to it (AddPartitions with the
//     log end as start offset) and removed from it when they stop following.
//     A follower fetch (replica id >= 0) is served up to the log end with the
//     divergence check of last_fetched_epoch, but does not yet update
//     follower state, ISR or HW.
//   - DeleteRecords answers as soon as the leader's log start moved.
//   - READ_COMMITTED fetches read up to storage's last stable offset and
//     report the aborted transactions overlapping [fetch offset, LSO), a
//     superset of Kafka's list (which stops at the end of the returned
//     data); consumers match them against the batches they received.
//   - ListOffsets v0 answers [end, log start] for latest and [log start] for
//     earliest instead of listing segment base offsets.
//
// # Goroutines
//
// The manager starts none. Each request runs on its connection's goroutine
// (broker/network); a long-polling fetch is registered in the fetch
// purgatory (Config.FetchPurgatory, or one the manager owns) under a key per
// partition and its goroutine waits for the operation's OnComplete or the
// request context. Appends, HW moves, role changes and StopReplica call
// CheckAndComplete for the partition; the purgatory's timer (max_wait_ms)
// and Shutdown complete the rest, exactly once. The goroutine then re-reads
// its partitions and answers.
//
// # Invariants
//
//   - Each batch appended by a leader carries the leader epoch that was
//     current under the partition's read lock; a role change takes the write
//     lock, so no append straddles an epoch change.
//   - On a leader, logStart <= HW <= LEO and the HW never decreases
//     (hwMu serialises advances).
//   - The first LeaderAndIsr for a new epoch assigns (epoch, LEO) in the
//     leader epoch cache even if nothing is written in that epoch.
//   - A fetch response never contains data at or beyond the HW
//     (READ_UNCOMMITTED) or the LSO (READ_COMMITTED) for consumers, and never
//     null records.
//   - Fetch sessions: an incremental request with a wrong epoch or unknown id
//     changes nothing; the session's epoch advances only when a request is
//     accepted.
//
// Lock order: see LOCKS.md.
package replica
