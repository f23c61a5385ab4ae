package replica

// A test-only fault in consumer fetches, so the chaos tool's checker
// (bin/klassik-chaos) can be shown to catch a broker that serves wrong
// data. KLASSIK_TEST_FAULT_FETCH=drop|duplicate|reorder turns it on, and a
// broker refuses to start with it unless KLASSIK_TEST_ONLY_ALLOW_FAULTS is
// "yes" as well, so no operator turns it on by accident. Followers are
// never affected (the log itself stays right); only the bytes a consumer
// gets back change, and only in responses of two or more batches:
//
//	drop       the second batch is left out (when another follows it)
//	duplicate  of the first two neighbouring batches with as many records,
//	           the second carries the first one's records at its own offsets
//	reorder    those two batches swap their records, each keeping its
//	           offsets
//
// Only a record batch's base offset is rewritten, which its CRC does not
// cover, so clients accept what they get.

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Environment variables of the fault.
const (
	TestFetchFaultEnv = "KLASSIK_TEST_FAULT_FETCH"
	TestFaultAllowEnv = "KLASSIK_TEST_ONLY_ALLOW_FAULTS"
)

// testFetchFault is the mode read by LoadTestFetchFault ("" for none).
var testFetchFault string

// LoadTestFetchFault reads the fault's environment variables at broker
// start: an unknown mode, or any mode without the allow variable, is an
// error that stops the broker.
func LoadTestFetchFault() error {
	mode := os.Getenv(TestFetchFaultEnv)
	testFetchFault = ""
	switch mode {
	case "":
		return nil
	case "drop", "duplicate", "reorder":
	default:
		return fmt.Errorf("%s=%q: unknown mode (drop, duplicate or reorder)", TestFetchFaultEnv, mode)
	}
	if os.Getenv(TestFaultAllowEnv) != "yes" {
		return fmt.Errorf("%s is a test-only fault that serves wrong records to consumers; it needs %s=yes", TestFetchFaultEnv, TestFaultAllowEnv)
	}
	testFetchFault = mode
	return nil
}

// applyTestFetchFault rewrites the record data of a consumer's response.
func applyTestFetchFault(resp *kmsg.FetchResponse) {
	for ti := range resp.Topics {
		for pi := range resp.Topics[ti].Partitions {
			p := &resp.Topics[ti].Partitions[pi]
			p.RecordBatches = faultBatches(testFetchFault, p.RecordBatches)
		}
	}
}

// faultBatches applies mode to concatenated v2 record batches, returning
// new bytes (the input, which may be a cached read, is not modified).
func faultBatches(mode string, data []byte) []byte {
	var batches [][]byte
	parsed := 0
	for rest := data; len(rest) >= 61; {
		n := 12 + int(int32(binary.BigEndian.Uint32(rest[8:12])))
		if n < 61 || n > len(rest) || rest[16] != 2 {
			break
		}
		batches = append(batches, rest[:n])
		rest = rest[n:]
		parsed += n
	}
	if len(batches) < 2 {
		return data
	}
	// The first two neighbours with as many records (lastOffsetDelta is at
	// byte 23 of a v2 batch).
	pair := -1
	for i := 0; i+1 < len(batches); i++ {
		if binary.BigEndian.Uint32(batches[i][23:27]) == binary.BigEndian.Uint32(batches[i+1][23:27]) {
			pair = i
			break
		}
	}
	withBase := func(src, base []byte) []byte {
		out := append([]byte(nil), src...)
		copy(out[:8], base[:8])
		return out
	}
	switch {
	case mode == "drop":
		if len(batches) < 3 {
			return data
		}
		batches = append(batches[:1:1], batches[2:]...)
	case pair < 0:
		return data
	case mode == "duplicate":
		batches[pair+1] = withBase(batches[pair], batches[pair+1])
	case mode == "reorder":
		a, b := batches[pair], batches[pair+1]
		batches[pair], batches[pair+1] = withBase(b, a), withBase(a, b)
	default:
		return data
	}
	var out []byte
	for _, x := range batches {
		out = append(out, x...)
	}
	// A partial batch at the end (a read cut at max_bytes) stays.
	return append(out, data[parsed:]...)
}
