// Package zktest is an in-memory ZooKeeper for unit tests of pure logic
// (the controller's state machines, the broker's registration flow): data
// versions and the other Stat fields, ephemeral nodes per session, sequential
// nodes, one-shot data/exists/children watches, atomic multi with check ops,
// session expiry (Expire; ExpireKeepingEphemerals and Reap for the
// ZOOKEEPER-2985 race) and connection loss (SetDisconnected). Its Conn
// implements zkclient.Conn, so a real zkclient.Client runs on it
// (Server.NewClient).
//
// For tests that must see every change before their next step (the
// controller's transcripts), the Server also has persistent watches
// (WatchData, WatchChildren: ZooKeeper 3.6's persistent watch, called
// synchronously after the commit, once the server lock is released), a
// record of committed transactions (Record, TakeRecord) and a session-less
// atomic Multi.
//
// Kafka analogue: the MockZooKeeper-style fakes in Kafka's unit tests; the
// file zktest.go holds the whole server. Anything claiming real ZooKeeper
// behaviour must also be tested against zkserver.
//
// Goroutines: none. One-shot watches are buffered channels of size one that get
// exactly one event and are then closed, so delivering under the server lock
// never blocks.
//
// Invariants: all state is guarded by Server.mu; a multi either applies
// every op or none; watch events are delivered only after a successful
// commit; persistent-watch callbacks never run under the server lock;
// the sequence suffix is the parent's cversion, zero padded to 10
// digits, as the real server does.
package zktest
