package replica

import (
	"sync"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage"
)

// brokerTopicStats are Kafka's BrokerTopicStats: the BrokerTopicMetrics
// meters for all topics (no tag) and per topic (topic=<name>), created
// at a topic's first produce or fetch and removed with the topic. The
// replication meters exist only for all topics, as in Kafka.
type brokerTopicStats struct {
	reg            gometrics.Registry
	all            *topicMeters
	replicationIn  gometrics.Meter // ReplicationBytesInPerSec: appended by our fetchers
	replicationOut gometrics.Meter // ReplicationBytesOutPerSec: read by followers
	// ReassignmentBytesIn/OutPerSec: the part of the replication bytes
	// that moves a replica a reassignment is adding.
	reassignmentIn, reassignmentOut gometrics.Meter

	// mu guards the following.
	mu      sync.RWMutex
	byTopic map[string]*topicMeters
}

type topicMeters struct {
	messagesIn, bytesIn, bytesOut, bytesRejected gometrics.Meter
	failedProduce, failedFetch                   gometrics.Meter
	totalProduce, totalFetch                     gometrics.Meter
	// Produce/FetchMessageConversionsPerSec count records converted
	// between message formats; Klassik converts none (it refuses magic 0
	// and 1 and serves v2 batches to every fetch version it supports),
	// so they stay at zero, as Kafka's do on a cluster of v2 clients.
	produceConversions, fetchConversions gometrics.Meter
}

const btmPrefix = "kafka.server.BrokerTopicMetrics."

var topicMeterNames = [...]string{"MessagesInPerSec", "BytesInPerSec", "BytesOutPerSec", "BytesRejectedPerSec",
	"FailedProduceRequestsPerSec", "FailedFetchRequestsPerSec", "TotalProduceRequestsPerSec", "TotalFetchRequestsPerSec",
	"ProduceMessageConversionsPerSec", "FetchMessageConversionsPerSec"}

func newTopicMeters(r gometrics.Registry, tag string) *topicMeters {
	var ms [len(topicMeterNames)]gometrics.Meter
	for i, n := range topicMeterNames {
		ms[i] = gometrics.GetOrRegisterMeter(btmPrefix+n+tag, r)
	}
	return &topicMeters{messagesIn: ms[0], bytesIn: ms[1], bytesOut: ms[2], bytesRejected: ms[3],
		failedProduce: ms[4], failedFetch: ms[5], totalProduce: ms[6], totalFetch: ms[7],
		produceConversions: ms[8], fetchConversions: ms[9]}
}

// newBrokerTopicStats returns nil (metrics off) for a nil registry.
func newBrokerTopicStats(r gometrics.Registry) *brokerTopicStats {
	if r == nil {
		return nil
	}
	return &brokerTopicStats{
		reg:             r,
		all:             newTopicMeters(r, ""),
		replicationIn:   gometrics.GetOrRegisterMeter(btmPrefix+"ReplicationBytesInPerSec", r),
		replicationOut:  gometrics.GetOrRegisterMeter(btmPrefix+"ReplicationBytesOutPerSec", r),
		reassignmentIn:  gometrics.GetOrRegisterMeter(btmPrefix+"ReassignmentBytesInPerSec", r),
		reassignmentOut: gometrics.GetOrRegisterMeter(btmPrefix+"ReassignmentBytesOutPerSec", r),
		byTopic:         map[string]*topicMeters{},
	}
}

