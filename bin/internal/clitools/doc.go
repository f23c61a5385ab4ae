// Package clitools holds what the console tools and kafka-consumer-groups
// share: Kafka's command-line property and option handling and the classic
// ZooKeeper-coordinated consumer that kafka-console-consumer.sh --zookeeper
// runs.
//
// Kafka classes and their Go files (apache/kafka 1.1, where the old
// consumer still lived; 2.8 for the tools):
//
//	kafka.consumer.ZookeeperConsumerConnector   zkconsumer.go (ZKConsumer: registration,
//	                                            rebalance, owner claims, offset commits;
//	                                            PartitionIDs, shared with kafka-consumer-groups)
//	kafka.consumer.RangeAssignor                rangeassign.go (RangeAssign, ThreadIDs)
//	kafka.consumer.ConsumerConfig (subset)      zkconsumer.go (ZKConsumerConfig.ApplyProperties)
//	kafka.utils.CommandLineUtils.parseKeyValueArgs  props.go (ParseKeyValues)
//	the console tools' client properties and    options.go (KeyValues, ClientProperties,
//	  --bootstrap-server or --zookeeper           CheckConnection)
//
// ZooKeeper layout of the old consumer (Kafka's ZKGroupDirs), all under
// /consumers/<group>:
//
//	ids/<consumerId>              ephemeral, registration JSON
//	                              {"version":1,"subscription":{"t":1},"pattern":"static","timestamp":"<ms>"}
//	owners/<topic>/<partition>    ephemeral, "<consumerId>-<thread>"
//	offsets/<topic>/<partition>   persistent, decimal offset (the same nodes
//	                              OffsetCommit/OffsetFetch v0 use on the broker)
//
// Rebalance (Kafka's syncedRebalance), run by every member on any change of
// ids, /brokers/ids or a subscribed topic:
//
//	stop fetching -> commit consumed offsets -> delete own owner nodes ->
//	read ids + partitions -> RangeAssign over sorted thread ids -> create
//	owner nodes (NODEEXISTS: undo, back off rebalance.backoff.ms, retry up to
//	rebalance.max.retries) -> read committed offsets -> start fetching
//
// Because each member commits before it releases, and claims only after
// the previous owner released, a partition's records are handed to the
// application exactly once across members (when nobody crashes).
//
// Goroutines of a ZKConsumer:
//   - the loop (StartZKConsumer .. Close): owns assignment, owner nodes,
//     the fetcher and the commit ticker; stopped by Close, which waits;
//   - the fetcher (one per successful rebalance): polls a franz-go client
//     consuming the claimed partitions directly and hands records to Next;
//     cancelled and waited for by the loop before every rebalance and at
//     Close;
//   - ZooKeeper watch callbacks run on zkclient goroutines and only poke the
//     loop's trigger channel (capacity 1, so bursts coalesce).
//
// Invariants: owner nodes exist only for partitions in ZKConsumer.owned;
// the consumed offset of a partition moves only after Next received the
// record; offsets are committed only for owned partitions, and always
// before their owner nodes are deleted.
package clitools
