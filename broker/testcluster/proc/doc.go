// Package proc is the one process harness of the test suites that run
// Klassik as an operator does: broker/faulttest (kafka-server binaries
// under kill -9, SIGTERM and SIGSTOP) and broker/e2e (the bin/*.sh scripts).
// Both start, wait for and signal their child processes through it (the
// brokers, and e2e's consumer-group members with their stdin and stdout
// pipes), build
// the commands with it and run the tools through it; what each suite adds
// on top is only its own view of a cluster.
//
// There is no Kafka class for this; it plays the part of the process
// handling in Kafka's system tests (ducktape services) and of etcd's
// tests/framework/e2e process wrapper.
//
// Files:
//
//	proc.go        Process (Start, StartCmd for a command with pipes, Signal,
//	               Wait, Kill, Running, ExitCode),
//	               Run (a tool with a deadline: output and exit code),
//	               Build (go build of commands into a folder), Tail,
//	               RepoRoot (polling is testcluster.Poll)
//	node.go        Node (one broker over its restarts: output file and
//	               latest process; Start, Signal, Running, Kill)
//	proc_*.go      process attributes: own process group, and on Linux
//	               death with the test binary (Pdeathsig)
//
// Goroutines: one waiter per Process, owning cmd.Wait and closing Done when
// the process has exited. Kill (SIGKILL and wait) ends the process, so every
// owner that kills its processes in cleanup ends every waiter.
//
// Invariants: a Process's exit code and error are read only after Done is
// closed; output goes to a file the caller names (appended, so restarts of
// one broker keep one log); every wait has a deadline.
package proc
