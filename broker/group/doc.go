// Package group is the group coordinator: Kafka's GroupCoordinator,
// GroupMetadata, MemberMetadata and GroupMetadataManager for the
// __consumer_offsets partitions this broker leads. It is driven by kmsg
// request structs and knows neither the network nor ZooKeeper; the api
// layer calls it and the broker implements OffsetStore over the
// __consumer_offsets partition logs.
//
// Kafka classes and their Go counterparts:
//
//	GroupCoordinator.handleJoinGroup                      join.go: Coordinator.JoinGroup (new, known and
//	                                                       static members, pending MEMBER_ID_REQUIRED joins)
//	GroupCoordinator.prepareRebalance, onCompleteJoin,    rebalance.go: maybePrepareRebalanceLocked,
//	  DelayedJoin, InitialDelayedJoin                       onRebalanceTimer, completeJoinLocked, the
//	                                                       pending-sync timer, removeMemberLocked
//	GroupCoordinator.handleSyncGroup                      syncgroup.go: Coordinator.SyncGroup, persistAssignment
//	GroupCoordinator.handleHeartbeat, DelayedHeartbeat    heartbeat.go: Coordinator.Heartbeat, member sessions,
//	                                                       onSessionExpired
//	GroupCoordinator.handleLeaveGroup                     leave.go: Coordinator.LeaveGroup
//	GroupCoordinator (offsets, admin)                     offsets.go: OffsetCommit, OffsetFetch, OffsetDelete,
//	                                                       ExpireOffsets; admin.go: DescribeGroups, ListGroups,
//	                                                       DeleteGroups
//	GroupMetadata, GroupState, MemberMetadata             group.go: Group, State, Member, CanTransition
//	GroupMetadataManager (unload, partitionFor,           coordinator.go: OnBecomeLeader, OnResign, lockGroup,
//	  storeGroup, storeOffsets, cleanupGroupMetadata)       the ordered writes (writeLocked), PartitionFor;
//	                                                       offsets.go: expiry
//	GroupMetadataManager.loadGroupsAndOffsets             load.go: load, partitionLoad (reads the partition),
//	                                                       publishLoaded, groupFromRecords
//	GroupMetadataManager.formatRecordKeyAndValue and the  records.go: Encode*/Decode* codecs, DescribeRecord
//	  generated OffsetCommitKey/Value, GroupMetadataKey/Value schemas
//	GroupCoordinator.handleTxnCommitOffsets,              txnoffsets.go: TxnOffsetCommit, HandleTxnCompletion,
//	  GroupMetadataManager.storeOffsets (producer id),     the pending transactional offsets of a group and
//	  handleTxnCompletion, GroupMetadata                   the log-position rule for which commit wins
//	  .pendingTransactionalOffsetCommits
//	GroupConfig / KafkaConfig group.* and offsets.*      config.go: Config, DefaultConfig, Validate
//	(the replica manager append / log read)               store.go: OffsetStore, MemStore (tests)
//	GroupMetadataManager metrics (NumGroups, NumOffsets)  metrics.go: RegisterMetrics
//
// Group states (GroupMetadata.scala's valid-previous-state table; every
// other transition is logged and returned as *IllegalTransitionError, the
// group keeping its state):
//
//	                 first member joins
//	     +-------+ ---------------------> +--------------------+
//	     | Empty |                         | PreparingRebalance | <----------------+
//	     +-------+ <--------------------- +--------------------+                   |
//	       |   ^   all members left or       |        ^                             |
//	       |   |   did not rejoin            | join   | member joins/leaves/fails,  |
//	       |   |                             | done   | leader rejoins              |
//	       |   |                             v        |                             |
//	       |   |                    +---------------------+  leader's SyncGroup    +--------+
//	       |   |                    | CompletingRebalance | ---------------------> | Stable |
//	       |   |                    +---------------------+                        +--------+
//	       v   |                                                                      |
//	     +------+   DeleteGroups, last offset expired, partition unloaded (from any)  |
//	     | Dead | <-------------------------------------------------------------------+
//	     +------+
//
//	to Empty:               from PreparingRebalance
//	to PreparingRebalance:  from Empty, Stable, CompletingRebalance
//	to CompletingRebalance: from PreparingRebalance
//	to Stable:              from CompletingRebalance
//	to Dead:                from any state (Dead included)
//
// Locking: one mutex per group (Group.mu, Kafka's group lock) guards all
// of a group's state, its members and its offsets; every request on the
// group and every timer callback of the group takes it. Coordinator.mu
// guards the group map and partition ownership; Coordinator.bgMu guards
// the background-writer shutdown flag. Order: Group.mu, then
// Coordinator.mu or bgMu; code holding Coordinator.mu never takes a group
// lock (it copies what it needs and releases mu first).
//
// Writes: neither lock is held across OffsetStore I/O. A group's appends
// take turns (Coordinator.writeLocked and writeAsyncLocked: a ticket
// handed out under Group.mu, served in order by writeTurnLocked on a
// sync.Cond on Group.mu), so its records reach the log in the order its
// state changed, and each writer applies its outcome to the cache before
// the next writer of the group runs (as Kafka, which appends under the
// group lock). Appends are bounded by offsets.commit.timeout.ms and by
// the coordinator's life, never by the request's context: a client that
// disconnects mid-commit cannot leave the cache and the log disagreeing.
// The leader's SyncGroup applies its write only if the generation did
// not move meanwhile (Kafka's append callback does the same check).
//
// Waiting (Kafka's join and heartbeat purgatories): a parked JoinGroup or
// SyncGroup waits on a one-slot channel owned by its Member; whoever
// completes the join or sync (holding the group lock) sends exactly one
// response into it and clears it, so a send never blocks and no request
// is answered twice. A second JoinGroup (or SyncGroup) of the same member
// supersedes a parked one, which is answered REBALANCE_IN_PROGRESS so it
// cannot hang (Kafka silently drops the older callback). Timers come from the injected Clock (AfterFunc):
// per member a session timer, per group a delayed-join timer (rebalance
// timeout, or group.initial.rebalance.delay.ms extended by each new
// joiner up to the rebalance timeout for a group that was Empty) and a
// pending-sync timer (members that do not SyncGroup within the rebalance
// timeout are removed); per pending (MEMBER_ID_REQUIRED) member a timer of
// its session timeout. Each timer carries a sequence number checked under
// the lock, so a firing that lost the race with Stop does nothing.
//
// Goroutines:
//   - one loader per OnBecomeLeader call (tracked by Coordinator.wg,
//     stopped through the coordinator context), which discards its result
//     if the partition was resigned or re-acquired meanwhile;
//   - one short-lived writer per background append (a group becoming
//     Empty, a static member's new id, expiry tombstones), tracked by wg;
//   - timer callbacks, run by the Clock, which only take the group lock;
//   - callers' goroutines, parked in JoinGroup/SyncGroup until answered or
//     until their context ends.
//
// Close stops the expiry timer, cancels loads and writes, unloads every
// group (parked requests answer NOT_COORDINATOR) and waits for wg.
//
// Invariants:
//   - A group's generation only grows; a member's assignment belongs to
//     the current generation (cleared when a rebalance completes).
//   - Completing a join drops dynamic members that did not rejoin;
//     static members stay until their session expires, so a restarting
//     static member keeps its place. The leader is always a member that
//     rejoined.
//   - The in-memory offsets change only after their append succeeded
//     (expiry, OffsetDelete and DeleteGroups drop them first, as Kafka).
//   - Transactional offsets (TxnOffsetCommit) are never in the committed
//     offsets until their producer's COMMIT marker is in the group's
//     partition (HandleTxnCompletion, or the marker read while loading);
//     ABORT drops them. Of two commits of a partition the one later in
//     the log wins, whichever completes last. A group with pending
//     transactional or in-flight offsets is not removed by expiry.
//     Coordinator.producerGroups lists, per producer id, the groups with
//     its pending offsets (under Coordinator.mu, taken after Group.mu).
//   - Requests for groups of partitions not loaded here get
//     NOT_COORDINATOR, or COORDINATOR_LOAD_IN_PROGRESS while loading
//     (Heartbeat answers NONE then, so members keep their session).
//   - Records are written in the versions Kafka 3.4 writes: offset key 1,
//     offset value 3 (1 with an explicit retention), group key 2, group
//     value 3; any version 0-3 is read, later ones through kmsg. Decoders
//     never panic on malformed input (fuzzed).
//
// Which test shows each consumer-group behaviour:
//   - state machine, JoinGroup/SyncGroup/Heartbeat/LeaveGroup errors,
//     session and rebalance timeouts, static membership, group.max.size,
//     session-timeout bounds, OffsetCommit/OffsetFetch (batched groups,
//     require_stable), offsets.retention.minutes expiry on a fake clock,
//     DeleteGroups, ListGroups, OffsetDelete: coordinator_test.go against
//     the in-memory partition log MemStore (the harness is in
//     helpers_test.go);
//   - loading and resigning (COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR)
//     and records written by Kafka itself: load_test.go;
//   - TxnOffsetCommit, KIP-447 checks, pending offsets and require_stable,
//     HandleTxnCompletion, loading transactional and control batches,
//     expiry with pending offsets, fuzzed requests and loads:
//     txnoffsets_test.go; the same over the real __consumer_offsets log
//     (replica manager, storage producer state, WriteTxnMarkers):
//     txn_storage_test.go; franz-go's GroupTransactSession on a
//     ZooKeeper-backed cluster: txn_cluster_test.go;
//   - record formats against kmsg and the spec's example bytes, fuzzed
//     decoders: records_test.go;
//   - real clients (franz-go, sarama, kafka-go) over the wire: wire_test.go
//     and clients_test.go;
//   - on a ZooKeeper-backed cluster: broker/e2e/groups_driver_test.go (the
//     shared scenarios, coordinator kill -9) run by one
//     broker/e2e/groups_<client>_test.go per client library, and
//     broker/e2e/groups_coordinator_test.go (offsets topic creation
//     and compaction, kafka-dump-log.sh --offsets-decoder on a broker's
//     real segment, FindCoordinator v0-v4, the admin group APIs).
package group
