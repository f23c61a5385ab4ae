// Package txn is the transaction coordinator: Kafka 2.8's
// kafka.coordinator.transaction (TransactionCoordinator,
// TransactionStateManager, TransactionMetadata, TransactionLog,
// TransactionMarkerChannelManager and its completion handler) for the
// __transaction_state partitions this broker leads. Like broker/group it
// is driven by kmsg request structs and knows neither the network nor
// ZooKeeper: the api layer calls it, the broker implements Store over
// the __transaction_state partition logs and Markers over the metadata
// cache and the inter-broker client.
//
// Kafka classes and their Go counterparts:
//
//	TransactionCoordinator.handleInitProducerId     initproducerid.go: InitProducerID, prepareInit
//	  handleAddPartitionsToTransaction              addpartitions.go: AddPartitionsToTxn, AddOffsetsToTxn
//	  handleEndTransaction, endTransaction          endtxn.go: EndTxn, endTransaction
//	  abortTimedOutTransactions                     cleanup.go: abortTimedOutTransactions
//	  onElection, onResignation                     load.go: OnBecomeLeader, OnResign
//	  handleDescribeTransactions, handleList...     describe.go (Kafka 3.0, KIP-664)
//	TransactionStateManager (cache, ownership,      coordinator.go: Coordinator, txnPartition, lookup,
//	  appendTransactionToLog, partitionFor)           appendTransition, appendGuarded, PartitionFor
//	  loadTransactionsForTxnTopicPartition          load.go: load, readPartition
//	  removeExpiredTransactionalIds                 cleanup.go: removeExpiredTransactionalIDs
//	TransactionMetadata, TxnTransitMetadata,        metadata.go: txnMetadata, transit, State,
//	  TransactionState                                validPrevious, prepare*Locked, completeLocked
//	TransactionLog, TransactionLogKey/Value         records.go: EncodeKey/Value, DecodeKey/Value,
//	                                                  FormatRecordKeyAndValue; hashset.go (print order)
//	TransactionMarkerChannelManager,                markers.go: startMarkersLocked, sendMarkers,
//	  TransactionMarkerRequestCompletionHandler       markerRound, writeComplete
//	TransactionConfig                               config.go: Config, DefaultConfig, Validate
//	coordinator and marker channel metrics          metrics.go: RegisterMetrics
//	ProducerIdManager (ZooKeeper blocks)            produceridmanager.go
//
// Transaction states (TransactionMetadata's valid-previous-state table;
// every other transition is refused with an error and the client gets
// UNKNOWN_SERVER_ERROR, as Kafka's IllegalStateException gives):
//
//	  InitProducerId (new id, epoch bump, new producer id)
//	     |
//	     v        AddPartitionsToTxn, AddOffsetsToTxn
//	 +-------+ ------------------------------------> +---------+ <-- more partitions
//	 | Empty |                                       | Ongoing |
//	 +-------+                          +----------- +---------+ -------------+
//	   ^   |             EndTxn(commit) |                 | EndTxn(abort)     | timeout, or
//	   |   |                            v                 v                   | InitProducerId
//	   |   |                   +---------------+   +--------------+  +-------------------+
//	   |   |                   | PrepareCommit |   | PrepareAbort | <-| PrepareEpochFence |
//	   |   |                   +---------------+   +--------------+  +-------------------+
//	   |   |             all markers  |                 | all markers  (epoch bumped, never
//	   |   |                          v                 v               written as such)
//	   |   |                 +----------------+  +---------------+
//	   +---|---------------- | CompleteCommit |  | CompleteAbort | --> Ongoing, Empty
//	       |                 +----------------+  +---------------+
//	       v  transactional.id.expiration.ms: from Empty, CompleteCommit, CompleteAbort
//	   +------+  (a tombstone; the id leaves the cache)
//	   | Dead |
//	   +------+
//
//	to Empty:             from Empty, CompleteCommit, CompleteAbort
//	to Ongoing:           from Ongoing, Empty, CompleteCommit, CompleteAbort
//	to PrepareCommit:     from Ongoing
//	to PrepareAbort:      from Ongoing, PrepareEpochFence
//	to CompleteCommit:    from PrepareCommit
//	to CompleteAbort:     from PrepareAbort
//	to Dead:              from Empty, CompleteCommit, CompleteAbort
//	to PrepareEpochFence: from Ongoing
//
// Every state change is written to __transaction_state (one record, one
// batch, acks=all through Store.Append) before it takes effect: it is
// prepared under the id's lock (setting the pending state, which makes
// concurrent requests for the id answer CONCURRENT_TRANSACTIONS), written
// with no lock held, and applied under the lock only if this broker still
// owns the partition at the same coordinator epoch (else NOT_COORDINATOR).
//
// Locks: Coordinator.mu guards partition ownership (Coordinator.parts,
// each txnPartition's loading flag and transaction map), the in-flight
// append counts and the closed flag. txnMetadata.mu (Kafka's per-id
// lock) guards one id's state. Order: Coordinator.mu, then
// txnMetadata.mu; code holding a txnMetadata.mu never takes
// Coordinator.mu. Neither is held across Store, Markers or
// ProducerIDManager calls.
//
// Goroutines (each tracked by Coordinator.wg and stopped by Close):
//   - one loader per OnBecomeLeader call, stopped through its ownership's
//     context; it first waits until appends of an earlier ownership of
//     the partition on this broker have finished, so it reads them;
//   - one marker sender per transaction being completed (started by
//     EndTxn, by a timeout abort, or by a load that finds a transaction in
//     PrepareCommit/PrepareAbort), stopped through its ownership's
//     context; it starts one short-lived goroutine per destination broker
//     per round and waits for them;
//   - the two periodic tasks, run by the Clock (AfterFunc) every
//     transaction.abort.timed.out.transaction.cleanup.interval.ms and
//     transaction.remove.expired.transaction.cleanup.interval.ms; a run
//     counts in wg while it works and a timer firing after Close does
//     nothing;
//   - callers' goroutines, which block in a handler only for the log
//     append of their own change (bounded by the transaction timeout).
//
// Idle reports when none of these is working (all done, or parked on a
// clock timer: a marker retry backoff, a load retry); tests with a fake
// clock wait for it before advancing time.
//
// Close stops the periodic tasks, ends every ownership (cancelling loads
// and marker senders; nothing is written) and waits for wg. What was in
// flight is finished by the partition's next coordinator from the log.
//
// Invariants:
//   - A transactional id is served only by the broker that leads and has
//     loaded partition abs(hash(id)) % transaction.state.log.num.partitions:
//     NOT_COORDINATOR elsewhere, COORDINATOR_LOAD_IN_PROGRESS while loading.
//   - The cache changes only after its record is in the log; a stale
//     coordinator's write (lost leadership, newer coordinator epoch) is
//     never applied.
//   - A transaction completes (CompleteCommit/CompleteAbort) only after
//     every partition's leader acknowledged its marker, or the partition
//     no longer exists.
//   - Records are Kafka's key and value version 0; decoders never panic
//     on malformed input (fuzzed).
//
// Which test shows each behaviour: the happy path against the public API:
// coordinator_test.go; many producers while partitions move, under
// -race: concurrency_test.go; the state machine, errors, fencing,
// KIP-360, timeouts, expiry, marker retries and coordinator moves:
// transcript_test.go with testdata/*.txt; the record formats and their
// dump-log text: records_test.go (golden bytes cross-checked with kmsg's
// TxnMetadataKey/TxnMetadataValue) and the fuzz target there; arbitrary
// loaded states driven through every request: load_fuzz_test.go.
package txn
