package console

import (
	"time"

	"github.com/klassik/klassik/controller"
)

// Cluster is /api/v1/cluster: the ZooKeeper view, read by the serving
// broker's own session.
type Cluster struct {
	// ServedBy is the id of the broker that answered.
	ServedBy int32 `json:"served_by"`
	// ClusterID is /cluster/id.
	ClusterID string `json:"cluster_id"`
	// Controller is /controller's brokerid, -1 when no controller is elected.
	Controller int32 `json:"controller"`
	// ControllerEpoch is /controller_epoch.
	ControllerEpoch int32    `json:"controller_epoch"`
	Brokers         []Broker `json:"brokers"`
	Topics          []Topic  `json:"topics"`
	Truncated       bool     `json:"truncated,omitempty"`
	// Time is when this view was read from ZooKeeper.
	Time time.Time `json:"time"`
	// Stale is set when the latest read failed and this is the view of
	// the last one that succeeded (at Time): why the read failed.
	Stale string `json:"stale,omitempty"`
}

// Broker is one /brokers/ids/<id> registration.
type Broker struct {
	ID        int32      `json:"id"`
	Rack      string     `json:"rack,omitempty"`
	Endpoints []Endpoint `json:"endpoints"`
	// Console is the broker's console URL, "" when it published none.
	Console string `json:"console,omitempty"`
}

// Endpoint is one listener of a registration.
type Endpoint struct {
	Listener         string `json:"listener"`
	Host             string `json:"host"`
	Port             int32  `json:"port"`
	SecurityProtocol string `json:"security_protocol"`
}

// Topic is /brokers/topics/<t> with each partition's state znode.
type Topic struct {
	Name       string      `json:"name"`
	Partitions []Partition `json:"partitions"`
}

// Partition is one partition: its assigned replicas and
// /brokers/topics/<t>/partitions/<p>/state.
type Partition struct {
	Partition       int32   `json:"partition"`
	Replicas        []int32 `json:"replicas"`
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	ISR             []int32 `json:"isr"`
	ControllerEpoch int32   `json:"controller_epoch"`
	// HasState is false while the state znode does not exist yet.
	HasState bool `json:"has_state"`
}

// Replica is one local replica's log offsets.
type Replica struct {
	Broker         int32   `json:"broker"`
	Topic          string  `json:"topic"`
	Partition      int32   `json:"partition"`
	IsLeader       bool    `json:"is_leader"`
	Leader         int32   `json:"leader"`
	LeaderEpoch    int32   `json:"leader_epoch"`
	ISR            []int32 `json:"isr,omitempty"`
	LogStartOffset int64   `json:"log_start_offset"`
	LogEndOffset   int64   `json:"log_end_offset"`
	HighWatermark  int64   `json:"high_watermark"`
}

// Replicas is /api/v1/replicas: every live broker's local replicas.
type Replicas struct {
	ServedBy int32 `json:"served_by"`
	// Brokers says, per broker id asked, whether it answered.
	Brokers   []PeerStatus `json:"brokers"`
	Replicas  []Replica    `json:"replicas"`
	Truncated bool         `json:"truncated,omitempty"`
}

// PeerStatus is the outcome of asking one broker's console.
type PeerStatus struct {
	ID    int32  `json:"id"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// Controller is /api/v1/controller: the active controller's history.
type Controller struct {
	// ServedBy is the broker that answered; Source is the broker whose
	// history it is (the controller, when it could be reached).
	ServedBy int32 `json:"served_by"`
	Source   int32 `json:"source"`
	// Controller is the controller id read from ZooKeeper.
	Controller int32  `json:"controller"`
	Error      string `json:"error,omitempty"`
	controller.HistorySnapshot
}

// Groups is /api/v1/groups: every live broker's coordinated groups.
type Groups struct {
	ServedBy int32        `json:"served_by"`
	Brokers  []PeerStatus `json:"brokers"`
	Groups   []Group      `json:"groups"`
}

// Group is one consumer group as its coordinator holds it.
type Group struct {
	Group        string   `json:"group"`
	Coordinator  int32    `json:"coordinator"`
	State        string   `json:"state"`
	ProtocolType string   `json:"protocol_type"`
	Protocol     string   `json:"protocol"`
	Generation   int32    `json:"generation"`
	Leader       string   `json:"leader"`
	Members      []Member `json:"members"`
	Offsets      []Offset `json:"offsets"`
}

// Member is one group member with its decoded assignment.
type Member struct {
	ID         string             `json:"id"`
	InstanceID string             `json:"instance_id,omitempty"`
	ClientID   string             `json:"client_id"`
	ClientHost string             `json:"client_host"`
	Assignment map[string][]int32 `json:"assignment"`
}

// Offset is a committed offset and its lag behind the partition's high
// watermark (-1 when the leader's high watermark is not known).
type Offset struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	Committed     int64  `json:"committed"`
	HighWatermark int64  `json:"high_watermark"`
	Lag           int64  `json:"lag"`
}

// Segments is /api/v1/segments: a local replica's segments.
type Segments struct {
	Broker         int32     `json:"broker"`
	Topic          string    `json:"topic"`
	Partition      int32     `json:"partition"`
	Dir            string    `json:"dir"`
	LogStartOffset int64     `json:"log_start_offset"`
	LogEndOffset   int64     `json:"log_end_offset"`
	HighWatermark  int64     `json:"high_watermark"`
	Segments       []Segment `json:"segments"`
	Truncated      bool      `json:"truncated,omitempty"`
}

// Segment is one .log file with its sparse .index entries.
type Segment struct {
	BaseOffset   int64        `json:"base_offset"`
	Size         int64        `json:"size"`
	IndexEntries int          `json:"index_entries"`
	Index        []IndexEntry `json:"index"`
}

// IndexEntry is one .index entry: offset → byte position in the .log.
type IndexEntry struct {
	Offset   int64 `json:"offset"`
	Position int32 `json:"position"`
}
