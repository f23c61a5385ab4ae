// Package faulttest proves replication under real faults: real
// kafka-server processes (built once per test binary from bin/kafka-server),
// a real ZooKeeper (zkpaths/zkserver, one chroot per test) and a real
// idempotent acks=all franz-go producer, while the tests kill -9, stop,
// pause (SIGSTOP) and restart brokers. It is the process-based counterpart
// of broker/testcluster's in-process brokers (etcd's e2e versus
// integration split).
//
// There is no single Kafka class for this; it plays the part of Kafka's
// system tests (tests/kafkatest: replication_test.py, the
// clean/hard bounce and kill of the leader and the controller,
// replica_verification_tool) in Go.
//
// Processes are started, waited for and signalled through
// broker/testcluster/proc, the one process harness (broker/e2e uses it too);
// this package adds the cluster of kafka-server processes on top.
//
// Files:
//
//	cluster.go     Main (builds kafka-server, kafka-topics,
//	               kafka-reassign-partitions, kafka-dump-log,
//	               kafka-leader-election), Cluster: one server.properties
//	               per broker (ids 1..N, fixed free loopback port, log dir in
//	               t.TempDir), Kill9/Stop/Pause/Resume/Restart over
//	               a proc.Node per broker, ZooKeeper reads, kgo/kadm clients,
//	               RunTool
//	workload.go    Workload: idempotent acks=all producer at a bounded rate,
//	               record ids "<prefix>-<seq>", acknowledgements to a
//	               testcluster.Checker and an Ack list
//	verify.go      ConsumeAll (kgo, up to each high watermark, into the
//	               Checker); ReadReplicaLog/ComparePartition/CheckReplicas:
//	               the segment files of every ISR replica compared byte for
//	               byte up to the high watermark, each checked for every
//	               acknowledged record exactly once, in order, at its offset
//	rawproduce.go  ProduceDirect(Notify): one Produce request straight to a
//	               given broker, for the zombie-leader and min.insync probes
//	dumplog.go     DumpLogBatches: the same comparison through the built
//	               kafka-dump-log (offsets, count, leader epoch, CRC)
//	topics.go      CreateTopics with an explicit assignment; RoundRobin
//	netns.go       Net: a private network per cluster (a namespace per
//	               broker on a bridge in a namespace of its own, the
//	               clients and a ZooKeeper forwarder on the test's side),
//	               Cut/Isolate/Heal with iptables DROP rules in a chain the
//	               test owns inside the broker namespaces, Degrade (delay by
//	               forwarders, loss by an iptables statistic match, since
//	               the kernel may lack sch_netem), the stale-namespace sweep
//
// Tests, by concept (each scenario 5-25 s):
//
//	scenario_test.go           TestMain and the scenario driver (cluster,
//	                           topic, workload, the final checks)
//	crash_restart_test.go      kill -9 the leader; the controller; a broker
//	                           that is both; leaders repeatedly at a higher
//	                           rate; SIGTERM bounce of every broker
//	isr_test.go                a paused follower leaves and rejoins the ISR
//	                           (state znode and kafka-topics --describe);
//	                           --under-replicated-partitions with a paused
//	                           broker; the leader killed while a follower is
//	                           out of the ISR (only an ISR member leads); two
//	                           brokers down (NOT_ENOUGH_REPLICAS)
//	fencing_test.go            a leader, and the controller, paused past
//	                           their session are fenced and rejoin
//	reassign_test.go           {1,2,3} -> {2,3,4} under load with
//	                           kafka-reassign-partitions --execute
//	preferred_election_test.go the preferred leader bounced with no write in
//	                           the middle epoch, then kafka-leader-election
//	                           --election-type preferred or the automatic
//	                           election, then 30 acks=all records: every
//	                           replica (not only the ISR) byte-identical at
//	                           the leader's end, equal epoch checkpoints,
//	                           the ISR full; and the same under load
//	txn_copy_test.go           a consume-transform-produce copy of 20,000
//	                           records (franz-go GroupTransactSession) while
//	                           the transaction coordinator and an output
//	                           leader are killed -9: every input key once in
//	                           the read_committed output
//	txn_restart_test.go        every broker killed -9 with a transaction
//	                           open: LSO and HW survive, the producer commits
//	net_test.go                network partitions, each through a 10 s cut
//	                           and its heal: a zombie leader (cut from
//	                           ZooKeeper and the brokers, clients still
//	                           reach it; beside it acks=1, whose lost
//	                           acknowledgements are counted), the
//	                           controller cut from ZooKeeper, a follower
//	                           cut from its leader, a broker cut from
//	                           everything, the clients cut from a leader,
//	                           200 ms delay and 5 % loss between brokers;
//	                           stalls per partition measured and logged.
//	                           They run in parallel (t.Parallel), each on
//	                           its own network: about 75 s for all six
//	                           with -race beside a CPU burner
//	zk_ensemble_test.go        ZooKeeper trouble on the shared three-node
//	                           ensemble (Options.ZooKeeper): its leader
//	                           killed (no session expires: same broker
//	                           epochs and controller); quorum lost, then the
//	                           whole ensemble paused (SIGSTOP), each for 1.5
//	                           session timeouts (produce goes on, an
//	                           AlterConfigs waits and completes, expired
//	                           sessions re-register with new epochs, no
//	                           stale ephemeral or watch: dump, wchc, cons);
//	                           kafka-server start-up gives up after
//	                           zookeeper.connection.timeout.ms
//	compare_test.go, decode_test.go  unit tests of the helpers (and fuzz)
//
// BenchmarkReplicatedProduce (bench_test.go) compares RF=1 acks=1 with RF=3
// acks=all.
//
// No verdict depends on timing: every test waits for the condition it
// checks (with a deadline that only bounds a failure), and where a loaded
// machine can change what happens (a paused broker's session expiring
// before its ISR shrink, which broker the controller is) the test reads
// the outcome from ZooKeeper and asserts what holds for every
// interleaving.
//
// Goroutines:
//   - per broker process: proc's waiter owning cmd.Wait, closing Done when
//     the process exits; Kill9/Stop and the test cleanup (SIGKILL) end every
//     process, so every waiter ends;
//   - per Workload: the send loop, ended by Stop (or MaxRecords); kgo's own
//     goroutines end when the Cluster closes its clients in cleanup;
//   - the zombie probe in TestPausedLeaderPastSessionIsFenced, ended by the
//     zombie's answer or the connection deadline.
//
// The package's tests take about 3 minutes with -race on two cores (165 s
// alone, 180 s beside a CPU-burning process, build included; the ZooKeeper
// ensemble tests add about 45 s, their ensemble start included); each
// scenario's loops are bounded in count (MaxRecords) and time (every wait
// has a deadline).
//
// Invariants checked after every scenario:
//   - every acknowledged record is consumed exactly once, at its
//     acknowledged offset, in producer order per partition (Checker:
//     lost / duplicated / reordered / moved, by partition and offset);
//   - every replica in the ISR reaches the leader's high watermark, and all
//     of them hold byte-identical batches below it (CRC-checked), each
//     holding every acknowledged record of the partition exactly once.
//
// Every child process is killed in t.Cleanup; brokers bind 127.0.0.1 on
// free ports only, except on a Net, where each binds its own address in a
// network namespace the test creates and removes (with its iptables rules)
// in t.Cleanup; the network tests need root, ip (iproute2) and iptables,
// and fail with the package to install when they are missing. Set KLASSIK_FAULTTEST_LOGS=<lines> to print the brokers'
// output tails even when a test passes.
package faulttest
