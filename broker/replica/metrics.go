package replica

import gometrics "github.com/rcrowley/go-metrics"

// replicaMetrics are Kafka's ReplicaManager metrics
// (kafka.server.ReplicaManager.*). Without a registry they are no-ops.
type replicaMetrics struct {
	isrShrinks gometrics.Meter
	isrExpands gometrics.Meter
}

func newReplicaMetrics(r gometrics.Registry, m *Manager) replicaMetrics {
	if r == nil {
		return replicaMetrics{isrShrinks: gometrics.NilMeter{}, isrExpands: gometrics.NilMeter{}}
	}
	m.fetches.RegisterMetrics(r)
	m.produces.RegisterMetrics(r)
	const prefix = "kafka.server.ReplicaManager."
	r.GetOrRegister(prefix+"UnderReplicatedPartitions", gometrics.NewFunctionalGauge(func() int64 {
		return int64(m.UnderReplicatedPartitions())
	}))
	return replicaMetrics{
		isrShrinks: gometrics.GetOrRegisterMeter(prefix+"IsrShrinksPerSec", r),
		isrExpands: gometrics.GetOrRegisterMeter(prefix+"IsrExpandsPerSec", r),
	}
}
