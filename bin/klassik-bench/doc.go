// Command klassik-bench is Klassik's benchmark suite in one command
// (bin/klassik-bench.sh; issue 13, part 4). It measures every figure of
// the data path next to a baseline measured in the same run, on the same
// machine, with the same franz-go client, and prints a Markdown table of
// medians (figure, Klassik, baseline, ratio, the target) headed by
// the date and the machine (nproc, CPU model):
//
//	klassik-bench.sh [--runs N] [--out FILE] [--profile]    its own cluster
//	klassik-bench.sh --quick                               a smoke test
//	klassik-bench.sh --bootstrap-server H:P,... --broker-pids PID,...
//	klassik-bench.sh --only replication,latency --rate-acks1 R --rate-acks-all R
//
// --only runs a subset of the phases (produce, replication, perftool,
// storage, loopback, latency; the other rows stay n/a); --rate-acks1 and
// --rate-acks-all fix the open-loop rates instead of deriving them from
// the closed-loop peaks, so two builds can be compared at the same load
// (KLASSIK_HOME names the checkout whose kafka-server is built and run).
//
// Without --bootstrap-server it builds bin/kafka-server without the race
// detector (bin/kafka-run-class.sh), starts a ZooKeeper (Debian's, through
// zkpaths/zkserver) and three kafka-server processes (broker/testcluster/proc)
// on free 127.0.0.1 ports in a temporary directory, and kills and removes
// everything at the end. With --bootstrap-server it measures that cluster
// instead and reads CPU from the processes --broker-pids names.
//
// The figures (see measure.go for the order):
//
//   - produce MB/s and records/s, acks=1, 6 partitions on one broker,
//     against kfake (franz-go's in-memory fake, one broker, in this
//     process); consume of the same records from the start;
//   - produce and consume against loopback TCP into a trivial Go sink,
//     the physical limit of one connection on this machine;
//   - storage append (storage.Log, 16 KiB batches) against raw file
//     writes rolled and fsynced alike, interleaved batch by batch as
//     broker/storage's BenchmarkAppendVsRaw does;
//   - RF=3 acks=all min.insync.replicas=2 against RF=1 acks=1 on the same
//     three brokers, 3 partitions each led by a different broker;
//   - open-loop produce latency (p50, p99, p99.9) at a third of the peak
//     rate of the closed-loop runs, acks=1 and acks=all RF=3, against
//     kfake at the same rate: records are sent on a schedule, and each
//     latency runs from its scheduled time, so a stall counts;
//   - each broker's CPU-seconds per GB in (produce), out (consume) and
//     produced at RF=3, from utime+stime of /proc/<pid>/stat before and
//     after the phase, against what loopback TCP costs both its ends;
//   - when the checkout has it, Kafka's bin/kafka-producer-perf-test.sh
//     against Klassik and against kfake (the same tool and flags), its
//     summary line parsed;
//   - allocations per appended batch and per storage read of a fetch
//     (runtime.MemStats, as testing.AllocsPerRun), and the broker's own
//     allocations per produced and per fetched batch over its whole
//     request path in the steady state: broker 1's exact count of heap
//     allocations (the MemStats at the end of /debug/pprof/allocs?debug=1)
//     from when the client is set up to its last record, divided by the
//     batches the client counted with a kgo hook. The produce window
//     starts after the warm-up record; the fetch window is a second
//     consume of the same records, from the client's first poll, when it
//     has its connections, metadata, start offsets and fetch session. What
//     a client costs once is left out (the log gives the whole timed
//     consume's count beside it): divided by the batches, it read as a
//     cost per batch that the request path does not have. A cost per
//     segment stays in the produce window: the first entry of each new
//     segment's offset and time index opens the index file twice (to
//     size it, then to write), about 100 allocations for the topic's 6
//     partitions.
//
// Runs alternate: run r measures Klassik, then its baseline, figure after
// figure; the table shows the median of --runs runs (default 3). --quick
// is one small run whose numbers mean nothing; it checks the suite works.
// The driver's brokers serve /debug/pprof/ (klassik.http.pprof.enable);
// with --profile the output ends with the top entries of broker 1's CPU
// profile during produce and during RF=3 produce.
//
// There is no Kafka class for this; it plays the part of Kafka's
// benchmark driver scripts (tests/kafkatest/benchmarks) on one machine.
//
// Files:
//
//	main.go      flags and the command
//	cluster.go   the Klassik side: its own ZooKeeper and brokers, or an
//	             external cluster; topics with explicit assignments
//	phases.go    the client side: closed-loop produce, consume, open-loop
//	             latency; the kfake baseline
//	local.go     storage against raw writes, allocations, loopback TCP
//	cpu.go       CPU-seconds from /proc/<pid>/stat
//	profile.go   broker allocations from /debug/pprof; CPU profiles
//	perftool.go  Kafka's producer perf tool as a phase, when present
//	measure.go   the suite: runs, rows, medians
//	table.go     the Markdown table and its header
//
// Goroutines: the driver's own; kgo's and kfake's, ended by closing each
// client and fake after its phase; the loopback sink (ends at its byte
// count), the raw appender's syncer (ends in close), the profile request
// (ends with its duration); proc's waiter per broker and zkserver's, ended
// by the kills at cleanup. SIGINT, SIGTERM and SIGHUP cancel the run and
// still clean up; SIGPIPE is caught.
package main
