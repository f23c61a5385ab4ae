package txn

// Completing transactions: WriteTxnMarkers to every partition's leader,
// then CompleteCommit/CompleteAbort (Kafka's
// TransactionMarkerChannelManager and
// TransactionMarkerRequestCompletionHandler).

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Retry backoff of marker rounds and of the completion write: after a
// round that left partitions without their marker the sender waits
// markerBackoffMin, doubling (up to markerBackoffMax) while rounds make
// no progress.
const (
	markerBackoffMin = 100 * time.Millisecond
	markerBackoffMax = time.Second
)

// writeTxnMarkersVersion is the version Kafka 2.8 sends (IBP >= 2.8).
const writeTxnMarkersVersion = 1

// markerJob is one transaction being completed.
type markerJob struct {
	part     *txnPartition
	tm       *txnMetadata
	ce       int32
	pid      int64
	epoch    int16
	commit   bool
	complete transit // the pending CompleteCommit/CompleteAbort
	// noLeader: partitions of the last round without a leader (counted
	// in the UnknownDestinationQueueSize gauge).
	noLeader int64
	// unknownTopic: partitions whose leader answered
	// UNKNOWN_TOPIC_OR_PARTITION; used only by the sender goroutine.
	unknownTopic map[common.TopicPartition]bool
}

// startMarkersLocked starts the sender of a transaction whose Prepare
// record is written and whose Complete change (t) is pending. Called
// with c.mu and tm.mu held.
func (c *Coordinator) startMarkersLocked(part *txnPartition, tm *txnMetadata, t transit) {
	if c.closed {
		return
	}
	job := &markerJob{part: part, tm: tm, ce: part.coordEpoch, pid: tm.producerID, epoch: tm.producerEpoch,
		commit: tm.state == PrepareCommit, complete: t}
	c.wg.Add(1)
	c.busy.Add(1)
	go func() {
		defer c.endWork()
		c.sendMarkers(job)
	}()
}

// remaining returns the partitions still waiting for their marker, or
// ok=false when the job is obsolete (the coordinator lost the partition
// or the transaction moved on).
func (c *Coordinator) remaining(job *markerJob) (parts []common.TopicPartition, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.currentLocked(job.tm, job.ce) != 0 {
		return nil, false
	}
	job.tm.mu.Lock()
	defer job.tm.mu.Unlock()
	if job.tm.pending != job.complete.state || job.tm.producerID != job.pid || job.tm.producerEpoch != job.epoch {
		return nil, false
	}
	return job.tm.sortedPartitionsLocked(), true
}

// dropPartitions removes partitions that need no (more) marker.
func (c *Coordinator) dropPartitions(job *markerJob, tps []common.TopicPartition) {
	if len(tps) == 0 {
		return
	}
	job.tm.mu.Lock()
	defer job.tm.mu.Unlock()
	for _, tp := range tps {
		job.tm.removePartitionLocked(tp)
	}
}

// sendMarkers delivers the transaction's markers and then writes its
// Complete state. Each round groups the remaining partitions by their
// current leader and sends one WriteTxnMarkers per broker (in parallel),
// carrying the producer id and epoch and the coordinator epoch. A
// partition leaves the set when its leader wrote the marker (or answers
// that the partition's format cannot hold one); a partition unknown to
// the metadata cache (topic deleted: NoSuchPartition, or no leader after
// its leader answered UNKNOWN_TOPIC_OR_PARTITION) is dropped; every
// other failure (no leader, NOT_LEADER_OR_FOLLOWER, timeouts, a broker
// down) is retried in the next round with the leader looked up again. An
// INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED answer means
// a newer producer or coordinator took over: sending stops and the
// transaction is left to it.
func (c *Coordinator) sendMarkers(job *markerJob) {
	defer func() { c.metrics.unknownDestination.Add(-job.noLeader) }()
	backoff := markerBackoffMin
	for {
		parts, ok := c.remaining(job)
		if !ok {
			return
		}
		if len(parts) == 0 {
			break
		}
		progress, stop := c.markerRound(job, parts)
		if stop {
			return
		}
		if parts, ok = c.remaining(job); !ok {
			return
		}
		if len(parts) == 0 {
			break
		}
		// Some partitions failed: wait before looking their leaders up
		// again, longer while no partition gets its marker.
		if progress {
			backoff = markerBackoffMin
		}
		if !c.sleep(job.part.ctx, backoff) {
			return
		}
		backoff = min(2*backoff, markerBackoffMax)
	}
	c.writeComplete(job)
}

type markerResult struct {
	broker int32
	parts  []common.TopicPartition
	resp   *kmsg.WriteTxnMarkersResponse
	err    error
}

