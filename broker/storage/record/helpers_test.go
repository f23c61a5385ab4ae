package record

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
)

func appendU64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }
func appendU32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
func crcIEEE(b []byte) uint32             { return crc32.ChecksumIEEE(b) }

// mustCompress compresses data with c, failing the test on an error.
func mustCompress(tb testing.TB, c Codec, data []byte) []byte {
	tb.Helper()
	out, err := Compress(c, data)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
