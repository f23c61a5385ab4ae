// Package replica is the broker's replica manager: it hosts the partition
// replicas of this broker, applies the controller's LeaderAndIsr,
// StopReplica and UpdateMetadata requests, serves the data-path APIs
// Produce, Fetch, ListOffsets, OffsetForLeaderEpoch and DeleteRecords and
// the partition side of transactions (WriteTxnMarkers, DescribeProducers), and
// replicates: followers fetch from their leaders, leaders track the ISR and
// the high watermark, and acks=all produce waits for the ISR.
//
// # Kafka classes and where they live
//
//	kafka.server.ReplicaManager            manager.go (state, config), control.go
//	                                       (becomeLeaderOrFollower, stopReplicas,
//	                                       maybeUpdateMetadataCache), produce.go
//	                                       (appendRecords), fetch.go (fetchMessages,
//	                                       readFromLocalLog; the fetch-session
//	                                       state machine is openFetchSession),
//	                                       listoffsets.go, offsetforleaderepoch.go,
//	                                       deleterecords.go, isrmanager.go
//	                                       (maybeShrinkIsr, maybePropagateIsrChanges)
//	kafka.cluster.Partition                partition.go (role, ISR, maximal ISR, HW,
//	                                       makeLeaderLocked, makeFollowerLocked),
//	                                       produce.go (appendRecordsToLeader),
//	                                       fetch.go (updateFollowerFetchStateLocked),
//	                                       isr.go (HW candidate, ISR decisions),
//	                                       isrmanager.go (maybeExpandIsr and
//	                                       maybeShrinkIsr decide, the Manager
//	                                       queues with submitIsrChange),
//	                                       follower.go (follower log: append,
//	                                       truncation by epoch)
//	kafka.cluster.Replica                  isr.go remoteReplica (follower LEO,
//	                                       lastCaughtUpTimeMs rule)
//	kafka.utils.ReplicationUtils,          isr.go IsrUpdater (the *zkclient.Client
//	ReplicaManager ISR notifications       conditional write, isr_change_notification)
//	kafka.server.AlterIsrManager           isrwriter.go (batched, asynchronous ISR
//	                                       writes; ZooKeeper-mode conditional writes)
//	kafka.server.DelayedProduce            delayedproduce.go (+ WaitForReplication),
//	                                       coordinatorlog.go (acks=all coordinator
//	                                       writes, TopicLog)
//	kafka.server.DelayedFetch              delayedfetch.go + fetchWithWait in fetch.go
//	                                       (parked in broker/purgatory, key per partition)
//	kafka.server.FetchSessionCache         fetchsession.go
//	kafka.server.ReplicaFetcherManager     fetcher.go FetcherManager
//	kafka.server.ReplicaFetcherThread      fetcher.go fetcherThread (truncate, fetch,
//	                                       out-of-range handling)
//	log / LogManager access                store.go: the Log interface that
//	                                       *storage.Log satisfies, LogStore over
//	                                       *storage.LogManager (NewLogStore); the
//	                                       metadata cache is *metadata.Cache
//	appendRecords(internalTopicsAllowed),  produce.go AppendToLocalLog, readlog.go
//	onLeadershipChange (KafkaApis)         ReadLocalLog, Config.OnLeadershipChange:
//	                                       the hooks for the group/txn coordinators
//	KafkaApis.handleWriteTxnMarkersRequest txnmarkers.go WriteTxnMarkers (COMMIT/ABORT
//	                                       control batches, coordinator origin,
//	                                       acks=-1), OffsetsTxnCompletions
//	ReplicaManager.activeProducerState,    txnmarkers.go DescribeProducers (the
//	Partition.activeProducerState          log's producer state, any replica)
//	ReplicaManager metrics                 metrics.go (IsrShrinksPerSec,
//	                                       IsrExpandsPerSec, UnderReplicatedPartitions,
//	                                       ReassigningPartitions, FailedIsrUpdatesPerSec,
//	                                       Delayed{Fetch,Produce}Metrics)
//	ReplicaManager.alterReplicaLogDirs,    alterlogdirs.go (AlterReplicaLogDirs,
//	describeLogDirs, ReplicaAlterLogDirs-  DescribeLogDirs, one mover goroutine per
//	Manager/Thread, Partition.maybe-       moving partition, the swap under the
//	ReplaceCurrentWithFutureReplica        partition's write lock)
//	BrokerTopicStats                       topicmetrics.go
//	ReplicaQuota, shouldLeaderThrottle,    replicationquota.go (the quotas themselves
//	shouldFollowerThrottle                 are broker/replicaquota.Manager; the
//	                                       leader checks in readPartitionOnce and
//	                                       records in FetchAuthorized, the follower
//	                                       in maybeFetch and handleFetched)
//	Partition's gauges (kafka.cluster)     partitionmetrics.go (also the
//	                                       reassignment state of LeaderAndIsr)
//	ReplicaManager.handleLogDirFailure,    offline.go MarkPartitionsOffline, IsOffline,
//	  HostedPartition.Offline              OfflinePartitions (KAFKA_STORAGE_ERROR for
//	                                       replicas on a failed log dir; is_new=false
//	                                       LeaderAndIsr while a dir is offline)
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
// # Replication
//
//   - Leader: each follower fetch (replica id >= 0, first read only) records
//     the follower's fetch offset as its log end and updates its
//     lastCaughtUp time; the HW becomes the smallest log end among the
//     leader, the maximal ISR and caught-up followers outside it, and
//     never decreases. A follower whose log end reached the HW and the
//     leader's epoch start offset joins the ISR; every
//     replica.lag.time.max.ms / 2 the ISR loses the followers that have not
//     caught up for replica.lag.time.max.ms. The leader writes the
//     new ISR itself with a conditional write of the partition state znode
//     (IsrUpdater, expected version = partition epoch), asynchronously: the
//     change stays pending while one writer goroutine (isrwriter.go) sends
//     everything queued in batched requests, so neither the fetch nor the
//     shrink check waits for ZooKeeper; a version conflict
//     leaves the change pending — no further ISR changes — until the next
//     LeaderAndIsr. Successful changes are batched into
//     /isr_change_notification znodes (2.5 s check, 5 s quiet period, 60 s
//     maximum delay) for the controller.
//   - acks=all: min.insync.replicas is checked against the committed ISR
//     before appending (NOT_ENOUGH_REPLICAS, nothing written); after the
//     append the request parks in the produce purgatory until the HW passes
//     its last offset (NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND when the
//     maximal ISR is then below min.insync.replicas), leadership is lost
//     (NOT_LEADER_OR_FOLLOWER) or the request's timeout runs out
//     (REQUEST_TIMED_OUT; the records stay in the log).
//   - Follower: LeaderAndIsr hands the partition to the FetcherManager
//     (num.replica.fetchers goroutines per leader). A partition starts in
//     the Truncating state: OffsetForLeaderEpoch for its latest local
//     epoch, truncation to the smaller of the leader's end
//     of that epoch and the follower's log end (never to the follower's own
//     HW alone),
//     then Fetching: sessionless Fetch v12 with replica id, current leader
//     epoch and last fetched epoch; a diverging epoch in the response
//     truncates again; records are appended with the leader's offsets and
//     epochs; the HW and log start are copied from the response (clamped).
//     With inter.broker.protocol.version below 0.11.0-IV2
//     (FetcherConfig.TruncateToHighWatermark) the Truncating state is
//     Kafka's before KIP-101: the follower truncates to its own HW without
//     asking, and its fetches carry no last fetched epoch (also below
//     2.7-IV1, NoLastFetchedEpoch); hwtruncation_test.go shows the
//     acknowledged write it loses and the divergence it leaves.
//     OFFSET_OUT_OF_RANGE truncates to the leader's log end when the leader's
//     log is shorter, or restarts the log at the leader's log start when
//     that is beyond the follower's end (ListOffsets latest/earliest).
//     Followers refuse produce and consumer fetches (NOT_LEADER_OR_FOLLOWER).
//   - Replication throttles (Kafka's ReplicaQuota): a leader answers a
//     follower outside the ISR with no records for a throttled partition
//     while Config.LeaderQuota is exceeded (the HW and log start still; a
//     parked fetch does not count them), and records the bytes of every
//     throttled partition it sends to any follower; a follower leaves a
//     throttled partition out of its fetch while FetcherConfig.Quota is
//     exceeded unless it caught up (lag 0 after its last fetch with
//     records), sleeping replica.fetch.backoff.ms when nothing is left to
//     fetch, and records the bytes it appends. Nothing is skipped: the next
//     fetch asks for the same offset.
//
// # Remaining differences from Kafka
//
//   - Followers always send full sessionless fetches (fetch sessions are an optimisation a
//     follower may skip);
//     truncate-on-fetch without the Truncating step (IBP >= 2.7) and
//     AlterPartition are not implemented (the classic ZooKeeper mode is).
//   - DeleteRecords answers as soon as the leader's log start moved; the
//     followers follow it on their next fetch (Kafka waits for them).
//   - READ_COMMITTED fetches read up to storage's last stable offset and
//     report the aborted transactions overlapping [fetch offset, LSO), a
//     superset of Kafka's list (which stops at the end of the returned
//     data); consumers match them against the batches they received.
//   - ListOffsets v0 answers [end, log start] for latest and [log start] for
//     earliest instead of listing segment base offsets.
//   - Preferred read replicas (KIP-392) are absent.
//
// # Goroutines
//
//   - ISR maintenance (isrmanager.go isrLoop): one per manager, started by
//     Startup, stopped and waited for by Shutdown (closes done).
//   - ISR writer (isrwriter.go isrWriterLoop): one per manager, started by
//     the first ISR change queued, stopped and waited for by Shutdown (a
//     batch in flight is finished first).
//   - Replica fetchers (fetcher.go fetcherThread.run): one per (leader
//     endpoint, fetcher id), owned by the FetcherManager; started when the
//     pair gets its first partition, stopped (context cancel + wait) when
//     its last partition is removed (role change, StopReplica) and by
//     Shutdown. A stop interrupts a request in flight.
//   - Log directory movers (alterlogdirs.go runLogDirMover): one per
//     partition moving between log.dirs, owned by logDirMovers; it ends
//     when the move is done or abandoned, and stopLogDirMover (redirect,
//     StopReplica) and Shutdown stop and wait for it.
//   - Request goroutines (broker/network): a long-polling fetch waits on
//     its connection's goroutine, an acks=all produce on its connection's
//     writer (ProduceInto returns its delayedProduce as the response's
//     network.Waiter), for its purgatory operation's OnComplete or the
//     request context. Appends, HW
//     moves, ISR changes, role changes and StopReplica call CheckAndComplete
//     for the partition; the purgatory's timers and Shutdown complete the
//     rest, exactly once.
//
// # Invariants
//
//   - Each batch appended by a leader carries the leader epoch that was
//     current under the partition's read lock; a role change takes the write
//     lock, so no append straddles an epoch change.
//   - On a leader, logStart <= HW <= LEO and the HW never decreases
//     (the log owns it and a leader only raises it, except by truncation;
//     see LOCKS.md "The high watermark"); the HW never passes the log end of a
//     known member of the maximal ISR.
//   - An ISR member's log end is at least the HW and the leader's epoch
//     start offset when it joins; the ISR always contains the leader.
//   - At most one ISR change per partition is in flight; a LeaderAndIsr
//     discards it and its late outcome.
//   - A follower log is only written (append, truncation) while the
//     partition follows at the leader epoch the fetcher works with, checked
//     under the partition's read lock, so a response that raced a role
//     change is dropped.
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