// markerRound sends one round; progress reports whether any partition
// left the set, stop whether sending must end.
func (c *Coordinator) markerRound(job *markerJob, parts []common.TopicPartition) (progress, stop bool) {
	byBroker := map[int32][]common.TopicPartition{}
	var gone []common.TopicPartition
	noLeader := int64(0)
	for _, tp := range parts {
		switch l := c.markers.PartitionLeader(tp.Topic, tp.Partition); {
		case l == NoSuchPartition:
			gone = append(gone, tp)
		case l < 0 && job.unknownTopic[tp]:
			// Its leader did not know it and now it has none: the topic
			// was deleted (a metadata cache that cannot tell an unknown
			// partition from a leaderless one answers -1 for both).
			gone = append(gone, tp)
		case l < 0:
			// No leader now: retried next round.
			noLeader++
		default:
			byBroker[l] = append(byBroker[l], tp)
		}
	}
	c.metrics.unknownDestination.Add(noLeader - job.noLeader)
	job.noLeader = noLeader
	if len(gone) > 0 {
		c.log.Info("dropping transaction markers of partitions that no longer exist", "transactional_id", job.tm.id,
			"partitions", gone)
		c.dropPartitions(job, gone)
		progress = true
	}
	brokers := make([]int32, 0, len(byBroker))
	for b := range byBroker {
		brokers = append(brokers, b)
	}
	slices.Sort(brokers)
	results := make([]markerResult, len(brokers))
	var wg sync.WaitGroup
	for i, b := range brokers {
		results[i] = markerResult{broker: b, parts: byBroker[b]}
		wg.Add(1)
		go func(r *markerResult) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(job.part.ctx, c.cfg.MarkerTimeout)
			defer cancel()
			r.resp, r.err = c.markers.SendWriteTxnMarkers(ctx, r.broker, markerRequest(job, r.parts))
		}(&results[i])
	}
	wg.Wait()

	for _, r := range results {
		if r.err != nil {
			c.log.Info("sending transaction markers failed; retrying", "transactional_id", job.tm.id, "broker", r.broker,
				"err", r.err)
			continue
		}
		var done []common.TopicPartition
		for tp, code := range markerErrors(r.resp, job.pid) {
			switch kerr.ErrorForCode(code) {
			case nil, kerr.UnsupportedForMessageFormat, kerr.UnsupportedVersion:
				done = append(done, tp)
			case kerr.UnknownTopicOrPartition:
				if job.unknownTopic == nil {
					job.unknownTopic = map[common.TopicPartition]bool{}
				}
				job.unknownTopic[tp] = true
				c.log.Info("transaction marker failed; retrying", "transactional_id", job.tm.id, "partition", tp,
					"broker", r.broker, "err", kerr.ErrorForCode(code))
			case kerr.InvalidProducerEpoch, kerr.TransactionCoordinatorFenced:
				c.log.Info("transaction markers permanently failed: a newer producer or coordinator took over",
					"transactional_id", job.tm.id, "partition", tp, "err", kerr.ErrorForCode(code))
				stop = true
			default:
				c.log.Info("transaction marker failed; retrying", "transactional_id", job.tm.id, "partition", tp,
					"broker", r.broker, "err", kerr.ErrorForCode(code))
			}
		}
		// Only partitions this broker was asked about count.
		done = slices.DeleteFunc(done, func(tp common.TopicPartition) bool {
			return !slices.Contains(r.parts, tp)
		})
		if len(done) > 0 {
			progress = true
			c.dropPartitions(job, done)
		}
	}
	return progress, stop
}

func markerRequest(job *markerJob, parts []common.TopicPartition) *kmsg.WriteTxnMarkersRequest {
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = job.pid, job.epoch, job.commit, job.ce
	forEachTopic(parts, func(topic string, partitions []int32) { // sorted, so one topic's partitions are adjacent
		t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		t.Topic, t.Partitions = topic, partitions
		m.Topics = append(m.Topics, t)
	})
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = writeTxnMarkersVersion
	req.Markers = []kmsg.WriteTxnMarkersRequestMarker{m}
	return req
}

// markerErrors returns the per-partition codes of the producer's marker;
// partitions missing from the response are absent (and so retried).
func markerErrors(resp *kmsg.WriteTxnMarkersResponse, pid int64) map[common.TopicPartition]int16 {
	out := map[common.TopicPartition]int16{}
	if resp == nil {
		return out
	}
	for _, m := range resp.Markers {
		if m.ProducerID != pid {
			continue
		}
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				out[common.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.ErrorCode
			}
		}
	}
	return out
}

// writeComplete writes CompleteCommit/CompleteAbort once every marker is
// written. COORDINATOR_NOT_AVAILABLE (too few replicas, a timeout) keeps
// the pending change and retries with backoff; any other failure means
// the partition moved, and its next coordinator completes the
// transaction from the log.
func (c *Coordinator) writeComplete(job *markerJob) {
	backoff := markerBackoffMin
	for {
		code := c.appendTransition(job.tm, job.ce, job.complete, func(code int16) bool {
			return code == kerr.CoordinatorNotAvailable.Code
		})
		switch code {
		case 0:
			return
		case kerr.CoordinatorNotAvailable.Code:
			c.metrics.logAppendRetries.Add(1)
			ok := c.sleep(job.part.ctx, backoff)
			c.metrics.logAppendRetries.Add(-1)
			if !ok {
				return
			}
			backoff = min(2*backoff, markerBackoffMax)
			if _, ok := c.remaining(job); !ok {
				return
			}
		default:
			c.log.Info("not completing the transaction: no longer its coordinator", "transactional_id", job.tm.id,
				"err", kerr.ErrorForCode(code))
			return
		}
	}
}
