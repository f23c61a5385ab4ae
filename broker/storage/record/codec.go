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
	if n, ok := codecNames[c]; ok {
		return n
	}
	return fmt.Sprintf("unknown(%d)", int8(c))
}

var codecNames = map[Codec]string{None: "none", Gzip: "gzip", Snappy: "snappy", LZ4: "lz4", Zstd: "zstd"}

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

// writeAll writes src through the compressing writer w, closes it (which
// ends the stream) and returns what w wrote into buf.
func writeAll(buf *bytes.Buffer, w io.WriteCloser, src []byte) ([]byte, error) {
	if _, err := w.Write(src); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Compress compresses src with codec c in the stream format Kafka's Java
// client writes: gzip stream, xerial-framed snappy, LZ4 frame, zstd frame.
func Compress(c Codec, src []byte) ([]byte, error) {
	switch c {
	case None:
		return append([]byte(nil), src...), nil
	case Gzip:
		var buf bytes.Buffer
		return writeAll(&buf, gzip.NewWriter(&buf), src)
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
		return writeAll(&buf, w, src)
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
// unknown codec. The result is a new slice the caller owns.
func Decompress(c Codec, src []byte) ([]byte, error) {
	out, err := decompressAppend(nil, c, src)
	if err == nil && out == nil {
		out = []byte{}
	}
	return out, err
}

// decompressAppend is Decompress appending to dst, so a caller that only
// inspects the records (ValidateBatch) can reuse one buffer across batches
// instead of allocating the decompressed size every time. Stream readers
// (gzip, lz4) are pooled: each allocates tens of KiB to MiB of window and
// block buffers when created.
func decompressAppend(dst []byte, c Codec, src []byte) ([]byte, error) {
	switch c {
	case None:
		return append(dst, src...), nil
	case Gzip:
		zr, _ := gzipReaders.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(bytes.NewReader(src))
		} else {
			err = zr.Reset(bytes.NewReader(src))
		}
		if err != nil {
			return nil, corrupt("gzip: %v", err)
		}
		out, err := readAppend(dst, zr, "gzip")
		gzipReaders.Put(zr)
		return out, err
	case Snappy:
		return decodeSnappy(dst, src)
	case LZ4:
		lr, _ := lz4Readers.Get().(*lz4.Reader)
		if lr == nil {
			lr = lz4.NewReader(bytes.NewReader(src))
		} else {
			lr.Reset(bytes.NewReader(src))
		}
		out, err := readAppend(dst, lr, "lz4")
		lr.Reset(nil) // drop the reference to src
		lz4Readers.Put(lr)
		return out, err
	case Zstd:
		_, dec, err := zstdCodecs()
		if err != nil {
			return nil, err
		}
		start := len(dst)
		out, err := dec.DecodeAll(src, dst)
		if err != nil {
			return nil, corrupt("zstd: %v", err)
		}
		if len(out)-start > MaxDecompressedBytes {
			return nil, errTooLarge
		}
		return out, nil
	}
	return nil, fmt.Errorf("record: compression codec %d: %w", int8(c), kerr.UnsupportedCompressionType)
}

var (
	gzipReaders sync.Pool // *gzip.Reader
	lz4Readers  sync.Pool // *lz4.Reader
)

// readAppend reads r to its end, appending to dst, failing once more than
// MaxDecompressedBytes came out.
func readAppend(dst []byte, r io.Reader, name string) ([]byte, error) {
	start := len(dst)
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)] // let append pick the growth
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst)-start > MaxDecompressedBytes {
			return nil, errTooLarge
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return nil, corrupt("%s: %v", name, err)
		}
	}
}

func decodeSnappy(out, src []byte) ([]byte, error) {
	if !bytes.HasPrefix(src, xerialMagic) {
		return decodeSnappyBlock(out, src)
	}
	pos := len(xerialMagic) + 8
	if len(src) < pos {
		return nil, corrupt("snappy: truncated xerial header")
	}
	// Size the output once: growing it block by block (32 KiB each for
	// the Java client) reallocated it log2(n) times.
	if total, ok := xerialDecodedLen(src[pos:]); ok && total <= MaxDecompressedBytes-len(out) && cap(out)-len(out) < total {
		out = append(out, make([]byte, total)...)[:len(out)]
	}
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
	return out, nil
}

// xerialDecodedLen sums the decoded lengths of the xerial blocks in b
// (after the header); ok is false if the framing does not parse, in which
// case the decoding loop reports the error.
func xerialDecodedLen(b []byte) (total int, ok bool) {
	for len(b) > 0 {
		if len(b) < 4 {
			return 0, false
		}
		n := int(binary.BigEndian.Uint32(b))
		b = b[4:]
		if n < 0 || n > len(b) {
			return 0, false
		}
		d, err := s2.DecodedLen(b[:n])
		if err != nil || d > MaxDecompressedBytes-total {
			return 0, false
		}
		total += d
		b = b[n:]
	}
	return total, true
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
	if cap(dst)-start < n {
		dst = append(dst[:cap(dst)], make([]byte, start+n-cap(dst))...)
	}
	dst = dst[:start+n]
	if _, err := s2.Decode(dst[start:], block); err != nil {
		return nil, corrupt("snappy: %v", err)
	}
	return dst, nil
}
