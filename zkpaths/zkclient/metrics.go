package zkclient

import (
	"github.com/go-zookeeper/zk"
	gometrics "github.com/rcrowley/go-metrics"
)

// WithMetrics registers Kafka's SessionExpireListener meters in r
// (kafka.server:type=SessionExpireListener,name=ZooKeeper...PerSec):
// session expiries (each expired session once), disconnects, connects
// with a session, and authentication failures.
func WithMetrics(r gometrics.Registry) Option { return func(o *options) { o.metrics = r } }

// sessionMetrics are the SessionExpireListener meters; no-ops without a
// registry.
type sessionMetrics struct {
	expires, disconnects, syncConnects, authFailures gometrics.Meter
}

func newSessionMetrics(r gometrics.Registry) sessionMetrics {
	if r == nil {
		n := gometrics.NilMeter{}
		return sessionMetrics{n, n, n, n}
	}
	const p = "kafka.server.SessionExpireListener."
	return sessionMetrics{
		expires:      gometrics.GetOrRegisterMeter(p+"ZooKeeperExpiresPerSec", r),
		disconnects:  gometrics.GetOrRegisterMeter(p+"ZooKeeperDisconnectsPerSec", r),
		syncConnects: gometrics.GetOrRegisterMeter(p+"ZooKeeperSyncConnectsPerSec", r),
		authFailures: gometrics.GetOrRegisterMeter(p+"ZooKeeperAuthFailuresPerSec", r),
	}
}

// sessionEvent counts a session event as Kafka's SessionExpireListener
// counts the watcher's states (expiry is counted in runExpiry, once per
// session, also when it is noticed by polling).
func (m sessionMetrics) sessionEvent(s zk.State) {
	switch s {
	case zk.StateDisconnected:
		m.disconnects.Mark(1)
	case zk.StateHasSession:
		m.syncConnects.Mark(1)
	case zk.StateAuthFailed:
		m.authFailures.Mark(1)
	}
}
