package record

import (
	"bytes"
	stdgzip "compress/gzip"
	"testing"

	"github.com/klauspost/compress/snappy/xerial"
)

// Streams written by independent encoders decode, and ours decode with
// independent decoders: the xerial framing of snappy-java (as implemented
// separately in klauspost/compress/snappy/xerial) and the standard
// library's gzip.
func TestCodecInterop(t *testing.T) {
	payload := bytes.Repeat([]byte("interop payload "), 5000)

	theirs := xerial.Encode(nil, payload)
	if out, err := Decompress(Snappy, theirs); err != nil || !bytes.Equal(out, payload) {
		t.Fatalf("decode xerial stream from another encoder: %v", err)
	}
	ours := mustCompress(t, Snappy, payload)
	if out, err := xerial.Decode(ours); err != nil || !bytes.Equal(out, payload) {
		t.Fatalf("another decoder on our xerial stream: %v", err)
	}

	var buf bytes.Buffer
	w := stdgzip.NewWriter(&buf)
	w.Write(payload)
	w.Close()
	if out, err := Decompress(Gzip, buf.Bytes()); err != nil || !bytes.Equal(out, payload) {
		t.Fatalf("decode stdlib gzip: %v", err)
	}
	gz, _ := Compress(Gzip, payload)
	r, err := stdgzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := out.ReadFrom(r); err != nil || !bytes.Equal(out.Bytes(), payload) {
		t.Fatalf("stdlib gzip on our stream: %v", err)
	}
}

// A decompression bomb is refused instead of exhausting memory.
func TestDecompressLimit(t *testing.T) {
	old := MaxDecompressedBytes
	MaxDecompressedBytes = 1 << 20
	defer func() { MaxDecompressedBytes = old }()
	big := make([]byte, 2<<20)
	for _, c := range []Codec{Gzip, Snappy, LZ4} {
		z := mustCompress(t, c, big)
		if _, err := Decompress(c, z); err == nil {
			t.Errorf("%s: 2 MiB accepted with a 1 MiB limit", c)
		}
	}
}
