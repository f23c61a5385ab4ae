// Command klassik-scenario replays the classic moments of the pre-KRaft
// Kafka design on a throwaway cluster (bin/klassik-scenario.sh):
//
//	klassik-scenario.sh list          the scenarios, one line each
//	klassik-scenario.sh <scenario>    replay one, narrated step by step
//
// Every replay starts its own ZooKeeper (Debian's package, through
// zkpaths/zkserver) and its own kafka-server processes (bin/kafka-server-start.sh)
// on free loopback ports in a temporary directory, narrates each step in
// numbered plain sentences, shows the evidence with the project's own
// tools run as processes (bin/zookeeper-shell.sh, bin/kafka-topics.sh,
// bin/kafka-dump-log.sh, bin/kafka-consumer-groups.sh) with their output
// printed, and always cleans up: every process it started is killed and
// the directory removed, also when a step fails or the replay is
// interrupted (SIGINT, SIGTERM, SIGHUP); the children die with it even on
// SIGKILL (Pdeathsig). The last line is exactly one of
//
//	scenario <name>: OK (<what held>)           exit status 0
//	scenario <name>: FAILED (<what did not>)    exit status 1
//
// There is no Kafka class for this; it plays the part of the worked
// examples of Kafka's design documentation and the classic articles.
//
// Files:
//
//	main.go        the command: list, or replay one scenario
//	stage.go       Stage, the framework: ZooKeeper, brokers, narration,
//	               tools as processes, waits, failure, cleanup
//	scenarios.go   the table of scenarios
//	<name>.go      one file per scenario (controller_failover.go, ...)
//
// A scenario is a function of a *Stage that returns what held. Stage.Failf
// ends it like testing.T.Fatalf does a test (it unwinds the scenario's
// goroutine with a private panic value that replay recovers), so a
// scenario reads as the list of its steps. Processes are started with
// broker/testcluster/proc, the project's one process harness.
//
// Goroutines: the replay's own, one waiter per child process (proc), and
// the ZooKeeper server's waiter (zkserver); all end in cleanup, which kills
// every child.
package main
