// Command kafka-dump-log is Kafka's DumpLogSegments tool
// (bin/kafka-dump-log.sh): it prints the batches and records of .log
// segments, the entries of .index, .timeindex and .txnindex files and the
// producer entries of .snapshot files, line for line in Kafka 3.4's output
// format, so that teaching material written against Kafka applies as is.
//
//	kafka-dump-log.sh --files 00000000000000000000.log[,more...] [--print-data-log]
//	    [--deep-iteration] [--index-sanity-check] [--verify-index-only]
//	    [--offsets-decoder] [--transaction-log-decoder] [--skip-record-metadata]
//	    [--max-bytes N] [--max-message-size N]
//
// Kafka classes and Go files:
//
//	kafka.tools.DumpLogSegments            dump.go: run, dumpLog, dumpIndex, dumpTimeIndex,
//	                                       dumpProducerSnapshot, dumpTxnIndex, printReports
//	GroupMetadataManager.formatRecordKeyAndValue   dump.go: formatOffsetsRecord (broker/group.DescribeKeyAndValue)
//	TransactionLog.formatRecordKeyAndValue         dump.go: formatTxnLogRecord (broker/txn.FormatRecordKeyAndValue,
//	                                               Kafka 2.8's text: no partitions for Empty, hash-set order)
//
// Batches and records are decoded by broker/storage/record, producer
// snapshots by storage.ReadProducerSnapshot; index files are read
// directly: an .index entry is 8 bytes (offset relative to the segment's
// base offset, then file position, both int32 big-endian), a .timeindex
// entry 12 bytes (timestamp int64, then relative offset int32).
//
// Differences from Kafka: a file with an unknown suffix, a missing file or
// an undecodable record makes the exit status 1 (Kafka ignores the first
// and dies with a stack trace on the others); a non-empty .log with no
// valid batch at its start, and an .index or .timeindex whose size is not
// a multiple of its entry size, are refused as "not a log segment" / "not
// an offset index" with exit status 1 instead of being printed as garbage;
// legacy (magic 0/1) segments are reported as invalid bytes, since Klassik
// only writes magic 2.
//
// Tests: golden outputs of a hand-built fixture (dump_test.go), and
// bin/kafka-dump-log.sh itself run on segments written by the storage
// engine and on non-segment files (script_test.go).
//
// Goroutines: none. Invariants: never panics on any file content (fuzzed by
// FuzzDumpFiles); stdout carries only what Kafka prints to stdout, the
// verification reports go to stderr after all files, as in Kafka.
package main
