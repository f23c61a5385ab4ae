package record

import (
	"encoding/binary"
	"fmt"
	"time"
)

// BuildOptions describes the header of a batch to build. Start from
// DefaultBuildOptions so that the producer fields are -1 ("none") rather
// than Go's zero values, which are a valid producer id, epoch and sequence.
type BuildOptions struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Codec                Codec
	// LogAppendTime sets the timestamp-type bit; MaxTimestamp is then the
	// append time that applies to every record.
	LogAppendTime bool
	Transactional bool
	Control       bool
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	// BaseTimestamp is the batch's base timestamp; record timestamps are
	// BaseTimestamp + TimestampDelta. With DeleteHorizon it is the delete
	// horizon instead (the cleaner re-bases the deltas accordingly).
	BaseTimestamp int64
	// MaxTimestamp is used for LogAppendTime batches and for batches
	// without records; otherwise the maximum record timestamp is computed.
	MaxTimestamp int64
	// LastOffsetDelta is raised to the largest record OffsetDelta; set it
	// to keep the original span of a batch whose tail records were removed
	// by compaction (or of an emptied batch).
	LastOffsetDelta int32
	DeleteHorizon   bool
}

// DefaultBuildOptions returns options for a plain CreateTime batch without
// producer id at offset 0, with partitionLeaderEpoch -1 as producers send.
func DefaultBuildOptions() BuildOptions {
	return BuildOptions{
		PartitionLeaderEpoch: NoPartitionLeaderEpoch,
		ProducerID:           NoProducerID,
		ProducerEpoch:        NoProducerEpoch,
		BaseSequence:         NoSequence,
		BaseTimestamp:        NoTimestamp,
		MaxTimestamp:         NoTimestamp,
	}
}

// Build encodes a v2 batch holding recs (with their OffsetDelta and
// TimestampDelta as given) and computes its length and CRC. It panics on
// an invalid codec, a programming error; use BuildChecked to get an error.
func Build(b BuildOptions, recs []Record) []byte {
	out, err := BuildChecked(b, recs)
	if err != nil {
		panic(err)
	}
	return out
}

// BuildAt builds recs as one batch of o whose base timestamp is now
// (CreateTime), numbering the records' offset deltas 0, 1, ... in order:
// the batches the group and transaction coordinators write to their
// internal topics.
func BuildAt(o BuildOptions, now time.Time, recs []Record) []byte {
	o.BaseTimestamp = now.UnixMilli()
	for i := range recs {
		recs[i].OffsetDelta = int32(i)
	}
	return Build(o, recs)
}

// BuildChecked is Build returning an error instead of panicking.
func BuildChecked(b BuildOptions, recs []Record) ([]byte, error) {
	if b.Codec < None || b.Codec > Zstd {
		return nil, fmt.Errorf("record: cannot build a batch with codec %d", b.Codec)
	}
	lastDelta := b.LastOffsetDelta
	maxTS := b.MaxTimestamp
	size := 0
	for i := range recs {
		r := &recs[i]
		if r.OffsetDelta > lastDelta {
			lastDelta = r.OffsetDelta
		}
		if ts := b.BaseTimestamp + r.TimestampDelta; i == 0 || ts > maxTS {
			if !b.LogAppendTime {
				maxTS = ts
			}
		}
		size += RecordSize(r)
	}
	attrs := int16(b.Codec)
	if b.LogAppendTime {
		attrs |= attrLogAppendTime
		maxTS = b.MaxTimestamp
	}
	if b.Transactional {
		attrs |= attrTransactional
	}
	if b.Control {
		attrs |= attrControl
	}
	if b.DeleteHorizon {
		attrs |= attrDeleteHorizon
	}

	out := make([]byte, BatchHeaderSize, BatchHeaderSize+size)
	for i := range recs {
		out = appendRecord(out, &recs[i])
	}
	if b.Codec != None {
		compressed, err := Compress(b.Codec, out[BatchHeaderSize:])
		if err != nil {
			return nil, err
		}
		out = append(out[:BatchHeaderSize], compressed...)
	}
	binary.BigEndian.PutUint64(out, uint64(b.BaseOffset))
	binary.BigEndian.PutUint32(out[posBatchLength:], uint32(len(out)-LogOverhead))
	binary.BigEndian.PutUint32(out[posLeaderEpoch:], uint32(b.PartitionLeaderEpoch))
	out[posMagic] = byte(MagicV2)
	binary.BigEndian.PutUint16(out[posAttributes:], uint16(attrs))
	binary.BigEndian.PutUint32(out[posLastOffsetDelta:], uint32(lastDelta))
	binary.BigEndian.PutUint64(out[posBaseTimestamp:], uint64(b.BaseTimestamp))
	binary.BigEndian.PutUint64(out[posMaxTimestamp:], uint64(maxTS))
	binary.BigEndian.PutUint64(out[posProducerID:], uint64(b.ProducerID))
	binary.BigEndian.PutUint16(out[posProducerEpoch:], uint16(b.ProducerEpoch))
	binary.BigEndian.PutUint32(out[posBaseSequence:], uint32(b.BaseSequence))
	binary.BigEndian.PutUint32(out[posNumRecords:], uint32(len(recs)))
	updateCRC(out)
	return out, nil
}

// OptionsFrom returns build options that reproduce h's header (offsets,
// producer fields, attributes and timestamps), for rewriting a batch with
// fewer records.
func OptionsFrom(h BatchHeader) BuildOptions {
	return BuildOptions{
		BaseOffset:           h.BaseOffset,
		PartitionLeaderEpoch: h.PartitionLeaderEpoch,
		Codec:                h.Compression(),
		LogAppendTime:        h.TimestampType() == LogAppendTime,
		Transactional:        h.IsTransactional(),
		Control:              h.IsControl(),
		ProducerID:           h.ProducerID,
		ProducerEpoch:        h.ProducerEpoch,
		BaseSequence:         h.BaseSequence,
		BaseTimestamp:        h.BaseTimestamp,
		MaxTimestamp:         h.MaxTimestamp,
		LastOffsetDelta:      h.LastOffsetDelta,
		DeleteHorizon:        h.HasDeleteHorizon(),
	}
}
