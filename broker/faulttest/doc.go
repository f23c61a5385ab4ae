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
// Files:
//
//	cluster.go     Main (builds kafka-server, kafka-topics,
//	               kafka-reassign-partitions, kafka-dump-log), Cluster: one
//	               server.properties per broker (ids 1..N, fixed free
//	               loopback port, log dir in t.TempDir), Kill9/Stop/Pause/
//	               Resume/Restart, ZooKeeper reads, kgo/kadm clients, RunTool
//	workload.go    Workload: idempotent acks=all producer at a bounded rate,
//	               record ids "<prefix>-<seq>", acknowledgements to a
//	               testcluster.Checker and an Ack list
//	verify.go      ConsumeAll (kgo, up to each high watermark, into the
//	               Checker); ReadReplicaLog/ComparePartition/CheckReplicas:
//	               the segment files of every ISR replica compared byte for
//	               byte up to the high watermark, each checked for every
//	               acknowledged record exactly once, in order, at its offset
//	rawproduce.go  ProduceDirect: one Produce request straight to a given
//	               broker, for the zombie-leader probe
//	dumplog.go     DumpLogBatches: the same comparison through the built
//	               kafka-dump-log (offsets, count, leader epoch, CRC)
//	topics.go      CreateTopics with an explicit assignment; RoundRobin
//	proc_*.go      process attributes (own process group, Pdeathsig)
//
// Scenarios (scenario_test.go, scenario2_test.go), each 5-25 s: kill -9
// the leader; the controller; a broker that is both; kill -9 leaders
// repeatedly at a higher rate; bounce every broker with SIGTERM (three
// rounds, full ISR in between); a follower paused past
// replica.lag.time.max.ms leaves and rejoins the ISR (state znode and
// kafka-topics --describe); a leader paused past its session is fenced (its
// acks=all produce is refused and the record never appears) and rejoins;
// the controller paused past its session is fenced; the leader killed
// while a follower is out of the ISR (only the ISR member may lead, the
// stale follower truncates and catches up); two brokers down
// (ISR below min.insync.replicas: NOT_ENOUGH_REPLICAS, nothing
// acknowledged); reassignment {1,2,3} -> {2,3,4} under load with
// kafka-reassign-partitions --execute; preferred election (ElectLeaders)
// and auto.leader.rebalance after a bounce. audit_describe_test.go:
// kafka-topics --describe --under-replicated-partitions lists exactly the
// partitions a paused follower follows.
// BenchmarkReplicatedProduce compares RF=1 acks=1 with RF=3 acks=all.
//
// Goroutines:
//   - per broker process: one waiter owning cmd.Wait, closing done when the
//     process exits; Kill9/Stop and the test cleanup (SIGKILL) end every
//     process, so every waiter ends;
//   - per Workload: the send loop, ended by Stop (or MaxRecords); kgo's own
//     goroutines end when the Cluster closes its clients in cleanup;
//   - the zombie probe in TestPausedLeaderPastSessionIsFenced, ended by the
//     zombie's answer or the connection deadline.
//
// The package's tests take about 2 minutes with -race on two cores; each
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
// free ports only. Set KLASSIK_FAULTTEST_LOGS=<lines> to print the brokers'
// output tails even when a test passes.
package faulttest
