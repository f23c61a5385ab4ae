// Package testcluster is the integration harness: a real ZooKeeper server
// (zkpaths/zkserver, shared per test binary, one chroot per cluster) and N
// in-process brokers (broker.Broker) on 127.0.0.1 with ports from
// zkserver.FreePort (below the kernel's ephemeral range, so a client's
// source port never takes one while its broker is down),
// temporary log dirs and optional racks. External _test packages import it,
// so it lives outside the broker package (no import cycle).
//
// Use:
//
//	func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }
//
//	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Racks: []string{"a", "b", "c"}})
//	adm := c.Admin()                     // kadm over kgo, closed at cleanup
//	c.CreateTopic("t", 3, 3, nil)        // through the admin API, fails the test on error
//	c.KillBroker(0); c.RestartBroker(0)  // same id, log dirs and port
//	c.Intercept(0, 0, fn)                // answer Produce on broker 0 in place of it
//	// Options.ZKProxy: c.PauseZK(i) / c.ResumeZK(i) cut a broker off
//	// ZooKeeper, e.g. to expire its session
//	c.WaitLeaders(20*time.Second, "t", 3) // a leader in ZooKeeper and in every running broker's metadata
//	c.Direct(1)                           // a requestor for broker 1 itself, no routing, no metadata needed
//	c.WaitFor(10*time.Second, "leader", func() bool { ... })
//
// Checker (checker.go) is the delivery oracle: it reports records lost,
// duplicated, reordered or moved, by partition and offset. Poll is the one
// bounded poll every harness waits with.
//
// The suite has two harnesses, as etcd's tests/framework has integration
// and e2e: this package for in-process brokers, and the process harness in
// the subpackage proc (Process: start, signal, wait, kill; Node: one broker
// over its restarts; Run: a tool with a deadline; Build; Tail), on which
// broker/faulttest builds its cluster of kafka-server processes and
// broker/e2e its cluster started through bin/kafka-server-start.sh. Neither
// suite starts or waits for a process on its own.
//
// Files: testcluster.go (Cluster, Options, Main, Poll), clients.go
// (Clients, the kgo clients a harness closes at teardown), checker.go
// (Checker), proc/ (the process harness).
//
// Goroutines: brokers own theirs; Start starts the brokers in parallel and
// joins; Close (t.Cleanup) kills every broker, closes the clients and the
// test's own ZooKeeper session. Broker logs go to t.Log until Close, then
// are dropped (logging after a test ends would panic).
//
// Invariants: only 127.0.0.1 and ports from zkserver.FreePort; every wait is bounded
// (WaitFor/Poll with deadlines); a missing ZooKeeper or Java fails the test
// with the installation hint, never skips.
package testcluster
