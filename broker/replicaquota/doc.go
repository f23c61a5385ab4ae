// Package replicaquota is Kafka's replication quotas (KIP-73): the
// ReplicationQuotaManager of the leader side (bytes sent to followers in
// fetch responses) and of the follower side (bytes fetched by this
// broker's replica fetchers), with Kafka's windowed rate.
//
// # Kafka classes and where they live
//
//	kafka.server.ReplicationQuotaManager    replication.go Manager
//	ReplicationQuotaManagerConfig           replication.go Config
//	                                        (replication.quota.window.num,
//	                                        replication.quota.window.size.seconds)
//	TopicConfigHandler.parseThrottledPartitions
//	                                        replication.go ParseThrottledReplicas,
//	                                        Manager.ApplyTopicConfig
//	metrics SimpleRate over SampledStat     rate.go sampledRate
//
// # How the broker uses it
//
//   - The bound of each direction is the broker's
//     leader.replication.throttled.rate / follower.replication.throttled.rate
//     (dynamic broker configs; Long.MaxValue, no bound, by default).
//   - The throttled partitions are the topic configs
//     leader.replication.throttled.replicas /
//     follower.replication.throttled.replicas ("*" or partition:broker
//     pairs; only pairs naming this broker count), applied when a topic's
//     config is loaded or changes.
//   - A leader leaves out the records of a throttled partition from its
//     response to a follower outside the ISR while the leader quota is
//     exceeded; a follower leaves a throttled partition it has not caught up
//     on out of its fetch request while the follower quota is exceeded.
//     In-sync replicas are never held back (that would shrink the ISR), but
//     their bytes count towards the rate, so the total stays under the
//     bound. Nothing is dropped: a partition left out is fetched again from
//     the same offset once the rate falls.
//
// # Concurrency
//
// Manager is safe for concurrent use: one mutex for the rate and bound,
// a read-write leaf lock for the throttled sets. Neither is held while
// calling out. No goroutines.
package replicaquota
