package record

import (
	"encoding/binary"
)

// ControlType is the type in a control record's key.
type ControlType int16

// Control record types used in ZooKeeper mode (2-4 are KRaft-only).
const (
	ControlUnknown ControlType = -1
	ControlAbort   ControlType = 0
	ControlCommit  ControlType = 1
)

// String returns Kafka's ControlRecordType name.
func (t ControlType) String() string { return nameOr(controlTypeNames, t, "UNKNOWN") }

var controlTypeNames = map[ControlType]string{ControlAbort: "ABORT", ControlCommit: "COMMIT"}

// ParseControlKey decodes a control record key (version int16, type int16).
// Types other than ABORT and COMMIT come back as ControlUnknown, which
// readers must ignore, as Kafka does.
func ParseControlKey(key []byte) (version int16, t ControlType, err error) {
	if len(key) < 4 {
		return 0, ControlUnknown, invalid("control record key of %d bytes", len(key))
	}
	version = int16(binary.BigEndian.Uint16(key))
	if version < 0 {
		return version, ControlUnknown, invalid("control record key version %d", version)
	}
	t = ControlType(binary.BigEndian.Uint16(key[2:]))
	if t != ControlAbort && t != ControlCommit {
		t = ControlUnknown
	}
	return version, t, nil
}

// ControlKey returns the 4-byte key of a version 0 control record of type t.
func ControlKey(t ControlType) []byte {
	return []byte{0, 0, byte(uint16(t) >> 8), byte(t)}
}

// ParseEndTxnMarker decodes the value of a COMMIT/ABORT control record
// (version int16, coordinatorEpoch int32) and returns the coordinator epoch.
func ParseEndTxnMarker(value []byte) (version int16, coordinatorEpoch int32, err error) {
	if len(value) < 6 {
		return 0, 0, invalid("end transaction marker of %d bytes", len(value))
	}
	version = int16(binary.BigEndian.Uint16(value))
	if version < 0 {
		return version, 0, invalid("end transaction marker version %d", version)
	}
	return version, int32(binary.BigEndian.Uint32(value[2:])), nil
}

// EndTxnMarkerValue returns the version 0 value of an end marker.
func EndTxnMarkerValue(coordinatorEpoch int32) []byte {
	return binary.BigEndian.AppendUint32([]byte{0, 0}, uint32(coordinatorEpoch))
}

// BuildControlBatch builds the one-record control batch the broker writes
// for WriteTxnMarkers: transactional, control, baseSequence -1.
func BuildControlBatch(baseOffset int64, leaderEpoch int32, producerID int64, producerEpoch int16,
	t ControlType, coordinatorEpoch int32, timestamp int64) []byte {
	o := DefaultBuildOptions()
	o.BaseOffset = baseOffset
	o.PartitionLeaderEpoch = leaderEpoch
	o.Transactional = true
	o.Control = true
	o.ProducerID = producerID
	o.ProducerEpoch = producerEpoch
	o.BaseTimestamp = timestamp
	return Build(o, []Record{{Key: ControlKey(t), Value: EndTxnMarkerValue(coordinatorEpoch)}})
}
