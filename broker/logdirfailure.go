package broker

// The log directory failure handler (Kafka's ReplicaManager
// LogDirFailureHandler thread, KIP-112). One goroutine owns the log
// manager's failure channel: for each failed directory it has the replica
// manager stop serving the partitions there, lets the log manager close
// their logs, and writes /log_dir_event_notification/log_dir_event_<seq>
// so the controller moves their leadership away. When no directory is
// left online the broker shuts itself down ("Shutdown broker because all
// log dirs ... have failed"); Halted tells the process to exit.

import (
	"time"

	"github.com/klassik/klassik/broker/common"
)

// logDirFailureHandler is the goroutine and its stop signal.
type logDirFailureHandler struct {
	stop   chan struct{}
	done   chan struct{}
	halted chan struct{} // closed when every log directory failed
}

// startLogDirFailureHandler starts the handler; failures reported before it
// runs wait in the (buffered) channel.
func (b *Broker) startLogDirFailureHandler() {
	h := &logDirFailureHandler{stop: make(chan struct{}), done: make(chan struct{}), halted: make(chan struct{})}
	b.dirFailures = h
	go func() { // owned by the broker; stopped by stopLogDirFailureHandler
		defer close(h.done)
		for {
			select {
			case <-h.stop:
				return
			case dir := <-b.logs.Failures():
				if !b.handleLogDirFailure(dir) {
					close(h.halted)
					go b.stop(false) // not from here: stop waits for this goroutine
					return
				}
			}
		}
	}()
}

func (b *Broker) stopLogDirFailureHandler() {
	if h := b.dirFailures; h != nil {
		select {
		case <-h.stop:
		default:
			close(h.stop)
		}
		<-h.done
	}
}

// Halted is closed when the broker shut itself down because every log
// directory failed (nil before Startup); the process then exits with an
// error, as Kafka halts.
func (b *Broker) Halted() <-chan struct{} {
	if b.dirFailures == nil {
		return nil
	}
	return b.dirFailures.halted
}

// handleLogDirFailure takes dir offline and announces it; it reports
// whether any log directory is still online.
func (b *Broker) handleLogDirFailure(dir string) bool {
	b.logger.Warn("stopping serving replicas in dir", "dir", dir)
	offline, anyOnline := b.logs.HandleLogDirFailure(dir, func(tps []common.TopicPartition) {
		b.replicas.MarkPartitionsOffline(tps)
	})
	if !anyOnline {
		b.logger.Error("shutdown broker because all log dirs have failed", "log_dirs", b.logs.Dirs())
		return false
	}
	// The controller learns which replicas are offline by re-sending
	// LeaderAndIsr; retry the announcement while ZooKeeper is away.
	for attempt := 0; ; attempt++ {
		name, err := b.zk.PropagateLogDirEvent(b.brokerID)
		if err == nil {
			b.logger.Warn("stopped serving replicas in dir", "dir", dir, "partitions", len(offline), "notification", name)
			return true
		}
		b.logger.Error("could not write the log dir event notification", "dir", dir, "attempt", attempt, "err", err)
		select {
		case <-b.dirFailures.stop:
			return true
		case <-time.After(time.Second):
		}
	}
}
