package zkpaths

import (
	"fmt"

	"github.com/klassik/klassik/broker/common"
)

// PartitionReplicas is one entry of /admin/reassign_partitions.
type PartitionReplicas struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Replicas  []int32 `json:"replicas"`
}

// EncodeReassignment writes /admin/reassign_partitions (ReassignPartitionsZNode):
// {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[4,5,6]}]}.
func EncodeReassignment(parts []PartitionReplicas) []byte {
	b := []byte{'['}
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		r := p.Replicas
		if r == nil {
			r = []int32{}
		}
		b = append(b, newObj().str("topic", p.Topic).int("partition", int64(p.Partition)).ints("replicas", r).bytes()...)
	}
	b = append(b, ']')
	return newObj().int("version", 1).raw("partitions", b).bytes()
}

// DecodeReassignment reads /admin/reassign_partitions strictly, like Kafka's
// bean mapping: an unknown field anywhere makes the whole node invalid.
func DecodeReassignment(data []byte) ([]PartitionReplicas, error) {
	var v struct {
		Version    int `json:"version"`
		Partitions *[]struct {
			Topic     *string  `json:"topic"`
			Partition *int32   `json:"partition"`
			Replicas  *[]int32 `json:"replicas"`
		} `json:"partitions"`
	}
	if err := unmarshalStrict("reassignment", data, &v); err != nil {
		return nil, err
	}
	if v.Partitions == nil {
		return nil, fmt.Errorf("zkpaths: reassignment: missing partitions")
	}
	out := make([]PartitionReplicas, 0, len(*v.Partitions))
	for _, p := range *v.Partitions {
		if p.Topic == nil || p.Partition == nil || p.Replicas == nil {
			return nil, fmt.Errorf("zkpaths: reassignment: entry without topic, partition or replicas")
		}
		out = append(out, PartitionReplicas{Topic: *p.Topic, Partition: *p.Partition, Replicas: *p.Replicas})
	}
	return out, nil
}

// encodeTopicPartitions writes {"version":1,"partitions":[{"topic":..,"partition":..},...]},
// the shape shared by preferred elections and ISR change notifications.
func encodeTopicPartitions(tps []common.TopicPartition) []byte {
	b := []byte{'['}
	for i, tp := range tps {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, newObj().str("topic", tp.Topic).int("partition", int64(tp.Partition)).bytes()...)
	}
	b = append(b, ']')
	return newObj().int("version", 1).raw("partitions", b).bytes()
}

func decodeTopicPartitions(what string, data []byte) ([]common.TopicPartition, error) {
	var v struct {
		Partitions *[]struct {
			Topic     *string `json:"topic"`
			Partition *int32  `json:"partition"`
		} `json:"partitions"`
	}
	if err := unmarshal(what, data, &v); err != nil {
		return nil, err
	}
	if v.Partitions == nil {
		return nil, fmt.Errorf("zkpaths: %s: missing partitions", what)
	}
	out := make([]common.TopicPartition, 0, len(*v.Partitions))
	for _, p := range *v.Partitions {
		if p.Topic == nil || p.Partition == nil {
			return nil, fmt.Errorf("zkpaths: %s: entry without topic or partition", what)
		}
		out = append(out, common.TopicPartition{Topic: *p.Topic, Partition: *p.Partition})
	}
	return out, nil
}

// EncodePreferredReplicaElection writes /admin/preferred_replica_election.
func EncodePreferredReplicaElection(tps []common.TopicPartition) []byte {
	return encodeTopicPartitions(tps)
}

// DecodePreferredReplicaElection reads /admin/preferred_replica_election.
func DecodePreferredReplicaElection(data []byte) ([]common.TopicPartition, error) {
	return decodeTopicPartitions("preferred replica election", data)
}

// EncodeIsrChangeNotification writes an /isr_change_notification child.
func EncodeIsrChangeNotification(tps []common.TopicPartition) []byte {
	return encodeTopicPartitions(tps)
}

// DecodeIsrChangeNotification reads an /isr_change_notification child.
func DecodeIsrChangeNotification(data []byte) ([]common.TopicPartition, error) {
	return decodeTopicPartitions("isr change notification", data)
}

// LogDirFailureEvent is the only defined log dir event code.
const LogDirFailureEvent = 1

// EncodeLogDirEventNotification writes {"version":1,"broker":2,"event":1}.
func EncodeLogDirEventNotification(brokerID int32) []byte {
	return newObj().int("version", 1).int("broker", int64(brokerID)).int("event", LogDirFailureEvent).bytes()
}

// DecodeLogDirEventNotification returns the broker id of a log dir event.
func DecodeLogDirEventNotification(data []byte) (int32, error) {
	var v struct {
		Broker *int32 `json:"broker"`
	}
	if err := unmarshal("log dir event", data, &v); err != nil {
		return 0, err
	}
	if v.Broker == nil {
		return 0, fmt.Errorf("zkpaths: log dir event: missing broker")
	}
	return *v.Broker, nil
}
