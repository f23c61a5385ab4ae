package record

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/klauspost/compress/s2"
)

// producerBatch builds a batch like a producer's default 1 MiB batch: n
// records of 1 KiB values, compressed with c.
func producerBatch(tb testing.TB, c Codec, n int) []byte {
	tb.Helper()
	opts := DefaultBuildOptions()
	opts.Codec = c
	opts.BaseTimestamp = 1700000000000
	recs := make([]Record, n)
	for i := range recs {
		v := bytes.Repeat([]byte{byte('a' + i%26)}, 1024)
		recs[i] = Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Value: v}
	}
	b, err := BuildChecked(opts, recs)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestValidateCompressedReusesBuffers: validating a compressed batch
// decompresses into a pooled buffer, so the produce path does not allocate
// the decompressed size (~1 MiB) per batch. The bound is an average of a
// quarter of that: a garbage collection, or the goroutine moving to another
// P, may cost the pool a buffer now and then (typically 0 bytes per batch
// for snappy, a few KiB for the stream codecs).
func TestValidateCompressedReusesBuffers(t *testing.T) {
	for _, tc := range []struct {
		c        Codec
		maxBytes uint64
	}{{Snappy, 256 << 10}, {Zstd, 256 << 10}, {LZ4, 256 << 10}, {Gzip, 256 << 10}} {
		t.Run(tc.c.String(), func(t *testing.T) {
			batch := producerBatch(t, tc.c, 1000)
			o := ValidateOptions{MaxMessageBytes: 1 << 30, FromClient: true}
			if err := ValidateBatch(batch, o); err != nil {
				t.Fatal(err)
			}
			// AllocsPerRun counts objects; what matters for a 1 MiB
			// payload is bytes, so read them from the heap statistics.
			const runs = 40
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				if err := ValidateBatch(batch, o); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			per := (after.TotalAlloc - before.TotalAlloc) / runs
			t.Logf("%d bytes allocated per batch", per)
			if raceEnabled {
				// The race detector makes sync.Pool drop items on
				// purpose and instruments allocation, so the byte
				// count is only checked in normal builds.
				return
			}
			if per > tc.maxBytes {
				t.Fatalf("%d bytes allocated per validated %s batch (decompressed ~1 MiB), want <= %d", per, tc.c, tc.maxBytes)
			}
		})
	}
}

// TestDecompressAppendKeepsPrefix: decompressAppend appends after existing
// bytes for every codec, and raw snappy blocks decode as well as xerial.
func TestDecompressAppendKeepsPrefix(t *testing.T) {
	src := bytes.Repeat([]byte("klassik record payload "), 5000)
	for _, c := range []Codec{None, Gzip, Snappy, LZ4, Zstd} {
		comp := mustCompress(t, c, src)
		dst := make([]byte, 3, 10)
		copy(dst, "abc")
		out, err := decompressAppend(dst, c, comp)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if string(out[:3]) != "abc" || !bytes.Equal(out[3:], src) {
			t.Fatalf("%s: prefix or payload damaged (len %d)", c, len(out))
		}
		// Reuse the same buffer, as the validation pool does.
		out2, err := decompressAppend(out[:0], c, comp)
		if err != nil || !bytes.Equal(out2, src) {
			t.Fatalf("%s: reuse: %v", c, err)
		}
	}
	raw := s2.EncodeSnappy(nil, src)
	out, err := Decompress(Snappy, raw)
	if err != nil || !bytes.Equal(out, src) {
		t.Fatalf("raw snappy block: %v", err)
	}
	if out, err := Decompress(Snappy, s2.EncodeSnappy(nil, nil)); err != nil || out == nil || len(out) != 0 {
		t.Fatalf("empty snappy block: %v %v", out, err)
	}
}

// FuzzDecompress: for any codec byte and input, decompressAppend into a
// reused buffer with a prefix agrees with Decompress (same bytes or both
// fail), keeps the prefix, and never panics; compressing the input and
// decompressing it again gives the input back.
func FuzzDecompress(f *testing.F) {
	plain := bytes.Repeat([]byte("klassik"), 300)
	for _, c := range []Codec{None, Gzip, Snappy, LZ4, Zstd} {
		comp := mustCompress(f, c, plain)
		f.Add(uint8(c), comp)
		f.Add(uint8(c), comp[:len(comp)/2])
	}
	f.Add(uint8(Snappy), s2.EncodeSnappy(nil, plain))
	f.Add(uint8(7), []byte("not a codec"))
	reuse := make([]byte, 0, 64)
	f.Fuzz(func(t *testing.T, codec uint8, data []byte) {
		c := Codec(codec % 8)
		want, werr := Decompress(c, data)
		got, gerr := decompressAppend(append(reuse[:0], "pre"...), c, data)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("codec %s: Decompress err %v, decompressAppend err %v", c, werr, gerr)
		}
		if werr == nil {
			if string(got[:3]) != "pre" || !bytes.Equal(got[3:], want) {
				t.Fatalf("codec %s: decompressAppend differs from Decompress", c)
			}
			reuse = got
		}
		if c <= Zstd {
			comp := mustCompress(t, c, data)
			back, err := Decompress(c, comp)
			if err != nil || !bytes.Equal(back, data) {
				t.Fatalf("codec %s: round trip failed: %v", c, err)
			}
		}
	})
}
