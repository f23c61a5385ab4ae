package main

// What a run does:
//
//  1. reads the brokers from the cluster's metadata and, for each, the
//     local process listening on its port (/proc/net/tcp{,6} and
//     /proc/<pid>/fd) and how it was started (procs.go); with --zookeeper,
//     the same for every ZooKeeper node of the connect string;
//  2. draws the fault schedule from --seed (schedule.go) and checks every
//     fault has a process to act on (and, for a kill, a way to restart it);
//  3. creates the topic if needed, commits the current end offsets for a new
//     consumer group, and starts the group's members (--consumers, franz-go,
//     at-least-once with automatic commits) and the producer: franz-go,
//     idempotent, acks=all, keys "<producer>-<seq>" and values
//     "<producer> <seq> <padding>" at --throughput records/s;
//  4. injects the faults one at a time (kill9: SIGKILL, hold, wait until the
//     broker's /brokers/ids/<id> is gone when ZooKeeper is known, restart;
//     sigstop: SIGSTOP, hold, SIGCONT; iptables-cut: drop the broker's
//     listener port on lo, hold, heal; zk-kill: SIGKILL a ZooKeeper node,
//     hold, restart), while following the cluster in ZooKeeper through
//     watches (zkwatch.go);
//  5. at --duration (or SIGINT/SIGTERM, which heal the fault in progress
//     first) stops the producer, waits for its records in flight, reads the
//     end offsets, lets the group read up to them and reads every partition
//     once more from the start offsets with a reader of its own;
//  6. checks (checker.go) and prints the timeline, the fault counts, the
//     violations, each partition's longest stall of acknowledged writes
//     (stalls.go) and the summary; exit status 0 only when clean.
//
// Files:
//
//	main.go      flags, the run, producer, consumer group, final reader
//	checker.go   the verdict (pure)
//	schedule.go  the fault schedule (pure)
//	procs.go     local processes: discovery, launch lines, restart
//	iptables.go  the KLASSIK-CHAOS-<pid> chain
//	stalls.go    each partition's longest stall of acknowledged writes (pure)
//	timeline.go  the timeline
//	zkwatch.go   the cluster's changes, from ZooKeeper watches
