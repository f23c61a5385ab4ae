// Package scaletest runs the control plane and the brokers at the scale of
// issue 13 with real processes: three kafka-server processes (built without
// the race detector by broker/faulttest's Main), a real ZooKeeper and one
// topic of 10,000 partitions with RF=3, so every broker holds 10,000
// replicas. broker/faulttest starts and signals the processes; this package
// adds the scenario and its measurements. controller/scale_test.go is the
// same scenario with fake brokers beside in-process controllers (the
// controller's own cost); here every broker loads, leads and follows its
// replicas for real.
//
// There is no Kafka class for this; Kafka's own scale checks are its
// system tests' "replica_scale_test" (many partitions, bounce and
// rolling restart) and its benchmarks of the controller.
//
// Files:
//
//	scenario_test.go  TestMain, runScenario: the scenario and its checks
//	                  (shared by the test and the benchmark), Result
//	probe_test.go     Metadata straight to one broker over its own
//	                  connection (timed without the decoding), the checks of
//	                  a Metadata answer, the broker's heap (pprof heap with
//	                  gc=1), descriptors and maps (/proc/<pid>)
//	scale_test.go     TestScale10kPartitions, BenchmarkScale10k,
//	                  BenchmarkCreate10kPartitions (the creation alone),
//	                  BenchmarkShutdown10k (the creation, then three
//	                  SIGTERMs of a non-controller broker, each restarted)
//	shutdown_test.go  shutdownCycle: one SIGTERM, its timed steps from the
//	                  broker's output (steps of 200 ms or more, the
//	                  replica and log managers' phases), restart and rejoin
//	profile_test.go   CPU profiles and goroutine dumps of the brokers
//	                  during creation and failover, and their output after
//	                  the failover (KLASSIK_SCALE_PROFILE_DIR)
//
// The scenario, after each step of which every partition must be led by a
// live broker in ZooKeeper and in every live broker's Metadata:
//
//  1. a 1-partition topic (the Metadata baseline), then CreateTopics of
//     10,000 partitions round robin: every partition led by its preferred
//     replica (so each broker leads a third) with its full ISR, every
//     replica's directory on its broker; one record produced to every
//     tenth partition (franz-go, acks=all);
//  2. idle: heap, stacks, goroutines, descriptors and maps per replica
//     (against the same broker before the topic existed); Metadata of the
//     10,000 partitions timed against Metadata of the 1-partition topic;
//  3. SIGTERM of a broker that is not the controller and leads a third:
//     its controlled shutdown succeeds, it exits 0, and it leads nothing;
//     its restart, until its Metadata is complete (the benchmark also
//     waits until it is back in every ISR);
//  4. kill -9 of the controller: from the end of its session
//     (/brokers/ids/<id> gone) until every partition is led by a live
//     broker in every live broker's Metadata; its restart, until it is
//     back in every ISR in ZooKeeper and in every broker's Metadata;
//  5. every broker's descriptors (/proc/<pid>/fd) at most one per segment
//     plus a fixed reserve, its maps (/proc/<pid>/maps) within a fixed
//     reserve (indexes are mapped lazily), and every record consumed back
//     (franz-go), one per partition written.
//
// The test asserts only outcomes, never durations: every wait is for the
// condition it checks, with a bound (minutes) that only limits a failure.
// The benchmark runs the same scenario and reports the durations, and the
// Metadata latency against its 1-partition baseline:
//
//	go test -run '^$' -bench Scale10k -benchtime 1x ./broker/scaletest
//
// Descriptors: a broker holds one descriptor per segment (about 10,000
// here), so the test needs RLIMIT_NOFILE above that; when the hard limit of
// the test's process is lower, the brokers are started through prlimit
// with a higher one (which needs root) and the test says so in its log.
//
// Goroutines: the brokers' waiters are broker/faulttest's (ended by the
// cluster's cleanup); the franz-go clients are closed by the cluster's
// cleanup. The scenario starts no goroutine of its own, except with
// KLASSIK_SCALE_PROFILE_DIR set: then it saves every running broker's CPU
// profile and two goroutine dumps during creation (30 s) and during the
// failover (20 s) into that directory (profile_test.go), from goroutines
// that the step waits for before it returns.
package scaletest
