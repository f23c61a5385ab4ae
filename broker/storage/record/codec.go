package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Codec is the compression codec in attribute bits 0-2.
type Codec int8

// Codecs, numbered as in the batch attributes.
const (
	None   Codec = 0
	Gzip   Codec = 1
	Snappy Codec = 2
	LZ4    Codec = 3
	Zstd   Codec = 4
)

// String returns the codec name kafka-dump-log prints (compresscodec).
func (c Codec) String() string {
	switch c {
	case None:
		return "none"
	case Gzip:
		return "gzip"
	case Snappy:
		return "snappy"
	case LZ4:
		return "lz4"
	case Zstd:
		return "zstd"
	default:
		return fmt.Sprintf("unknown(%d)", int8(c))
	}
}

// ParseCodec maps a compression.type value (other than "producer") to a codec.
func ParseCodec(name string) (Codec, bool) {
	switch name {
	case "none", "uncompressed":
		return None, true
	case "gzip":
		return Gzip, true
	case "snappy":
		return Snappy, true
	case "lz4":
		return LZ4, true
	case "zstd":
		return Zstd, true
	}
	return None, false
}

// MaxDecompressedBytes bounds the output of Decompress so that a small
// hostile batch cannot make the broker allocate without limit. Kafka has no
// explicit bound; 256 MiB is far above any batch a sane producer writes
// (max.message.bytes defaults to 1 MiB compressed).
var MaxDecompressedBytes = 256 << 20

var errTooLarge = fmt.Errorf("record: decompressed data exceeds limit: %w", kerr.CorruptMessage)

// xerial snappy-java stream framing, written by the Java client.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialBlockSize = 32 << 10

var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
	zstdErr  error
)

func zstdCodecs() (*zstd.Encoder, *zstd.Decoder, error) {
	zstdOnce.Do(func() {
		zstdEnc, zstdErr = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if zstdErr != nil {
			return
		}
		zstdDec, zstdErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(uint64(MaxDecompressedBytes)),
			zstd.WithDecoderMaxWindow(uint64(MaxDecompressedBytes)))
	})
	return zstdEnc, zstdDec, zstdErr
}

// Compress compresses src with codec c in the stream format Kafka's Java
// client writes: gzip stream, xerial-framed snappy, LZ4 frame, zstd frame.
func Compress(c Codec, src []byte) ([]byte, error) {
	switch c {
	case None:
		return append([]byte(nil), src...), nil
	case Gzip:
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	case Snappy:
		out := make([]byte, 0, len(xerialMagic)+8+s2.MaxEncodedLen(len(src))+4*(len(src)/xerialBlockSize+1))
		out = append(out, xerialMagic...)
		out = binary.BigEndian.AppendUint32(out, 1) // version
		out = binary.BigEndian.AppendUint32(out, 1) // minimum compatible version
		for pos := 0; pos < len(src); {
			end := min(pos+xerialBlockSize, len(src))
			block := s2.EncodeSnappy(nil, src[pos:end])
			out = binary.BigEndian.AppendUint32(out, uint32(len(block)))
			out = append(out, block...)
			pos = end
		}
		return out, nil
	case LZ4:
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
			return nil, err
		}
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	case Zstd:
		enc, _, err := zstdCodecs()
		if err != nil {
			return nil, err
		}
		return enc.EncodeAll(src, nil), nil
	}
	return nil, fmt.Errorf("record: compression codec %d: %w", int8(c), kerr.UnsupportedCompressionType)
}

// Decompress reverses Compress. For snappy it accepts both the xerial
// framing (Java client) and a single raw snappy block (librdkafka). Errors
// wrap kerr.CorruptMessage, or kerr.UnsupportedCompressionType for an
// unknown codec.
func Decompress(c Codec, src []byte) ([]byte, error) {
	switch c {
	case None:
		return append([]byte(nil), src...), nil
	case Gzip:
		r, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, corrupt("gzip: %v", err)
		}
		return readCapped(r, "gzip")
	case Snappy:
		return decodeSnappy(src)
	case LZ4:
		return readCapped(lz4.NewReader(bytes.NewReader(src)), "lz4")
	case Zstd:
		_, dec, err := zstdCodecs()
		if err != nil {
			return nil, err
		}
		out, err := dec.DecodeAll(src, nil)
		if err != nil {
			return nil, corrupt("zstd: %v", err)
		}
		if len(out) > MaxDecompressedBytes {
			return nil, errTooLarge
		}
		return out, nil
	}
	return nil, fmt.Errorf("record: compression codec %d: %w", int8(c), kerr.UnsupportedCompressionType)
}

func readCapped(r io.Reader, name string) ([]byte, error) {
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(r, int64(MaxDecompressedBytes)+1))
	if err != nil {
		return nil, corrupt("%s: %v", name, err)
	}
	if n > int64(MaxDecompressedBytes) {
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}

func decodeSnappy(src []byte) ([]byte, error) {
	if !bytes.HasPrefix(src, xerialMagic) {
		return decodeSnappyBlock(nil, src)
	}
	pos := len(xerialMagic) + 8
	if len(src) < pos {
		return nil, corrupt("snappy: truncated xerial header")
	}
	var out []byte
	for pos < len(src) {
		if len(src)-pos < 4 {
			return nil, corrupt("snappy: truncated xerial block length")
		}
		n := int(binary.BigEndian.Uint32(src[pos:]))
		pos += 4
		if n < 0 || n > len(src)-pos {
			return nil, corrupt("snappy: xerial block length %d exceeds data", n)
		}
		var err error
		if out, err = decodeSnappyBlock(out, src[pos:pos+n]); err != nil {
			return nil, err
		}
		pos += n
	}
	if out == nil {
		out = []byte{}
	}
	return out, nil
}

// decodeSnappyBlock appends the decoding of one raw snappy block to dst.
func decodeSnappyBlock(dst, block []byte) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return nil, corrupt("snappy: %v", err)
	}
	if n > MaxDecompressedBytes-len(dst) {
		return nil, errTooLarge
	}
	start := len(dst)
	dst = append(dst, make([]byte, n)...)
	if _, err := s2.Decode(dst[start:], block); err != nil {
		return nil, corrupt("snappy: %v", err)
	}
	return dst, nil
}
