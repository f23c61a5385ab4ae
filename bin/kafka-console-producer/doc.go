// kafka-console-producer is Kafka's kafka.tools.ConsoleProducer (2.8):
//
//	options.go  ConsoleProducer.ProducerConfig: options mapped onto producer
//	            properties as maybeMergeOptions does (an option overrides
//	            --producer-property/--producer.config only when given), then
//	            onto franz-go options
//	reader.go   LineMessageReader: one record per line, parse.key with
//	            key.separator, ignore.error, null.marker
//	main.go     the read-send loop (--sync waits for each record; otherwise
//	            ErrorLoggingCallback-style errors on stderr) and the final
//	            flush that the producer's shutdown hook performs
//
// Idempotence is off unless enable.idempotence=true (the 2.8 default), so
// acks 0 and 1 work as in Kafka. The ">" prompt is printed only when stdin
// is a terminal.
package main
