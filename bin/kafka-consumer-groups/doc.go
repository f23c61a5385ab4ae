// kafka-consumer-groups is Kafka's kafka.admin.ConsumerGroupCommand:
//
//	options.go    ConsumerGroupCommandOptions.checkArgs with Kafka's messages;
//	              --topic t:p,.. , --to-datetime and --by-duration parsing
//	format.go     the tables (printOffsets, printMembers, printStates,
//	              printOffsetsToReset, --list --state) and shouldPrintMemberState
//	kafka.go      ConsumerGroupService over the admin API (2.8): list,
//	              describe (offsets/members/state), delete, reset-offsets
//	              (to-earliest/latest/current/offset/datetime, by-duration,
//	              shift-by; clamped to the log range; only for Empty or Dead
//	              groups; dry run unless --execute; --export as CSV)
//	resetplan.go  --from-file CSV (single-group and group formats) and the
//	              --export writer (Kafka's CsvRecordNoGroup/WithGroup)
//	deleteoffsets.go --delete-offsets (OffsetDelete) with Kafka's verdict
//	              line and TOPIC PARTITION STATUS table
//	zookeeper.go  ZkConsumerGroupService of Kafka ≤ 1.x (--zookeeper): groups of
//	              classic consumers under /consumers: list, describe (owner and
//	              offset from ZooKeeper, log end offset from the brokers found
//	              in /brokers/ids), delete when no consumer is registered
//
// As in Kafka, a failure of the command prints "Error: ..." on stdout and
// exits 0; option mistakes print the message and the option table on
// stderr and exit 1. No goroutines of its own.
package main
