package scaletest

import (
	"testing"
)

// The scale scenario is correct with real processes at 10,000 partitions
// (RF=3, 30,000 replicas): every partition led with a full ISR and every
// replica's directory present after creation; every partition led by a
// live broker in ZooKeeper and in every live broker's Metadata after a
// controlled shutdown of a broker leading a third (which succeeds and
// exits 0, leadership moved) and after the controller's kill -9; both
// restarted and back in every ISR, the one stopped by SIGTERM loading its
// logs as cleanly shut down, with no segment recovered; descriptors and maps within one
// per segment plus a fixed reserve; every produced record consumed back.
// No duration is asserted; they are logged (BenchmarkScale10k reports
// them).
func TestScale10kPartitions(t *testing.T) {
	runScenario(t, config{partitions: 10000, metadataSamples: 20})
}

// BenchmarkScale10k runs the scenario once per iteration and reports its
// durations, the Metadata latency of 10,000 partitions against 1, and the
// idle cost of a replica:
//
//	go test -run '^$' -bench Scale10k -benchtime 1x ./broker/scaletest
func BenchmarkScale10k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		r := runScenario(b, config{partitions: 10000, metadataSamples: 200, measureRejoin: true, filesBaseline: true})
		b.ReportMetric(r.Create.Seconds(), "create-s")
		b.ReportMetric(r.FilesBaseline.Seconds(), "create-files-baseline-s")
		b.ReportMetric(r.Failover.Seconds(), "failover-s")
		b.ReportMetric(r.ControlledShutdown.Seconds(), "ctrlshutdown-s")
		b.ReportMetric(r.ShutdownExit.Seconds(), "shutdown-exit-s")
		b.ReportMetric(r.Restart.Serving.Seconds(), "restart-serving-s")
		b.ReportMetric(r.Restart.ISRZK.Seconds(), "restart-isr-zk-s")
		b.ReportMetric(r.RestartAfterKill.ISRZK.Seconds(), "kill-restart-isr-zk-s")
		b.ReportMetric(float64(r.MetaP50.Microseconds())/1000, "meta10k-p50-ms")
		b.ReportMetric(float64(r.MetaP99.Microseconds())/1000, "meta10k-p99-ms")
		b.ReportMetric(float64(r.BaseMetaP50.Microseconds())/1000, "meta1-p50-ms")
		b.ReportMetric(float64(r.BaseMetaP99.Microseconds())/1000, "meta1-p99-ms")
		b.ReportMetric(maxOf(r.HeapPerReplica), "heap-B/replica")
		b.ReportMetric(float64(maxInt(r.End, func(f footprint) int { return f.fds })), "fds-max")
		b.ReportMetric(float64(maxInt(r.End, func(f footprint) int { return f.maps })), "maps-max")
		b.Logf("%s", r.Table())
	}
}

// BenchmarkCreate10kPartitions runs only the scenario's creation (step 1 up to
// the replica directories) and reports its duration; the test log splits
// it per broker (LeaderAndIsr arrived, handled):
//
//	go test -run '^$' -bench Create10kPartitions -benchtime 1x -v ./broker/scaletest
func BenchmarkCreate10kPartitions(b *testing.B) {
	for i := 0; i < b.N; i++ {
		r := runScenario(b, config{partitions: 10000, createOnly: true, filesBaseline: true})
		b.ReportMetric(r.Create.Seconds(), "create-s")
		b.ReportMetric(r.FilesBaseline.Seconds(), "create-files-baseline-s")
		b.ReportMetric(r.CreateAnswered.Seconds(), "create-answered-s")
	}
}

// BenchmarkShutdown10k creates the scale topic, then stops a broker that
// is not the controller with SIGTERM three times (restarting it and
// waiting for its rejoin in between) and reports the time from SIGTERM to
// its controlled shutdown's success and to its exit; the test log lists
// each shutdown's timed steps:
//
//	go test -run '^$' -bench Shutdown10k -benchtime 1x -v ./broker/scaletest
func BenchmarkShutdown10k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		r := runScenario(b, config{partitions: 10000, shutdownCycles: 3})
		var exit, ctrl []float64
		for _, c := range r.ShutdownCycles {
			exit = append(exit, c.Exit.Seconds())
			ctrl = append(ctrl, c.Controlled.Seconds())
		}
		b.ReportMetric(maxOf(exit), "shutdown-exit-max-s")
		b.ReportMetric(minOf(exit), "shutdown-exit-min-s")
		b.ReportMetric(maxOf(ctrl), "ctrlshutdown-max-s")
	}
}
