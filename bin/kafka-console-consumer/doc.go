// kafka-console-consumer is Kafka's kafka.tools.ConsoleConsumer (2.8):
//
//	options.go   ConsoleConsumer.ConsumerConfig: options and their checks,
//	             with Kafka's messages
//	format.go    the --formatter classes: DefaultMessageFormatter
//	             (print.timestamp/partition/offset/headers/key/value,
//	             key/line/headers.separator, null.literal, key/value/
//	             headers.deserializer), LoggingMessageFormatter,
//	             NoOpMessageFormatter, ChecksumMessageFormatter,
//	             GroupMetadataManager$OffsetsMessageFormatter and
//	             $GroupMetadataMessageFormatter (groupformat.go; decoded with
//	             broker/group) and TransactionLog$TransactionLogMessageFormatter
//	             (broker/txn.FormatLogMessage); an unknown class is Java's
//	             ClassNotFoundException
//	deserialize.go Kafka's org.apache.kafka.common.serialization
//	             deserializers (String, Long, Integer, Short, Double, Float,
//	             ByteArray, Bytes, ByteBuffer, UUID, Void) with their checks,
//	             SerializationException messages and Java toString
//	main.go      ConsoleConsumer.run/process: print until --max-messages,
//	             --timeout-ms or a signal, then "Processed a total of N
//	             messages" on stderr
//	kafka.go     the --bootstrap-server consumer (franz-go): a group member
//	             (given or generated console-consumer-<n> group; a generated
//	             one does not commit) or, with --partition, a group-less reader
//	zookeeper.go the --zookeeper consumer of Kafka ≤ 1.x (clitools.ZKConsumer),
//	             with --delete-consumer-offsets and the "Found previous offset
//	             information" check
//
// Goroutines: none of its own besides the consumer's (see clitools); run
// returns after closing the consumer. With a group, only printed records
// are committed (franz-go marks), so a rerun continues after the last
// printed line.
package main
