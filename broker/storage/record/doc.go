// Package record encodes and decodes Kafka record batches: the bytes of a
// .log segment, of a Produce request's records and of a Fetch response.
//
// Kafka classes and their Go counterparts:
//
//	DefaultRecordBatch (org.apache.kafka.common.record)  batch.go: BatchHeader, ParseBatchHeader,
//	                                                     CheckCRC, ComputeCRC, SetBaseOffset,
//	                                                     SetPartitionLeaderEpoch, SetLogAppendTime,
//	                                                     ForEachBatch (+ PositionError, ErrTruncated),
//	                                                     IncrementSequence, TimestampType
//	DefaultRecord                                        record.go: Record, Header, Records, ForEachRecord,
//	                                                     RecordSize
//	MemoryRecordsBuilder                                 builder.go: BuildOptions, DefaultBuildOptions,
//	                                                     Build, BuildChecked, OptionsFrom
//	CompressionType, KafkaLZ4Block*Stream, SnappyCodec   codec.go: Codec, ParseCodec, Compress, Decompress,
//	                                                     MaxDecompressedBytes
//	LogValidator (batch/record checks of the leader)     validate.go: ValidateBatch, ValidateOptions,
//	                                                     RecordError
//	LegacyRecord, AbstractLegacyRecordBatch (magic 0/1)  legacy.go: ConvertLegacy, IsLegacy
//	ControlRecordType, EndTransactionMarker              control.go: ControlType, ParseControlKey,
//	                                                     ControlKey, ParseEndTxnMarker,
//	                                                     EndTxnMarkerValue, BuildControlBatch
//
// Formats are Kafka's record batch v2: the 61-byte header,
// CRC-32C over bytes 21..end (so base offset and partition leader epoch can
// be stamped in place), zig-zag varint records, compression of the records
// section only. The broker stores only magic 2; legacy message sets are
// up-converted on produce.
//
// Invariants:
//   - No decoder trusts a length before bounds-checking it against the
//     buffer; malformed input yields an error, never a panic (fuzzed by
//     FuzzParseBatch, FuzzRecords and FuzzConvertLegacy).
//   - Decompression output is capped by MaxDecompressedBytes.
//   - ParseBatchHeader, CheckCRC, SetBaseOffset and SetPartitionLeaderEpoch
//     do not allocate; ValidateBatch does not allocate per record for an
//     uncompressed batch.
//   - Errors carry the kerr code the broker answers with (errors.Is), and a
//     truncated tail is told apart from corruption by ErrTruncated.
//
// Goroutines: none. The package is stateless apart from a lazily created,
// concurrency-safe zstd encoder/decoder pair.
package record
