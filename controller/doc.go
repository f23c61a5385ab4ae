// Package controller is Klassik's ZooKeeper-mode controller: every broker
// runs one Controller; the one that wins the election on /controller
// manages partition leadership for the whole cluster, writes partition
// state znodes and tells brokers what to do with LeaderAndIsr,
// UpdateMetadata and StopReplica requests.
//
// # Kafka classes and Go files
//
//	KafkaController                      controller.go     event dispatch (process), election, failover,
//	                                                       resignation
//	  onBrokerStartup/onBrokerFailure    brokerchange.go   BrokerChange, BrokerModifications
//	  onNewPartitionCreation             topicchange.go    TopicChange, PartitionModifications
//	  IsrChangeNotification handling     isrchange.go      ISR changes written by leaders
//	  doControlledShutdown               controlledshutdown.go  ControlledShutdown
//	ControllerEventManager               eventmanager.go   queue, single event goroutine, clear-and-put
//	ControllerEvent subclasses           events.go         one type per event
//	ControllerContext                    context.go        cached cluster view
//	ZkPartitionStateMachine              partitionstate.go states, valid-previous-state table
//	ZkReplicaStateMachine                replicastate.go   states, valid-previous-state table
//	PartitionState/ReplicaState traits   statetable.go     a state's name and valid previous states, one row each
//	PartitionLeaderElectionAlgorithms,
//	Election                             election.go       pure leader-choice functions
//	AdminUtils.assignReplicasToBrokers,
//	AdminZkClient.addPartitions          assignment.go     replica placement
//	ControllerBrokerRequestBatch         requestbatch.go   LeaderAndIsr/UpdateMetadata/StopReplica building,
//	                                                       one state-machine call per batch (partitionChange, ...)
//	ControllerChannelManager             channel.go        per-broker queues and senders, responses
//	TopicDeletionManager                 topicdeletion.go  /admin/delete_topics, StopReplica(delete), znode removal
//	ReplicaLeaderElection handling       leaderelection.go ElectLeaders RPC, /admin/preferred_replica_election,
//	                                                       auto leader rebalance
//	onPartitionReassignment & co.        reassignment.go   KIP-455 API and /admin/reassign_partitions
//	LogDirEventNotification handling     logdir.go         log-directory failures
//	AlterPartitionReceived handling      alterpartition.go AlterPartition RPC
//	KafkaZkClient (the part used here)   zkstore.go        zkClient: the typed zkpaths/zkclient methods the
//	                                                       controller calls (*zkclient.Client satisfies it)
//	ControllerStats / KafkaController
//	metrics                              metrics.go        ActiveControllerCount, OfflinePartitionsCount, ...
//	(the web console's view)             history.go        bounded rings of processed events and state changes
//
// # State machines
//
// Partition states; an arrow means "legal previous state":
//
//	NonExistentPartition ──> NewPartition ──> OnlinePartition <──┐
//	        ^                     │               │  ^           │ (re-election)
//	        │                     v               v  │           │
//	        └──────────────── OfflinePartition <──────┴───────────┘
//
// Replica states:
//
//	NonExistentReplica -> NewReplica -> OnlineReplica <-> OfflineReplica
//	OfflineReplica -> ReplicaDeletionStarted -> ReplicaDeletionSuccessful -> NonExistentReplica
//	OfflineReplica, ReplicaDeletionStarted -> ReplicaDeletionIneligible -> OnlineReplica/OfflineReplica
//
// Transitions do no network I/O: they update the Context, write state
// znodes through partitionStateStore (an in-memory store in unit tests, the
// fenced ZooKeeper client in production) and add entries to the
// requestBatch; the caller flushes the batch onto the channel manager (the
// "Ready" idea of etcd-io/raft). Every transition is logged on the
// state-change logger (Config.StateChangeLogger) with from, to and reason,
// at Kafka's levels: INFO for a transition that wrote a new leadership (a
// new partition's first leader, an election), with the new state; TRACE for
// every other one, formatted only when that level is enabled; failures at
// ERROR. The console's history keeps the
// latest transitions whatever the level.
//
// # Goroutines
//
//   - The event goroutine (eventManager.run), started by Startup and stopped
//     by Shutdown. It alone touches Context, the state machines, the batch,
//     the watch-cancel maps and the rebalance timer handle.
//   - One sender goroutine per registered broker while active
//     (brokerSender.run), owned by the channel manager; stopped by
//     removeBroker, and all of them by shutdown on resignation.
//   - ZooKeeper watch and session goroutines belong to zkclient; our
//     callbacks on them only enqueue events (the session-expiry callback
//     also waits until the Expire event has started, as Kafka does).
//   - The auto-rebalance timer and the election-retry timer (time.AfterFunc)
//     only enqueue; they are stopped on resignation/shutdown and a late
//     firing is ignored by the handlers' checks.
//   - Callers of the RPC entry points (ControlledShutdown, ElectLeaders,
//     AlterPartition, AlterPartitionReassignments, ListPartitionReassignments)
//     block in await (eventmanager.go) on a buffered channel of result[T]
//     until the event goroutine answers
//     (or preempts the event on shutdown/session expiry: NOT_CONTROLLER, or
//     STALE_CONTROLLER_EPOCH for ControlledShutdown), or their context ends.
//
// # Invariants
//
//   - Every ZooKeeper write of an active controller is a multi guarded by
//     check(/controller_epoch, epochZkVersion); a failed check raises
//     ErrControllerMoved, and the controller resigns instead of retrying.
//   - An event is either processed or preempted, exactly once.
//   - A new leader comes from the ISR unless unclean election is enabled for
//     the topic; the last ISR member is never removed from the ISR, so an
//     offline partition keeps isr=[last] and leader=-1.
//   - Leader epochs only grow: every election and ISR shrink writes
//     leader_epoch+1, conditional on the partition epoch (znode version).
//   - Per broker, control requests are sent one at a time in enqueue order;
//     within a batch all LeaderAndIsr precede UpdateMetadata, which precede
//     StopReplica.
//   - The Context is reset on resignation; nothing of an earlier incarnation
//     (queued requests, watches, timers) survives it.
//
// # Tests
//
// Pure functions (elections, assignment, transition tables) have table
// tests; the state machines run against an in-memory partitionStateStore.
// The transcripts (testdata/*.txt, run by transcript_test.go on
// github.com/cockroachdb/datadriven; -rewrite regenerates them) drive whole
// controllers through a real zkclient.Client on zkpaths/zktest, with the
// server's persistent watches so that every change is queued before the
// harness drains the event queues; each directive prints the fenced
// ZooKeeper writes and the requests sent. integration_test.go checks the
// same behaviour on a real ZooKeeper server.
//
// # Not yet implemented
//
// Feature versioning (/feature) and the IBP < 2.7 per-partition state-znode
// watch during reassignments (completion is detected through ISR change
// notifications and AlterPartition instead). Both ISR paths are served:
// the classic one (leaders write ZooKeeper and notify via
// /isr_change_notification), Klassik's default, and AlterPartition.
package controller
