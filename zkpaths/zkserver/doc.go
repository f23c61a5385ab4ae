// Package zkserver runs a real Apache ZooKeeper server (Debian's zookeeper
// package: java -cp /usr/share/java/zookeeper.jar QuorumPeerMain) on free
// loopback ports in a temporary directory, for tests and the integration
// harness. Missing Java or ZooKeeper is an error that names the package to
// install (apt-get install -y zookeeper default-jre-headless); tests must
// fail on it, never skip.
//
// There is no Kafka class for this; it plays the role of Kafka's
// EmbeddedZookeeper / ZooKeeperTestHarness, but with the real server
// process. Files:
//
//	zkserver.go   Server: Start, StartT, Stop (SIGTERM), Kill (SIGKILL),
//	              Restart, readiness via the "srvr" four-letter word;
//	              ZkCli/ZkCliScript run Debian's zkCli.sh for assertions
//	shared.go     Shared/RunShared/ConnectString: one server per test
//	              binary, one chroot per test
//	ensemble.go   Ensemble (N-node quorum): StartEnsemble, Modes, Leader,
//	              WaitServing, EnsureServing (resume and restart members);
//	              Server.Pause/Resume (SIGSTOP/SIGCONT); SharedEnsemble, one
//	              three-node quorum per test binary for the tests that fail
//	              ZooKeeper nodes (stopped by StopShared)
//	fourletter.go ParseDump (sessions, ephemerals by session), ParseCons
//	              (session id, negotiated timeout per connection),
//	              ParseWatchesBySession (wchc); Ensemble.Dump/Connections/
//	              Watches ask the leader or every member (4lw.commands.whitelist=*)
//	secure.go     SecureOptions: the TLS client port (secureClientPort,
//	              Netty, x509 auth provider; keystores from
//	              broker/security/securitytest) and a digest super user;
//	              DigestID and X509ID, the ids ZooKeeper's ACLs name
//	proxy.go      Proxy: TCP forwarder; Pause simulates connection loss,
//	              ExpireSession forces a real session expiry (polls "dump"),
//	              SetDelay delays each direction (broker/faulttest's slow
//	              links)
//
// Goroutines:
//   - per Server process: one waiter goroutine owning cmd.Wait; it ends when
//     the JVM exits, which Stop/Kill ensure (and Pdeathsig on Linux if the
//     test binary dies first);
//   - per Proxy: one accept goroutine plus, per connection, a reader and a
//     writer goroutine in each direction; Close ends them all and waits.
//
// Invariants: servers bind 127.0.0.1 only, never a fixed port; tickTime is
// 500ms (sessions from 1s) and maxSessionTimeout 30s so tests choose session
// timeouts freely; processes are stopped by their own PID.
package zkserver
