// Package storage is Klassik's storage engine: Kafka's kafka.log package in
// Go. A partition replica is a directory "<topic>-<partition>" under one of
// log.dirs, cut into segments named by their 20-digit base offset, each a
// .log of magic-v2 record batches with a sparse .index and a .timeindex.
// The byte layouts and algorithms are Kafka 3.4's (ZooKeeper mode), pinned
// by the golden tests; each rule is stated where it is implemented.
//
// # Kafka classes and Go files
//
//	kafka.log.UnifiedLog + LocalLog          log.go          Log: fields, offsets, producer-state reload, Close
//	  Log.append                             append.go       validate, appendLocked, offset assignment
//	  Log.roll / maybeRoll                   roll.go         rollLocked, the roll jitter, reactivateLocked
//	  Log.flush                              flush.go        Flush, the flusher goroutine, flushRolled
//	  Log.read, fetchOffsetByTimestamp       read.go         Read, FetchOffsetByTimestamp (+ timestamp.go)
//	  Log.truncateTo, truncateFullyAndStartAt truncate.go    TruncateTo, TruncateFullyAndStartAt
//	  Log.deleteOldSegments, DeleteRecords   retention.go    DeleteOldSegments, DeleteRecordsBefore, .deleted files
//	  Log.fetchOffsetsBefore                 legacyoffsets.go FetchOffsetsBefore (ListOffsets v0)
//	kafka.log.LogLoader                      loader.go       loadLog: one logLoader method per load step, OpenLog
//	kafka.log.LogSegment (+ recover)         segment.go, recovery.go  Segment, indexBatch, recoverSegment
//	kafka.log.AbstractIndex + LazyIndex      index.go        mmapIndex (preallocate, trim, resize, search, truncate;
//	                                                         mapped only when a lookup needs more than the last entry)
//	                                         indexfiles.go   the bounded cache of index writers' descriptors
//	(no Kafka class)                         descriptors.go  the segments' descriptor budget (RLIMIT_NOFILE less a
//	                                                         reserve), IsResourceExhausted
//	kafka.log.OffsetIndex                    offsetindex.go  OffsetIndex
//	kafka.log.TimeIndex                      timeindex.go    TimeIndex
//	kafka.log.TransactionIndex               txnindex.go     .txnindex, CollectAbortedTransactions
//	kafka.log.LogManager                     manager.go      LogManager, loadDir, ParseTopicPartitionName
//	LogManager futureLogs, preferredLogDirs, futurelog.go    future logs of AlterReplicaLogDirs moves
//	replaceCurrentWithFutureLog                              (<tp>.<uuid>-future, loaded again at
//	                                                         start-up), the swap, DescribeLogDirs data
//	LogDirFailureChannel,                    logdirfailure.go  Failures, HandleLogDirFailure, IsOffline,
//	  LogManager.handleLogDirFailure                           OfflineDirs, SetFaultHook (test-only injection)
//	Log / LogFlushStats / LogManager /       metrics.go      per-log gauges, the flush timer, the
//	LogCleaner metrics, LogValidator's                       validation meters (by record's error kinds)
//	BrokerTopicMetrics marks
//	kafka.log.LogConfig (+ fromProps),       config.go       LogConfig, DefaultLogConfig, LogConfigFromProps,
//	  KafkaConfig log.*                                      ManagerConfig
//	o.a.k.common.record.FileRecords          filerecords.go  FileRecords (pread / sendfile)
//	(Klassik's own) CRC check on first read  verify.go       bytes of an earlier process checked once before served
//	kafka.server.epoch.LeaderEpochFileCache  leaderepoch.go  LeaderEpochCache
//	CheckpointFile, OffsetCheckpointFile,
//	  BrokerMetadataCheckpoint               checkpoint.go   offset checkpoints, meta.properties, atomic writes
//	PartitionMetadataFile                    partitionmetadata.go  partition.metadata (topic id)
//	LogValidator                             append.go validate (+ record.ValidateBatch), compression.go
//	                                                         (recompression), batch.go (header helpers)
//	kafka.log.ProducerStateManager           producerstate.go   the manager, entries, transactions, expiry
//	  ProducerAppendInfo                     producerappend.go  epoch, sequence and marker checks of one producer
//	  snapshots                              producersnapshot.go <offset>.snapshot files (version 1)
//	kafka.log.LogCleaner, Cleaner,           cleaner.go, cleaner_pass.go, offsetmap.go (SkimpyOffsetMap)
//	  LogCleanerManager
//
// Partitions are named by common.TopicPartition, the one partition type
// every package shares.
//
// Record batch encoding, CRCs, codecs and record-level validation live in
// the subpackage record; the append path calls record.ValidateBatch for
// client data and the timestamp lookup uses record.ForEachRecord. batch.go
// keeps a tiny allocation-free header reader for the hot paths.
//
// # Goroutines
//
//   - LogManager.scheduler: one goroutine started by Startup, stopped by
//     Shutdown (closes m.stop, waits on m.wg). It runs, on wall-clock
//     intervals, retention (log.retention.check.interval.ms), the
//     recovery-point, log-start-offset and high-watermark checkpoints,
//     removal of .deleted segments and -delete directories whose
//     file.delete.delay.ms has passed (a sweep every second), and flush.ms
//     checks. Decisions inside the tasks use the injected
//     ManagerConfig.Clock, so tests either call the exported task methods
//     (RunRetention, DeletePending, Checkpoint*) with an advanced clock, or
//     run the schedule with short intervals and advance the clock
//     (manager_schedule_test.go, roll_flush_test.go).
//
//   - NewLogManager: one loader goroutine per directory, each with
//     RecoveryThreadsPerDataDir workers (Kafka loads every directory at
//     once, num.recovery.threads.per.data.dir threads each); all are
//     joined before it returns.
//
//   - Shutdown: shutdownCloseWorkers goroutines per data directory close
//     the logs in parallel (each blocking system call holds an OS thread,
//     so not one goroutine per log); joined.
//
//   - The cleaner, when enabled, owns its own goroutine; Startup starts
//     it and Shutdown stops it before any log is closed.
//
//   - Log flusher: one goroutine per Log, started at load, stopped (and
//     waited for) by Close, and by detach when the partition is deleted.
//     After a roll it fsyncs, outside Log.mu, the producer snapshot the
//     roll wrote, the partition directory and the inactive segment(s), and
//     then raises the recovery point, as Kafka's asynchronous post-roll
//     flush does; appends and reads never wait for it.
//
// Asynchronous segment deletion is a queue drained by the manager's
// scheduler; other flushes happen on the append path (flush.messages,
// flush.ms), on Flush and on Close.
//
// # Invariants
//
//   - segments are sorted by base offset, never empty; the last is active
//     and the only one appended to; only the active segment's indexes are
//     extended to segment.index.bytes (when their first entry needs room),
//     every other index is trimmed to its entries.
//   - a segment file (.log, .index, .timeindex, .txnindex) is fsync'd only
//     when written, extended or cut since its last fsync (its dirty flag);
//     files loaded after a clean shutdown and a new segment's empty files
//     start clean. A clean close of an idle log therefore makes no fsync.
//   - logStartOffset <= highWatermark <= logEndOffset; logStartOffset >=
//     first segment's base offset; recoveryPoint <= logEndOffset and every
//     byte below it has been fsync'd (raised only after an fsync: by the
//     flusher after a roll, by Flush, flush.messages/flush.ms and Close),
//     and so has the directory entry of every segment below it.
//   - index entries strictly increase; an offset-index entry is (last offset
//     of an append, position where that append starts).
//   - a rejected append (any error from validation) leaves the log
//     untouched: validation runs over every batch before any byte is
//     written or any header is rewritten.
//   - after any crash, loading yields a prefix of what was written: recovery
//     scans segments from the recovery point, validates each batch (length,
//     CRC-32C, offsets) and truncates at the first invalid byte, deleting
//     every later segment.
//   - all checkpoint files and meta.properties are replaced atomically
//     (tmp, fsync, rename, fsync dir).
//
// # Performance notes
//
// The append path is measured against plain file writes by
// BenchmarkAppendVsRaw (bench_test.go), which interleaves log and raw
// appends in one run so machine noise hits both alike; compare its
// log/raw-% rather than the separate BenchmarkLogAppend and
// BenchmarkRawFileAppend numbers. What keeps the append close to a raw
// write:
//
//   - index entries are written with pwrite, not stored through the
//     mapping (index.go writeEntryLocked): on ext4 a store into a fresh page
//     of the sparse preallocated index faults for milliseconds, which hit
//     the first append of every segment and every 512th entry. Lookups
//     still read the mapping, which shares the page cache with pwrite.
//
//   - compressed client batches are decompressed for validation into a
//     pooled buffer (record.ValidateBatch), not a fresh allocation of the
//     decompressed size per batch.
//
//   - the post-roll fsync runs on the flusher goroutine, not under Log.mu.
//
//   - a roll does not fsync the directory under Log.mu: the flusher (or
//     the next flushLocked, via dirDirty) does it before the recovery
//     point passes the new segment.
//
//   - no allocation per appended batch (TestAppendPathAllocations).
//
//   - indexes are mapped lazily (index.go): appends compare against the
//     cached last entry and write with pwrite, and a lookup at or past the
//     last entry (a fetch at the log end) needs no mapping, so an idle or
//     tail-read replica holds no map; loading checks each index in O(1)
//     (first and last entry) and walks every entry when it is first
//     mapped, where a failing index is dropped and its segment scanned.
//
//   - the producer snapshot taken at a roll is written without fsync
//     (TakeSnapshotNoSync); the flusher fsyncs it with the directory before
//     the recovery point passes the roll, as Kafka's roll does. A snapshot
//     torn by a crash reads as corrupt and is rebuilt from an older one.
//
// # Using the engine
//
// AppendAsLeader rewrites baseOffset, partitionLeaderEpoch (and, for
// LogAppendTime topics, attributes, maxTimestamp and the CRC) in the
// caller's buffer; pass a buffer the caller no longer needs. Read returns a
// FileRecords range the network layer may sendfile; it stays valid until
// file.delete.delay.ms after the segment is deleted. FetchOffsetByTimestamp
// with -1 returns the log end offset; callers serving clients replace it by
// the high watermark or last stable offset.
//
// # What a cleaner may use
//
// The cleaner (cleaner.go) is created by the LogManager's Startup
// (newManagerCleaner) when ManagerConfig.CleanerEnable is set, and Shutdown stops it before closing
// logs. It may use AllLogs, Log.Config, Log.HighWatermark,
// Log.LogStartOffset, Log.DeleteOldSegments (retention for compacted logs
// after a pass), the Segment accessors and pread-based reads of segment
// files. Because it lives in this package it also snapshots l.segments and
// swaps cleaned segments in itself; it must hold Log.mu (exclusively for
// the swap, shared for the snapshot) whenever it touches Log or Segment
// fields, and never while it reads or writes segment data (LOCKS.md).
// While a cleaner runs, RunRetention skips compacted logs.
//
// Truncation and the cleaner: TruncateTo and TruncateFullyAndStartAt lower
// the partition's cleaner-offset-checkpoint entry to the truncation point
// (Kafka's LogCleaner.maybeTruncateCheckpoint), since the records written
// again above it are dirty; a pass that ran across a truncation records at
// most the truncation point (Log.cleanerFloor). Both go through
// cleanerCheckpointMu, a leaf lock (LOCKS.md).
//
// Producer state: every Log owns a ProducerStateManager (producerstate.go),
// used only under Log.mu. Appends with producer ids are checked before any
// byte is written (CheckAppend; a duplicate returns the original offsets
// with AppendInfo.Duplicate and appends nothing) and applied after
// (Append; aborted transactions become .txnindex entries). A snapshot is
// taken at each roll (at the new base offset) and on Close (at the log
// end); load and truncation reload the newest usable snapshot and replay
// the log from it (reloadProducerStateLocked); after a crash the replay
// starts at or below the first recovered segment and rebuilds the
// .txnindex of the recovered segments (rebuildProducerStateLocked). Segment deletion deletes the
// snapshot at its base offset; raising the log start offset or the high
// watermark is forwarded. The LogManager expires idle producers every
// producer.id.expiration.check.interval.ms.
//
// # How the demands are tested
//
//	append, header rewrite, codecs as-is    append_test.go TestRejectedAppendsLeaveLogUntouched, TestLogAppendTime,
//	                                        append_codec_test.go TestAppendCompressedBatchesAsIs, TestTopicCompressionTypeRecompresses
//	read (index + scan, bounds, sendfile)   TestReadBounds, TestFileRecordsSendfileConcurrent, TestConcurrentReadsDuringAppends
//	time index, earliest/latest             TestFetchOffsetByTimestamp, TestFetchOffsetsBeforeV0
//	rolls, preallocation, trimming          TestRollTriggersAndPreallocation, TestPreallocate, roll_flush_test.go
//	                                        (TestRollOnSegmentMsWithJitter, TestOffsetOverflowRollsOnFollowerGaps)
//	retention, .deleted, log start          manager_schedule_test.go TestManagerScheduledRetention, TestManagerRetention
//	compaction                              cleaner_test.go, TestManagerRunsCleaner, TestTruncationLowersCleanerCheckpoint
//	model of the whole log                  model_test.go TestLogAgainstModel: append/read/roll/truncate/
//	                                        DeleteRecords+retention/cleaner passes/reopen against an in-memory model
//	flush and recovery point                TestFlushMessagesAdvancesRecoveryPoint, TestFlushIntervalMsOnScheduleAndRecoveryPoint,
//	                                        TestManagerRecoversOnlyPastRecoveryPoint
//	index rebuild on load                   index_rebuild_test.go TestMissingAndCorruptIndexesRebuilt
//	crash safety                            crash_test.go TestCrashKill9 (child process, SIGKILL), TestRandomCutRecovery,
//	                                        fuzz_test.go FuzzRecovery, FuzzIndexLoad, FuzzParseBatchHeader
//	golden bytes                            golden_test.go against testdata/storage
//	log manager                             manager_test.go, TestManagerLoadsLogsInParallel
//	corrupt batches never served            verify_test.go TestCorruptBatchInSegmentNeverServed, TestVerifiedRanges,
//	                                        TestOwnAppendsNotRechecked, TestFollowerRefusesCorruptBatch
//	offline dirs (EIO, ENOSPC, short write) logdirfailure_test.go, diskfault_test.go TestShortWriteMidAppendTakesLogDirOffline
//	memory                                  TestHeapBoundedWhileAppending, BenchmarkLogAppend's heap-MiB metrics
//	descriptors, maps, heap per idle replica TestIdleReplicaFootprint, TestIndexesHoldNoDescriptors,
//	  and the clean restart time            BenchmarkRestartIdleReplicas (10,000 replicas)
//	kill -9: only past the recovery point   crash_recovery_point_test.go TestKill9RecoversOnlyPastRecoveryPoint
//	out of descriptors: partition error,    broker/faulttest TestOutOfDescriptorsFailsPartitionsNotBroker
//	  directory online, listener alive
//
// # Known gaps
//
//   - Loading always replays producer state from the newest snapshot; Kafka's
//     shortcut of assuming empty state after a clean shutdown without
//     snapshots is not taken (slower first start on old data, same result).
//   - A malformed checkpoint file, or any error loading a directory, fails
//     NewLogManager (Kafka starts with that directory offline); a directory
//     goes offline only when it fails while the broker runs
//     (logdirfailure.go).
package storage
