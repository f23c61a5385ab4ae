package zkpaths

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ProducerIDBlockSize is the number of producer ids handed out per block.
const ProducerIDBlockSize = 1000

// ProducerIDBlock is the content of /latest_producer_id_block.
type ProducerIDBlock struct {
	BrokerID   int32
	BlockStart int64
	BlockEnd   int64 // inclusive
}

// Encode writes {"version":1,"broker":2,"block_start":"3000","block_end":"3999"}.
func (p ProducerIDBlock) Encode() []byte {
	return newObj().int("version", 1).int("broker", int64(p.BrokerID)).
		str("block_start", strconv.FormatInt(p.BlockStart, 10)).
		str("block_end", strconv.FormatInt(p.BlockEnd, 10)).bytes()
}

// DecodeProducerIDBlock reads /latest_producer_id_block; callers treat null
// or empty data as "no block yet" before calling this.
func DecodeProducerIDBlock(data []byte) (ProducerIDBlock, error) {
	var v struct {
		Broker     *int32    `json:"broker"`
		BlockStart flexInt64 `json:"block_start"`
		BlockEnd   flexInt64 `json:"block_end"`
	}
	if err := unmarshal("producer id block", data, &v); err != nil {
		return ProducerIDBlock{}, err
	}
	if v.Broker == nil || !v.BlockStart.Set || !v.BlockEnd.Set {
		return ProducerIDBlock{}, fmt.Errorf("zkpaths: producer id block: missing broker, block_start or block_end")
	}
	return ProducerIDBlock{BrokerID: *v.Broker, BlockStart: v.BlockStart.V, BlockEnd: v.BlockEnd.V}, nil
}

// ErrProducerIDsExhausted is returned when no further block fits in int64.
var ErrProducerIDsExhausted = errors.New("zkpaths: producer id space exhausted")

// NextProducerIDBlock computes the block following prev (nil = none yet):
// [0,999] first, then [end+1, end+1000].
func NextProducerIDBlock(prev *ProducerIDBlock, brokerID int32) (ProducerIDBlock, error) {
	if prev == nil {
		return ProducerIDBlock{BrokerID: brokerID, BlockStart: 0, BlockEnd: ProducerIDBlockSize - 1}, nil
	}
	if prev.BlockEnd > math.MaxInt64-ProducerIDBlockSize {
		return ProducerIDBlock{}, ErrProducerIDsExhausted
	}
	return ProducerIDBlock{BrokerID: brokerID, BlockStart: prev.BlockEnd + 1, BlockEnd: prev.BlockEnd + ProducerIDBlockSize}, nil
}

// Feature status values of /feature.
const (
	FeatureStatusDisabled = 0
	FeatureStatusEnabled  = 1
)

// FeatureZNode is the content of /feature (finalized feature levels).
type FeatureZNode struct {
	Version  int              // 1 or 2
	Status   int              // FeatureStatusEnabled / Disabled
	Features map[string]int16 // feature -> max_version_level
}

// Encode writes {"features":{...},"version":2,"status":1}; version 1 also
// writes min_version_level equal to max.
func (f FeatureZNode) Encode() []byte {
	v := f.Version
	if v == 0 {
		v = 2
	}
	names := slices.Sorted(maps.Keys(f.Features))
	fs := newObj()
	for _, n := range names {
		lvl := newObj().int("max_version_level", int64(f.Features[n]))
		if v == 1 {
			lvl.int("min_version_level", int64(f.Features[n]))
		}
		fs.raw(n, lvl.bytes())
	}
	return newObj().raw("features", fs.bytes()).int("version", int64(v)).int("status", int64(f.Status)).bytes()
}

