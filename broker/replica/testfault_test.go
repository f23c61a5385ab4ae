package replica

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// testBatch is a v2 batch header at base with count records and a
// payload standing for its records.
func testBatch(base int64, count int32, payload string) []byte {
	b := make([]byte, 61, 61+len(payload))
	binary.BigEndian.PutUint64(b[0:8], uint64(base))
	binary.BigEndian.PutUint32(b[8:12], uint32(61-12+len(payload)))
	b[16] = 2
	binary.BigEndian.PutUint32(b[23:27], uint32(count-1))
	binary.BigEndian.PutUint32(b[57:61], uint32(count))
	return append(b, payload...)
}

func TestFaultBatches(t *testing.T) {
	a, b, c := testBatch(10, 1, "AAAA"), testBatch(11, 1, "BB"), testBatch(12, 1, "C")
	tail := []byte{0, 0, 0, 0, 0, 0, 0, 13, 0, 0} // a partial batch
	in := bytes.Join([][]byte{a, b, c, tail}, nil)
	orig := append([]byte(nil), in...)

	if got, want := faultBatches("drop", in), bytes.Join([][]byte{a, c, tail}, nil); !bytes.Equal(got, want) {
		t.Errorf("drop: %x, want %x", got, want)
	}
	dup := faultBatches("duplicate", in)
	if want := bytes.Join([][]byte{a, withOffset(a, 11), c, tail}, nil); !bytes.Equal(dup, want) {
		t.Errorf("duplicate: %x, want %x", dup, want)
	}
	re := faultBatches("reorder", in)
	if want := bytes.Join([][]byte{withOffset(b, 10), withOffset(a, 11), c, tail}, nil); !bytes.Equal(re, want) {
		t.Errorf("reorder: %x, want %x", re, want)
	}
	if !bytes.Equal(in, orig) {
		t.Error("the input was modified")
	}
	// One batch, or batches of different sizes, are left alone.
	if got := faultBatches("reorder", a); !bytes.Equal(got, a) {
		t.Error("reorder changed a single batch")
	}
	mixed := bytes.Join([][]byte{a, testBatch(11, 3, "BBB")}, nil)
	if got := faultBatches("duplicate", mixed); !bytes.Equal(got, mixed) {
		t.Error("duplicate changed batches of different sizes")
	}
	// The first pair of the same size is taken.
	big, d, e := testBatch(7, 3, "BIG"), testBatch(10, 1, "D"), testBatch(11, 1, "E")
	if got, want := faultBatches("reorder", bytes.Join([][]byte{big, d, e}, nil)),
		bytes.Join([][]byte{big, withOffset(e, 10), withOffset(d, 11)}, nil); !bytes.Equal(got, want) {
		t.Errorf("reorder after a bigger batch: %x, want %x", got, want)
	}
	if got := faultBatches("drop", bytes.Join([][]byte{a, b}, nil)); len(got) != len(a)+len(b) {
		t.Error("drop left out the last batch of a response")
	}
}

func withOffset(batch []byte, base int64) []byte {
	out := append([]byte(nil), batch...)
	binary.BigEndian.PutUint64(out[:8], uint64(base))
	return out
}

func TestLoadTestFetchFault(t *testing.T) {
	t.Cleanup(func() { testFetchFault = "" })
	t.Setenv(TestFetchFaultEnv, "drop")
	t.Setenv(TestFaultAllowEnv, "")
	if err := LoadTestFetchFault(); err == nil || testFetchFault != "" {
		t.Fatalf("the fault without %s: err %v, mode %q", TestFaultAllowEnv, err, testFetchFault)
	}
	t.Setenv(TestFaultAllowEnv, "yes")
	if err := LoadTestFetchFault(); err != nil || testFetchFault != "drop" {
		t.Fatalf("allowed: err %v, mode %q", err, testFetchFault)
	}
	t.Setenv(TestFetchFaultEnv, "scramble")
	if err := LoadTestFetchFault(); err == nil {
		t.Fatal("unknown mode accepted")
	}
	t.Setenv(TestFetchFaultEnv, "")
	if err := LoadTestFetchFault(); err != nil || testFetchFault != "" {
		t.Fatalf("unset: err %v, mode %q", err, testFetchFault)
	}
}

// FuzzFaultBatches: any bytes, any mode, no panic, and the input is left
// as it was.
func FuzzFaultBatches(f *testing.F) {
	f.Add("drop", bytes.Join([][]byte{testBatch(0, 1, "A"), testBatch(1, 1, "B"), testBatch(2, 1, "C")}, nil))
	f.Add("duplicate", bytes.Join([][]byte{testBatch(0, 2, "AA"), testBatch(2, 2, "BB")}, nil))
	f.Add("reorder", append(testBatch(5, 1, "A"), 0, 0, 0))
	f.Fuzz(func(t *testing.T, mode string, data []byte) {
		orig := append([]byte(nil), data...)
		_ = faultBatches(mode, data)
		if !bytes.Equal(orig, data) {
			t.Fatal("input modified")
		}
	})
}