// topic returns topic's meters, registering them at first use.
func (s *brokerTopicStats) topic(name string) *topicMeters {
	s.mu.RLock()
	t := s.byTopic[name]
	s.mu.RUnlock()
	if t != nil {
		return t
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t = s.byTopic[name]; t == nil {
		t = newTopicMeters(s.reg, ".topic="+name)
		s.byTopic[name] = t
	}
	return t
}

// removeTopic unregisters topic's meters (Kafka's removeMetrics, on
// deletion).
func (s *brokerTopicStats) removeTopic(name string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	_, ok := s.byTopic[name]
	delete(s.byTopic, name)
	s.mu.Unlock()
	if ok {
		for _, n := range topicMeterNames {
			s.reg.Unregister(btmPrefix + n + ".topic=" + name)
		}
	}
}

// produced records one partition's append as Kafka's appendToLocalLog
// does: every request counts in TotalProduceRequestsPerSec; an append
// adds its bytes and messages; errors Kafka treats as the client's
// routing (unknown partition, not leader, too large, corrupt, storage)
// are not failures, a too-large batch counts in BytesRejectedPerSec;
// every other error is a failed produce.
func (s *brokerTopicStats) produced(topic string, size int, info storage.AppendInfo, code int16) {
	if s == nil {
		return
	}
	t := s.topic(topic)
	t.totalProduce.Mark(1)
	s.all.totalProduce.Mark(1)
	switch code {
	case 0:
		if info.Duplicate {
			break // nothing appended
		}
		n := int64(info.NumMessages)
		if n <= 0 {
			n = info.LastOffset - info.FirstOffset + 1
		}
		t.bytesIn.Mark(int64(size))
		s.all.bytesIn.Mark(int64(size))
		if n > 0 {
			t.messagesIn.Mark(n)
			s.all.messagesIn.Mark(n)
		}
	case kerr.MessageTooLarge.Code, kerr.RecordListTooLarge.Code:
		t.bytesRejected.Mark(int64(size))
		s.all.bytesRejected.Mark(int64(size))
	case kerr.UnknownTopicOrPartition.Code, kerr.NotLeaderForPartition.Code, kerr.CorruptMessage.Code, kerr.KafkaStorageError.Code:
	default:
		t.failedProduce.Mark(1)
		s.all.failedProduce.Mark(1)
	}
}

// fetched records a fetch's partition reads as Kafka's readFromLocalLog
// and the fetch response do: TotalFetchRequestsPerSec per partition,
// FailedFetchRequestsPerSec for errors other than routing and offset
// ones, and the bytes sent: BytesOutPerSec for consumers,
// ReplicationBytesOutPerSec (all topics only) for followers, and
// ReassignmentBytesOutPerSec for a follower a reassignment is adding.
func (s *brokerTopicStats) fetched(parts []fetchPart, reads []partRead, replicaID int32, ra reassignments) {
	if s == nil {
		return
	}
	follower := replicaID >= 0
	for i := range reads {
		r := &reads[i]
		t := s.topic(parts[i].tp.Topic)
		t.totalFetch.Mark(1)
		s.all.totalFetch.Mark(1)
		switch r.code {
		case 0:
		case kerr.UnknownTopicOrPartition.Code, kerr.NotLeaderForPartition.Code, kerr.OffsetOutOfRange.Code,
			kerr.FencedLeaderEpoch.Code, kerr.UnknownLeaderEpoch.Code, kerr.ReplicaNotAvailable.Code, kerr.KafkaStorageError.Code:
		default:
			t.failedFetch.Mark(1)
			s.all.failedFetch.Mark(1)
		}
		n := int64(r.size())
		if n == 0 {
			continue
		}
		if follower {
			s.replicationOut.Mark(n)
			if ra.isAddingReplica(parts[i].tp, replicaID) {
				s.reassignmentOut.Mark(n)
			}
		} else {
			t.bytesOut.Mark(n)
			s.all.bytesOut.Mark(n)
		}
	}
}

// reassignments tells whether a reassignment is adding a broker's replica
// of a partition (the Manager).
type reassignments interface {
	isAddingReplica(tp common.TopicPartition, broker int32) bool
}

// replicated records bytes our fetchers appended (ReplicationBytesInPerSec,
// and ReassignmentBytesInPerSec for a replica being added).
func (s *brokerTopicStats) replicated(n int, reassigning bool) {
	if s == nil || n <= 0 {
		return
	}
	s.replicationIn.Mark(int64(n))
	if reassigning {
		s.reassignmentIn.Mark(int64(n))
	}
}

// ForgetTopicMetrics removes the per-topic BrokerTopicMetrics of the
// topics of deleted whose partitions this broker no longer hosts (Kafka
// removes them when a topic is deleted).
func (m *Manager) ForgetTopicMetrics(deleted []common.TopicPartition) {
	s := m.metrics.topics
	if s == nil {
		return
	}
	topics := map[string]bool{}
	for _, tp := range deleted {
		topics[tp.Topic] = true
	}
	m.mu.RLock()
	for tp := range m.partitions {
		delete(topics, tp.Topic)
	}
	m.mu.RUnlock()
	for t := range topics {
		s.removeTopic(t)
	}
}
