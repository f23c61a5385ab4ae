package zkclient

import (
	"time"

	"github.com/go-zookeeper/zk"
	gometrics "github.com/rcrowley/go-metrics"
)

// WithMetrics registers Kafka's ZooKeeper client metrics in r: the
// SessionExpireListener meters (kafka.server:type=SessionExpireListener,
// name=ZooKeeper...PerSec) — session expiries (each expired session once),
// disconnects, connects with a session, read-only connects, SASL
// authentications and authentication failures — and KafkaZkClient's
// request latency (kafka.server:type=ZooKeeperClientMetrics,
// name=ZooKeeperRequestLatencyMs), one sample per request sent, retries
// included. Kafka's SessionState gauge is a string, which the JMX
// exporter's Kafka rules do not export, so it has no counterpart here.
func WithMetrics(r gometrics.Registry) Option { return func(o *options) { o.metrics = r } }

// sessionMetrics are the SessionExpireListener meters and the request
// latency; no-ops without a registry.
type sessionMetrics struct {
	expires, disconnects, syncConnects, authFailures gometrics.Meter
	readOnlyConnects, saslAuthentications            gometrics.Meter
	// latency is a timer (Kafka's is a histogram of whole milliseconds):
	// exported the same way, with sub-millisecond precision, which a
	// ZooKeeper on the same host needs.
	latency gometrics.Timer
}

func newSessionMetrics(r gometrics.Registry) sessionMetrics {
	if r == nil {
		n := gometrics.NilMeter{}
		return sessionMetrics{n, n, n, n, n, n, gometrics.NilTimer{}}
	}
	const p = "kafka.server.SessionExpireListener."
	return sessionMetrics{
		expires:             gometrics.GetOrRegisterMeter(p+"ZooKeeperExpiresPerSec", r),
		disconnects:         gometrics.GetOrRegisterMeter(p+"ZooKeeperDisconnectsPerSec", r),
		syncConnects:        gometrics.GetOrRegisterMeter(p+"ZooKeeperSyncConnectsPerSec", r),
		authFailures:        gometrics.GetOrRegisterMeter(p+"ZooKeeperAuthFailuresPerSec", r),
		readOnlyConnects:    gometrics.GetOrRegisterMeter(p+"ZooKeeperReadOnlyConnectsPerSec", r),
		saslAuthentications: gometrics.GetOrRegisterMeter(p+"ZooKeeperSaslAuthenticationsPerSec", r),
		latency:             gometrics.GetOrRegisterTimer("kafka.server.ZooKeeperClientMetrics.ZooKeeperRequestLatencyMs", r),
	}
}

// sessionEvent counts a session event as Kafka's SessionExpireListener
// counts the watcher's states (expiry is counted in runExpiry, once per
// session, also when it is noticed by polling). go-zookeeper reports a
// connection with a session as StateHasSession, Kafka's SyncConnected.
func (m sessionMetrics) sessionEvent(s zk.State) {
	switch s {
	case zk.StateDisconnected:
		m.disconnects.Mark(1)
	case zk.StateHasSession:
		m.syncConnects.Mark(1)
	case zk.StateAuthFailed:
		m.authFailures.Mark(1)
	case zk.StateConnectedReadOnly:
		m.readOnlyConnects.Mark(1)
	case zk.StateSaslAuthenticated:
		m.saslAuthentications.Mark(1)
	}
}

// requestDone records one ZooKeeper request's round trip.
func (m sessionMetrics) requestDone(start time.Time) { m.latency.UpdateSince(start) }