// DecodeFeatureZNode reads /feature with Kafka's validation rules.
func DecodeFeatureZNode(data []byte) (FeatureZNode, error) {
	var v struct {
		Version  *int `json:"version"`
		Status   *int `json:"status"`
		Features map[string]struct {
			Max *int16 `json:"max_version_level"`
			Min *int16 `json:"min_version_level"`
		} `json:"features"`
	}
	if err := unmarshal("feature", data, &v); err != nil {
		return FeatureZNode{}, err
	}
	if v.Version == nil || (*v.Version != 1 && *v.Version != 2) {
		return FeatureZNode{}, fmt.Errorf("zkpaths: feature: version must be 1 or 2")
	}
	if v.Status == nil || (*v.Status != FeatureStatusDisabled && *v.Status != FeatureStatusEnabled) {
		return FeatureZNode{}, fmt.Errorf("zkpaths: feature: status must be 0 or 1")
	}
	if v.Features == nil {
		return FeatureZNode{}, fmt.Errorf("zkpaths: feature: missing features")
	}
	f := FeatureZNode{Version: *v.Version, Status: *v.Status, Features: map[string]int16{}}
	for n, l := range v.Features {
		if l.Max == nil || *l.Max < 1 {
			return FeatureZNode{}, fmt.Errorf("zkpaths: feature %q: bad max_version_level", n)
		}
		if f.Version == 1 && (l.Min == nil || *l.Min < 1 || *l.Min > *l.Max) {
			return FeatureZNode{}, fmt.Errorf("zkpaths: feature %q: bad min_version_level", n)
		}
		f.Features[n] = *l.Max
	}
	return f, nil
}

// EncodeConsumerOffset is a legacy consumer offset: a bare decimal.
func EncodeConsumerOffset(offset int64) []byte { return strconv.AppendInt(nil, offset, 10) }

// DecodeConsumerOffset reads /consumers/<g>/offsets/<t>/<p>.
func DecodeConsumerOffset(data []byte) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("zkpaths: consumer offset %q: %w", data, err)
	}
	return n, nil
}

// ConsumerRegistration is a legacy consumer's /consumers/<g>/ids/<id> node.
type ConsumerRegistration struct {
	Subscription map[string]int // topic or regex -> stream count
	Pattern      string         // "static", "white_list" or "black_list"
	Timestamp    int64
}

// Encode writes {"version":1,"subscription":{...},"pattern":"static","timestamp":"..."}.
func (c ConsumerRegistration) Encode() []byte {
	keys := slices.Sorted(maps.Keys(c.Subscription))
	s := newObj()
	for _, k := range keys {
		s.int(k, int64(c.Subscription[k]))
	}
	return newObj().int("version", 1).raw("subscription", s.bytes()).str("pattern", c.Pattern).
		str("timestamp", strconv.FormatInt(c.Timestamp, 10)).bytes()
}

// DecodeConsumerRegistration reads a legacy consumer registration.
func DecodeConsumerRegistration(data []byte) (ConsumerRegistration, error) {
	var v struct {
		Subscription map[string]int `json:"subscription"`
		Pattern      *string        `json:"pattern"`
		Timestamp    flexInt64      `json:"timestamp"`
	}
	if err := unmarshal("consumer registration", data, &v); err != nil {
		return ConsumerRegistration{}, err
	}
	if v.Subscription == nil || v.Pattern == nil {
		return ConsumerRegistration{}, fmt.Errorf("zkpaths: consumer registration: missing subscription or pattern")
	}
	return ConsumerRegistration{Subscription: v.Subscription, Pattern: *v.Pattern, Timestamp: v.Timestamp.V}, nil
}

// MigrationState is the content of /migration, written only by a KRaft
// controller migrating a ZooKeeper cluster. We read it to recognise a
// migration and never write it.
type MigrationState struct {
	Version              int
	KRaftMetadataOffset  int64
	KRaftControllerID    int32
	KRaftMetadataEpoch   int32
	KRaftControllerEpoch int32
}

// DecodeMigrationState reads /migration.
func DecodeMigrationState(data []byte) (MigrationState, error) {
	var v struct {
		Version *int   `json:"version"`
		Offset  int64  `json:"kraft_metadata_offset"`
		CtrlID  int32  `json:"kraft_controller_id"`
		MEpoch  int32  `json:"kraft_metadata_epoch"`
		CEpoch  *int32 `json:"kraft_controller_epoch"`
	}
	if err := unmarshal("migration", data, &v); err != nil {
		return MigrationState{}, err
	}
	if v.Version == nil || v.CEpoch == nil {
		return MigrationState{}, fmt.Errorf("zkpaths: migration: missing version or kraft_controller_epoch")
	}
	return MigrationState{Version: *v.Version, KRaftMetadataOffset: v.Offset, KRaftControllerID: v.CtrlID, KRaftMetadataEpoch: v.MEpoch, KRaftControllerEpoch: *v.CEpoch}, nil
}
