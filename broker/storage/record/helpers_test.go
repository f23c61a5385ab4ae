package record

import (
	"encoding/binary"
	"hash/crc32"
)

func appendU64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }
func appendU32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
func crcIEEE(b []byte) uint32             { return crc32.ChecksumIEEE(b) }
