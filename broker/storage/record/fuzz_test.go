package record

import (
	"bytes"
	"errors"
	"testing"
)

func fuzzSeeds(f *testing.F) {
	f.Add(readTestdata(f, "spec_3_7_batch.bin"))
	for _, c := range []Codec{Gzip, Snappy, LZ4, Zstd} {
		f.Add(specExample(f, c))
	}
	f.Add(BuildControlBatch(1, 1, 1, 1, ControlCommit, 1, 1))
	f.Add(readTestdata(f, "spec_3_5_v1_message.bin"))
	f.Add([]byte{})
	f.Add(make([]byte, 61))
}

// FuzzParseBatch: for any input, ParseBatchHeader, CheckCRC, ForEachBatch
// and ValidateBatch never panic; a batch that validates re-parses to the
// same header, its records decode, and re-building it from its header and
// records yields a batch that validates too and holds the same records.
func FuzzParseBatch(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = CheckCRC(data)
		_ = ForEachBatch(data, func(batch []byte, h BatchHeader) error {
			if len(batch) != h.Size() {
				t.Fatalf("slice %d vs size %d", len(batch), h.Size())
			}
			return nil
		})
		h, err := ParseBatchHeader(data)
		if err != nil {
			return
		}
		if ValidateBatch(data, ValidateOptions{}) != nil {
			return
		}
		recs, err := Records(data)
		if err != nil {
			t.Fatalf("validated batch has undecodable records: %v", err)
		}
		o := OptionsFrom(h)
		if h.TimestampType() == LogAppendTime {
			o.MaxTimestamp = h.MaxTimestamp
		}
		rebuilt, err := BuildChecked(o, recs)
		if err != nil {
			t.Fatal(err)
		}
		if err := ValidateBatch(rebuilt, ValidateOptions{}); err != nil {
			t.Fatalf("rebuilt batch invalid: %v", err)
		}
		again, err := Records(rebuilt)
		if err != nil || len(again) != len(recs) {
			t.Fatalf("rebuilt records: %v", err)
		}
		for i := range recs {
			if !bytes.Equal(again[i].Key, recs[i].Key) || !bytes.Equal(again[i].Value, recs[i].Value) ||
				again[i].OffsetDelta != recs[i].OffsetDelta {
				t.Fatalf("record %d changed", i)
			}
		}
		h2, _ := ParseBatchHeader(rebuilt)
		if h2.BaseOffset != h.BaseOffset || h2.LastOffsetDelta != h.LastOffsetDelta || h2.ProducerID != h.ProducerID {
			t.Fatalf("rebuilt header %+v vs %+v", h2, h)
		}
	})
}

// FuzzRecords: Records and ForEachRecord never panic, agree on success,
// and decoded records fit in their batch.
func FuzzRecords(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := Records(data)
		n := 0
		err2 := ForEachRecord(data, func(r *Record) error { n++; return nil })
		if (err == nil) != (err2 == nil) {
			t.Fatalf("Records %v vs ForEachRecord %v", err, err2)
		}
		if err == nil && n != len(recs) {
			t.Fatalf("%d vs %d records", n, len(recs))
		}
	})
}

// FuzzConvertLegacy: never panics; any output is a v2 batch that passes
// client validation (offset deltas 0..n-1) and decodes.
func FuzzConvertLegacy(f *testing.F) {
	f.Add(readTestdata(f, "spec_3_5_v0_message.bin"))
	f.Add(readTestdata(f, "spec_3_5_v1_message.bin"))
	inner := legacyMsg(0, 1, 0, 5, []byte("k"), []byte("v"))
	z, _ := Compress(Gzip, inner)
	f.Add(legacyMsg(0, 1, int8(Gzip), 5, nil, z))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := ConvertLegacy(data)
		if err != nil {
			if out != nil {
				t.Fatal("output with error")
			}
			return
		}
		if err := ValidateBatch(out, ValidateOptions{}); err != nil && !errors.Is(err, ErrTruncated) {
			// A converted batch may only fail because of an oversized or
			// conflicting input; structural validity is guaranteed.
			t.Fatalf("converted batch invalid: %v", err)
		}
		if _, err := Records(out); err != nil {
			t.Fatalf("converted batch undecodable: %v", err)
		}
	})
}
