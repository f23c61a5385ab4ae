package record

import (
	"encoding/binary"
)

// Header is one record header. A nil Value is a null header value.
type Header struct {
	Key   string
	Value []byte
}

// Record is one record of a v2 batch (DefaultRecord). Key and Value are nil
// for null; a null value on a compacted topic is a tombstone.
//
// Records returned by Records alias the batch bytes when the batch is not
// compressed: copy Key/Value before modifying or retaining the batch buffer.
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key, Value     []byte
	Headers        []Header
}

// Offset returns the record's absolute offset in a batch with header h.
func (r *Record) Offset(h BatchHeader) int64 { return h.BaseOffset + int64(r.OffsetDelta) }

// Timestamp returns the record's effective timestamp in a batch with
// header h: maxTimestamp for LogAppendTime, else base + delta.
func (r *Record) Timestamp(h BatchHeader) int64 {
	if h.TimestampType() == LogAppendTime {
		return h.MaxTimestamp
	}
	return h.BaseTimestamp + r.TimestampDelta
}

// readVarint reads a zig-zag varint at *pos and advances it.
func readVarint(b []byte, pos *int) (int64, bool) {
	v, n := binary.Varint(b[*pos:])
	if n <= 0 {
		return 0, false
	}
	*pos += n
	return v, true
}

func readVarint32(b []byte, pos *int) (int32, bool) {
	v, ok := readVarint(b, pos)
	if !ok || v != int64(int32(v)) {
		return 0, false
	}
	return int32(v), true
}

// readBytes reads a varint-length-prefixed byte string (-1 = nil).
func readBytes(b []byte, pos *int) ([]byte, bool) {
	n, ok := readVarint32(b, pos)
	if !ok {
		return nil, false
	}
	return takeBytes(b, pos, n)
}

// takeBytes returns the n bytes at *pos, capped so that appending to them
// cannot overwrite b, and moves past them. A length of -1 is a null field
// (nil); ok is false for any other negative length or one running past b.
func takeBytes(b []byte, pos *int, n int32) ([]byte, bool) {
	if n == -1 {
		return nil, true
	}
	if n < 0 || int(n) > len(b)-*pos {
		return nil, false
	}
	v := b[*pos : *pos+int(n) : *pos+int(n)]
	*pos += int(n)
	return v, true
}

// parseRecord decodes one record at the start of b into r and returns the
// number of bytes consumed. When keepHeaders is false the headers are
// checked but not stored, so the call does not allocate.
func parseRecord(b []byte, r *Record, keepHeaders bool) (int, error) {
	pos := 0
	length, ok := readVarint32(b, &pos)
	if !ok || length < 0 {
		return 0, corrupt("bad record length")
	}
	if int(length) > len(b)-pos {
		return 0, corrupt("record length %d exceeds remaining %d bytes", length, len(b)-pos)
	}
	body := b[pos : pos+int(length)]
	total := pos + int(length)
	p := 0
	if len(body) < 1 {
		return 0, corrupt("record too short")
	}
	r.Attributes = int8(body[0])
	p++
	if r.TimestampDelta, ok = readVarint(body, &p); !ok {
		return 0, corrupt("bad record timestamp delta")
	}
	if r.OffsetDelta, ok = readVarint32(body, &p); !ok {
		return 0, corrupt("bad record offset delta")
	}
	if r.Key, ok = readBytes(body, &p); !ok {
		return 0, corrupt("bad record key")
	}
	if r.Value, ok = readBytes(body, &p); !ok {
		return 0, corrupt("bad record value")
	}
	nh, ok := readVarint32(body, &p)
	if !ok || nh < 0 || int(nh) > (len(body)-p)/2 {
		return 0, corrupt("bad record header count")
	}
	r.Headers = nil
	if keepHeaders && nh > 0 {
		r.Headers = make([]Header, 0, nh)
	}
	for i := int32(0); i < nh; i++ {
		k, ok := readBytes(body, &p)
		if !ok || k == nil {
			return 0, corrupt("bad record header key")
		}
		v, ok := readBytes(body, &p)
		if !ok {
			return 0, corrupt("bad record header value")
		}
		if keepHeaders {
			r.Headers = append(r.Headers, Header{Key: string(k), Value: v})
		}
	}
	if p != len(body) {
		return 0, corrupt("record has %d trailing bytes", len(body)-p)
	}
	return total, nil
}

