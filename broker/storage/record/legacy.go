package record

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Legacy message layout (LegacyRecord).
const (
	legacyMinSizeV0         = 14 // crc, magic, attributes, key length, value length
	legacyMinSizeV1         = 22 // + timestamp
	legacyAttrTimestampType = 0x08
)

type legacyMessage struct {
	offset    int64
	magic     int8
	attrs     int8
	timestamp int64
	key       []byte
	value     []byte
}

// parseLegacyMessage decodes one "offset, size, message" entry at the start
// of b. It returns ErrTruncated when the entry is incomplete.
func parseLegacyMessage(b []byte) (legacyMessage, int, error) {
	var m legacyMessage
	if len(b) < LogOverhead {
		return m, 0, ErrTruncated
	}
	m.offset = int64(binary.BigEndian.Uint64(b))
	size := int64(int32(binary.BigEndian.Uint32(b[8:])))
	if size < legacyMinSizeV0 {
		return m, 0, corrupt("legacy message size %d below minimum", size)
	}
	if int64(len(b)-LogOverhead) < size {
		return m, 0, ErrTruncated
	}
	msg := b[LogOverhead : LogOverhead+int(size)]
	m.magic = int8(msg[4])
	if m.magic != MagicV0 && m.magic != MagicV1 {
		return m, 0, corrupt("legacy message magic %d", m.magic)
	}
	if m.magic == MagicV1 && size < legacyMinSizeV1 {
		return m, 0, corrupt("v1 message size %d below minimum", size)
	}
	if got, want := crc32.ChecksumIEEE(msg[4:]), binary.BigEndian.Uint32(msg); got != want {
		return m, 0, corrupt("legacy message crc %d does not match computed %d", want, got)
	}
	m.attrs = int8(msg[5])
	p := 6
	m.timestamp = NoTimestamp
	if m.magic == MagicV1 {
		m.timestamp = int64(binary.BigEndian.Uint64(msg[p:]))
		p += 8
	}
	var ok bool
	if m.key, ok = readLegacyBytes(msg, &p); !ok {
		return m, 0, corrupt("bad legacy message key")
	}
	if m.value, ok = readLegacyBytes(msg, &p); !ok {
		return m, 0, corrupt("bad legacy message value")
	}
	if p != len(msg) {
		return m, 0, corrupt("legacy message has %d trailing bytes", len(msg)-p)
	}
	return m, LogOverhead + int(size), nil
}

func readLegacyBytes(b []byte, p *int) ([]byte, bool) {
	if len(b)-*p < 4 {
		return nil, false
	}
	n := int32(binary.BigEndian.Uint32(b[*p:]))
	*p += 4
	return takeBytes(b, p, n)
}

// IsLegacy reports whether data starts with a magic 0 or 1 entry.
func IsLegacy(data []byte) bool {
	return len(data) > posMagic && (int8(data[posMagic]) == MagicV0 || int8(data[posMagic]) == MagicV1)
}

// ConvertLegacy up-converts a magic 0/1 message set (as sent by Produce
// v0-v2 clients) into one v2 batch: records keep their keys, values and
// timestamps (v0 messages get -1; with a LogAppendTime wrapper the
// wrapper's time), get offset deltas 0..n-1 and the codec of the (first)
// compressed wrapper. The base offset is the first message's offset; the
// leader overwrites it anyway. As Kafka does for produce data, bytes after
// the last complete entry are ignored. CRC-32 (IEEE) of every message is
// checked. Errors wrap kerr.CorruptMessage or kerr.InvalidRecord.
func ConvertLegacy(data []byte) ([]byte, error) {
	var (
		recs    []Record
		offsets []int64
		times   []int64
		codec   = None
		magic   = int8(-1)
	)
	add := func(m legacyMessage, ts int64) {
		recs = append(recs, Record{Key: m.key, Value: m.value})
		offsets = append(offsets, m.offset)
		times = append(times, ts)
	}
	pos := 0
	for pos < len(data) {
		m, n, err := parseLegacyMessage(data[pos:])
		if err == ErrTruncated {
			break
		}
		if err != nil {
			return nil, err
		}
		pos += n
		if magic == -1 {
			magic = m.magic
		} else if m.magic != magic {
			return nil, invalid("message set mixes magic %d and %d", magic, m.magic)
		}
		c := Codec(m.attrs & attrCompressionMask)
		if c == None {
			add(m, m.timestamp)
			continue
		}
		if c > LZ4 {
			return nil, fmt.Errorf("record: codec %d in a magic %d message: %w", c, m.magic, kerr.InvalidRecord)
		}
		if codec == None {
			codec = c
		}
		msgs, err := unwrapLegacy(m, c)
		if err != nil {
			return nil, err
		}
		logAppend := m.magic == MagicV1 && m.attrs&legacyAttrTimestampType != 0
		lastRel := msgs[len(msgs)-1].offset
		for _, im := range msgs {
			if m.magic == MagicV1 {
				// KIP-31: inner offsets are relative and the wrapper
				// carries the absolute offset of the last one.
				im.offset = m.offset - lastRel + im.offset
			}
			ts := im.timestamp
			if logAppend {
				ts = m.timestamp
			}
			add(im, ts)
		}
	}
	if len(recs) == 0 {
		return nil, corrupt("no complete legacy message in %d bytes", len(data))
	}
	o := DefaultBuildOptions()
	o.BaseOffset = offsets[0]
	o.Codec = codec
	o.BaseTimestamp = times[0]
	for i := range recs {
		recs[i].OffsetDelta = int32(i)
		recs[i].TimestampDelta = times[i] - times[0]
	}
	return BuildChecked(o, recs)
}

// unwrapLegacy decompresses the inner messages of wrapper message m
// (compressed with c). They must share the wrapper's magic, be
// uncompressed themselves, and there must be at least one.
func unwrapLegacy(m legacyMessage, c Codec) ([]legacyMessage, error) {
	if m.value == nil {
		return nil, invalid("compressed wrapper message without value")
	}
	inner, err := Decompress(c, m.value)
	if err != nil {
		return nil, err
	}
	var msgs []legacyMessage
	for ip := 0; ip < len(inner); {
		im, in, err := parseLegacyMessage(inner[ip:])
		if err == ErrTruncated {
			return nil, corrupt("truncated message inside a compressed wrapper")
		}
		if err != nil {
			return nil, err
		}
		ip += in
		if im.magic != m.magic {
			return nil, invalid("inner message magic %d in wrapper of magic %d", im.magic, m.magic)
		}
		if im.attrs&attrCompressionMask != 0 {
			return nil, invalid("nested compressed message")
		}
		msgs = append(msgs, im)
	}
	if len(msgs) == 0 {
		return nil, invalid("compressed wrapper message without inner messages")
	}
	return msgs, nil
}