// appendRecord appends the v2 encoding of r.
func appendRecord(dst []byte, r *Record) []byte {
	size := recordBodySize(r)
	dst = binary.AppendVarint(dst, int64(size))
	dst = append(dst, byte(r.Attributes))
	dst = binary.AppendVarint(dst, r.TimestampDelta)
	dst = binary.AppendVarint(dst, int64(r.OffsetDelta))
	dst = appendVarBytes(dst, r.Key)
	dst = appendVarBytes(dst, r.Value)
	dst = binary.AppendVarint(dst, int64(len(r.Headers)))
	for _, h := range r.Headers {
		dst = binary.AppendVarint(dst, int64(len(h.Key)))
		dst = append(dst, h.Key...)
		dst = appendVarBytes(dst, h.Value)
	}
	return dst
}

func appendVarBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

func varBytesLen(b []byte) int {
	if b == nil {
		return 1
	}
	return varintLen(int64(len(b))) + len(b)
}

func recordBodySize(r *Record) int {
	n := 1 + varintLen(r.TimestampDelta) + varintLen(int64(r.OffsetDelta)) +
		varBytesLen(r.Key) + varBytesLen(r.Value) + varintLen(int64(len(r.Headers)))
	for _, h := range r.Headers {
		n += varintLen(int64(len(h.Key))) + len(h.Key) + varBytesLen(h.Value)
	}
	return n
}

// RecordSize returns the encoded size of r inside a batch.
func RecordSize(r *Record) int {
	n := recordBodySize(r)
	return varintLen(int64(n)) + n
}

// recordsPayload returns the uncompressed record bytes of a whole batch.
func recordsPayload(batch []byte, h BatchHeader) ([]byte, error) {
	payload := batch[BatchHeaderSize:h.Size()]
	if h.Compression() == None {
		return payload, nil
	}
	return Decompress(h.Compression(), payload)
}

// Records decodes every record of the v2 batch at the start of batch,
// decompressing it if needed. It checks the header and that exactly
// NumRecords well-formed records fill the payload; it does not check the
// CRC (use CheckCRC or ValidateBatch).
func Records(batch []byte) ([]Record, error) {
	h, err := ParseBatchHeader(batch)
	if err != nil {
		return nil, err
	}
	if h.Size() > len(batch) {
		return nil, ErrTruncated
	}
	payload, err := recordsPayload(batch, h)
	if err != nil {
		return nil, err
	}
	if h.NumRecords < 0 || int(h.NumRecords) > len(payload)/minRecordSize {
		return nil, corrupt("record count %d does not fit in %d bytes", h.NumRecords, len(payload))
	}
	recs := make([]Record, h.NumRecords)
	pos := 0
	for i := range recs {
		n, err := parseRecord(payload[pos:], &recs[i], true)
		if err != nil {
			return nil, err
		}
		pos += n
	}
	if pos != len(payload) {
		return nil, corrupt("%d bytes after the last record", len(payload)-pos)
	}
	return recs, nil
}

// ForEachRecord decodes the records of a batch one by one, calling fn with
// a Record that is reused between calls (copy what you keep). It allocates
// only for decompression and headers.
func ForEachRecord(batch []byte, fn func(r *Record) error) error {
	h, err := ParseBatchHeader(batch)
	if err != nil {
		return err
	}
	if h.Size() > len(batch) {
		return ErrTruncated
	}
	payload, err := recordsPayload(batch, h)
	if err != nil {
		return err
	}
	if h.NumRecords < 0 || int(h.NumRecords) > len(payload)/minRecordSize {
		return corrupt("record count %d does not fit in %d bytes", h.NumRecords, len(payload))
	}
	var r Record
	pos := 0
	for i := int32(0); i < h.NumRecords; i++ {
		n, err := parseRecord(payload[pos:], &r, true)
		if err != nil {
			return err
		}
		pos += n
		if err := fn(&r); err != nil {
			return err
		}
	}
	if pos != len(payload) {
		return corrupt("%d bytes after the last record", len(payload)-pos)
	}
	return nil
}

// minRecordSize is the smallest encoded record: length, attributes,
// timestamp delta, offset delta, key length, value length, header count.
const minRecordSize = 7
